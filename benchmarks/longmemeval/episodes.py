"""An instance as a harness Episode: its haystack flattened into dated turns, in arrival order.

The paper's P-Mem "flattens every session into (date, message) turns" (§4.1, Appendix B.1), so
each instance becomes one ``Episode`` whose events are the haystack's turns in arrival order,
each dated by its session, and whose single question carries the gold answer, the question date
and what the judges need (type, abstention, the time-stamped evidence turns). ``subsample``
draws the smaller haystacks of §4.1.1's growth sweep.
"""

from __future__ import annotations

import dataclasses
import random
from typing import Any

from benchmarks.longmemeval.schema import Instance, Session
from benchmarks.runner.types import Episode, Event, Question

__all__ = ["arrival_order", "evidence_turns", "flatten", "subsample", "to_episode"]


def arrival_order(instance: Instance) -> list[Session]:
    """Sessions oldest first. S files are already sorted by date; the oracle file is not (its
    README says so), and events must arrive in order. Ties keep file order."""
    return sorted(instance.sessions, key=lambda s: (s.at, s.index))


def flatten(instance: Instance) -> tuple[Event, ...]:
    """One Event per turn, in arrival order: ``<qid>-s<session>-t<turn>`` (0-based file
    positions), text ``"<role>: <content>"``, dated by its session."""
    return tuple(
        Event(
            f"{instance.question_id}-s{s.index}-t{t}",
            f"{turn.role}: {turn.content}",
            at=s.at,
            meta={
                "session_id": s.id,
                "session_index": s.index,
                "turn_index": t,
                "role": turn.role,
                "has_answer": turn.has_answer,
                "date": s.date,
            },
        )
        for s in arrival_order(instance)
        for t, turn in enumerate(s.turns)
    )


def evidence_turns(instance: Instance) -> list[dict[str, Any]]:
    """The time-stamped answer-bearing turns the B.1 judges read, oldest first.

    The turns marked ``has_answer``; when an instance marks none, every turn of its answer
    sessions (the evidence sessions) instead."""
    marked = [
        (s, t, turn)
        for s in arrival_order(instance)
        for t, turn in enumerate(s.turns)
        if turn.has_answer
    ]
    if not marked:
        wanted = set(instance.answer_session_ids)
        marked = [
            (s, t, turn)
            for s in arrival_order(instance)
            if s.id in wanted
            for t, turn in enumerate(s.turns)
        ]
    return [
        {"date": s.date, "session_id": s.id, "turn_index": t, "role": turn.role,
         "content": turn.content}
        for s, t, turn in marked
    ]  # fmt: skip


def subsample(instance: Instance, sessions: int) -> Instance:
    """The instance over a haystack of about ``sessions`` sessions, for §4.1.1's growth sweep
    ("as the haystack grows from 8 to 48 sessions"; the paper does not say how the smaller
    haystacks are drawn, so this is our choice, docs/longmemeval.md): every evidence session is
    kept, and the rest are filled from the other sessions in a fixed order drawn per question
    (a permutation seeded by the question id). The draws are nested, so the 16-session haystack
    holds the 8-session one, and the kept sessions stay in file order. A haystack never loses its
    evidence, so it can end up larger than ``sessions``; one smaller than ``sessions`` is kept
    whole."""
    if sessions < 1:
        raise ValueError(f"sessions must be a positive number of sessions, not {sessions}")
    evidence = set(instance.answer_session_ids)
    others = [s for s in instance.sessions if s.id not in evidence]
    rng = random.Random(f"haystack:{instance.question_id}")  # str seeds hash the same everywhere
    drawn = rng.sample(others, len(others))
    room = max(0, sessions - (len(instance.sessions) - len(others)))
    keep = {s.index for s in drawn[:room]} | {
        s.index for s in instance.sessions if s.id in evidence
    }
    return dataclasses.replace(
        instance, sessions=tuple(s for s in instance.sessions if s.index in keep)
    )


def to_episode(instance: Instance) -> Episode:
    """One instance as one Episode (its own haystack) with its one Question."""
    question = Question(
        instance.question_id,
        instance.question,
        (instance.answer,),
        at=instance.question_at,
        meta={
            "question_id": instance.question_id,
            "question_type": instance.question_type,
            "abstention": instance.abstention,
            "question_date": instance.question_date,
            "answer_session_ids": list(instance.answer_session_ids),
            "haystack_sessions": len(instance.sessions),
            "evidence": evidence_turns(instance),
        },
    )
    return Episode(instance.question_id, flatten(instance), (question,))
