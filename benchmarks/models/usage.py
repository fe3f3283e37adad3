"""What the model calls of a run cost, per role.

Roles are free strings; the harness uses writer, reader, judge and embedder. Tokens count only
what was paid for (HTTP calls), so a warm rerun served from the cache reports zero tokens and a
non-zero `cache_hits`: the cost line then says plainly that nothing was re-paid.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from typing import Any

__all__ = ["ROLE_ORDER", "RoleUsage", "UsageMeter"]

ROLE_ORDER = ("writer", "reader", "judge", "embedder")


@dataclass(slots=True)
class RoleUsage:
    """Counters of one role. `calls` are HTTP requests that succeeded (batches, for embedders)."""

    calls: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    retries: int = 0
    errors: int = 0
    parse_failures: int = 0
    latency_s: float = 0.0
    # what the server reported doing for the paid calls, where it reports it (llama.cpp's
    # `timings`, OpenAI's `prompt_tokens_details`): prompt tokens it reused from its prompt
    # cache instead of processing, and its own prompt-processing and decoding time
    prompt_reused: int = 0
    server_prompt_s: float = 0.0
    server_decode_s: float = 0.0
    retry_reasons: dict[str, int] = field(default_factory=dict)

    def count_retry(self, reason: str) -> None:
        self.retries += 1
        self.retry_reasons[reason] = self.retry_reasons.get(reason, 0) + 1

    def add(self, other: RoleUsage | Mapping[str, Any]) -> None:
        """Add another role's counters (a `RoleUsage` or its `to_dict()` form)."""
        data = other if isinstance(other, Mapping) else asdict(other)
        for f in fields(self):
            if f.name == "retry_reasons":
                for reason, n in (data.get("retry_reasons") or {}).items():
                    self.retry_reasons[reason] = self.retry_reasons.get(reason, 0) + int(n)
            elif f.name in data:
                setattr(self, f.name, getattr(self, f.name) + data[f.name])

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        for name in ("latency_s", "server_prompt_s", "server_decode_s"):
            out[name] = round(getattr(self, name), 6)
        out["retry_reasons"] = dict(sorted(self.retry_reasons.items()))
        return out


class UsageMeter:
    """Per-role counters, mergeable across processes and resumed runs via `to_dict()`."""

    def __init__(self) -> None:
        self.roles: dict[str, RoleUsage] = {}

    def role(self, name: str) -> RoleUsage:
        usage = self.roles.get(name)
        if usage is None:
            usage = self.roles[name] = RoleUsage()
        return usage

    __getitem__ = role

    def __contains__(self, name: object) -> bool:
        return name in self.roles

    def total(self) -> RoleUsage:
        out = RoleUsage()
        for usage in self.roles.values():
            out.add(usage)
        return out

    def to_dict(self) -> dict[str, dict[str, Any]]:
        return {name: self.roles[name].to_dict() for name in _ordered(self.roles)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Mapping[str, Any]]) -> UsageMeter:
        return cls().merge(data)

    def merge(self, other: UsageMeter | Mapping[str, Mapping[str, Any]]) -> UsageMeter:
        """Add `other`'s counters into this meter (in place) and return it."""
        items = other.roles.items() if isinstance(other, UsageMeter) else other.items()
        for name, usage in items:
            self.role(name).add(usage)
        return self

    def summary_line(self) -> str:
        """One readable cost line; a role's "calls" here include those served from the cache."""
        if not self.roles:
            return "no model calls"
        return "; ".join(_role_line(name, self.roles[name]) for name in _ordered(self.roles))

    def paid_line(self) -> str:
        """What was paid, per role (requests sent, tokens): cache hits left out, since summed
        over attempts they count again the calls an earlier attempt paid."""
        paid = [n for n in _ordered(self.roles) if self.roles[n].calls or self.roles[n].errors]
        if not paid:
            return "nothing"
        return "; ".join(_paid(name, self.roles[name]) for name in paid)

    def __repr__(self) -> str:
        return f"UsageMeter({self.summary_line()})"


def _ordered(names: Mapping[str, Any]) -> list[str]:
    known = [n for n in ROLE_ORDER if n in names]
    return known + sorted(n for n in names if n not in ROLE_ORDER)


def _plural(n: int, word: str, plural: str | None = None) -> str:
    return f"{n:,} {word if n == 1 else (plural or word + 's')}"


def _role_line(name: str, u: RoleUsage) -> str:
    requests = u.calls + u.cache_hits
    parts = [f"{_plural(requests, 'call')} ({u.cache_hits:,} cached)"]
    if u.completion_tokens:
        parts.append(f"{u.prompt_tokens:,} prompt + {u.completion_tokens:,} completion tokens")
    else:
        parts.append(f"{u.prompt_tokens:,} prompt tokens")
    parts.append(_plural(u.retries, "retry", "retries"))
    if u.errors:
        parts.append(_plural(u.errors, "error"))
    if u.parse_failures:
        parts.append(_plural(u.parse_failures, "parse failure"))
    return f"{name}: " + ", ".join(parts)


def _paid(name: str, u: RoleUsage) -> str:
    parts = [_plural(u.calls, "call")]
    if u.prompt_tokens or u.completion_tokens:
        parts.append(f"{u.prompt_tokens:,} prompt + {u.completion_tokens:,} completion tokens")
    if u.retries:
        parts.append(_plural(u.retries, "retry", "retries"))
    if u.errors:
        parts.append(_plural(u.errors, "error"))
    return f"{name}: " + ", ".join(parts)
