"""Where a LongMemEval answer was lost (docs/failure_stages.md), from the evidence the dataset
marks (each question's answer sessions, `meta["evidence"]`) and the verdicts read by hand.

* judge: a hand verdict on this very answer (benchmarks/scoring/hand_verdicts.py) contradicts
  the judge's; the hand verdict then decides whether the answer is wrong at all.
* write: a store that kept nothing (Mem0 reporting no memory after the history).
* retrieval: an arm that reads the history's own turns (turns, chunks, passages, the long
  context) read none of the evidence turns, or read nothing.
* reader: the read held an evidence turn and the answer is otherwise wrong; an abstention
  question's wrong answer is the reader's too (there is nothing to retrieve).
* unattributed: an arm whose read is its own facts (P-Mem's materialized cells, Mem0's
  memories) whose answer the judge rejected: which turn a fact came from is not recorded.

LongMemEval marks no superseded values, so there is no stale stage here (B.1's stale rate is
its own judged measurement).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any

from benchmarks.runner.failures import Attempt
from benchmarks.scoring import hand_verdicts

# a read made of the history's own turns: "user: …", "[date] assistant: …"
_TURN_LINE = re.compile(r"(?:^|\n)(?:\[[^\]\n]*\] )?(?:user|assistant): ", re.I)
_EVIDENCE_CHARS = 80  # how much of an evidence turn must appear in the read


@functools.cache
def _by_answer() -> dict[tuple[str, str], hand_verdicts.Verdict | None]:
    """Hand verdicts by (question id, answer key), across data files (None where two files'
    verdicts on the same words disagree)."""
    out: dict[tuple[str, str], hand_verdicts.Verdict | None] = {}
    for (_, qid, key), verdict in hand_verdicts.load().items():
        seen = out.get((qid, key), verdict)
        out[(qid, key)] = verdict if seen == verdict else None
    return out


def _squash(text: str) -> str:
    return " ".join(text.lower().split())


def _evidence_read(evidence: list[Mapping[str, Any]], read: str) -> bool:
    shown = _squash(read)
    return any(
        _squash(str(turn.get("content", "")))[:_EVIDENCE_CHARS] in shown
        for turn in evidence
        if str(turn.get("content", "")).strip()
    )


def failure_stage(attempt: Attempt) -> tuple[str, str] | None:
    """None for a right (or unscored) answer, else (stage, why)."""
    judged = next(
        (f for f in attempt.scores.values() if isinstance(f, Mapping) and "template" in f),
        None,
    )
    if judged is None or judged.get("correct") is None:
        return None
    meta = attempt.question_meta
    qid = str(meta.get("question_id") or attempt.id)
    hand = _by_answer().get((qid, hand_verdicts.answer_key(attempt.prediction or "")))
    if hand is not None and hand.correct != judged["correct"]:
        said = "accepted" if judged["correct"] else "rejected"
        return "judge", f"the judge {said} it; by hand: {hand.reason}"
    if hand.correct if hand is not None else judged["correct"]:
        return None
    read_meta, read = attempt.read_meta, attempt.read_text
    if read is None:
        return "unattributed", "the run kept no sample log of its reads"
    if read_meta.get("memories") == 0:
        return "write", "the store reports no memory after the history"
    if meta.get("abstention"):
        return "reader", "an abstention question: the answer should have declined"
    evidence = list(meta.get("evidence") or [])
    if not read.strip():
        return "retrieval", "the read is empty"
    if _TURN_LINE.search(read):
        if evidence and not _evidence_read(evidence, read):
            sessions = sorted({str(t.get("session_id")) for t in evidence})
            return "retrieval", f"the read holds no turn of {', '.join(sessions)}"
        return "reader", "the read holds an evidence turn; the judge rejected the answer"
    return "unattributed", "the read is the arm's own facts, not traced to evidence turns"
