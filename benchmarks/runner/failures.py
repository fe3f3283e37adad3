"""Where each wrong answer was lost: the stage contract between the runner and a benchmark.

A benchmark that can attribute its failures has a ``failure_stage(attempt)`` method (its
package's ``stages.py``): given one scored question as an `Attempt` (what was asked, what the
arm read and reported, what the reader said, how it was scored) it returns None for a right
answer, else ``(stage, why)`` with a stage of `FAILURE_STAGES`. The runner writes the stages to
the run folder (stages.jsonl) and their counts to summary.json; ``python -m
benchmarks.reports.failures`` does the same for exported runs, from their files alone.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.results.loader import frontiers, read_typed
from benchmarks.results.records import FAILURE_STAGES, Failure, Prediction, Sample, Score
from benchmarks.runner.runs import RunFolder

__all__ = [
    "FAILURE_STAGES",
    "Attempt",
    "StageRule",
    "attempts_of",
    "attribute",
    "failures_of",
    "record_failures",
    "stage_counts",
]


@dataclass(frozen=True, slots=True)
class Attempt:
    """One scored question as a stage rule sees it.

    `read_text` / `read_ids` are None when the run kept no sample log; `read_meta` is what the
    arm reported about its read (a cell's value and retained values, a peer's introspected
    store, a retriever's coverage); `scores` holds each scorer's fields by scorer name;
    `memory` is what a state arm's store held as current after the history, (key, value) per
    cell, or None when the arm keeps no such store."""

    id: str
    question: str
    golds: tuple[str, ...]
    prediction: str | None
    question_meta: Mapping[str, Any] = field(default_factory=dict)
    read_text: str | None = None
    read_ids: tuple[str, ...] | None = None
    read_meta: Mapping[str, Any] = field(default_factory=dict)
    scores: Mapping[str, Any] = field(default_factory=dict)
    memory: tuple[tuple[str, str], ...] | None = None


#: a benchmark's rule: None for a right answer, else (stage, why)
StageRule = Callable[[Attempt], "tuple[str, str] | None"]


def attempts_of(
    predictions: Iterable[Prediction],
    samples: Iterable[Sample],
    scores: Iterable[Score],
    memories: Mapping[str, Sequence[tuple[str, str]]] | None = None,
) -> list[Attempt]:
    """The attempts of a run's records, one per scored question (the last line per id);
    `memories`: a state arm's current cells by episode (`frontiers`)."""
    memories = memories or {}
    by_id = {p.id: p for p in predictions}
    reads = {s.id: s.context for s in samples if s.context is not None}
    out = []
    for score in {s.id: s for s in scores}.values():
        p = by_id.get(score.id)
        if p is None or p.prediction is None:
            continue  # a read-only run's reads: nothing was answered
        read = reads.get(score.id)
        cells = memories.get(p.episode or "")
        out.append(
            Attempt(
                id=score.id,
                question=p.question or "",
                golds=tuple(p.golds or ()),
                prediction=p.prediction,
                question_meta=p.meta or {},
                read_text=read.get("text") if read else None,
                read_ids=tuple(read.get("ids") or ()) if read else None,
                read_meta=p.context_meta or {},
                scores=score.scorers,
                memory=tuple((k, v) for k, v in cells) if cells is not None else None,
            )
        )
    return sorted(out, key=lambda a: a.id)


def attribute(rule: StageRule, attempts: Sequence[Attempt]) -> list[Failure]:
    """The stage of every wrong answer; a rule that names no known stage is a bug, not data."""
    out = []
    for attempt in attempts:
        found = rule(attempt)
        if found is None:
            continue
        stage, why = found
        if stage not in FAILURE_STAGES:
            raise ValueError(f"{attempt.id}: stage {stage!r} is not one of {FAILURE_STAGES}")
        out.append(Failure(id=attempt.id, stage=stage, why=why))
    return out


def stage_counts(failures: Iterable[Failure], answered: int) -> dict[str, Any]:
    """summary.json's ``failure_stages``: the answered questions, the wrong ones and their count
    per stage (every stage named, zeros included, in `FAILURE_STAGES` order)."""
    counts = Counter(f.stage for f in failures)
    return {
        "answered": answered,
        "wrong": sum(counts.values()),
        "by_stage": {stage: counts.get(stage, 0) for stage in FAILURE_STAGES},
    }


def failures_of(folder: Path, rule: StageRule) -> tuple[list[Failure], dict[str, Any]]:
    """A run folder's failures and their counts (`stage_counts`), from its records alone: a
    live run folder or its export."""
    attempts = attempts_of(
        read_typed(folder, "predictions", Prediction),
        read_typed(folder, "samples", Sample),
        read_typed(folder, "scores", Score),
        frontiers(folder),
    )
    failures = attribute(rule, attempts)
    return failures, stage_counts(failures, len(attempts))


def record_failures(run: RunFolder, rule: StageRule) -> dict[str, Any]:
    """Attribute a scored run's wrong answers: stages.jsonl rewritten whole; returns the counts
    summary.json carries."""
    failures, counts = failures_of(run.path, rule)
    run.failures.rewrite(failures)
    return counts
