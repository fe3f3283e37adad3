"""The gold state of a FactConsolidation source, question matching and the stale rule.

A key is ``(subject, relation)`` and its gold value is the object of the highest serial number
(Appendix B.4). The oracle writer, the Appendix F write-path audit and the stale rate all need
that state; the stale rate also needs each single-hop question matched to its key.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from benchmarks.factconsolidation.facts import TEMPLATES, Fact
from benchmarks.factconsolidation.load import SourceData
from benchmarks.scoring.rules import normalize_answer, substring_exact_match

__all__ = [
    "KeyHistory",
    "QuestionInfo",
    "gold_state",
    "is_stale",
    "match_question",
    "question_infos",
    "words",
]


def words(text: str) -> set[str]:
    """A free-form key's words (lower-cased runs of letters and digits): a cell is "about" a
    subject when every word of the subject is among its key's (Appendix F's rule, ours)."""
    return set(re.findall(r"[a-z0-9]+", text.lower()))


@dataclass(frozen=True, slots=True)
class KeyHistory:
    """The values a key took, in serial order; the last is the gold current value."""

    key: tuple[str, str]
    values: tuple[tuple[int, str], ...]  # (serial, object)

    @property
    def current(self) -> str:
        return self.values[-1][1]

    @property
    def overwritten(self) -> bool:
        """True when a later fact restates the key (B.4: "overwritten at least once")."""
        return len(self.values) > 1


def gold_state(facts: Iterable[Fact]) -> dict[tuple[str, str], KeyHistory]:
    """Per (subject, relation), its values by serial number; the highest serial is current."""
    grouped: dict[tuple[str, str], list[tuple[int, int, str]]] = {}
    for fact in facts:
        grouped.setdefault(fact.key, []).append((fact.serial, fact.line_no, fact.object))
    return {
        key: KeyHistory(key, tuple((serial, obj) for serial, _, obj in sorted(values)))
        for key, values in grouped.items()
    }


def match_question(
    question: str, state: Mapping[tuple[str, str], KeyHistory]
) -> tuple[str, str] | None:
    """The key a single-hop question asks about, or None.

    A question matches a key when it is that relation's MQuAKE question with the key's subject
    in the slot and the key exists in the source. If several do ("Who is the author of X?" also
    fits the officeholder form "Who is the {s}?"), the most specific template wins, as in
    ``parse_fact``.
    """
    hits = []
    for template in TEMPLATES:
        subject = template.question_subject(question)
        if subject is not None and (subject, template.relation) in state:
            hits.append((-template.specificity, template.relation, subject))
    if not hits:
        return None
    _, relation, subject = min(hits)
    return subject, relation


@dataclass(frozen=True, slots=True)
class QuestionInfo:
    """A question with its matched key and what the stale rate needs (B.4 "Metrics")."""

    index: int
    id: str
    text: str
    golds: tuple[str, ...]
    hop: str  # "single" or "multi"
    key: tuple[str, str] | None
    current: str | None  # the key's gold current value
    superseded: tuple[str, ...]  # earlier values of the key that equal no gold (normalized)
    gold_is_current: bool

    @property
    def stale_scoreable(self) -> bool:
        """In the stale-rate denominator: an identifiable chain ending in the gold.

        Single-hop, matched to a key, some gold equals the key's current value, and the key was
        overwritten by a value that differs from every gold. A wrong answer can then be called
        stale exactly when it names one of ``superseded``.
        """
        return self.hop == "single" and self.gold_is_current and bool(self.superseded)


def _same(a: str, b: str) -> bool:
    return normalize_answer(a) == normalize_answer(b)


def question_infos(data: SourceData) -> tuple[QuestionInfo, ...]:
    """Every question of a source with its key match (single-hop only) and stale values."""
    state = gold_state(data.facts)
    hop = "single" if data.hop == "sh" else "multi"
    out = []
    for i, (text, golds, qid) in enumerate(
        zip(data.questions, data.answers, data.question_ids, strict=True)
    ):
        key = match_question(text, state) if hop == "single" else None
        history = state.get(key) if key else None
        current = history.current if history else None
        gold_is_current = current is not None and any(_same(g, current) for g in golds)
        superseded: list[str] = []
        if history:
            for _, value in history.values[:-1]:
                if not any(_same(g, value) for g in golds) and value not in superseded:
                    superseded.append(value)
        out.append(
            QuestionInfo(i, qid, text, golds, hop, key, current, tuple(superseded), gold_is_current)
        )
    return tuple(out)


def is_stale(prediction: str, info: QuestionInfo) -> bool:
    """B.4: a prediction is stale when it is incorrect and names an earlier value of the key."""
    if not info.stale_scoreable or substring_exact_match(prediction, list(info.golds)):
        return False
    return substring_exact_match(prediction, list(info.superseded))
