"""Calibrating an embedder's cosine thresholds on labelled pairs (issue 15, docs/calibration.md).

Every threshold the arms read from the embedder profile (soft identity §3.3, pruning B.1,
Appendix D's merges) is a cosine, and cosines do not transfer between embedders (e5's sit high:
about 0.86 related vs 0.77 unrelated); the paper's values are Qwen3-Embedding-4B's. Pairs are of
the kind each threshold decides: key decisions (`nearest_key_decisions`; `key_pairs` by negative
type) and turn pairs (`turn_pairs`). Everything is pure (numbers in, numbers out) and imports no
dataset, so the import contracts let any part of the harness use it.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

__all__ = [
    "GRID",
    "Criterion",
    "KeyDecisions",
    "Point",
    "Scored",
    "align_extraction",
    "check_confusion",
    "choose",
    "folded_words",
    "key_pairs",
    "label_keys",
    "nearest_key_decisions",
    "relation_vocabulary",
    "sweep",
    "turn_pairs",
    "words",
]

# The sweep: 0.50, 0.51, ..., 0.99 (rounded, so 0.57 is the float literal 0.57, as in a config).
GRID: tuple[float, ...] = tuple(round(0.50 + i / 100, 2) for i in range(50))

POSITIVE = "positive"
# Negative types of a key pair, by how the two gold keys (subject, relation) differ.
SAME_SUBJECT = "same_subject"  # another attribute of the same subject
SAME_RELATION = "same_relation"  # the same attribute of another subject
UNRELATED = "unrelated"
KEY_KINDS = (POSITIVE, SAME_SUBJECT, SAME_RELATION, UNRELATED)
# Kinds of a retrieved turn pair.
UPDATE_PAIR = "positive"  # two turns stating two values of the queried fact, different dates
ONE_UPDATE_TURN = "one_update_turn"  # one of them is such a turn, the other is not
NO_UPDATE_TURN = "no_update_turn"
TURN_KINDS = (UPDATE_PAIR, ONE_UPDATE_TURN, NO_UPDATE_TURN)

# Words a key shares with every relation (and so tell none apart).
_STOP = frozenset(
    {"a", "an", "and", "by", "in", "is", "its", "of", "s", "that", "the", "to", "was"}
    | {"where", "which", "who", "what", "with", "name", "current"}
)
_WORD = re.compile(r"[0-9a-z]+")


def words(text: str) -> frozenset[str]:
    """The words of a key or a phrase as `pmem.write.normalize_key` splits it (lower-case ASCII
    letters and digits; anything else separates, so "Rogério" is "rog" and "rio")."""
    return frozenset(_WORD.findall(text.lower()))


def folded_words(text: str) -> frozenset[str]:
    """`words` of the text with accents folded ("Răutu" is "rautu"): a model writing a key
    may drop a letter's accent where `normalize_key` would drop the letter."""
    return words(unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode())


# -- the sweep ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Scored:
    """One labelled comparison: the cosine a threshold is compared with (``>=`` passes, as in
    the arms) and whether passing is right. ``kind``: "positive" or the negative's type."""

    score: float
    positive: bool
    kind: str
    a: str = ""
    b: str = ""
    source: str = ""
    retrieved: bool | None = None  # turn pairs: both turns among the question's top-k


@dataclass(frozen=True, slots=True)
class Point:
    """The confusion counts at one threshold, and how many of each kind passed."""

    threshold: float
    tp: int
    fp: int
    fn: int
    tn: int
    passed: Mapping[str, int] = field(default_factory=dict)

    @property
    def precision(self) -> float | None:
        """None when nothing passes (no decision to be right about)."""
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else None

    @property
    def recall(self) -> float | None:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else None

    @property
    def f1(self) -> float | None:
        p, r = self.precision, self.recall
        if p is None or r is None:
            return None
        return 2 * p * r / (p + r) if p + r else 0.0


def sweep(
    items: Sequence[Scored], thresholds: Sequence[float] = GRID, positives: int | None = None
) -> list[Point]:
    """Precision, recall and F1 at each threshold (a comparison passes at ``score >= t``).

    ``positives``: the recall denominator when it is larger than the positive items, as for the
    key decisions, where a candidate whose nearest key is the wrong one cannot be merged
    correctly at any threshold but still counts as a miss."""
    n_pos = sum(1 for i in items if i.positive)
    total = n_pos if positives is None else positives
    if total < n_pos:
        raise ValueError(f"positives={positives} is fewer than the {n_pos} positive items")
    n_neg = len(items) - n_pos
    kinds = sorted({i.kind for i in items})
    points = []
    for t in thresholds:
        passed = [i for i in items if i.score >= t]
        tp = sum(1 for i in passed if i.positive)
        fp = len(passed) - tp
        counts = {k: sum(1 for i in passed if i.kind == k) for k in kinds}
        points.append(Point(float(t), tp, fp, total - tp, n_neg - fp, counts))
    return points


@dataclass(frozen=True, slots=True)
class Criterion:
    """How a threshold is chosen from a sweep, and why (the reason goes into the table).

    ``rule``: ``max_f1`` (ties: the higher threshold), ``max_recall_at_precision`` (the highest
    recall among thresholds whose precision is at least ``floor``; ties: the higher threshold),
    ``max_threshold_at_recall`` (the highest threshold whose recall is at least ``floor``)."""

    rule: str
    floor: float | None = None
    why: str = ""

    RULES = ("max_f1", "max_recall_at_precision", "max_threshold_at_recall")

    def __post_init__(self) -> None:
        if self.rule not in self.RULES:
            raise ValueError(f"criterion rule {self.rule!r}: choose one of {', '.join(self.RULES)}")
        if (self.rule != "max_f1") != (self.floor is not None):
            need = "needed" if self.floor is None else "not used"
            raise ValueError(f"criterion {self.rule}: a floor is {need}")
        if self.floor is not None and not 0.0 <= self.floor <= 1.0:
            raise ValueError(f"criterion floor must be in [0, 1], not {self.floor}")

    def describe(self) -> str:
        if self.rule == "max_f1":
            return "max F1"
        if self.rule == "max_recall_at_precision":
            return f"max recall with precision >= {self.floor:.2f}"
        return f"highest threshold with recall >= {self.floor:.2f}"


_EPS = 1e-12  # 0.9 reached by 9/10 is not missed by float rounding


def choose(points: Sequence[Point], criterion: Criterion) -> Point | None:
    """The point the criterion picks, or None when no threshold meets it."""
    if criterion.rule == "max_f1":
        scored = [p for p in points if p.f1]
        return max(scored, key=lambda p: (p.f1, p.threshold)) if scored else None
    floor = float(criterion.floor or 0.0) - _EPS
    if criterion.rule == "max_recall_at_precision":
        ok = [p for p in points if p.precision is not None and p.precision >= floor]
        return max(ok, key=lambda p: (p.recall or 0.0, p.threshold)) if ok else None
    ok = [p for p in points if p.recall is not None and p.recall >= floor]
    return max(ok, key=lambda p: p.threshold) if ok else None


# -- fact keys harvested from a run's extraction replies ---------------------------------------


class FactLike(Protocol):
    """A parsed gold fact line (`benchmarks.factconsolidation.Fact` is one)."""

    serial: int
    text: str  # the sentence
    subject: str
    relation: str
    object: str


def relation_vocabulary(relation: str, sentence: str) -> frozenset[str]:
    """Words that name a relation in a key: its name and its template sentence's literal words
    (e.g. place_of_birth: place, birth, born, city), less the words every relation shares."""
    return (words(relation.replace("_", " ")) | words(sentence)) - _STOP


def align_extraction(
    items: Sequence[tuple[str, str]],
    facts: Sequence[FactLike],
    vocabulary: Mapping[str, frozenset[str]],
) -> list[FactLike | None]:
    """The gold fact each extracted (key, value) states, or None when it cannot be told.

    A fact is a candidate for an item when every word of its subject is in the key, and either
    the key also names its relation (a word of `relation_vocabulary` beyond the subject's) or
    the value's words beyond the subject's are all words of the fact's sentence (the object, or
    "married to George W. Bush"). Among candidates: the one whose object is the value, else the
    first after the last aligned fact (the extractor keeps the text's order), else the first;
    each fact is stated once per reply. Keys naming no subject ("a_snake_case_identifier...", a
    bare value) stay unaligned: their truth is not recoverable from the gold."""
    used: set[int] = set()
    last = -1
    out: list[FactLike | None] = []
    for key, value in items:
        kw, vw = words(key), words(value) - _STOP
        candidates = []
        for i, fact in enumerate(facts):
            sw = words(fact.subject)
            if not sw <= kw:
                sw = folded_words(fact.subject)
            if i in used or not sw or not sw <= kw:
                continue
            same_value = bool(vw) and vw == words(fact.object) - _STOP
            stated = bool(vw - sw) and vw - sw <= words(fact.text)
            if same_value or stated or (kw - sw) & vocabulary.get(fact.relation, frozenset()):
                candidates.append((i, same_value))
        if not candidates:
            out.append(None)
            continue
        exact = [i for i, same in candidates if same]
        later = [i for i, _ in candidates if i > last]
        pick = (exact or later or [candidates[0][0]])[0]
        used.add(pick)
        last = pick
        out.append(facts[pick])
    return out


def label_keys(
    mentions: Iterable[tuple[str, tuple[str, str] | None]],
) -> tuple[list[str], dict[str, tuple[str, str]], set[str]]:
    """(distinct keys in arrival order, key -> its gold (subject, relation), ambiguous keys).

    A key is labelled when its aligned mentions all state one gold key; one that states several
    (the junk key "a_snake_case_identifier_naming_the_subject..." names dozens) is ambiguous and
    unlabelled, and so is a key never aligned."""
    order: list[str] = []
    golds: dict[str, set[tuple[str, str]]] = {}
    for key, gold in mentions:
        if key not in golds:
            order.append(key)
            golds[key] = set()
        if gold is not None:
            golds[key].add(gold)
    labels = {k: next(iter(g)) for k, g in golds.items() if len(g) == 1}
    ambiguous = {k for k, g in golds.items() if len(g) > 1}
    return order, labels, ambiguous


def _key_kind(a: tuple[str, str], b: tuple[str, str]) -> str:
    if a == b:
        return POSITIVE
    if a[0] == b[0]:
        return SAME_SUBJECT
    return SAME_RELATION if a[1] == b[1] else UNRELATED


def key_pairs(
    keys: Sequence[str], labels: Mapping[str, tuple[str, str]], vectors: Mapping[str, np.ndarray]
) -> list[Scored]:
    """Every pair of distinct labelled keys, with its cosine and its kind (`KEY_KINDS`)."""
    labelled = [k for k in keys if k in labels]
    return [
        Scored(
            float(np.dot(vectors[a], vectors[b])),
            labels[a] == labels[b],
            _key_kind(labels[a], labels[b]),
            a,
            b,
        )
        for a, b in itertools.combinations(labelled, 2)
    ]


@dataclass(frozen=True, slots=True)
class KeyDecisions:
    """The soft-identity gate replayed over a stream: one decision per labelled candidate whose
    nearest earlier key is labelled, and the recall denominator (`mergeable`)."""

    decisions: list[Scored]
    mergeable: int  # decided candidates with an earlier key of the same gold key
    unscored: int  # candidates left out: they or their nearest key unlabelled
    first: int  # labelled candidates with no earlier key (nothing to compare)


def nearest_key_decisions(
    keys: Sequence[str], labels: Mapping[str, tuple[str, str]], vectors: Mapping[str, np.ndarray]
) -> KeyDecisions:
    """Each distinct key, in arrival order, against its nearest earlier distinct key (every one,
    labelled or not, as the write path's index holds them): positive when the two name the same
    gold key. Merged keys are kept in the index here (the write path registers only unmerged
    ones), so the replay does not depend on a threshold; the first highest cosine wins, as
    `pmem.write.FlatKeyIndex` and ``np.argmax`` decide."""
    decisions: list[Scored] = []
    mergeable = unscored = first = 0
    seen: list[str] = []
    matrix: list[np.ndarray] = []
    for key in keys:
        if not seen:
            first += key in labels
        elif key in labels:
            scores = np.stack(matrix) @ vectors[key]
            j = int(np.argmax(scores))
            nearest = seen[j]
            if nearest not in labels:
                unscored += 1
            else:
                gold = labels[key]
                mergeable += any(labels.get(k) == gold for k in seen)
                kind = _key_kind(gold, labels[nearest])
                decisions.append(Scored(float(scores[j]), kind == POSITIVE, kind, key, nearest))
        else:
            unscored += 1
        seen.append(key)
        matrix.append(np.asarray(vectors[key], dtype=np.float32))
    return KeyDecisions(decisions, mergeable, unscored, first)


def check_confusion(
    checks: Iterable[tuple[str, str, bool]], labels: Mapping[str, tuple[str, str]]
) -> dict[str, int]:
    """How a same/different check did on labelled key pairs: (key a, key b, said "same")
    -> counts of ``same_said_same``, ``same_said_different``, ``different_said_same``,
    ``different_said_different`` and ``unlabelled``."""
    out = dict.fromkeys(
        (
            "same_said_same",
            "same_said_different",
            "different_said_same",
            "different_said_different",
            "unlabelled",
        ),
        0,
    )
    for a, b, said_same in checks:
        if a not in labels or b not in labels:
            out["unlabelled"] += 1
            continue
        truth = "same" if labels[a] == labels[b] else "different"
        out[f"{truth}_said_{'same' if said_same else 'different'}"] += 1
    return out


# -- dated turns -------------------------------------------------------------------------------


class EventLike(Protocol):
    """A flattened turn (`benchmarks.runner.types.Event` is one)."""

    id: str
    text: str
    at: str | None


def turn_pairs(
    events: Sequence[EventLike],
    vectors: np.ndarray,
    question: np.ndarray,
    updates: set[str],
    k: int = 12,
    source: str = "",
) -> list[Scored]:
    """The turn pairs of one question that the prune threshold decides, labelled.

    Negatives: every pair of the question's cosine top-``k`` turns with two different dates
    (B.1: only those are ever asked) that is not an update pair, typed by how many update
    turns it holds. Positives: every pair of ``updates`` (turns stating a value of the queried
    fact) with different dates, retrieved or not (the cosine between two turns does not depend
    on the question; ``retrieved`` says whether both made the top-k)."""
    if len(events) != len(vectors):
        raise ValueError(f"{len(events)} turns but {len(vectors)} vectors")
    scores = vectors @ question
    top = [int(i) for i in np.argsort(-scores, kind="stable")[:k]]
    in_top = set(top)
    index = {e.id: i for i, e in enumerate(events)}
    missing = updates - set(index)
    if missing:
        raise ValueError(f"update turns not in the haystack: {sorted(missing)}")

    def pair(a: int, b: int, positive: bool, kind: str) -> Scored:
        return Scored(
            float(np.dot(vectors[a], vectors[b])),
            positive,
            kind,
            events[a].id,
            events[b].id,
            source,
            a in in_top and b in in_top,
        )

    def dated_apart(a: int, b: int) -> bool:
        at_a, at_b = events[a].at, events[b].at
        return bool(at_a and at_b and at_a != at_b)

    update_idx = sorted(index[u] for u in updates)
    out = [
        pair(a, b, True, UPDATE_PAIR)
        for a, b in itertools.combinations(update_idx, 2)
        if dated_apart(a, b)
    ]
    for a, b in itertools.combinations(top, 2):
        if not dated_apart(a, b):
            continue
        n = (events[a].id in updates) + (events[b].id in updates)
        if n == 2:
            continue  # an update pair: counted above
        out.append(pair(a, b, False, ONE_UPDATE_TURN if n else NO_UPDATE_TURN))
    return out
