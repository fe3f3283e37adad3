"""FactConsolidation's facts: MQuAKE's relation templates and the parser built on them.

Every fact line of a source (``N. <fact>``) was rendered from one of MQuAKE's relation
templates, so it parses back into ``(subject, relation, object)`` (Appendix B.4). That parse is
what gives the gold state mechanically (``gold``); a line that no template parses is an error,
never silently dropped.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from benchmarks.runner.types import InputError

__all__ = [
    "HEADER",
    "RELATIONS",
    "TEMPLATES",
    "TEMPLATE_BY_RELATION",
    "Fact",
    "NotAFactLine",
    "Template",
    "UnparsedFact",
    "fact_candidates",
    "parse_context",
    "parse_fact",
    "render_fact",
    "split_serial",
]

HEADER = "Here is a list of facts:"

_FACT_LINE = re.compile(r"(\d+)\. (.*)", re.DOTALL)


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


class UnparsedFact(InputError, ValueError):
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


class RepeatedSerial(InputError, ValueError):
    """Two fact lines with one serial number: the only order signal of a stream is ambiguous."""


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


class NotAFactLine(InputError, ValueError):
    """A line without the context's ``N. `` serial in front of its sentence."""


def split_serial(line: str) -> tuple[int, str]:
    """A context line ``N. <fact>`` as (serial, sentence), by the rule the parser reads it with.

    The serial is the stream's only order signal, so an arm that must not show the order (B.4's
    raw facts) stores the sentence alone. A sentence may itself start with digits and a period
    (the club "1. FK Příbram" at 64k and 262k); only the first ``N. `` is the serial. Raises
    ``NotAFactLine`` (an ``InputError``: one line, no traceback) for a line without one.
    """
    match = _FACT_LINE.fullmatch(line)
    if match is None:
        raise NotAFactLine(f"not a fact line 'N. <fact>' (N the serial number): {line[:80]!r}")
    return int(match[1]), match[2]


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
        raise RepeatedSerial(f"{source or 'context'}: repeated serial numbers: {shown}")
    return facts
