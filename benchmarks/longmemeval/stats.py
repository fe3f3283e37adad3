"""The figures of a haystack file: question types, abstentions and haystack sizes.

What ``python -m benchmarks.longmemeval stats`` prints, so a file can be compared with the
paper's (B.1: 78 ``knowledge-update`` questions in the full S file) before a run is spent on it.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from benchmarks.longmemeval.schema import (
    KNOWLEDGE_UPDATE,
    PAPER_KNOWLEDGE_UPDATE_COUNT,
    QUESTION_TYPES,
    Instance,
)

__all__ = ["format_stats", "instance_stats"]


def instance_stats(instances: Sequence[Instance]) -> dict[str, Any]:
    """Per-type counts, abstentions, and sessions / turns / characters per instance."""

    def spread(values: list[int]) -> dict[str, float | int]:
        if not values:
            return {"mean": 0, "min": 0, "max": 0}
        return {"mean": statistics.fmean(values), "min": min(values), "max": max(values)}

    types = Counter(i.question_type for i in instances)
    return {
        "instances": len(instances),
        "question_types": {t: types.get(t, 0) for t in QUESTION_TYPES},
        "abstention": sum(i.abstention for i in instances),
        "knowledge_update": types.get(KNOWLEDGE_UPDATE, 0),
        "sessions": spread([len(i.sessions) for i in instances]),
        "turns": spread([i.turns for i in instances]),
        "chars": spread([i.chars for i in instances]),
        "total_chars": sum(i.chars for i in instances),
        "answer_sessions_missing": sum(
            1
            for i in instances
            for sid in i.answer_session_ids
            if sid not in {s.id for s in i.sessions}
        ),
    }


def format_stats(stats: Mapping[str, Any], origin: str, sha: str) -> str:
    def row(name: str, s: Mapping[str, Any]) -> str:
        return f"{name:<24} mean {s['mean']:>12,.1f}   min {s['min']:>10,}   max {s['max']:>10,}"

    lines = [f"file: {origin}", f"sha256: {sha}", f"instances: {stats['instances']}", ""]
    lines.append("question type                  n")
    for qtype, n in stats["question_types"].items():
        lines.append(f"{qtype:<26} {n:>5}")
    ku = stats["knowledge_update"]
    lines += [
        f"{'abstention (_abs)':<26} {stats['abstention']:>5}",
        "",
        f"knowledge-update subset: {ku} (the paper's full S file: {PAPER_KNOWLEDGE_UPDATE_COUNT})",
        "",
        "per instance",
        row("sessions", stats["sessions"]),
        row("turns", stats["turns"]),
        row("haystack chars", stats["chars"]),
        f"haystack chars, all instances: {stats['total_chars']:,}",
    ]
    if stats["answer_sessions_missing"]:
        lines.append(
            f"answer session ids not in their haystack: {stats['answer_sessions_missing']}"
        )
    return "\n".join(lines)
