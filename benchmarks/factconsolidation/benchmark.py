"""FactConsolidation as a harness benchmark: one episode per source, and the official prompts.

The runner builds it from ``configs/benchmark/factconsolidation.yaml``; it turns a loaded
source into events and questions (with what the stale rate needs, B.4) and records the prompts
and the data it read.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchmarks.factconsolidation.gold import question_infos
from benchmarks.factconsolidation.load import (
    HF_DATASET,
    HF_SPLIT,
    SOURCE_PREFIX,
    SourceData,
    load,
    normalize_source,
)
from benchmarks.factconsolidation.prompts import (
    MEMORIZE_TEMPLATE,
    QUERY_AGENTIC_TEMPLATE,
    QUERY_TEMPLATE,
    SYSTEM_MESSAGE,
    TIME_STAMP,
)
from benchmarks.factconsolidation.stages import failure_stage
from benchmarks.runner.types import Episode, Event, Question

__all__ = ["FactConsolidation"]


class FactConsolidation:
    """One FactConsolidation source as a harness benchmark: one episode, its questions.

    Events are the fact lines in serial order, each with its parse in ``meta``. Questions carry
    the matched key and the superseded values, so the stale rate can be scored (B.4).
    """

    wording = None  # natural text: no templates to hand to oracle arms

    def __init__(
        self,
        source: str = "sh_6k",
        path: str | Path | None = None,
        limit: int | None = None,
        *,
        time_stamp: str = TIME_STAMP,
    ) -> None:
        if limit is not None and limit < 1:
            raise ValueError(f"limit must be a positive number of questions, not {limit}")
        self.source = normalize_source(source)
        self.path = path
        self.limit = limit
        self.time_stamp = time_stamp
        self.name = SOURCE_PREFIX + self.source
        self._data: SourceData | None = None

    @property
    def data(self) -> SourceData:
        if self._data is None:
            self._data = load(self.source, self.path)
        return self._data

    def episodes(self) -> list[Episode]:
        data = self.data
        facts = sorted(data.facts, key=lambda f: (f.serial, f.line_no))
        events = tuple(
            Event(
                f"{data.name}-fact{f.serial}",
                f.line,
                meta={
                    "serial": f.serial,
                    "subject": f.subject,
                    "relation": f.relation,
                    "object": f.object,
                },
            )
            for f in facts
        )
        infos = question_infos(data)[: self.limit]
        questions = tuple(
            Question(
                info.id,
                info.text,
                info.golds,
                meta={
                    "source": data.source,
                    "hop": info.hop,
                    "key": list(info.key) if info.key else None,
                    "current": info.current,
                    "superseded": list(info.superseded),
                    "stale_scoreable": info.stale_scoreable,
                },
            )
            for info in infos
        )
        return [Episode(data.name, events, questions)]

    def answer_messages(self, question: Question, context: str) -> list[dict[str, str]]:
        """The official long-context prompt: system, then memorized context + query.

        As MemoryAgentBench's long-context agent does, the context is wrapped in the memorize
        template and the query follows it after one newline, in a single user turn under the
        official system message. The arm decides what the context is (the whole stream, chunks,
        cells); it fills the template's {context} slot once.
        """
        memorized = MEMORIZE_TEMPLATE.format(time_stamp=self.time_stamp, context=context)
        query = QUERY_TEMPLATE.format(question=question.text)
        return [
            {"role": "system", "content": SYSTEM_MESSAGE},
            {"role": "user", "content": memorized + "\n" + query},
        ]

    #: where a wrong answer was lost, from the gold state (a static rule: exported runs are
    #: attributed from their files, without loading the data)
    failure_stage = staticmethod(failure_stage)

    def prompts(self) -> dict[str, str]:
        return {
            "system": SYSTEM_MESSAGE,
            "memorize": MEMORIZE_TEMPLATE,
            "query": QUERY_TEMPLATE,
            "query_agentic": QUERY_AGENTIC_TEMPLATE,
        }

    def fingerprint(self) -> dict[str, Any]:
        data = self.data
        return {
            "source": data.name,
            "dataset": f"{HF_DATASET} ({HF_SPLIT})",
            "file": data.origin,
            "sha256": data.sha256,
            "questions": len(data.questions[: self.limit]),
            "time_stamp": self.time_stamp,
        }
