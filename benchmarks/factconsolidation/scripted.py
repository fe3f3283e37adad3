"""Scripted rules for MemoryAgentBench FactConsolidation (Table 7): facts in, facts out.

Every fact line is one of MQuAKE's relation templates and every single-hop question that
relation's question, so the scripted model reads both by the benchmark's own templates.
`extract` turns a chunk into ``{key, value}`` facts; `answer` finds the question's (subject,
relation) and its value in the context: the highest-numbered line, or a tracked-state cell,
else ``LOOKUP: s | r`` when lookups are offered. Multi-hop questions are not chained.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from functools import lru_cache

from benchmarks.factconsolidation.facts import TEMPLATES as FACT_TEMPLATES
from benchmarks.models.scripted_model import Request

__all__ = ["RULES", "TEMPLATES", "fact_value", "parse_fact", "parse_question"]

# (relation, fact sentence, single-hop question) per MQuAKE template, in the benchmark's order
TEMPLATES: tuple[tuple[str, str, str], ...] = tuple(
    (t.relation, t.render("{s}", "{o}"), t.q_prefix + "{s}" + t.q_suffix) for t in FACT_TEMPLATES
)
UNKNOWN = "I do not know."
_SERIAL = re.compile(r"^(?:\[t=\d+\]\s*)?(\d+)\. (.*)$")
_LOOKUPS_LEFT = re.compile(r"Lookups left: ([1-9]\d*)")
_ASKED = re.compile(r"^Based on the (?:provided Knowledge Pool|Archival Memory), ")


def _pattern(template: str) -> re.Pattern[str]:
    parts = re.split(r"(\{s\}|\{o\})", template)
    out = []
    for part in parts:
        if part == "{s}":
            out.append("(?P<s>.+?)")
        elif part == "{o}":
            out.append("(?P<o>.+)")
        else:
            out.append(re.escape(part))
    return re.compile("".join(out))


def _specificity(template: str) -> int:
    return len(template.replace("{s}", "").replace("{o}", ""))


@lru_cache(maxsize=1)
def _compiled() -> tuple[list[tuple[str, re.Pattern[str]]], list[tuple[str, re.Pattern[str]]]]:
    """Fact and question patterns, the most specific first (the catch-all "The {s} is {o}."
    loses to "The capital of {s} is {o}."), then in template order."""
    order = sorted(range(len(TEMPLATES)), key=lambda i: -_specificity(TEMPLATES[i][1]))
    facts = [(TEMPLATES[i][0], _pattern(TEMPLATES[i][1])) for i in order]
    q_order = sorted(range(len(TEMPLATES)), key=lambda i: -_specificity(TEMPLATES[i][2]))
    questions = [(TEMPLATES[i][0], _pattern(TEMPLATES[i][2])) for i in q_order]
    return facts, questions


def parse_fact(sentence: str) -> tuple[str, str, str] | None:
    """(subject, relation, object) of a fact sentence, or None when no template renders it."""
    for relation, pattern in _compiled()[0]:
        m = pattern.fullmatch(sentence.strip())
        if m:
            return m["s"], relation, m["o"]
    return None


def parse_question(question: str) -> list[tuple[str, str]]:
    """Every (subject, relation) a single-hop question can ask, the most specific first."""
    out = []
    for relation, pattern in _compiled()[1]:
        m = pattern.fullmatch(question.strip())
        if m:
            out.append((m["s"], relation))
    return out


def key_text(subject: str, relation: str) -> str:
    """The extraction writer's key (snake-cased by the write path: ``goaltender_sport``)."""
    return f"{subject} {relation}"


def _snake(text: str) -> str:
    return re.sub(r"[^0-9a-z]+", "_", text.strip().lower()).strip("_")


def fact_value(context: str, subject: str, relation: str) -> str | None:
    """The value `context` gives for (subject, relation): the highest-numbered fact line, else
    the last listed cell of a tracked state; None if the context holds neither."""
    numbered: list[tuple[int, str]] = []
    cells: list[str] = []
    oracle_prefix, snake_key = f"{subject} | {relation}: ", _snake(key_text(subject, relation))
    for raw in context.splitlines():
        line = raw.strip()
        m = _SERIAL.match(line)
        if m:
            fact = parse_fact(m[2])
            if fact is not None and fact[:2] == (subject, relation):
                numbered.append((int(m[1]), fact[2]))
        elif line.startswith(oracle_prefix):
            cells.append(line.removeprefix(oracle_prefix))
        elif ": " in line and _snake(line.partition(": ")[0]) == snake_key:
            cells.append(line.partition(": ")[2])
    if numbered:
        return max(numbered)[1]
    return cells[-1] if cells else None


def rule_extract(request: Request, match: re.Match[str] | None) -> str | None:
    """Group: text (the chunk). One ``{key, value}`` per fact line, in order."""
    if match is None:
        return None
    facts = []
    for raw in match["text"].splitlines():
        m = _SERIAL.match(raw.strip())
        fact = parse_fact(m[2] if m else raw)
        if fact is not None:
            subject, relation, obj = fact
            facts.append({"key": key_text(subject, relation), "value": obj})
    return json.dumps(facts, ensure_ascii=False)


def rule_answer(request: Request, match: re.Match[str] | None) -> str | None:
    """Groups: context, question."""
    if match is None:
        return None
    question = _ASKED.sub("", match["question"].strip())
    asks = parse_question(question)
    for subject, relation in asks:
        value = fact_value(match["context"], subject, relation)
        if value is not None:
            return value
    if asks and _LOOKUPS_LEFT.search(match["context"]):
        subject, relation = asks[0]
        return f"LOOKUP: {subject} | {relation}"
    return UNKNOWN


RULES: dict[str, Callable[[Request, re.Match[str] | None], str | None]] = {
    "factconsolidation_extract": rule_extract,
    "factconsolidation_answer": rule_answer,
}
