"""LongMemEval's official schema: the parsed instance types and the checks that build them.

The checks are strict because the released files are large and often re-packed by third parties
in other layouts: a file that is not the official schema fails loudly (``SchemaError``, naming
file, instance and field) rather than half-loading. Also LongMemEval's abstention rule, which
the judges read too.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import Any

from benchmarks.runner.types import InputError

__all__ = [
    "ABSTENTION_MARK",
    "KNOWLEDGE_UPDATE",
    "PAPER_KNOWLEDGE_UPDATE_COUNT",
    "QUESTION_TYPES",
    "ROLES",
    "Instance",
    "SchemaError",
    "Session",
    "Turn",
    "is_abstention",
    "normalize_date",
    "parse_instance",
    "type_name",
]

QUESTION_TYPES = (
    "single-session-user",
    "single-session-assistant",
    "single-session-preference",
    "multi-session",
    "knowledge-update",
    "temporal-reasoning",
)
KNOWLEDGE_UPDATE = "knowledge-update"
PAPER_KNOWLEDGE_UPDATE_COUNT = 78  # B.1: "the 78 questions typed knowledge-update"
ROLES = ("user", "assistant")
ABSTENTION_MARK = "_abs"


class SchemaError(InputError, ValueError):
    """A file that is not in the official schema. Names the file, the instance and the field."""

    def __init__(
        self,
        file: str,
        message: str,
        *,
        index: int | None = None,
        question_id: str | None = None,
        field: str | None = None,
    ) -> None:
        self.file = file
        self.index = index
        self.question_id = question_id
        self.field = field
        where = [file]
        if index is not None:
            qid = f" (question_id {question_id!r})" if question_id is not None else ""
            where.append(f"instance {index}{qid}")
        if field is not None:
            where.append(f"field {field!r}")
        super().__init__(": ".join([*where, message]))


@dataclass(frozen=True, slots=True)
class Turn:
    role: str
    content: str
    has_answer: bool


@dataclass(frozen=True, slots=True)
class Session:
    index: int  # position in the file's haystack lists
    id: str
    date: str  # as released, "2023/05/20 (Sat) 02:21"
    at: str  # ISO 8601, "2023-05-20T02:21:00"
    turns: tuple[Turn, ...]


@dataclass(frozen=True, slots=True)
class Instance:
    """One question with its own haystack, checked against the official schema."""

    question_id: str
    question_type: str
    question: str
    answer: str  # the released answer; integers (some counting answers) as their decimal text
    question_date: str
    question_at: str
    sessions: tuple[Session, ...]  # in file order
    answer_session_ids: tuple[str, ...]

    @property
    def abstention(self) -> bool:
        return is_abstention(self.question_id)

    @property
    def turns(self) -> int:
        return sum(len(s.turns) for s in self.sessions)

    @property
    def chars(self) -> int:
        return sum(len(t.content) for s in self.sessions for t in s.turns)


def is_abstention(question_id: str) -> bool:
    """LongMemEval's rule (README; evaluate_qa.py tests ``'_abs' in question_id``). Every
    released abstention id ends in ``_abs``; the official containment test is kept."""
    return ABSTENTION_MARK in question_id


_DATE = re.compile(r"(\d{4})/(\d{2})/(\d{2}) \(([A-Za-z]{3})\) (\d{2}):(\d{2})")


def normalize_date(value: str) -> str:
    """The released date form "2023/05/20 (Sat) 02:21" as ISO 8601 "2023-05-20T02:21:00".

    An ISO 8601 string is accepted as is (normalized). The weekday is not checked: it is
    derived from the date in the released files. Raises ValueError for anything else."""
    match = _DATE.fullmatch(value.strip())
    if match:
        year, month, day, _, hour, minute = match.groups()
        parsed = dt.datetime(int(year), int(month), int(day), int(hour), int(minute))
        return parsed.isoformat()
    return dt.datetime.fromisoformat(value.strip()).isoformat()


# --------------------------------------------------------------------------------------------
# Schema checks
# --------------------------------------------------------------------------------------------


def type_name(value: Any) -> str:
    """A JSON value's type as schema errors name it ("null" for None)."""
    return "null" if value is None else type(value).__name__


class _Checker:
    """Checks one instance, raising SchemaError that names file, instance and field."""

    def __init__(self, file: str, index: int, raw: Any) -> None:
        self.file, self.index, self.raw = file, index, raw
        qid = raw.get("question_id") if isinstance(raw, dict) else None
        self.qid = qid if isinstance(qid, str) else None

    def fail(self, field: str | None, message: str) -> SchemaError:
        return SchemaError(self.file, message, index=self.index, question_id=self.qid, field=field)

    def get(self, field: str) -> Any:
        if field not in self.raw:
            raise self.fail(field, "missing")
        return self.raw[field]

    def string(self, field: str) -> str:
        value = self.get(field)
        if not isinstance(value, str):
            raise self.fail(field, f"expected a string, got {type_name(value)}")
        return value

    def strings(self, field: str) -> list[str]:
        value = self.get(field)
        if not isinstance(value, list):
            raise self.fail(field, f"expected a list of strings, got {type_name(value)}")
        for i, item in enumerate(value):
            if not isinstance(item, str):
                raise self.fail(f"{field}[{i}]", f"expected a string, got {type_name(item)}")
        return value

    def date(self, field: str, value: str) -> str:
        try:
            return normalize_date(value)
        except ValueError:
            raise self.fail(field, f"not a date like '2023/05/20 (Sat) 02:21': {value!r}") from None


def parse_instance(raw: Any, file: str, index: int) -> Instance:
    """Check one raw instance against the official schema and parse it."""
    if not isinstance(raw, dict):
        raise SchemaError(file, f"expected a JSON object, got {type_name(raw)}", index=index)
    c = _Checker(file, index, raw)
    qid = c.string("question_id")
    qtype = c.string("question_type")
    if qtype not in QUESTION_TYPES:
        raise c.fail("question_type", f"{qtype!r} is not one of {', '.join(QUESTION_TYPES)}")
    question = c.string("question")
    answer = c.get("answer")
    if isinstance(answer, bool) or not isinstance(answer, str | int | float):
        raise c.fail("answer", f"expected a string or a number, got {type_name(answer)}")
    question_date = c.string("question_date")
    question_at = c.date("question_date", question_date)
    ids = c.strings("haystack_session_ids")
    dates = c.strings("haystack_dates")
    sessions_raw = c.get("haystack_sessions")
    if not isinstance(sessions_raw, list):
        raise c.fail("haystack_sessions", f"expected a list, got {type_name(sessions_raw)}")
    if not len(ids) == len(dates) == len(sessions_raw):
        raise c.fail(
            "haystack_sessions",
            f"{len(sessions_raw)} sessions, {len(ids)} haystack_session_ids and "
            f"{len(dates)} haystack_dates; they must be aligned",
        )
    sessions = []
    for s, (sid, date, turns_raw) in enumerate(zip(ids, dates, sessions_raw, strict=True)):
        at = c.date(f"haystack_dates[{s}]", date)
        sessions.append(Session(s, sid, date, at, _turns(c, s, turns_raw)))
    answer_ids = c.strings("answer_session_ids")
    return Instance(
        qid, qtype, question, str(answer), question_date, question_at, tuple(sessions),
        tuple(answer_ids),
    )  # fmt: skip


def _turns(c: _Checker, s: int, turns_raw: Any) -> tuple[Turn, ...]:
    where = f"haystack_sessions[{s}]"
    if not isinstance(turns_raw, list):
        raise c.fail(where, f"expected a list of turns, got {type_name(turns_raw)}")
    turns = []
    for t, turn in enumerate(turns_raw):
        at = f"{where}[{t}]"
        if not isinstance(turn, dict):
            raise c.fail(at, f"expected a turn object, got {type_name(turn)}")
        for key in ("role", "content"):
            if key not in turn:
                raise c.fail(f"{at}.{key}", "missing")
            if not isinstance(turn[key], str):
                raise c.fail(f"{at}.{key}", f"expected a string, got {type_name(turn[key])}")
        if turn["role"] not in ROLES:
            raise c.fail(f"{at}.role", f"{turn['role']!r} is not 'user' or 'assistant'")
        has_answer = turn.get("has_answer", False)
        if not isinstance(has_answer, bool):
            raise c.fail(f"{at}.has_answer", f"expected a boolean, got {type_name(has_answer)}")
        turns.append(Turn(turn["role"], turn["content"], has_answer))
    return tuple(turns)
