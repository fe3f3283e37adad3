"""A run folder's records as types: what the runner writes and the loader reads back.

    predictions.jsonl   one `Prediction` per answered question (the resume key: its id)
    samples.jsonl       one `Sample` per question: what the reader saw and every call it caused
    scores.jsonl        one `Score` per prediction: each scorer's fields under its name
    summary.json        the `Summary` of a finished run
    manifest.json       the `Manifest`: everything needed to trust and reproduce the numbers

Every record carries ``"schema": SCHEMA_VERSION`` (none: schema 0; newer: `SchemaError`) and is
written back as the JSON it was read from (`Record`). Imports nothing else of the project.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Self, TypedDict

#: the schema of the records this harness writes; raise it with a reader for the old one
SCHEMA_VERSION = 1
#: the key that carries it: each JSON line of a .jsonl record file, the top of a .json record
SCHEMA_KEY = "schema"


class SchemaError(ValueError):
    """A record this harness cannot read: of a newer schema, or with no valid version, or
    without a field every record of its kind has. The message is one line naming the file."""


def schema_of(data: Mapping[str, Any], source: str | Path) -> int:
    """The schema version of a record read from `source`: 0 when it has none (a run from before
    the version was written); `SchemaError` when it is newer than `SCHEMA_VERSION` or not a
    version at all."""
    version = data.get(SCHEMA_KEY, 0)
    if isinstance(version, bool) or not isinstance(version, int) or version < 0:
        raise SchemaError(f"{source}: {SCHEMA_KEY} {version!r} is not a record schema version")
    if version > SCHEMA_VERSION:
        raise SchemaError(
            f"{source}: record schema {version} is newer than this harness reads (up to "
            f"{SCHEMA_VERSION}): read it with the harness that wrote it, or a newer one"
        )
    return version


_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "str": (str,),
    "int": (int,),
    "float": (int, float),
    "bool": (bool,),
    "list": (list,),
    "dict": (dict,),
}


_HINTS: dict[type, dict[str, str]] = {}


def _hints(cls: type) -> dict[str, str]:
    """Each field's annotation, as written (`str | None`, `list[str] | None`, a TypedDict);
    computed once per record kind."""
    if cls not in _HINTS:
        _HINTS[cls] = {f.name: str(f.type) for f in dataclasses.fields(cls)} | {"schema": "int"}
    return _HINTS[cls]


def _conforms(value: Any, hint: str) -> bool:
    """Whether a JSON value has the type a field's annotation names; `Any` and types this
    check does not know (TypedDicts: dicts) pass on their outer JSON type alone."""
    for option in (o.strip() for o in hint.split("|")):
        base, _, inner = option.partition("[")
        if base == "Any":
            return True
        if base == "None":  # the value is not None: the other options decide
            continue
        if base == "list" and isinstance(value, list):
            element = inner.rstrip("]").strip()
            return element not in _JSON_TYPES or all(_conforms(v, element) for v in value)
        if base in _JSON_TYPES:
            if isinstance(value, bool) and base in ("int", "float"):
                continue
            if isinstance(value, _JSON_TYPES[base]):
                return True
        elif isinstance(value, dict):  # a TypedDict
            return True
    return False


@dataclass(slots=True, kw_only=True)
class Record:
    """What every record shares: its schema version and the keys its type does not name.

    Every record written carries ``"schema": SCHEMA_VERSION`` (each line of a .jsonl file; a
    top-level key of a .json file). A record without it is schema 0 (results/runs/ holds such
    records) and is read as it is. A record of a newer schema is refused with one line naming
    its file (`SchemaError`): a newer harness wrote it, and reading it as an older one would be
    a guess.

    The field names on disk are the attribute names. A schema 0 record may lack any field but
    the few the loader needs (`required`), so the others are optional: None means the file does
    not have it. Keys the types do not name are kept in `extra` and written back where they
    were, so a record read and written again is the same JSON (`to_json`).

    Plain dataclasses, not a validation library: the files are JSON the runner wrote, the
    readers trust their shape, and a record's JSON stays byte for byte what the runner wrote
    (key order included, for the pretty-printed summary and manifest). Like the whole results
    side, this module imports nothing else of the project (.importlinter).
    """

    #: fields a record of this kind cannot lack, whatever its schema (the loader's keys)
    required: ClassVar[tuple[str, ...]] = ()
    #: whether a field that is None is left out of the JSON (summary and manifest: the runner
    #: writes their optional parts only when it has them) or written as null
    omit_none: ClassVar[bool] = False
    #: the field the `extra` keys are written after (None: after the last)
    extra_after: ClassVar[str | None] = None

    schema: int = SCHEMA_VERSION
    #: keys this type does not name, in file order
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def problem(cls, data: Mapping[str, Any]) -> str | None:
        """Why `data` is not a record of this kind (a required field missing, or a field whose
        JSON type is not its type's), or None: what a reader sets aside instead of crashing on."""
        if missing := [name for name in cls.required if data.get(name) is None]:
            return f"no {', '.join(missing)}"
        hints = _hints(cls)
        for name, value in data.items():
            if value is not None and name in hints and not _conforms(value, hints[name]):
                return f"{name} is a JSON {type(value).__name__}, not {hints[name]}"
        return None

    @classmethod
    def from_json(cls, data: Mapping[str, Any], source: str | Path) -> Self:
        """The record `data` read from `source` (named in any error)."""
        version = schema_of(data, source)
        if missing := [name for name in cls.required if name not in data]:
            raise SchemaError(
                f"{source}: a {cls.__name__.lower()} record without {', '.join(missing)}"
            )
        names = {f.name for f in dataclasses.fields(cls)} - {SCHEMA_KEY, "extra"}
        known = {k: v for k, v in data.items() if k in names}
        extra = {k: v for k, v in data.items() if k not in names and k != SCHEMA_KEY}
        return cls(**known, schema=version, extra=extra)

    def to_json(self) -> dict[str, Any]:
        """The record as JSON, its schema first: what the runner writes."""
        out: dict[str, Any] = {SCHEMA_KEY: self.schema}
        for f in dataclasses.fields(self):
            if f.name in (SCHEMA_KEY, "extra"):
                continue
            value = getattr(self, f.name)
            if value is not None or not self.omit_none:
                out[f.name] = value
            if f.name == self.extra_after:
                out.update(self.extra)
        if self.extra_after is None:
            out.update(self.extra)
        return out


@dataclass(slots=True, kw_only=True)
class Prediction(Record):
    """One answered (or, in a read-only run, read) question: predictions.jsonl."""

    required: ClassVar[tuple[str, ...]] = ("id",)

    id: str  # unique across the benchmark: the resume key
    episode: str | None = None
    question: str | None = None
    golds: list[str] | None = None
    meta: dict[str, Any] | None = None  # the question's own (the benchmark's labels)
    prediction: str | None = None  # None: a read-only run, which answers nothing
    context_chars: int | None = None
    context_tokens: int | None = None
    context_tokens_exact: bool | None = None
    context_items: int | None = None
    context_meta: dict[str, Any] | None = None  # what the arm reports (coverage, decisions...)


class ReadContext(TypedDict):
    """What the arm read for a question (a sample's `context`)."""

    text: str
    ids: list[str]
    chars: int
    tokens: int  # in the reader's tokens
    meta: dict[str, Any]


@dataclass(slots=True, kw_only=True)
class Sample(Record):
    """What the reader saw and said for a question, with every model call the question caused
    (the messages as sent, the raw reply): samples.jsonl. Scores live in scores.jsonl under the
    same id."""

    required: ClassVar[tuple[str, ...]] = ("id",)

    id: str
    episode: str | None = None
    question: str | None = None
    golds: list[str] | None = None
    prediction: str | None = None
    context: ReadContext | None = None
    calls: list[dict[str, Any]] | None = None


#: where a wrong answer was lost, in the order the answer passes them (docs/failure_stages.md)
FAILURE_STAGES = ("write", "route", "retrieval", "stale", "reader", "judge", "unattributed")


@dataclass(slots=True, kw_only=True)
class Failure(Record):
    """Where one wrong answer was lost (stages.jsonl): a `FAILURE_STAGES` name and the fact
    that decided it, by the benchmark's own rule (its package's ``stages.py``)."""

    required: ClassVar[tuple[str, ...]] = ("id", "stage")

    id: str
    stage: str
    why: str = ""


@dataclass(slots=True, kw_only=True)
class Score(Record):
    """One prediction's scores: scores.jsonl. On disk each scorer's fields sit under its name
    beside the id (``{"id": ..., "location": {"correct": true}}``); here they are `scorers`."""

    required: ClassVar[tuple[str, ...]] = ("id",)

    id: str
    #: by scorer name: its fields (``correct``, ``stale``...), or {} when it did not score
    scorers: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls, data: Mapping[str, Any], source: str | Path) -> Self:
        version = schema_of(data, source)
        if "id" not in data:
            raise SchemaError(f"{source}: a score record without id")
        scorers = {k: v for k, v in data.items() if k not in ("id", SCHEMA_KEY)}
        return cls(id=data["id"], scorers=scorers, schema=version)

    def to_json(self) -> dict[str, Any]:
        clash = {"id", SCHEMA_KEY} & set(self.scorers)
        if clash:
            raise ValueError(f"a scorer may not be named {', '.join(sorted(clash))}")
        return {SCHEMA_KEY: self.schema, "id": self.id, **self.scorers}

    def row(self) -> dict[str, Any]:
        """The scores as the scorers returned them, without the schema: what `summarize` and a
        benchmark's `on_scored` take."""
        return {"id": self.id, **self.scorers}


class Accuracy(TypedDict):
    """A scorer's accuracy with its 95% Wilson interval (a summary's `scores`)."""

    accuracy: float
    correct: int
    n: int
    ci95: list[float]


class Rate(TypedDict):
    """A yes/no outcome other than `correct` as a rate (a summary's `rates`)."""

    rate: float
    count: int
    n: int
    ci95: list[float]


class ReadSize(TypedDict, total=False):
    """The mean read per question (a summary's `read`); `meta`: the mean of each numeric
    `context_meta` field, when the arm reports any."""

    mean_chars: float
    mean_tokens: float
    tokens_exact: bool
    meta: dict[str, float]


@dataclass(slots=True, kw_only=True)
class Summary(Record):
    """A finished run's summary.json. A benchmark's own figures (LongMemEval's official
    metrics, ``longmemeval``) are `extra` keys, written after `read` as the runner always has."""

    required: ClassVar[tuple[str, ...]] = ("n", "expected", "complete", "scores")
    omit_none: ClassVar[bool] = True
    extra_after: ClassVar[str | None] = "read"

    n: int
    expected: int
    complete: bool
    scores: dict[str, Accuracy]
    rates: dict[str, Rate] | None = None
    read: ReadSize | None = None
    run: str | None = None  # the run folder it was written in
    usage: dict[str, Any] | None = None  # this attempt's, by role
    wall_s: float | None = None
    earlier_attempts: dict[str, Any] | None = None  # what the attempts before this one paid
    rescore: bool | None = None
    read_only: bool | None = None


class GitState(TypedDict):
    commit: str | None
    dirty: bool | None


@dataclass(slots=True, kw_only=True)
class Manifest(Record):
    """A run's manifest.json: its config (secrets redacted), where it ran, what it read."""

    required: ClassVar[tuple[str, ...]] = ("config",)
    omit_none: ClassVar[bool] = True

    config: dict[str, Any]
    config_sha256: str | None = None
    git: GitState | None = None
    python: str | None = None
    platform: str | None = None
    machine: dict[str, Any] | None = None  # the CPU: model name, cores, vector flags
    packages: dict[str, str | None] | None = None
    dataset: dict[str, Any] | None = None  # the benchmark's fingerprint (file, sha256...)
    prompts: dict[str, str] | None = None  # by name: the sha256 of its text
    #: the arm's fingerprint on its benchmark (benchmarks.runner.probe): a hash per part
    probe: dict[str, str] | None = None
    started_at: str | None = None
    first_started_at: str | None = None  # a resumed run's first attempt
