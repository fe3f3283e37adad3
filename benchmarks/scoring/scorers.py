"""Scorers: a prediction record in, named outcomes out. Scoring is its own stage over saved
predictions, so a scorer can change (or a judge be re-run from cache) without re-answering."""

from __future__ import annotations

import re
from typing import Any, Protocol

from benchmarks.scoring.rules import memoryagentbench_score


class Scorer(Protocol):
    name: str
    #: model roles the scorer calls (e.g. ["judge"]); the runner starts only what is needed
    needs: tuple[str, ...]

    async def score(self, record: dict[str, Any], models: Any) -> dict[str, Any]: ...


class SubstringMatch:
    """MemoryAgentBench's accuracy: substring exact match on the raw output and on the parsed
    `Answer:` line, keeping the better (see benchmarks/scoring/rules.py)."""

    name = "substring"
    needs: tuple[str, ...] = ()

    async def score(self, record: dict[str, Any], models: Any = None) -> dict[str, Any]:
        metrics = memoryagentbench_score(record["prediction"], list(record["golds"]))
        return {
            "correct": bool(metrics["substring_exact_match"]),
            "exact_match": bool(metrics["exact_match"]),
            "f1": float(metrics["f1"]),
        }


def names_subject(text: str, subject: str) -> bool:
    """Whether `text` names `subject` as a word, case ignored, spaces or hyphens allowed inside
    it and a plural "s" after it: a model may write "alarm clock" or "Alarmclocks" for the
    generator's "alarmclock"; "pen" is still not named by "pencil" or "open"."""
    letters = [c for c in subject.lower() if not c.isspace()]
    if not letters:
        return False
    inner = r"[\s_-]?".join(re.escape(c) for c in letters)
    return re.search(rf"(?<!\w){inner}s?(?!\w)", text.lower()) is not None
