"""The patch-prediction write path (§3.3 "Patch interface", Appendix A.2): one writer call per
observation returns a Revise object (op, key, old_value, new_value, status, supersedes), which
is validated and cleaned here and then applied by the deterministic patch controller
(`pmem.patch`, through `Memory.apply`).

The prompt is the caller's: it says what a cell holds and shows the cell's current state, both
of which depend on the domain (the ALFWorld-Revision arm's is in
`baselines.pmem_arms.commit`). What is general lives here: the json_schema the call is
constrained by, the post-processing, and the call itself, against `pmem.protocols.Writer`.
An observation that yields no applicable patch raises `AnnotationError`, which the write path
turns into a noop and counts by reason (§3.3).
"""

from __future__ import annotations

import re
from typing import Any

from pmem.patch import PATCH_OPS, REVISE_STATUS, Patch
from pmem.protocols import Writer

_NULLABLE = {"type": ["string", "null"]}
# Every status a revise patch can carry, so every operation Table 2 lowers it to can be chosen:
# superseded -> accept, contradicted -> reject, contested -> contest, revoked -> revoke
# (`pmem.patch.REVISE_STATUS`; resolve and noop are ops of their own).
REVISE_STATUSES = ("superseded", "contradicted", "contested", "revoked")
PATCH_MAX_TOKENS = 160  # the reply budget of one Revise object


def revise_schema(resolvable: bool) -> dict[str, Any]:
    """The Revise object's json_schema. `resolve` is offered only for a contested cell: the
    controller would refuse it anywhere else (§3.3: "resolve [needs] a contested cell"), so the
    constrained decoder is not allowed to spend the call on it."""
    ops = ["revise", "resolve", "noop"] if resolvable else ["revise", "noop"]
    return {
        "type": "object",
        "properties": {
            "op": {"type": "string", "enum": ops},
            "key": {"type": "string"},
            "old_value": _NULLABLE,
            "new_value": _NULLABLE,
            "status": {"enum": [*REVISE_STATUSES, None]},
            "supersedes": _NULLABLE,
        },
        "required": ["op", "key", "old_value", "new_value", "status", "supersedes"],
        "additionalProperties": False,
    }


REVISE_SCHEMA = revise_schema(resolvable=True)


class AnnotationError(ValueError):
    """An annotation that cannot be applied; the write path turns it into a noop (§3.3)."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason


def _clean_value(value: Any) -> str | None:
    """A value as the controller wants it: stripped, unquoted, no trailing full stop; empty or
    a spelled-out null is no value."""
    if value is None:
        return None
    text = " ".join(str(value).split()).strip("\"'").rstrip(".").strip()
    return None if text.lower() in ("", "null", "none") else text


def _enum(value: Any) -> str | None:
    text = _clean_value(value)
    return text.lower() if text is not None else None


def named_key(key: Any) -> str | None:
    """A key a model names, lower-cased with whitespace runs as ``_`` (None when it names
    none). A key named for routing goes to soft identity (`pmem.identity.SoftIdentity`), which
    decides which cell it means; a Revise object's key is compared as is with its cell's, only to
    count how often the model named another. Not `pmem.write.normalize_key`, which would also
    fold the ``.`` of ``{object}.location``."""
    if not isinstance(key, str) or not key.strip():
        return None
    return re.sub(r"\s+", "_", key.strip().lower())


def parse_revise(obj: Any, key: str) -> tuple[Patch, bool]:
    """A.2's deterministic post-processing of one Revise object: validate the enumerated
    fields, clean the values, and route to `key` (the cell the caller chose). Returns the patch
    and whether the model named another key (counted)."""
    if not isinstance(obj, dict):
        raise AnnotationError("invalid", f"expected a JSON object, got {type(obj).__name__}")
    op = _enum(obj.get("op"))
    if op not in PATCH_OPS:
        raise AnnotationError("invalid", f"op {obj.get('op')!r}")
    status = _enum(obj.get("status"))
    if status not in REVISE_STATUS:
        raise AnnotationError("invalid", f"status {obj.get('status')!r}")
    named = named_key(obj.get("key"))
    patch = Patch(
        op=op,
        key=key,
        old_value=_clean_value(obj.get("old_value")),
        new_value=_clean_value(obj.get("new_value")),
        status=status,
        supersedes=_clean_value(obj.get("supersedes")),
    )
    return patch, named is not None and named != key


async def predict_patch(
    writer: Writer,
    prompt: str,
    key: str,
    *,
    resolvable: bool,
    max_tokens: int = PATCH_MAX_TOKENS,
) -> tuple[Patch, bool]:
    """One patch-prediction call (the writer at temperature 0, json_schema-constrained; §3.3,
    A.2) and its post-processing (`parse_revise`): the patch for `key`'s cell and whether the
    model named another key. `resolvable`: the cell is contested, so `resolve` is offered. A
    reply that does not parse raises `AnnotationError("unparsed")`, an invalid one
    `AnnotationError("invalid")`."""
    result = await writer.complete(
        [{"role": "user", "content": prompt}],
        schema=revise_schema(resolvable=resolvable),
        schema_name="revise",
        max_tokens=max_tokens,
        temperature=0.0,
    )
    if result.parsed is None:
        raise AnnotationError("unparsed", getattr(result, "parse_error", None) or "")
    return parse_revise(result.parsed, key)
