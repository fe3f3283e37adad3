"""MemoryAgentBench FactConsolidation: loader, template parser, gold state and B.4 chunking.

FactConsolidation is the Conflict_Resolution split of MemoryAgentBench (paper §4.3, Appendix
B.4). Each of its eight sources (single-hop ``sh`` / multi-hop ``mh`` at 6k, 32k, 64k and 262k
tokens) is one numbered list of counterfactual facts, ``N. <fact>``, where a higher serial
number overrides a lower one, plus 100 questions. The ``sh`` and ``mh`` rows of a length share
the same list. The facts are rendered from MQuAKE's relation templates, so every line can be
parsed back into ``(subject, relation, object)``. That gives the gold state mechanically: the
key is ``(subject, relation)`` and its value is the object of the highest serial number. The
oracle writer, the Appendix F write-path audit and the stale rate all need that state.

The data ships with the repository (``data/memoryagentbench``; provenance in SOURCES.md there).
A local JSON file can be given instead, and ``path="hf"`` loads the official Hugging Face
dataset when a hub is reachable (never in tests). The figures the data gives, and why they
differ from B.4's, are in ``docs/factconsolidation.md``:

    python -m benchmarks.factconsolidation stats [--json] [--source sh_6k]
"""

from __future__ import annotations

import argparse
import difflib
import gzip
import hashlib
import json
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from benchmarks.runner.types import Episode, Event, Question
from benchmarks.scoring.rules import normalize_answer, substring_exact_match

__all__ = [
    "CHUNK_SIZE",
    "DATA_FILE",
    "LENGTHS",
    "MEMORIZE_TEMPLATE",
    "PAPER_FIGURES",
    "QUERY_TEMPLATE",
    "RELATIONS",
    "SOURCES",
    "SYSTEM_MESSAGE",
    "TEMPLATES",
    "Fact",
    "FactConsolidation",
    "KeyHistory",
    "QuestionInfo",
    "SourceData",
    "SourceStats",
    "Template",
    "UnknownSource",
    "UnparsedFact",
    "chunks",
    "fact_candidates",
    "gold_state",
    "is_stale",
    "load",
    "main",
    "match_question",
    "normalize_source",
    "parse_context",
    "parse_fact",
    "question_infos",
    "render_fact",
    "source_stats",
]

DATA_DIR = Path(__file__).resolve().parents[1] / "data" / "memoryagentbench"
DATA_FILE = DATA_DIR / "Conflict_Resolution.json.gz"
DATA_ORIGIN = "benchmarks/data/memoryagentbench/Conflict_Resolution.json.gz"
# sha256 of the JSON (after decompression) and of the shipped gzip; both are in SOURCES.md.
DATA_SHA256 = "d5168e94cba99744e35031c1e6419e6090d63978f5addc9163d56704a78c7acd"
DATA_GZ_SHA256 = "c8de720405d1733d9b2c66c11e0f5b7a05d737f54d439139e8786d315254283e"

HF_DATASET = "ai-hyz/MemoryAgentBench"
HF_SPLIT = "Conflict_Resolution"
HF_PATH = "hf"  # the `path` value that asks for the hub

SOURCE_PREFIX = "factconsolidation_"
LENGTHS = ("6k", "32k", "64k", "262k")
HOPS = ("sh", "mh")
SOURCES = tuple(f"{hop}_{length}" for length in LENGTHS for hop in HOPS)
HEADER = "Here is a list of facts:"
CHUNK_SIZE = 1000  # B.4: "1,000-character line-aligned pieces"

_FACT_LINE = re.compile(r"(\d+)\. (.*)", re.DOTALL)


# --------------------------------------------------------------------------------------------
# The official prompts (HUST-AI-HYZ/MemoryAgentBench @ 455306dcabc3842526eb83cd4e225e5d486c5c5d,
# utils/templates.py, BASE_TEMPLATES["factconsolidation"]; MIT). Ported character for character:
# in the official source the memorize template's first line break is written ``\\n``, so the
# model sees a literal backslash-n there, and a real line break everywhere else.
# --------------------------------------------------------------------------------------------

SYSTEM_MESSAGE = (
    "You are a helpful assistant that can read the context and memorize it for future retrieval."
)
MEMORIZE_TEMPLATE = (
    "Dialogue between User and Assistant {time_stamp} \\n<User> The following context is the "
    "facts I have learned: \n{context}\n <Assistant> I have learned the facts and I will answer "
    "the question you ask."
)
QUERY_TEMPLATE = (
    "Pretend you are a knowledge management system. Each fact in the knowledge pool is provided "
    "with a serial number at the beginning, and the newer fact has larger serial number. \n You "
    "need to solve the conflicts of facts in the knowledge pool by finding the newest fact with "
    "larger serial number. You need to answer a question based on this rule. You should give a "
    "very concise answer without saying other words for the question **only** from the knowledge "
    "pool you have memorized rather than the real facts in real world. \n\nFor example:\n\n "
    "[Knowledge Pool] \n\n Question: Based on the provided Knowledge Pool, what is the name of the "
    "current president of Russia? \nAnswer: Donald Trump \n\n Now Answer the Question: Based on "
    "the provided Knowledge Pool, {question} \nAnswer:"
)
# The agentic-memory agents' variant ("Archival Memory"; the double spaces are the official's).
QUERY_AGENTIC_TEMPLATE = (
    "Pretend you are a knowledge management system. Each fact in the  Archival Memory is provided "
    "with a serial number at the beginning, and the newer fact has larger serial number. \n You "
    "need to solve the conflicts of facts in the Archival Memory by finding the newest fact with "
    "larger serial number. You need to answer a question based on this rule. You should give a "
    "very concise answer without saying other words for the question **only** from the knowledge "
    "pool you have memorized rather than the real facts in real world. \n\nFor example:\n\n "
    "[Archival Memory] \n\n Question: Based on the Archival Memory, what is the name of the "
    "current president of Russia? \nAnswer: Donald Trump \n\n Now Answer the Question: Based on "
    "the  Archival Memory, {question} \nAnswer:"
)
# The official code fills {time_stamp} with the wall clock (time.strftime("%Y-%m-%d %H:%M:%S")),
# which would make every prompt hash differ between runs. We fix one value in the same format.
TIME_STAMP = "2025-01-01 00:00:00"


# --------------------------------------------------------------------------------------------
# Relation templates (MQuAKE's, typos included: "origianl", "univeristy"), discovered from the
# data. Each has its fact sentence and MQuAKE's single-hop question, as the sh questions use it.
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Template:
    """One relation: a fact sentence ``prefix S middle O suffix`` and its question form."""

    relation: str
    prefix: str
    middle: str
    suffix: str
    q_prefix: str
    q_suffix: str

    @property
    def fact_pattern(self) -> str:
        return f"{self.prefix}{{subject}}{self.middle}{{object}}{self.suffix}"

    @property
    def question_pattern(self) -> str:
        return f"{self.q_prefix}{{subject}}{self.q_suffix}"

    @property
    def specificity(self) -> int:
        """Literal characters in the fact sentence; the most specific template wins a tie."""
        return len(self.prefix) + len(self.middle) + len(self.suffix)

    def render(self, subject: str, obj: str) -> str:
        return f"{self.prefix}{subject}{self.middle}{obj}{self.suffix}"

    def splits(self, text: str) -> list[tuple[str, str]]:
        """Every (subject, object) with non-empty parts that renders back to ``text``."""
        if not (text.startswith(self.prefix) and text.endswith(self.suffix)):
            return []
        body = text[len(self.prefix) : len(text) - len(self.suffix)]
        out = []
        at = body.find(self.middle, 1)
        while at != -1:
            subject, obj = body[:at], body[at + len(self.middle) :]
            if obj:
                out.append((subject, obj))
            at = body.find(self.middle, at + 1)
        return out

    def question_subject(self, question: str) -> str | None:
        """The subject if ``question`` is this relation's single-hop question, else None."""
        lo, hi = len(self.q_prefix), len(question) - len(self.q_suffix)
        if hi > lo and question.startswith(self.q_prefix) and question.endswith(self.q_suffix):
            return question[lo:hi]
        return None


def _template(relation: str, fact: str, question: str) -> Template:
    prefix, rest = fact.split("{s}")
    middle, suffix = rest.split("{o}")
    q_prefix, q_suffix = question.split("{s}")
    return Template(relation, prefix, middle, suffix, q_prefix, q_suffix)


TEMPLATES: tuple[Template, ...] = (
    _template("author", "The author of {s} is {o}.", "Who is the author of {s}?"),
    _template("capital", "The capital of {s} is {o}.", "What is the capital of {s}?"),
    _template("chairperson", "The chairperson of {s} is {o}.", "Who is the chairperson of {s}?"),
    _template(
        "chief_executive_officer",
        "The chief executive officer of {s} is {o}.",
        "Who is the chief executive officer of {s}?",
    ),
    _template("child", "{s}'s child is {o}.", "Who is {s}'s child?"),
    _template(
        "citizenship", "{s} is a citizen of {o}.", "What is the country of citizenship of {s}?"
    ),
    _template(
        "continent", "{s} is located in the continent of {o}.", "Which continent is {s} located in?"
    ),
    _template(
        "country_of_origin",
        "{s} was created in the country of {o}.",
        "Which country was {s} created in?",
    ),
    _template("creator", "{s} was created by {o}.", "Who was {s} created by?"),
    _template("developer", "{s} was developed by {o}.", "Who is the developer of {s}?"),
    _template("director", "The director of {s} is {o}.", "Who is the director of {s}?"),
    _template(
        "educated_at",
        "The univeristy where {s} was educated is {o}.",
        "Which university was {s} educated at?",
    ),
    _template("employer", "{s} is employed by {o}.", "Who is the employer of {s}?"),
    _template("famous_for", "{s} is famous for {o}.", "What is {s} famous for?"),
    _template("field_of_work", "{s} works in the field of {o}.", "What kind of work does {s} do?"),
    _template("founded_by", "{s} was founded by {o}.", "Who founded {s}?"),
    _template("founded_in_city", "{s} was founded in the city of {o}.", "Where was {s} founded?"),
    _template(
        "genre", "The type of music that {s} plays is {o}.", "What type of music does {s} play?"
    ),
    _template("head_coach", "The head coach of {s} is {o}.", "Who is the head coach of {s}?"),
    _template(
        "head_of_government",
        "The name of the current head of the {s} government is {o}.",
        "What is the name of the current head of the {s} government?",
    ),
    _template(
        "head_of_state",
        "The name of the current head of state in {s} is {o}.",
        "What is the name of the current head of state in {s}?",
    ),
    _template(
        "headquarters",
        "The headquarters of {s} is located in the city of {o}.",
        "Which city is the headquarter of {s} located in?",
    ),
    _template(
        "language_spoken", "{s} speaks the language of {o}.", "What language does {s} speak?"
    ),
    _template(
        "language_written_in",
        "{s} was written in the language of {o}.",
        "Which language was {s} written in?",
    ),
    _template(
        "manufacturer", "The company that produced {s} is {o}.", "Which company is {s} produced by?"
    ),
    _template("officeholder", "The {s} is {o}.", "Who is the {s}?"),
    _template(
        "official_language",
        "The official language of {s} is {o}.",
        "What is the official language of {s}?",
    ),
    _template(
        "original_broadcaster",
        "The origianl broadcaster of {s} is {o}.",
        "Who is the original broadcaster of {s}?",
    ),
    _template(
        "original_language",
        "The original language of {s} is {o}.",
        "What is the original language of {s}?",
    ),
    _template("performer", "{s} was performed by {o}.", "Who performed {s}?"),
    _template("place_of_birth", "{s} was born in the city of {o}.", "Which city was {s} born in?"),
    _template("place_of_death", "{s} died in the city of {o}.", "Which city did {s} die in?"),
    _template("position", "{s} plays the position of {o}.", "What position does {s} play?"),
    _template(
        "religion",
        "{s} is affiliated with the religion of {o}.",
        "Which religion is {s} affiliated with?",
    ),
    _template("spouse", "{s} is married to {o}.", "Who is {s} married to?"),
    _template(
        "sport", "{s} is associated with the sport of {o}.", "Which sport is {s} associated with?"
    ),
    _template("work_location", "{s} worked in the city of {o}.", "Which city did {s} work in?"),
)
TEMPLATE_BY_RELATION: dict[str, Template] = {t.relation: t for t in TEMPLATES}
RELATIONS = tuple(TEMPLATE_BY_RELATION)


# --------------------------------------------------------------------------------------------
# Parsing
# --------------------------------------------------------------------------------------------


class UnparsedFact(ValueError):
    """Fact lines that no relation template parses, each with its line number.

    Never silently dropped: a missing line would shift the gold state without anyone noticing.
    ``lines`` holds ``(line_no, text)`` pairs (``line_no`` is 1-based in the context, where line
    1 is the header; None when the caller gave no number).
    """

    def __init__(self, lines: Sequence[tuple[int | None, str]], source: str | None = None):
        self.lines = tuple(lines)
        self.source = source
        self.line_no = self.lines[0][0] if self.lines else None
        where = f"{source}: " if source else ""
        shown = "; ".join(
            f"line {n}: {text!r}" if n is not None else repr(text) for n, text in self.lines[:20]
        )
        more = f" (and {len(self.lines) - 20} more)" if len(self.lines) > 20 else ""
        noun = "fact line matches" if len(self.lines) == 1 else "fact lines match"
        super().__init__(f"{where}{len(self.lines)} {noun} no relation template: {shown}{more}")


class UnknownSource(ValueError):
    """An unknown source name; the message lists the valid ones and the nearest match."""


def fact_candidates(text: str) -> list[tuple[Template, str, str]]:
    """Every (template, subject, object) that renders back to ``text`` exactly."""
    return [(t, s, o) for t in TEMPLATES for s, o in t.splits(text)]


def parse_fact(
    line: str, *, source: str | None = None, line_no: int | None = None
) -> tuple[str, str, str]:
    """Parse a fact sentence (without its ``N.`` serial) into (subject, relation, object).

    Ambiguity is resolved deterministically: the template with the most literal characters
    wins (so "The capital of X is Y." is ``capital``, not the catch-all officeholder template
    "The {s} is {o}."), then the earlier template in ``TEMPLATES``, then the shortest subject.
    In the released data the only ambiguity is that catch-all against a specific template, and
    no template splits any line two ways. Raises ``UnparsedFact`` if nothing parses.
    """
    candidates = fact_candidates(line)
    if not candidates:
        raise UnparsedFact([(line_no, line)], source)
    order = {t.relation: i for i, t in enumerate(TEMPLATES)}
    template, subject, obj = min(
        candidates, key=lambda c: (-c[0].specificity, order[c[0].relation], len(c[1]))
    )
    return subject, template.relation, obj


def render_fact(subject: str, relation: str, obj: str) -> str:
    """The fact sentence for a triple; the inverse of ``parse_fact``."""
    try:
        template = TEMPLATE_BY_RELATION[relation]
    except KeyError:
        raise ValueError(f"unknown relation {relation!r}; known: {', '.join(RELATIONS)}") from None
    return template.render(subject, obj)


@dataclass(frozen=True, slots=True)
class Fact:
    """One numbered fact line of a context, parsed."""

    serial: int
    text: str  # the sentence, without "N. "
    line_no: int  # 1-based line in the context; line 1 is the header
    subject: str
    relation: str
    object: str

    @property
    def line(self) -> str:
        """The line as the context holds it (the serial is the only order signal, B.4)."""
        return f"{self.serial}. {self.text}"

    @property
    def key(self) -> tuple[str, str]:
        return (self.subject, self.relation)


@lru_cache(maxsize=16)
def _parse_context(context: str) -> tuple[tuple[Fact, ...], tuple[tuple[int, str], ...]]:
    """Parse every line of a context; return the facts and the lines that did not parse.

    Cached on the text, since each context is shared by its sh and mh rows.
    """
    facts: list[Fact] = []
    failures: list[tuple[int, str]] = []
    for line_no, line in enumerate(context.split("\n"), start=1):
        if not line.strip() or (line_no == 1 and line == HEADER):
            continue
        match = _FACT_LINE.fullmatch(line)
        if match is None:
            failures.append((line_no, line))
            continue
        try:
            subject, relation, obj = parse_fact(match[2])
        except UnparsedFact:
            failures.append((line_no, line))
            continue
        facts.append(Fact(int(match[1]), match[2], line_no, subject, relation, obj))
    return tuple(facts), tuple(failures)


def parse_context(context: str, source: str | None = None) -> tuple[Fact, ...]:
    """All facts of a context in line order; every unparsed line is reported at once."""
    facts, failures = _parse_context(context)
    if failures:
        raise UnparsedFact(failures, source)
    lines_by_serial: dict[int, list[int]] = {}
    for fact in facts:
        lines_by_serial.setdefault(fact.serial, []).append(fact.line_no)
    repeated = {serial: lines for serial, lines in lines_by_serial.items() if len(lines) > 1}
    if repeated:  # the serial number is the only order signal, so it must be unique
        shown = "; ".join(f"serial {s} on lines {lines}" for s, lines in sorted(repeated.items()))
        raise ValueError(f"{source or 'context'}: repeated serial numbers: {shown}")
    return facts


# --------------------------------------------------------------------------------------------
# Loading
# --------------------------------------------------------------------------------------------


def normalize_source(name: str) -> str:
    """``sh_6k`` from ``sh_6k``, ``factconsolidation_sh_6k`` or ``Factconsolidation_sh_6k``."""
    short = name.strip().lower().removeprefix(SOURCE_PREFIX)
    if short in SOURCES:
        return short
    guess = difflib.get_close_matches(short, SOURCES, n=1, cutoff=0.0)
    hint = f"; did you mean {guess[0]!r}?" if guess else ""
    raise UnknownSource(
        f"unknown FactConsolidation source {name!r}: valid sources are {', '.join(SOURCES)} "
        f"(optionally prefixed {SOURCE_PREFIX!r}){hint}"
    )


@dataclass(frozen=True)
class SourceData:
    """One source (one context row) with its parsed facts and its 100 questions."""

    source: str  # short name, "sh_6k"
    facts: tuple[Fact, ...]  # in line order, which is serial order in the released data
    questions: tuple[str, ...]
    answers: tuple[tuple[str, ...], ...]
    question_ids: tuple[str, ...]
    origin: str  # the file read, or "hf:ai-hyz/MemoryAgentBench:Conflict_Resolution"
    sha256: str  # of the JSON bytes (decompressed), or of the canonical JSON of the hub rows

    @property
    def name(self) -> str:
        return SOURCE_PREFIX + self.source

    @property
    def hop(self) -> str:
        return self.source.split("_")[0]

    @property
    def length(self) -> str:
        return self.source.split("_")[1]


def _read_json_bytes(path: Path) -> bytes:
    raw = path.read_bytes()
    return gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw


@lru_cache(maxsize=4)
def _rows_from_file(path: str, mtime_ns: int, size: int) -> tuple[tuple[dict[str, Any], ...], str]:
    """The rows of a Conflict_Resolution JSON file and the sha256 of its JSON bytes."""
    del mtime_ns, size  # cache key only: a rewritten file is read again
    data = _read_json_bytes(Path(path))
    rows = json.loads(data)
    if not isinstance(rows, list):
        raise ValueError(f"{path}: expected a JSON list of rows (the Conflict_Resolution split)")
    return tuple(rows), hashlib.sha256(data).hexdigest()


def _rows_from_hub() -> tuple[tuple[dict[str, Any], ...], str]:
    """The official split from the Hugging Face hub (needs `datasets` and a reachable hub)."""
    try:
        from datasets import load_dataset  # type: ignore[import-not-found]
    except ImportError as exc:
        raise RuntimeError(
            "path='hf' needs the Hugging Face `datasets` package: pip install datasets"
        ) from exc
    try:
        split = load_dataset(HF_DATASET, split=HF_SPLIT, revision="main")
    except Exception as exc:  # any hub or network failure: say what was asked for
        raise RuntimeError(
            f"could not load {HF_DATASET} split {HF_SPLIT} from the hub ({exc}); "
            f"omit path to use the copy shipped in {DATA_FILE}"
        ) from exc
    rows = tuple(dict(row) for row in split)
    canonical = json.dumps(rows, sort_keys=True, ensure_ascii=False).encode()
    return rows, hashlib.sha256(canonical).hexdigest()


def _rows(path: str | Path | None) -> tuple[tuple[dict[str, Any], ...], str, str]:
    if path == HF_PATH:
        rows, sha = _rows_from_hub()
        return rows, sha, f"hf:{HF_DATASET}:{HF_SPLIT}"
    file = Path(path) if path is not None else DATA_FILE
    stat = file.stat()
    rows, sha = _rows_from_file(str(file.resolve()), stat.st_mtime_ns, stat.st_size)
    # The shipped file is named relative to the repository, so manifests agree across machines.
    origin = DATA_ORIGIN if path is None else str(file)
    return rows, sha, origin


def load(source: str, path: str | Path | None = None) -> SourceData:
    """Load and parse one source.

    ``path``: None for the shipped gzip, a local JSON (or gzipped JSON) file in the official
    row format, or ``"hf"`` for the official hub dataset (only when asked; needs a network).
    Raises ``UnknownSource`` for a bad name and ``UnparsedFact`` listing every unparsed line.
    """
    short = normalize_source(source)
    rows, sha, origin = _rows(path)
    matching = [r for r in rows if (r.get("metadata") or {}).get("source") == SOURCE_PREFIX + short]
    if len(matching) != 1:
        raise ValueError(
            f"{origin}: expected one row for {SOURCE_PREFIX + short}, found {len(matching)}"
        )
    row = matching[0]
    questions = tuple(row["questions"])
    answers = tuple(tuple(_flatten(a)) for a in row["answers"])
    ids = (row.get("metadata") or {}).get("qa_pair_ids") or [
        f"{SOURCE_PREFIX}{short}_no{i}" for i in range(len(questions))
    ]
    if not len(questions) == len(answers) == len(ids):
        raise ValueError(
            f"{origin}: {short} has {len(questions)} questions, {len(answers)} answers"
        )
    facts = parse_context(row["context"], short)
    return SourceData(short, facts, questions, answers, tuple(ids), origin, sha)


def _flatten(golds: Any) -> list[str]:
    if isinstance(golds, str):
        return [golds]
    return [g for item in golds for g in _flatten(item)]


# --------------------------------------------------------------------------------------------
# Gold state and question matching
# --------------------------------------------------------------------------------------------


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


# --------------------------------------------------------------------------------------------
# Chunking (B.4)
# --------------------------------------------------------------------------------------------


def chunks(lines: Iterable[str | Fact], size: int = CHUNK_SIZE) -> list[str]:
    """Group lines into line-aligned chunks of at most ``size`` characters (B.4).

    A chunk is its lines joined by newlines and holds as many whole lines as fit; a line is
    never split, so a single line longer than ``size`` is its own chunk. Joining the chunks
    with newlines gives back the lines joined with newlines. ``Fact`` items are taken as
    their context line ("N. sentence").
    """
    if size < 1:
        raise ValueError(f"chunk size must be positive, not {size}")
    out: list[str] = []
    current: list[str] = []
    length = 0
    for item in lines:
        line = item.line if isinstance(item, Fact) else item
        added = len(line) + (1 if current else 0)
        if current and length + added > size:
            out.append("\n".join(current))
            current, length, added = [], 0, len(line)
        current.append(line)
        length += added
    if current:
        out.append("\n".join(current))
    return out


# --------------------------------------------------------------------------------------------
# Figures
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PaperFigures:
    """B.4's figures for one length (the paper reports 6k, 64k and 262k only)."""

    facts: int
    keys: int
    overwritten: int
    stale_denominator: int


PAPER_FIGURES: dict[str, PaperFigures] = {
    "6k": PaperFigures(455, 239, 131, 64),
    "64k": PaperFigures(4580, 2263, 1277, 69),
    "262k": PaperFigures(18332, 8445, 5321, 71),
}


@dataclass(frozen=True, slots=True)
class SourceStats:
    """What the data gives for one source. Question figures are None for multi-hop sources."""

    source: str
    facts: int
    keys: int
    overwritten: int
    questions: int
    matched: int | None  # single-hop questions matched to a key
    gold_is_current: int | None  # ... whose gold is the key's current value
    stale_denominator: int | None  # ... that are stale-scoreable

    def to_json(self) -> dict[str, Any]:
        paper = PAPER_FIGURES.get(self.source.split("_")[1])
        return {
            "source": self.source,
            "facts": self.facts,
            "keys": self.keys,
            "overwritten": self.overwritten,
            "stale_denominator": self.stale_denominator,
            "questions": self.questions,
            "questions_matched": self.matched,
            "gold_is_current": self.gold_is_current,
            "paper": None
            if paper is None
            else {
                "facts": paper.facts,
                "keys": paper.keys,
                "overwritten": paper.overwritten,
                # B.4's denominator is single-hop only.
                "stale_denominator": paper.stale_denominator if self.source[:2] == "sh" else None,
            },
        }


def source_stats(data: SourceData) -> SourceStats:
    state = gold_state(data.facts)
    infos = question_infos(data)
    single = data.hop == "sh"
    return SourceStats(
        source=data.source,
        facts=len(data.facts),
        keys=len(state),
        overwritten=sum(h.overwritten for h in state.values()),
        questions=len(infos),
        matched=sum(i.key is not None for i in infos) if single else None,
        gold_is_current=sum(i.gold_is_current for i in infos) if single else None,
        stale_denominator=sum(i.stale_scoreable for i in infos) if single else None,
    )


# --------------------------------------------------------------------------------------------
# The benchmark
# --------------------------------------------------------------------------------------------


class FactConsolidation:
    """One FactConsolidation source as a harness benchmark: one episode, its questions.

    Events are the fact lines in serial order, each with its parse in ``meta``. Questions carry
    the matched key and the superseded values, so the stale rate can be scored (B.4).
    """

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


# --------------------------------------------------------------------------------------------
# CLI
# --------------------------------------------------------------------------------------------


def _cell(value: int | None, paper: int | None) -> str:
    ours = "-" if value is None else f"{value:,}"
    return ours if paper is None else f"{ours} ({paper:,})"


def _row(cells: Sequence[str], widths: Sequence[int]) -> str:
    """The source left-aligned, the figures right-aligned."""
    return "  ".join(
        c.ljust(w) if i == 0 else c.rjust(w)
        for i, (c, w) in enumerate(zip(cells, widths, strict=True))
    )


def format_table(stats: Sequence[SourceStats]) -> str:
    """A readable table; B.4's figure is in parentheses where the paper gives one."""
    header = ("source", "facts", "keys", "overwritten", "stale denom.", "matched", "gold current")
    rows = [header]
    for s in stats:
        paper = PAPER_FIGURES.get(s.source.split("_")[1])
        sh = s.source.startswith("sh")
        rows.append(
            (
                s.source,
                _cell(s.facts, paper and paper.facts),
                _cell(s.keys, paper and paper.keys),
                _cell(s.overwritten, paper and paper.overwritten),
                _cell(s.stale_denominator, paper.stale_denominator if paper and sh else None),
                _cell(s.matched, None),
                _cell(s.gold_is_current, None),
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines = [_row(r, widths) for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    note = [
        "(n) = the paper's figure (B.4 reports 6k, 64k and 262k only).",
        "The last three columns are single-hop only; see docs/factconsolidation.md.",
    ]
    return "\n".join([*lines, "", *note])


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.factconsolidation",
        description="MemoryAgentBench FactConsolidation: figures the released data gives.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    stats = sub.add_parser("stats", help="facts, keys, overwritten keys, stale denominator")
    stats.add_argument("--json", action="store_true", help="print JSON instead of a table")
    stats.add_argument("--source", action="append", help="a source (repeatable); default all")
    stats.add_argument("--path", help="a local Conflict_Resolution JSON, or 'hf' for the hub")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        sources = [normalize_source(s) for s in args.source] if args.source else list(SOURCES)
        loaded = [load(s, args.path) for s in sources]
    except (UnknownSource, UnparsedFact) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    stats = [source_stats(d) for d in loaded]
    if args.json:
        payload = {
            "file": loaded[0].origin,
            "sha256": loaded[0].sha256,
            "sources": [s.to_json() for s in stats],
        }
        print(json.dumps(payload, indent=2, ensure_ascii=False))
    else:
        print(format_table(stats))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
