"""The patch interface of §3.3: one revise-shaped object (op, key, old_value, new_value, status,
supersedes) that a deterministic controller classifies against the cell's head.

The controller is a pure function, so the write path, `pmem replay` and tests share it. A patch
that does not fit the head (it expects a value the cell no longer holds) is refused with
`InvalidOperation` unless `hard_commit` forces it, for structured corrections that must not be
dropped.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, fields
from typing import Any

from pmem.graph import OPERATIONS, InvalidOperation, TimeLike

PATCH_OPS = ("revise", *OPERATIONS, "noop")

# What a revise patch's `status` says about the value it displaces, and so which operation
# lowers it: an outdated value is superseded (accept), a wrong one contradicted (reject).
REVISE_STATUS = {
    None: "accept",
    "active": "accept",
    "superseded": "accept",
    "contradicted": "reject",
    "contested": "contest",
    "alternative": "contest",
    "revoked": "revoke",
}


def _text(value: Any) -> bool:
    return isinstance(value, str)


def _text_or_none(value: Any) -> bool:
    return value is None or isinstance(value, str)


def _evidence(value: Any) -> bool:
    return _text_or_none(value) or (
        isinstance(value, list) and all(isinstance(v, str) for v in value)
    )


# What a patch read from JSON may hold in each field (times as ISO 8601 text).
_FIELD_TYPES = {
    "op": _text, "key": _text, "old_value": _text_or_none, "new_value": _text_or_none,
    "status": _text_or_none, "supersedes": _text_or_none, "evidence": _evidence,
    "valid_from": _text_or_none, "at": _text_or_none,
}  # fmt: skip
_FIELD_WORDS = {
    name: "a string" if check is _text else "a string or null"
    for name, check in _FIELD_TYPES.items()
}
_FIELD_WORDS["evidence"] = "an evidence id, a list of them, or null"


@dataclass(frozen=True, slots=True)
class Patch:
    """One revise-shaped write (§3.3) for `Memory.apply`: `op` ("revise", an operation name of
    `OPERATIONS`, or "noop"), the `key`, the `new_value`, what the writer believed was current
    (`old_value`, `supersedes`: a patch that no longer fits the head is stale and refused), the
    displaced value's `status` (which operation a revise lowers to, `REVISE_STATUS`), and the
    `evidence`, `valid_from` and recorded time `at` of the operation it becomes.

    A patch is data, not an operation, so a writer model's reply, a JSON line of `pmem replay`
    and a test can all produce one; `from_dict` reads one from JSON with every field checked.
    """

    op: str
    key: str
    old_value: str | None = None
    new_value: str | None = None
    status: str | None = None
    supersedes: str | None = None  # the version id or value the patch claims to replace
    evidence: str | list[str] | None = None
    valid_from: TimeLike | None = None
    at: TimeLike | None = None

    @classmethod
    def from_dict(cls, data: dict[str, Any], where: str = "patch") -> Patch:
        """A patch from a JSON object, every field's type checked; an unknown or missing field
        raises `InvalidOperation` naming `where` (the file and line it came from)."""
        if not isinstance(data, dict):
            raise InvalidOperation(
                None, f"{where}: a patch is a JSON object, not {type(data).__name__}"
            )
        names = [f.name for f in fields(cls)]
        unknown = sorted(set(data) - set(names))
        if unknown:
            raise InvalidOperation(
                data.get("key"), f"{where}: unknown field(s) {unknown}; a patch has {names}"
            )
        for required in ("op", "key"):
            if required not in data:
                raise InvalidOperation(data.get("key"), f"{where}: missing field {required!r}")
        for name, value in data.items():
            if not _FIELD_TYPES[name](value):
                raise InvalidOperation(
                    data.get("key") if isinstance(data.get("key"), str) else None,
                    f"{where}: field {name!r} must be {_FIELD_WORDS[name]}, not "
                    f"{type(value).__name__} {value!r}"[:300],
                )
        return cls(**data)


@dataclass(frozen=True, slots=True)
class Decision:
    """What the controller chose: `decision` is create / accept / reject / contest / resolve /
    revoke / support; `op` the typed operation that carries it out."""

    decision: str
    op: str
    value: str | None


def repeats_head(new_value: str | None, head_value: str | None) -> bool:
    """The same-value rule, one for every write path: a value the cell already holds is
    support for its head (the paper's noop: one more supported-by edge and a confirmation
    time), never a new version superseding an identical one, so that rerunning a script or
    replaying the same facts confirms the history instead of doubling it.

    `decide` applies it to revise and accept patches, and `Memory.accept` to direct calls, so
    `accept(k, v)` and `apply({"op": "revise", "key": k, "new_value": v})` agree. Values are
    compared exactly, as stored (no normalization); an empty cell repeats nothing."""
    return new_value is not None and head_value is not None and new_value == head_value


def decide(
    patch: Patch, head_id: str | None, head_value: str | None, hard_commit: bool
) -> Decision:
    """Classify `patch` against the cell's head (`head_id`, `head_value`; None when empty):
    the decision to report and the typed operation that carries it out. Pure, so the write
    path, `pmem replay`, the arms' CRUD ablation and tests share it. A stale patch (one that
    expects a value the head no longer holds) raises `InvalidOperation` unless `hard_commit`;
    a value the head already holds is support (`repeats_head`)."""
    op = "support" if patch.op == "noop" else patch.op
    if op not in PATCH_OPS:
        hint = difflib.get_close_matches(str(patch.op), PATCH_OPS, n=1)
        raise InvalidOperation(
            patch.key,
            f"unknown patch op {patch.op!r}"
            + (f" (did you mean {hint[0]!r}?)" if hint else "")
            + f"; valid ops: {', '.join(PATCH_OPS)}",
        )
    _check_expectation(patch, head_id, head_value, hard_commit)
    new = patch.new_value
    if op == "revise":
        if patch.status not in REVISE_STATUS:
            raise InvalidOperation(
                patch.key,
                f"unknown patch status {patch.status!r}; valid: "
                + ", ".join(str(s) for s in REVISE_STATUS),
            )
        if head_value is None:
            if new is None:
                raise InvalidOperation(patch.key, "revise on an empty cell needs a new_value")
            return Decision("create", "accept", new)
        op = REVISE_STATUS[patch.status]
        if new is None and op not in ("revoke", "reject"):
            raise InvalidOperation(
                patch.key, "revise without a new_value needs status 'revoked' or 'contradicted'"
            )
        if repeats_head(new, head_value):
            return Decision("support", "support", None)
    elif op == "accept" and repeats_head(new, head_value):
        return Decision("support", "support", None)
    if op in ("accept", "contest", "resolve") and new is None:
        raise InvalidOperation(patch.key, f"{op} needs a new_value")
    if op in ("revoke", "support"):
        new = None
    decision = "create" if op == "accept" and head_value is None else op
    return Decision(decision, op, new)


def _check_expectation(
    patch: Patch, head_id: str | None, head_value: str | None, hard_commit: bool
) -> None:
    """A patch naming the value it replaces must match the head, or it is stale."""
    if hard_commit:
        return
    if patch.old_value is not None and patch.old_value != head_value:
        raise InvalidOperation(
            patch.key,
            f"stale patch: it expects the current value {patch.old_value!r} but the cell holds "
            f"{head_value!r} (hard_commit=True applies it anyway)",
        )
    if patch.supersedes is not None and patch.supersedes not in (head_id, head_value):
        raise InvalidOperation(
            patch.key,
            f"stale patch: it supersedes {patch.supersedes!r} but the head is "
            f"{head_id} = {head_value!r} (hard_commit=True applies it anyway)",
        )
