"""The figures of a haystack file, and LongMemEval's official metrics over judged answers.

``instance_stats`` is what ``python -m benchmarks.longmemeval stats`` prints, so a file can be
compared with the paper's (B.1: 78 ``knowledge-update`` questions in the full S file) before a
run is spent on it. ``official_metrics`` is the official ``print_qa_metrics.py``'s aggregation
(xiaowu0162/LongMemEval @ 9e0b455f4ef0e2ab8f2e582289761153549043fc, src/evaluation; MIT), rule
for rule; ``format_metrics`` prints what the script prints.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from benchmarks.longmemeval.schema import (
    KNOWLEDGE_UPDATE,
    PAPER_KNOWLEDGE_UPDATE_COUNT,
    QUESTION_TYPES,
    Instance,
    is_abstention,
)

__all__ = [
    "OFFICIAL_TYPES",
    "OfficialMetrics",
    "format_metrics",
    "format_stats",
    "instance_stats",
    "metrics_from_files",
    "official_metrics",
]

# print_qa_metrics.py's type2acc, in its order (its per-type lines and the task average follow it)
OFFICIAL_TYPES = (
    "single-session-user",
    "single-session-preference",
    "single-session-assistant",
    "multi-session",
    "temporal-reasoning",
    "knowledge-update",
)
assert set(OFFICIAL_TYPES) == set(QUESTION_TYPES)


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


# -- the official metrics ----------------------------------------------------------------------


def _mean4(values: Sequence[float]) -> float | None:
    """``round(np.mean(values), 4)`` as the script computes it; None where it gives nan."""
    if not values:
        return None  # np.mean([]) is nan (with a RuntimeWarning); so is any mean with a nan in it
    if any(v is None for v in values):
        return None
    value = float(np.round(np.mean(np.asarray(values, dtype=np.float64)), 4))
    return None if math.isnan(value) else value


@dataclass(frozen=True, slots=True)
class OfficialMetrics:
    """print_qa_metrics.py's figures, each a fraction rounded to 4 places as it rounds them
    (None where it prints nan), with the counts beside them. ``task_averaged_present`` is ours:
    the mean over the types that have questions, for subsets (one type) where the official task
    average is nan; it is not one of the official figures."""

    by_type: dict[str, float | None]
    type_n: dict[str, int]
    task_averaged: float | None
    overall: float | None
    n: int
    abstention: float | None
    abstention_n: int
    task_averaged_present: float | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": "print_qa_metrics.py @ 9e0b455f (fractions rounded to 4 places)",
            "by_type": {
                t: {"accuracy": self.by_type[t], "n": self.type_n[t]} for t in self.by_type
            },
            "task_averaged": self.task_averaged,
            "overall": self.overall,
            "n": self.n,
            "abstention": self.abstention,
            "abstention_n": self.abstention_n,
            "task_averaged_present": self.task_averaged_present,
        }


def official_metrics(labels: Iterable[tuple[str, str, bool]]) -> OfficialMetrics:
    """The official figures over ``(question_id, question_type, label)`` triples (one per judged
    question). An unknown type raises, as the script's ``type2acc[...]`` does.

    Rule for rule, because on 500 questions the script's figures differ from one another by
    several points and readers compare ours with them: every question counts in its type
    (abstention too); per type ``round(np.mean(labels), 4)`` over the six types in the
    script's order, nan for an empty type; task-averaged ``round(np.mean(the six type means),
    4)`` (nan when any is absent);
    overall ``round(np.mean(all labels), 4)``; abstention the same over ids containing
    ``'_abs'``, with its count. The script's check ``autoeval_label.model ==
    'gpt-4o-2024-08-06'`` is not made: our judge is another model (docs/longmemeval.md).
    """
    type2acc: dict[str, list[int]] = {t: [] for t in OFFICIAL_TYPES}
    abstention: list[int] = []
    for question_id, question_type, label in labels:
        if question_type not in type2acc:
            raise ValueError(
                f"question {question_id!r}: question_type {question_type!r} is not one of "
                f"{', '.join(OFFICIAL_TYPES)}"
            )
        type2acc[question_type].append(1 if label else 0)
        if is_abstention(question_id):
            abstention.append(1 if label else 0)
    all_acc: list[int] = []
    task_acc: list[float | None] = []
    for values in type2acc.values():
        all_acc += values
        task_acc.append(float(np.mean(values)) if values else None)
    present = [v for v in task_acc if v is not None]
    return OfficialMetrics(
        by_type={t: _mean4(v) for t, v in type2acc.items()},
        type_n={t: len(v) for t, v in type2acc.items()},
        task_averaged=_mean4(task_acc),
        overall=_mean4(all_acc),
        n=len(all_acc),
        abstention=_mean4(abstention),
        abstention_n=len(abstention),
        task_averaged_present=_mean4(present),
    )


def metrics_from_files(
    results: Iterable[Mapping[str, Any]], references: Iterable[Mapping[str, Any]]
) -> OfficialMetrics:
    """The official figures from the official file shapes: eval-results lines
    (``question_id``, ``autoeval_label.label``) and a reference list (``question_id``,
    ``question_type``), as print_qa_metrics.py reads them. An id missing from the references
    raises (the script stops with a KeyError)."""
    qtype = {str(r["question_id"]): str(r["question_type"]) for r in references}
    triples = []
    for entry in results:
        question_id = str(entry["question_id"])
        if question_id not in qtype:
            raise ValueError(
                f"question {question_id!r} of the eval results is not in the references"
            )
        triples.append((question_id, qtype[question_id], bool(entry["autoeval_label"]["label"])))
    return official_metrics(triples)


def _printed(value: float | None) -> str:
    """A figure as the script prints it (``str`` of a numpy float: 0.5, 0.4321, nan)."""
    return "nan" if value is None else str(value)


def format_metrics(m: OfficialMetrics) -> str:
    """What print_qa_metrics.py prints, line for line."""
    lines = ["", "Evaluation results by task:"]
    for t in OFFICIAL_TYPES:
        lines.append(f"\t{t}: {_printed(m.by_type[t])} ({m.type_n[t]})")
    lines += [
        "",
        f"Task-averaged Accuracy: {_printed(m.task_averaged)}",
        f"Overall Accuracy: {_printed(m.overall)}",
        f"Abstention Accuracy: {_printed(m.abstention)} ({m.abstention_n})",
    ]
    return "\n".join(lines)
