"""Where a LongMemEval answer was lost (docs/failure_stages.md), from the evidence the dataset
marks (each question's answer sessions, `meta["evidence"]`) and the verdicts read by hand.

* judge: a hand verdict on this very answer (benchmarks/scoring/hand_verdicts.py) contradicts
  the judge's; the hand verdict then decides whether the answer is wrong at all.
* write: a store that kept nothing (Mem0 reporting no memory after the history).
* retrieval: an arm that reads the history's own turns (turns, chunks, passages, the long
  context) read none of the evidence turns, or read nothing.
* reader: the read held an evidence turn and the answer is otherwise wrong; an abstention
  question's wrong answer is the reader's too (there is nothing to retrieve).
* For an arm whose read is its own facts (P-Mem's materialized cells, Mem0's memories), on a
  question whose gold is one stated value (single-session user or assistant, knowledge update)
  of a few words: reader when the read states it, write when the arm's whole store (its
  snapshot's cells, or a read that shows every cell) does not, retrieval when the store does
  but the read does not.
* unattributed: the rest of the facts arms' wrong answers: a derived answer (counted, dated,
  a preference) or a sentence-long gold is in no one fact, and which turn a fact came from is
  not recorded.

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
# the question types whose gold is one value the history states (the others are derived)
_STATED = ("single-session-user", "single-session-assistant", "knowledge-update")
_GOLD_WORDS = 4  # a longer gold (or alternative) is a sentence, not a value a fact states


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


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def _values(gold: str) -> list[list[str]]:
    """The gold's short forms as words: the gold and each parenthesised alternative ("25
    minutes and 50 seconds (or 25:50)"), those of at most `_GOLD_WORDS` words."""
    forms = [re.sub(r"\(\s*or\s[^)]*\)", " ", gold), *re.findall(r"\(\s*or\s+([^)]*)\)", gold)]
    return [w for w in map(_words, forms) if 0 < len(w) <= _GOLD_WORDS]


def _states(text: str, values: list[list[str]]) -> bool:
    """Whether `text` has one of the values' words as a run of its own words."""
    words = _words(text)
    return any(words[i : i + len(v)] == v for v in values for i in range(len(words) - len(v) + 1))


def _facts_stage(attempt: Attempt, read: str) -> tuple[str, str]:
    """Where a facts arm's wrong answer was lost: see the module's docstring."""
    kind = str(attempt.question_meta.get("question_type") or "")
    untraced = "unattributed", "the read is the arm's own facts, not traced to evidence turns"
    values = [v for g in attempt.golds for v in _values(g)]
    if kind not in _STATED or not values:
        return untraced
    gold = " ".join(values[0])
    if _states(read, values):
        return "reader", f"the read states '{gold}'; the answer is otherwise wrong"
    whole = attempt.read_meta.get("cells") == len(attempt.read_ids or ())
    if attempt.memory is not None:
        if any(_states(f"{key}: {value}", values) for key, value in attempt.memory):
            return "retrieval", f"a cell of the store states '{gold}'; the read does not"
        return "write", f"no cell of the store states '{gold}'"
    if whole:
        return "write", f"the read shows every cell and none states '{gold}'"
    return untraced


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
    return _facts_stage(attempt, read)
