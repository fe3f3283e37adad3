"""LongMemEval: loader for the official schema, schema checks, flattening, fetch and stats.

LongMemEval (Wu et al., ICLR 2025) asks one question per instance over that instance's own chat
history (its *haystack*). The paper uses it twice (§4.1, Appendix B.1): the 78
``knowledge-update`` questions in the oracle and the S regimes (Table 3), and all 500 S
questions for the full-benchmark read (Tables 4-5). P-Mem "flattens every session into (date,
message) turns", so this module turns each instance into one ``Episode`` whose events are the
haystack's turns in arrival order, each dated by its session, and whose single question carries
the gold answer, the question date and what the judges need (type, abstention, evidence turns).

Why the checks are strict: the released files are large (S is 277 MB) and are often re-packed
by third parties (several "longmemeval_s.json" files on GitHub hold other layouts). A file that
is not the official schema must fail loudly, naming the file, the instance and the field, not
half-load. A question id asked for (``ids=`` or a keys file) that is not in the file fails the
same way, so a subset run never silently shrinks.

The data cannot be downloaded here (no hub is reachable). One real S instance ships with the
repository (``data/longmemeval``; provenance in SOURCES.md there) and is the default. Anything
else is a local file, or ``path="hf"``, which downloads the pinned official file when a hub is
reachable. ``python -m benchmarks.longmemeval fetch`` says which URL to put where otherwise:

    python -m benchmarks.longmemeval fetch [--variant s|oracle|s_cleaned] [--dest DIR]
    python -m benchmarks.longmemeval stats [--path FILE] [--json]

The answer prompt is LongMemEval's official reading prompt (word for word, see
``READING_TEMPLATES``); the judge prompts live in ``benchmarks/scoring/judge.py``. Choices the paper
leaves open are listed in ``docs/longmemeval.md``.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import gzip
import hashlib
import json
import os
import random
import re
import statistics
import sys
import urllib.request
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from benchmarks.runner.types import Episode, Event, Question

__all__ = [
    "DATA_FILE",
    "KNOWLEDGE_UPDATE",
    "PAPER_KNOWLEDGE_UPDATE_COUNT",
    "QUESTION_TYPES",
    "READING_TEMPLATES",
    "VARIANTS",
    "DownloadError",
    "Instance",
    "LoadedFile",
    "LongMemEval",
    "SchemaError",
    "Session",
    "Turn",
    "UnknownQuestion",
    "Variant",
    "arrival_order",
    "check_hash",
    "default_dest",
    "download",
    "evidence_turns",
    "fetch",
    "fetch_hint",
    "fixture_instances",
    "flatten",
    "format_stats",
    "instance_stats",
    "is_abstention",
    "load",
    "main",
    "normalize_date",
    "parse_file",
    "parse_instance",
    "read_keys",
    "select",
    "sha256_file",
    "to_episode",
    "write_fixture",
]

DATA_DIR = Path(__file__).resolve().parents[1] / "data" / "longmemeval"
DATA_FILE = DATA_DIR / "longmemeval_s_single_e47becba.json"
DATA_ORIGIN = "benchmarks/data/longmemeval/longmemeval_s_single_e47becba.json"
DATA_SHA256 = "9c5d1cd86db0d66671786bae984d94337cde306f1235a14bb12bd6a958b27d81"
FIXTURE_FILE = DATA_DIR / "fixture.json"
# Where the shipped instance comes from (SOURCES.md next to it has the whole provenance).
SHIPPED_SOURCE = (
    "one LongMemEval_S instance (e47becba), zjunlp/LightMem @ "
    "59e64bfa7813f4794f33844adfab72233eee5b47: tutorial-notebooks/longmemeval_single.json"
)
HF_PATH = "hf"  # the `path` value that asks for the hub download

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


# --------------------------------------------------------------------------------------------
# The official reading prompt (xiaowu0162/LongMemEval @ 9e0b455f4ef0e2ab8f2e582289761153549043fc,
# src/generation/run_generation.py, `prepare_prompt`, retrieval readers without key expansion;
# MIT). Ported character for character. Slots: history, current date (the question_date string
# as released, e.g. "2023/05/30 (Tue) 23:40"), question. The official code sends it as a single
# user message. `direct` is the plain reader; `cot` is the "con" reading method (the official
# script's default), which asks for step-by-step answers.
# --------------------------------------------------------------------------------------------

READING_TEMPLATES: dict[str, str] = {
    "direct": (
        "I will give you several history chats between you and a user. Please answer the "
        "question based on the relevant chat history.\n\n\nHistory Chats:\n\n{}\n\nCurrent "
        "Date: {}\nQuestion: {}\nAnswer:"
    ),
    "cot": (
        "I will give you several history chats between you and a user. Please answer the "
        "question based on the relevant chat history. Answer the question step by step: first "
        "extract all the relevant information, and then reason over the information to get the "
        "answer.\n\n\nHistory Chats:\n\n{}\n\nCurrent Date: {}\nQuestion: {}\nAnswer (step by "
        "step):"
    ),
}


# --------------------------------------------------------------------------------------------
# Variants and where the official files live
# --------------------------------------------------------------------------------------------

HF_CLEANED = "xiaowu0162/longmemeval-cleaned"
HF_ORIGINAL = "xiaowu0162/longmemeval"
# The revision third-party harnesses pin for longmemeval-cleaned (../shared/data/README.md);
# several independent repositories record the same (revision, sha256, bytes) triples below.
HF_CLEANED_REVISION = "98d7416c24c778c2fee6e6f3006e7a073259d48f"


@dataclass(frozen=True, slots=True)
class Variant:
    """One official haystack file: where it is published and what it should hash to."""

    name: str
    repo: str
    revision: str  # a commit, or "main" where no commit is known
    filename: str
    sha256: str | None  # None: no pin known; `fetch` records the hash it sees
    size: int | None

    @property
    def url(self) -> str:
        return (
            f"https://huggingface.co/datasets/{self.repo}/resolve/{self.revision}/{self.filename}"
        )

    @property
    def local_name(self) -> str:
        """The file name `fetch` saves to (the original S file is published without `.json`)."""
        return self.filename if self.filename.endswith(".json") else self.filename + ".json"


VARIANTS: dict[str, Variant] = {
    "oracle": Variant(
        "oracle",
        HF_CLEANED,
        HF_CLEANED_REVISION,
        "longmemeval_oracle.json",
        "821a2034d219ab45846873dd14c14f12cfe7776e73527a483f9dac095d38620c",
        15_388_478,
    ),
    "s_cleaned": Variant(
        "s_cleaned",
        HF_CLEANED,
        HF_CLEANED_REVISION,
        "longmemeval_s_cleaned.json",
        "d6f21ea9d60a0d56f34a05b609c79c88a451d2ae03597821ea3d5a9678c3a442",
        277_383_467,
    ),
    # The S file of the paper's time, from the original dataset repository. No commit or hash
    # for it is known here, so it is fetched from `main` and its hash is recorded, not checked.
    "s": Variant("s", HF_ORIGINAL, "main", "longmemeval_s", None, None),
}


# --------------------------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------------------------


class SchemaError(ValueError):
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


class UnknownQuestion(KeyError):
    """Question ids asked for that the haystack file does not hold."""

    def __init__(self, file: str, ids: Sequence[str], asked_by: str = "ids") -> None:
        self.file = file
        self.ids = tuple(ids)
        shown = ", ".join(repr(i) for i in self.ids[:10])
        more = f" (and {len(self.ids) - 10} more)" if len(self.ids) > 10 else ""
        noun = "id is" if len(self.ids) == 1 else "ids are"
        self.message = f"{file}: {len(self.ids)} question {noun} not in the file ({asked_by}): "
        self.message += shown + more
        super().__init__(self.message)

    def __str__(self) -> str:
        return self.message


class DownloadError(RuntimeError):
    """The official file could not be downloaded; the message says what to put where."""


# --------------------------------------------------------------------------------------------
# Parsed instances
# --------------------------------------------------------------------------------------------


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


def _type_name(value: Any) -> str:
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
            raise self.fail(field, f"expected a string, got {_type_name(value)}")
        return value

    def strings(self, field: str) -> list[str]:
        value = self.get(field)
        if not isinstance(value, list):
            raise self.fail(field, f"expected a list of strings, got {_type_name(value)}")
        for i, item in enumerate(value):
            if not isinstance(item, str):
                raise self.fail(f"{field}[{i}]", f"expected a string, got {_type_name(item)}")
        return value

    def date(self, field: str, value: str) -> str:
        try:
            return normalize_date(value)
        except ValueError:
            raise self.fail(field, f"not a date like '2023/05/20 (Sat) 02:21': {value!r}") from None


def parse_instance(raw: Any, file: str, index: int) -> Instance:
    """Check one raw instance against the official schema and parse it."""
    if not isinstance(raw, dict):
        raise SchemaError(file, f"expected a JSON object, got {_type_name(raw)}", index=index)
    c = _Checker(file, index, raw)
    qid = c.string("question_id")
    qtype = c.string("question_type")
    if qtype not in QUESTION_TYPES:
        raise c.fail("question_type", f"{qtype!r} is not one of {', '.join(QUESTION_TYPES)}")
    question = c.string("question")
    answer = c.get("answer")
    if isinstance(answer, bool) or not isinstance(answer, str | int | float):
        raise c.fail("answer", f"expected a string or a number, got {_type_name(answer)}")
    question_date = c.string("question_date")
    question_at = c.date("question_date", question_date)
    ids = c.strings("haystack_session_ids")
    dates = c.strings("haystack_dates")
    sessions_raw = c.get("haystack_sessions")
    if not isinstance(sessions_raw, list):
        raise c.fail("haystack_sessions", f"expected a list, got {_type_name(sessions_raw)}")
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
        raise c.fail(where, f"expected a list of turns, got {_type_name(turns_raw)}")
    turns = []
    for t, turn in enumerate(turns_raw):
        at = f"{where}[{t}]"
        if not isinstance(turn, dict):
            raise c.fail(at, f"expected a turn object, got {_type_name(turn)}")
        for key in ("role", "content"):
            if key not in turn:
                raise c.fail(f"{at}.{key}", "missing")
            if not isinstance(turn[key], str):
                raise c.fail(f"{at}.{key}", f"expected a string, got {_type_name(turn[key])}")
        if turn["role"] not in ROLES:
            raise c.fail(f"{at}.role", f"{turn['role']!r} is not 'user' or 'assistant'")
        has_answer = turn.get("has_answer", False)
        if not isinstance(has_answer, bool):
            raise c.fail(f"{at}.has_answer", f"expected a boolean, got {_type_name(has_answer)}")
        turns.append(Turn(turn["role"], turn["content"], has_answer))
    return tuple(turns)


# --------------------------------------------------------------------------------------------
# Files
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LoadedFile:
    origin: str  # the file read (repository-relative for the shipped one)
    sha256: str  # of the file's JSON bytes (after gunzip, if gzipped)
    instances: tuple[Instance, ...]


def sha256_file(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _read_bytes(path: Path) -> bytes:
    raw = path.read_bytes()
    return gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw


def parse_file(data: bytes | list[Any], origin: str) -> tuple[Instance, ...]:
    """Parse a whole file (its bytes, or the already-decoded list) into checked instances."""
    if isinstance(data, bytes):
        try:
            rows = json.loads(data)
        except json.JSONDecodeError as exc:
            raise SchemaError(origin, f"not valid JSON ({exc})") from None
    else:
        rows = data
    if not isinstance(rows, list):
        raise SchemaError(
            origin, f"expected a JSON list of instances, got {_type_name(rows)} at the top level"
        )
    instances = tuple(parse_instance(raw, origin, i) for i, raw in enumerate(rows))
    seen: dict[str, int] = {}
    for i, inst in enumerate(instances):
        if inst.question_id in seen:
            raise SchemaError(
                origin,
                f"duplicate question_id (also instance {seen[inst.question_id]})",
                index=i,
                question_id=inst.question_id,
                field="question_id",
            )
        seen[inst.question_id] = i
    return instances


@lru_cache(maxsize=4)
def _load_cached(path: str, origin: str, mtime_ns: int, size: int) -> LoadedFile:
    del mtime_ns, size  # cache key only: a rewritten file is read again
    data = _read_bytes(Path(path))
    return LoadedFile(origin, hashlib.sha256(data).hexdigest(), parse_file(data, origin))


def load(path: str | Path | None = None, variant: str = "s") -> LoadedFile:
    """Load and check a haystack file.

    ``path``: None for the shipped real S instance; a local JSON (or gzipped JSON) file in the
    official schema; or ``"hf"`` to download ``variant``'s pinned official file into
    ``$PMEM_DATA_DIR/longmemeval`` (default ``~/.cache/pmem/longmemeval``) when a hub is
    reachable (never in tests)."""
    if path == HF_PATH:
        file = download(_variant(variant), default_dest())
        origin = str(file)
    elif path is None:
        file, origin = DATA_FILE, DATA_ORIGIN
    else:
        file = Path(path)
        origin = str(file)
        if not file.exists():
            raise FileNotFoundError(f"{file}: no such LongMemEval file ({fetch_hint(variant)})")
    stat = file.stat()
    return _load_cached(str(file.resolve()), origin, stat.st_mtime_ns, stat.st_size)


def read_keys(path: str | Path) -> list[str]:
    """The question ids of a keys file: JSON lines with a ``question_id`` each (such as
    ../shared/data/longmemeval/longmemeval_question_keys_partial.jsonl), or a JSON list."""
    file = Path(path)
    text = file.read_text(encoding="utf-8")
    rows: list[Any]
    if text.lstrip().startswith("["):
        rows = json.loads(text)
    else:
        rows = []
        for n, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    raise SchemaError(str(file), f"line {n}: not valid JSON ({exc})") from None
    ids = []
    for n, row in enumerate(rows, start=1):
        qid = row.get("question_id") if isinstance(row, dict) else row
        if not isinstance(qid, str):
            raise SchemaError(str(file), f"row {n}: no string question_id", field="question_id")
        ids.append(qid)
    return ids


def select(
    loaded: LoadedFile,
    *,
    types: Iterable[str] | None = None,
    ids: Iterable[str] | None = None,
    asked_by: str = "ids",
    limit: int | None = None,
) -> list[Instance]:
    """Instances in file order: those asked for by id (every id must be in the file), of the
    given types, the first ``limit`` of them."""
    chosen = list(loaded.instances)
    if ids is not None:
        wanted = list(dict.fromkeys(ids))
        present = {i.question_id for i in chosen}
        missing = [q for q in wanted if q not in present]
        if missing:
            raise UnknownQuestion(loaded.origin, missing, asked_by)
        keep = set(wanted)
        chosen = [i for i in chosen if i.question_id in keep]
    if types is not None:
        kinds = list(types)
        unknown = [t for t in kinds if t not in QUESTION_TYPES]
        if unknown:
            raise ValueError(f"unknown question types {unknown}; known: {list(QUESTION_TYPES)}")
        chosen = [i for i in chosen if i.question_type in kinds]
    return chosen[:limit] if limit is not None else chosen


# --------------------------------------------------------------------------------------------
# Flattening into the harness's types
# --------------------------------------------------------------------------------------------


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


# --------------------------------------------------------------------------------------------
# Download and fetch
# --------------------------------------------------------------------------------------------


def _variant(name: str) -> Variant:
    if name not in VARIANTS:
        raise ValueError(f"unknown LongMemEval variant {name!r}; known: {', '.join(VARIANTS)}")
    return VARIANTS[name]


def default_dest() -> Path:
    root = os.environ.get("PMEM_DATA_DIR")
    return (Path(root) if root else Path.home() / ".cache" / "pmem") / "longmemeval"


def fetch_hint(variant: str) -> str:
    v = _variant(variant)
    return f"download {v.url} to {default_dest() / v.local_name}, or pass a local path"


def _offline() -> bool:
    return any(os.environ.get(k) == "1" for k in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"))


def download(variant: Variant, dest: Path, *, timeout_s: float = 60.0) -> Path:
    """The variant's file in ``dest``: already there (hash checked when pinned) or downloaded
    from its pinned URL. Raises DownloadError saying what to put where when it cannot."""
    target = dest / variant.local_name
    if target.exists():
        check_hash(variant, target)
        return target
    instructions = (
        f"put the official file there by hand: download\n  {variant.url}\nand save it as\n"
        f"  {target}"
    )
    if _offline():
        raise DownloadError(f"offline (HF_HUB_OFFLINE=1); {instructions}")
    dest.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".part")
    request = urllib.request.Request(variant.url, headers={"User-Agent": "pmem-bench"})
    try:
        with (
            urllib.request.urlopen(request, timeout=timeout_s) as response,
            partial.open("wb") as out,
        ):
            while block := response.read(1 << 20):
                out.write(block)
    except Exception as exc:  # any network, DNS, HTTP or guard failure: say what to do
        partial.unlink(missing_ok=True)
        raise DownloadError(f"could not download {variant.url} ({exc}); {instructions}") from exc
    partial.replace(target)
    check_hash(variant, target)
    return target


def check_hash(variant: Variant, file: Path) -> str:
    """The file's sha256; raises DownloadError when a pinned hash is known and differs."""
    sha = sha256_file(file)
    if variant.sha256 is not None and sha != variant.sha256:
        raise DownloadError(
            f"{file}: sha256 {sha} is not the pinned {variant.sha256} of {variant.repo} @ "
            f"{variant.revision}: {variant.filename}; it is another revision or a damaged copy"
        )
    return sha


def fetch(variant: str, dest: Path, *, offline: bool = False) -> tuple[int, str]:
    """What ``fetch`` does: (exit code, report). Verifies or records the hash of a file that is
    there; downloads one that is not, unless offline; says what to put where otherwise."""
    v = _variant(variant)
    target = dest / v.local_name
    lines = [
        f"variant:  {v.name}",
        f"dataset:  {v.repo} @ {v.revision}",
        f"url:      {v.url}",
        f"file:     {target}",
        f"pinned:   {v.sha256 or 'none known (the hash is recorded, not checked)'}",
    ]
    if not target.exists():
        if offline:
            lines += ["status:   missing; not downloading (--offline)", _put_there(v, target)]
            return 1, "\n".join(lines)
        try:
            download(v, dest)
        except DownloadError as exc:
            lines += [f"status:   cannot download: {exc}"]
            return 1, "\n".join(lines)
        lines.append("status:   downloaded")
    sha = sha256_file(target)
    lines.append(f"sha256:   {sha}")
    if v.sha256 is None:
        record = target.with_name(target.name + ".sha256")
        record.write_text(f"{sha}  {target.name}\n", encoding="utf-8")
        lines.append(f"result:   recorded in {record} (no pinned hash to check against)")
        return 0, "\n".join(lines)
    if sha != v.sha256:
        lines.append("result:   MISMATCH: another revision or a damaged copy")
        return 1, "\n".join(lines)
    lines.append("result:   matches the pinned hash")
    return 0, "\n".join(lines)


def _put_there(v: Variant, target: Path) -> str:
    return (
        f"to get it: download\n  {v.url}\nand save it as\n  {target}\n"
        f"(for example: curl -L -o {target} '{v.url}'), then run fetch again to check it."
    )


# --------------------------------------------------------------------------------------------
# Stats
# --------------------------------------------------------------------------------------------


def instance_stats(instances: Sequence[Instance]) -> dict[str, Any]:
    """Per-type counts, abstentions, and sessions / turns / characters per instance."""

    def spread(values: list[int]) -> dict[str, float | int]:
        if not values:
            return {"mean": 0, "min": 0, "max": 0}
        return {"mean": statistics.fmean(values), "min": min(values), "max": max(values)}

    types = Counter(i.question_type for i in instances)
    return {
        "instances": len(instances),
        "question_types": {t: types.get(t, 0) for t in QUESTION_TYPES},
        "abstention": sum(i.abstention for i in instances),
        "knowledge_update": types.get(KNOWLEDGE_UPDATE, 0),
        "sessions": spread([len(i.sessions) for i in instances]),
        "turns": spread([i.turns for i in instances]),
        "chars": spread([i.chars for i in instances]),
        "total_chars": sum(i.chars for i in instances),
        "answer_sessions_missing": sum(
            1
            for i in instances
            for sid in i.answer_session_ids
            if sid not in {s.id for s in i.sessions}
        ),
    }


def format_stats(stats: Mapping[str, Any], origin: str, sha: str) -> str:
    def row(name: str, s: Mapping[str, Any]) -> str:
        return f"{name:<24} mean {s['mean']:>12,.1f}   min {s['min']:>10,}   max {s['max']:>10,}"

    lines = [f"file: {origin}", f"sha256: {sha}", f"instances: {stats['instances']}", ""]
    lines.append("question type                  n")
    for qtype, n in stats["question_types"].items():
        lines.append(f"{qtype:<26} {n:>5}")
    ku = stats["knowledge_update"]
    lines += [
        f"{'abstention (_abs)':<26} {stats['abstention']:>5}",
        "",
        f"knowledge-update subset: {ku} (the paper's full S file: {PAPER_KNOWLEDGE_UPDATE_COUNT})",
        "",
        "per instance",
        row("sessions", stats["sessions"]),
        row("turns", stats["turns"]),
        row("haystack chars", stats["chars"]),
        f"haystack chars, all instances: {stats['total_chars']:,}",
    ]
    if stats["answer_sessions_missing"]:
        lines.append(
            f"answer session ids not in their haystack: {stats['answer_sessions_missing']}"
        )
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# The benchmark
# --------------------------------------------------------------------------------------------


class LongMemEval:
    """LongMemEval as a harness benchmark: one Episode per instance, its one Question.

    ``variant`` names the regime (``s``, ``s_cleaned``, ``oracle``): it labels the run and
    picks the file ``path="hf"`` downloads. ``types`` keeps those question types (the paper's
    Table 3 is ``["knowledge-update"]``); ``ids`` or ``keys`` (a keys file) pick questions by
    id, every one of which must be in the file; ``limit`` keeps the first N after that.
    ``reading`` is the official reading method: ``direct`` or ``cot``. ``sessions`` shrinks
    every haystack to about that many sessions, evidence kept (`subsample`; §4.1.1's growth
    sweep); None keeps the haystacks as released."""

    def __init__(
        self,
        path: str | Path | None = None,
        variant: str = "s",
        limit: int | None = None,
        types: Sequence[str] | None = None,
        *,
        ids: Sequence[str] | None = None,
        keys: str | Path | None = None,
        reading: str = "direct",
        sessions: int | None = None,
    ) -> None:
        _variant(variant)
        if sessions is not None and sessions < 1:
            raise ValueError(
                f"benchmark.sessions must be a positive number of sessions or null, not {sessions}"
            )
        if limit is not None and limit < 1:
            raise ValueError(f"limit must be a positive number of questions, not {limit}")
        if reading not in READING_TEMPLATES:
            raise ValueError(f"reading must be one of {list(READING_TEMPLATES)}, not {reading!r}")
        if types is not None:
            unknown = [t for t in types if t not in QUESTION_TYPES]
            if unknown:
                raise ValueError(f"unknown question types {unknown}; known: {list(QUESTION_TYPES)}")
        self.path = path
        self.variant = variant
        self.limit = limit
        self.types = tuple(types) if types is not None else None
        self.ids = tuple(ids) if ids is not None else None
        self.keys = keys
        self.reading = reading
        self.sessions = sessions
        self.name = f"longmemeval_{variant}"
        self._loaded: LoadedFile | None = None

    @property
    def loaded(self) -> LoadedFile:
        if self._loaded is None:
            self._loaded = load(self.path, self.variant)
        return self._loaded

    def instances(self) -> list[Instance]:
        ids: list[str] | None = list(self.ids) if self.ids is not None else None
        asked_by = "ids"
        if self.keys is not None:
            from_keys = read_keys(self.keys)
            ids = from_keys if ids is None else [*ids, *from_keys]
            asked_by = f"keys file {self.keys}"
        chosen = select(self.loaded, types=self.types, ids=ids, asked_by=asked_by, limit=self.limit)
        if self.sessions is not None:
            chosen = [subsample(i, self.sessions) for i in chosen]
        return chosen

    def episodes(self) -> list[Episode]:
        return [to_episode(i) for i in self.instances()]

    def answer_messages(self, question: Question, context: str) -> list[dict[str, str]]:
        """The official reading prompt as one user message: the arm's context is the history,
        the current date is the question date as released."""
        date = question.meta.get("question_date") or question.at or ""
        prompt = READING_TEMPLATES[self.reading].format(context, date, question.text)
        return [{"role": "user", "content": prompt}]

    def prompts(self) -> dict[str, str]:
        from benchmarks.scoring.judge import (
            JUDGE_TEMPLATES,  # the official judge, hashed with the run
        )

        return {
            "answer": READING_TEMPLATES[self.reading],
            **{f"judge.{name}": text for name, text in JUDGE_TEMPLATES.items()},
        }

    def fingerprint(self) -> dict[str, Any]:
        loaded = self.loaded
        v = VARIANTS[self.variant]
        if self.path is None:
            dataset, pinned = SHIPPED_SOURCE, DATA_SHA256
        else:
            dataset, pinned = f"{v.repo} @ {v.revision}: {v.filename}", v.sha256
        return {
            "variant": self.variant,
            "dataset": dataset,
            "file": loaded.origin,
            "sha256": loaded.sha256,
            "pinned_sha256": pinned,
            "matches_pin": None if pinned is None else loaded.sha256 == pinned,
            "instances_in_file": len(loaded.instances),
            "questions": len(self.instances()),
            "types": list(self.types) if self.types is not None else None,
            "ids": list(self.ids) if self.ids is not None else None,
            "keys": str(self.keys) if self.keys is not None else None,
            "limit": self.limit,
            "reading": self.reading,
            "sessions": self.sessions,
        }


# --------------------------------------------------------------------------------------------
# A generated fixture in the official schema (for tests and dry runs)
# --------------------------------------------------------------------------------------------


def _t(role: str, content: str, has_answer: bool = False) -> dict[str, Any]:
    turn: dict[str, Any] = {"role": role, "content": content}
    if has_answer:
        turn["has_answer"] = True
    return turn


def _filler(topic: str) -> list[dict[str, Any]]:
    return [
        _t("user", f"Can you give me three quick tips about {topic}?"),
        _t("assistant", f"Sure. Here are three tips about {topic}: start small, be consistent, "
           "and keep notes."),
    ]  # fmt: skip


def fixture_instances() -> list[dict[str, Any]]:
    """Four small instances in the official schema (the shipped ``data/longmemeval/
    fixture.json`` is this list): a knowledge update stated plainly and later revised in
    passing, an aggregation over two sessions, an abstention, and a temporal question."""
    ku_sessions = [
        [
            _t("user", "I just moved into a flat in Boston and I love my new neighbourhood.",
               True),
            _t("assistant", "Congratulations on the move to Boston!"),
        ],
        _filler("sourdough baking"),
        [
            _t("user", "Since we relocated to Denver last month the commute is so much "
               "shorter; anyway, what is a good houseplant for a dry climate?", True),
            _t("assistant", "A snake plant or a jade plant does well in dry air."),
        ],
        _filler("running shoes"),
    ]  # fmt: skip
    ku = {
        "question_id": "fx_ku_1",
        "question_type": "knowledge-update",
        "question": "Which city do I live in now?",
        "answer": "Denver",
        "question_date": "2023/04/20 (Thu) 18:00",
        "haystack_session_ids": ["answer_fx_ku_a", "fx_noise_1", "answer_fx_ku_b", "fx_noise_2"],
        "haystack_dates": [
            "2023/01/10 (Tue) 09:15",
            "2023/02/02 (Thu) 12:00",
            "2023/03/15 (Wed) 20:30",
            "2023/04/01 (Sat) 08:45",
        ],
        "haystack_sessions": ku_sessions,
        "answer_session_ids": ["answer_fx_ku_a", "answer_fx_ku_b"],
    }
    agg = {
        "question_id": "fx_multi_1",
        "question_type": "multi-session",
        "question": "How many doctor's appointments did I go to in March?",
        "answer": 2,
        "question_date": "2023/03/30 (Thu) 10:00",
        # deliberately not in date order, as in the oracle file
        "haystack_session_ids": ["answer_fx_multi_b", "fx_noise_3", "answer_fx_multi_a"],
        "haystack_dates": [
            "2023/03/21 (Tue) 17:00",
            "2023/03/10 (Fri) 11:00",
            "2023/03/03 (Fri) 09:00",
        ],
        "haystack_sessions": [
            [
                _t("user", "Back from the dentist today, my second doctor's appointment this "
                   "month. Any tips for sensitive teeth?", True),
                _t("assistant", "Try a desensitising toothpaste and a soft brush."),
            ],
            _filler("indoor cycling"),
            [
                _t("user", "I saw my GP this morning for a check-up. What should I eat to "
                   "lower cholesterol?", True),
                _t("assistant", "Oats, beans, nuts and fatty fish all help."),
            ],
        ],
        "answer_session_ids": ["answer_fx_multi_a", "answer_fx_multi_b"],
    }  # fmt: skip
    abstention = {
        "question_id": "fx_user_1_abs",
        "question_type": "single-session-user",
        "question": "What is the name of my cat?",
        "answer": "The information provided is not enough. You mentioned your dog Biscuit but "
        "not a cat.",
        "question_date": "2023/05/05 (Fri) 09:00",
        "haystack_session_ids": ["fx_noise_4", "answer_fx_user_abs"],
        "haystack_dates": ["2023/05/01 (Mon) 07:30", "2023/05/02 (Tue) 19:10"],
        "haystack_sessions": [
            _filler("meal prep"),
            [
                _t("user", "My dog Biscuit hates the rain. How can I tire him out indoors?",
                   True),
                _t("assistant", "Puzzle feeders and short training games work well."),
            ],
        ],
        "answer_session_ids": ["answer_fx_user_abs"],
    }  # fmt: skip
    temporal = {
        "question_id": "fx_temporal_1",
        "question_type": "temporal-reasoning",
        "question": "How many days before my marathon did I buy new running shoes?",
        "answer": "10 days. 11 days (including the last day) is also acceptable.",
        "question_date": "2023/06/20 (Tue) 12:00",
        "haystack_session_ids": ["answer_fx_temp_a", "answer_fx_temp_b"],
        "haystack_dates": ["2023/06/01 (Thu) 08:00", "2023/06/11 (Sun) 16:00"],
        "haystack_sessions": [
            [
                _t("user", "I bought new running shoes today. How should I break them in?",
                   True),
                _t("assistant", "Wear them on a few short runs first."),
            ],
            [
                _t("user", "I ran my marathon today! How should I recover?", True),
                _t("assistant", "Rest, hydrate and walk gently tomorrow."),
            ],
        ],
        "answer_session_ids": ["answer_fx_temp_a", "answer_fx_temp_b"],
    }  # fmt: skip
    return [ku, agg, abstention, temporal]


def write_fixture(path: Path = FIXTURE_FILE) -> Path:
    path.write_text(json.dumps(fixture_instances(), indent=1) + "\n", encoding="utf-8")
    return path


# --------------------------------------------------------------------------------------------
# CLI
# --------------------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.longmemeval",
        description="LongMemEval: fetch the official files, check a file, print its figures.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    fetch_p = sub.add_parser("fetch", help="download or check an official file")
    fetch_p.add_argument("--variant", choices=list(VARIANTS), default="s_cleaned")
    fetch_p.add_argument("--dest", type=Path, default=None, help="folder (default: the cache)")
    fetch_p.add_argument("--offline", action="store_true", help="never try to download")
    stats_p = sub.add_parser("stats", help="question types, abstentions, haystack sizes")
    stats_p.add_argument("--path", help="a haystack file (default: the shipped S instance)")
    stats_p.add_argument("--variant", choices=list(VARIANTS), default="s")
    stats_p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "fetch":
        offline = args.offline or _offline()
        code, report = fetch(args.variant, args.dest or default_dest(), offline=offline)
        print(report, file=sys.stdout if code == 0 else sys.stderr)
        return code
    try:
        loaded = load(args.path, args.variant)
    except (SchemaError, FileNotFoundError, DownloadError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    stats = instance_stats(loaded.instances)
    if args.json:
        print(json.dumps({"file": loaded.origin, "sha256": loaded.sha256, **stats}, indent=2))
    else:
        print(format_stats(stats, loaded.origin, loaded.sha256))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
