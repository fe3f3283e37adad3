"""Scripted rules for LongMemEval (Tables 3-5, 9-11): a chat history in, an extractive answer.

A bag-of-words reader, not a language model: relevance is shared content words, a few folded
into one sense (`SENSES`: "moved", "relocated" and "city" are all *residence*) so a question and
its answer can meet without a shared word. Calls: `answer` (the reader; `best_answer` says how),
`session_facts` (the materialized writer: one fact per user statement, keyed by sense, status
from cue words), `prune_pair` (yes when both messages bear on the question), `verdict` and
`superseded_match` (the judges), `question_class` and `stale_values` (B.1's class and values).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from datetime import date

from benchmarks.models.scripted_model import STOPWORDS, Request, content_words

__all__ = ["RULES", "SENSES", "best_answer", "senses"]

# Words read as one sense. Small on purpose: the vocabulary of the attributes LongMemEval's
# knowledge updates are most often about (where one lives, a purchase, a job).
SENSES: dict[str, frozenset[str]] = {
    "residence": frozenset(
        content_words(
            "live lives living lived home house flat apartment city town moved move moving "
            "relocated relocate relocation neighbourhood neighborhood residence"
        )
    ),
    "purchase": frozenset(content_words("buy bought buying purchase purchased")),
    "job": frozenset(content_words("job work works working worked employer hired career")),
}
_SENSE_OF = {word: sense for sense, words in SENSES.items() for word in words}
UNKNOWN = "I do not know."
_LINE = re.compile(r"^(?:\[(?P<date>[^\]]+)\]\s*)?(?P<role>user|assistant):\s*(?P<text>.*)$")
_CELL = re.compile(r"^(?P<key>[A-Za-z0-9_]+): (?P<value>.+)$")
_DAY = re.compile(r"(\d{4})[/-](\d{2})[/-](\d{2})")
_HOW_LONG = re.compile(r"\bhow many (days|weeks|months)\b", re.IGNORECASE)
_HOW_MANY = re.compile(r"\bhow many\b", re.IGNORECASE)
_CLAUSE = re.compile(r"[^.;!?]+[.;!?]?")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def senses(text: str) -> set[str]:
    """The content words of `text`, each folded into its sense where it has one."""
    return {_SENSE_OF.get(word, word) for word in content_words(text)}


def _day(text: str | None) -> date | None:
    m = _DAY.search(text or "")
    return date(int(m[1]), int(m[2]), int(m[3])) if m else None


def history_lines(history: str) -> list[tuple[date | None, str, str]]:
    """(day, text to match, text to answer with) of each user message and state cell of a
    history, in the order listed (a cell is matched with its key, answered with its value);
    assistant messages only when there is no user message at all."""
    users, assistants = [], []
    for raw in history.splitlines():
        line = raw.strip()
        m = _LINE.match(line)
        if m:
            row = (_day(m["date"]), m["text"], m["text"])
            (users if m["role"] == "user" else assistants).append(row)
        elif (cell := _CELL.match(line)) is not None:
            users.append((None, f"{cell['key'].replace('_', ' ')} {cell['value']}", cell["value"]))
    return users or assistants


def _best_clause(text: str, wanted: set[str]) -> str:
    clauses = [c.strip() for c in _CLAUSE.findall(text) if c.strip()]
    if not clauses:
        return text.strip()
    return max(clauses, key=lambda c: len(senses(c) & wanted))  # the first of a tie


def best_answer(history: str, question: str) -> str:
    """The extractive answer to `question` from `history`.

    The user message (or state cell) sharing most senses with the question, the latest of a
    tie, cut to its best clause; "I do not know." when none shares one. "How many
    days/weeks/months" comes from the dates of the two best messages, "how many" otherwise from
    a count of the relevant messages.
    """
    wanted = senses(question)
    scored = [
        (len(senses(matched) & wanted), i, day, answer)
        for i, (day, matched, answer) in enumerate(history_lines(history))
    ]
    relevant = [row for row in scored if row[0] > 0]
    if not relevant:
        return UNKNOWN
    if (unit := _HOW_LONG.search(question)) is not None:
        top = sorted(relevant, key=lambda r: (-r[0], -r[1]))
        days = list(dict.fromkeys(r[2] for r in top if r[2] is not None))
        if len(days) >= 2:
            per = {"days": 1, "weeks": 7, "months": 30}[unit[1].lower()]
            return f"{round(abs((days[0] - days[1]).days) / per)} {unit[1].lower()}"
    if _HOW_MANY.search(question):
        return str(len(relevant))
    _, _, _, text = max(relevant, key=lambda r: (r[0], r[1]))  # the latest of a tie
    return _best_clause(text, wanted)


def _statements(text: str) -> Iterable[str]:
    """The user's statements in a session: its user turns' clauses that are not questions."""
    for raw in text.splitlines():
        m = _LINE.match(raw.strip())
        if m is None or m["role"] != "user":
            continue
        for clause in _CLAUSE.findall(m["text"]):
            clause = clause.strip()
            if clause and not clause.endswith("?") and content_words(clause):
                yield clause.rstrip(".;!").strip()


_WITHDRAWN = re.compile(r"\b(not|never|no longer|don't|didn't|isn't|wasn't|won't)\b", re.I)
_HEDGED = re.compile(r"\b(maybe|might|perhaps|plan|planning|thinking|considering|hope)\b", re.I)
_REPORTED = re.compile(r"\b(said|says|told|heard|according)\b", re.I)


def fact_of(statement: str) -> dict[str, str]:
    """One statement as a ``{key, value, status}`` fact: the key names its sense (or its first
    content words), never its value; the value is the statement verbatim."""
    found = [s for s in SENSES if s in senses(statement)]
    words = [w for w in re.findall(r"[a-z0-9]+", statement.lower()) if w not in STOPWORDS]
    topic = found[0] if found else "_".join(words[:3])
    status = "asserted"
    if _WITHDRAWN.search(statement):
        status = "withdrawn"
    elif _HEDGED.search(statement):
        status = "hedged"
    elif _REPORTED.search(statement):
        status = "reported"
    return {"key": f"user_{topic}", "value": statement, "status": status}


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^0-9a-z]+", " ", text.lower()).split())


def names(response: str, answer: str, tolerance: int = 0) -> bool:
    """Whether `response` names `answer`: its words in order, or, for an answer that starts
    with a number, one of the answer's numbers within `tolerance`."""
    want, have = _norm(answer), f" {_norm(response)} "
    if want and f" {want} " in have:
        return True
    if not re.match(r"\s*\d", answer):
        return False
    targets = [float(x) for x in _NUMBER.findall(answer)]
    return any(abs(float(x) - t) <= tolerance for x in _NUMBER.findall(response) for t in targets)


def rule_answer(request: Request, match: re.Match[str] | None) -> str | None:
    """Groups: history, question."""
    if match is None:
        return None
    return best_answer(match["history"], match["question"].strip())


def rule_session_facts(request: Request, match: re.Match[str] | None) -> str | None:
    """Group: text (one session)."""
    if match is None:
        return None
    return json.dumps([fact_of(s) for s in _statements(match["text"])], ensure_ascii=False)


def rule_prune_pair(request: Request, match: re.Match[str] | None) -> str | None:
    """Groups: question, a, b."""
    if match is None:
        return None
    wanted = senses(match["question"])
    a, b = match["a"].strip(), match["b"].strip()
    both = bool(senses(a) & wanted) and bool(senses(b) & wanted)
    return "yes" if both and _norm(a) != _norm(b) else "no"


def rule_verdict(request: Request, match: re.Match[str] | None) -> str | None:
    """Groups: answer, response."""
    if match is None:
        return None
    tolerance = 1 if "off-by-one" in request.text else 0
    return "yes" if names(match["response"], match["answer"], tolerance) else "no"


def rule_superseded_match(request: Request, match: re.Match[str] | None) -> str | None:
    """Groups: superseded, current, response: yes when it names the old value, not the new."""
    if match is None:
        return None
    old = names(match["response"], match["superseded"])
    return "yes" if old and not names(match["response"], match["current"]) else "no"


_CURRENT_CUE = re.compile(r"\b(now|current|currently|still|anymore|these days|latest)\b", re.I)
_AGGREGATE_CUE = re.compile(r"\b(how many|how much|total|in all|list|altogether)\b", re.I)


def rule_question_class(request: Request, match: re.Match[str] | None) -> str | None:
    """Groups: question, evidence."""
    if match is None:
        return None
    question = match["question"]
    messages = [line for line in match["evidence"].splitlines() if _LINE.match(line.strip())]
    if _AGGREGATE_CUE.search(question):
        return "aggregation"
    if len(messages) >= 2 and _CURRENT_CUE.search(question):
        return "superseded"
    return "single"


_VALUE = re.compile(r"(?<![.!?]\s)(?<!^)\b(?:[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*|\d+(?:\.\d+)?)")


def rule_stale_values(request: Request, match: re.Match[str] | None) -> str | None:
    """Groups: answer, evidence. The current value is the correct answer the prompt gives; the
    superseded one the last name or number of the latest earlier message that is not it."""
    if match is None:
        return None
    current = match["answer"].strip()
    texts = [
        m["text"] for line in match["evidence"].splitlines() if (m := _LINE.match(line.strip()))
    ]
    earlier = [t for t in texts if not names(t, current)]
    superseded = None
    for text in reversed(earlier):
        values = [v for v in _VALUE.findall(text) if v != "I" and not names(v, current)]
        if values:
            superseded = values[-1]
            break
    return json.dumps({"superseded": superseded, "current": current}, ensure_ascii=False)


RULES: dict[str, Callable[[Request, re.Match[str] | None], str | None]] = {
    "longmemeval_answer": rule_answer,
    "longmemeval_session_facts": rule_session_facts,
    "longmemeval_prune_pair": rule_prune_pair,
    "judge_verdict": rule_verdict,
    "judge_superseded_match": rule_superseded_match,
    "judge_question_class": rule_question_class,
    "judge_stale_values": rule_stale_values,
}
