"""LongMemEval as a harness benchmark: one Episode per instance, its one Question.

The paper uses it twice (§4.1, B.1): the 78 ``knowledge-update`` questions in the oracle and S
regimes (Table 3), and all 500 S questions (Tables 4-5). `LongMemEval` picks the questions (type,
ids, keys file, limit, haystack size), answers with the official reading prompt, and records in
the run's fingerprint which file, at which hash, against which pin, was read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from benchmarks.longmemeval.audit import judge_audit
from benchmarks.longmemeval.episodes import subsample, to_episode
from benchmarks.longmemeval.export import judge_model, judge_scorer, write_export
from benchmarks.longmemeval.hub import VARIANTS, variant_named
from benchmarks.longmemeval.loader import (
    DATA_SHA256,
    SHIPPED_SOURCE,
    LoadedFile,
    load,
    read_keys,
    select,
)
from benchmarks.longmemeval.prompts import JUDGE_TEMPLATES, READING_TEMPLATES
from benchmarks.longmemeval.schema import QUESTION_TYPES, Instance
from benchmarks.longmemeval.stages import failure_stage
from benchmarks.runner.types import Episode, Question

__all__ = ["LongMemEval"]


class LongMemEval:
    """LongMemEval as a harness benchmark: one Episode per instance, its one Question.

    ``variant`` names the regime (``s``, ``s_cleaned``, ``oracle``): it labels the run and
    picks the file ``path="hf"`` downloads. ``types`` keeps those question types (the paper's
    Table 3 is ``["knowledge-update"]``); ``ids`` or ``keys`` (a keys file) pick questions by
    id, every one of which must be in the file; ``limit`` keeps the first N after that.
    ``reading`` is the official reading method: ``direct`` or ``cot``. ``sessions`` shrinks
    every haystack to about that many sessions, evidence kept (`subsample`; §4.1.1's growth
    sweep); None keeps the haystacks as released."""

    wording = None  # natural text: no templates to hand to oracle arms

    def __init__(
        self,
        path: str | Path | None = None,
        variant: str = "s",
        limit: int | None = None,
        types: Sequence[str] | None = None,
        *,
        ids: Sequence[str] | None = None,
        keys: str | Path | None = None,
        reading: str = "direct",
        sessions: int | None = None,
    ) -> None:
        variant_named(variant)
        if sessions is not None and sessions < 1:
            raise ValueError(
                f"benchmark.sessions must be a positive number of sessions or null, not {sessions}"
            )
        if limit is not None and limit < 1:
            raise ValueError(f"limit must be a positive number of questions, not {limit}")
        if reading not in READING_TEMPLATES:
            raise ValueError(f"reading must be one of {list(READING_TEMPLATES)}, not {reading!r}")
        if types is not None:
            unknown = [t for t in types if t not in QUESTION_TYPES]
            if unknown:
                raise ValueError(f"unknown question types {unknown}; known: {list(QUESTION_TYPES)}")
        self.path = path
        self.variant = variant
        self.limit = limit
        self.types = tuple(types) if types is not None else None
        self.ids = tuple(ids) if ids is not None else None
        self.keys = keys
        self.reading = reading
        self.sessions = sessions
        self.name = f"longmemeval_{variant}"
        self._loaded: LoadedFile | None = None

    @property
    def loaded(self) -> LoadedFile:
        if self._loaded is None:
            self._loaded = load(self.path, self.variant)
        return self._loaded

    def instances(self) -> list[Instance]:
        ids: list[str] | None = list(self.ids) if self.ids is not None else None
        asked_by = "ids"
        if self.keys is not None:
            from_keys = read_keys(self.keys)
            ids = from_keys if ids is None else [*ids, *from_keys]
            asked_by = f"keys file {self.keys}"
        chosen = select(self.loaded, types=self.types, ids=ids, asked_by=asked_by, limit=self.limit)
        if self.sessions is not None:
            chosen = [subsample(i, self.sessions) for i in chosen]
        return chosen

    def episodes(self) -> list[Episode]:
        return [to_episode(i) for i in self.instances()]

    def answer_messages(self, question: Question, context: str) -> list[dict[str, str]]:
        """The official reading prompt as one user message: the arm's context is the history,
        the current date is the question date as released."""
        date = question.meta.get("question_date") or question.at or ""
        prompt = READING_TEMPLATES[self.reading].format(context, date, question.text)
        return [{"role": "user", "content": prompt}]

    #: where a wrong answer was lost, from the evidence sessions and the hand verdicts (a
    #: static rule: exported runs are attributed from their files, without loading the data)
    failure_stage = staticmethod(failure_stage)

    async def audit_judge(
        self, records: Sequence[Mapping[str, Any]], judge: Any
    ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """The run's judge on planted answers (`audit.judge_audit`), after every scoring."""
        return await judge_audit(records, judge)

    def prompts(self) -> dict[str, str]:
        """The prompts hashed with the run: the reading prompt and the official judge's."""
        return {
            "answer": READING_TEMPLATES[self.reading],
            **{f"judge.{name}": text for name, text in JUDGE_TEMPLATES.items()},
        }

    def fingerprint(self) -> dict[str, Any]:
        loaded = self.loaded
        v = VARIANTS[self.variant]
        if self.path is None:
            dataset, pinned = SHIPPED_SOURCE, DATA_SHA256
        else:
            dataset, pinned = f"{v.repo} @ {v.revision}: {v.filename}", v.sha256
        return {
            "variant": self.variant,
            "dataset": dataset,
            "file": loaded.origin,
            "sha256": loaded.sha256,
            "pinned_sha256": pinned,
            "matches_pin": None if pinned is None else loaded.sha256 == pinned,
            "instances_in_file": len(loaded.instances),
            "questions": len(self.instances()),
            "types": list(self.types) if self.types is not None else None,
            "ids": list(self.ids) if self.ids is not None else None,
            "keys": str(self.keys) if self.keys is not None else None,
            "limit": self.limit,
            "reading": self.reading,
            "sessions": self.sessions,
        }

    def on_scored(
        self,
        folder: Path,
        predictions: Sequence[Mapping[str, Any]],
        scores: Sequence[Mapping[str, Any]],
        config: Mapping[str, Any],
    ) -> dict[str, Any]:
        """After each scoring (the runner's hook): the verdicts in the official eval-results
        shape into the run folder, and the official metrics for summary.json (``longmemeval``).
        A run without the official judge (a read-only sweep) gets neither."""
        if judge_scorer(config) is None or judge_model(config) is None or not scores:
            return {}
        exported = write_export(folder, predictions, scores, config)
        return {
            "longmemeval": {**exported.metrics.to_dict(), "eval_results": exported.results.name}
        }
