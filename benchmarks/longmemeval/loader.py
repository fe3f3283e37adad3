"""Loading a haystack file: the shipped real S instance, a local file, or the hub download.

The data cannot be downloaded here (no hub is reachable). One real S instance ships with the
repository (``benchmarks/data/longmemeval``; provenance in SOURCES.md there) and is the default.
Anything else is a local file (JSON, or gzipped JSON), or ``path="hf"``, which downloads the
pinned official file when a hub is reachable (``hub``). Every instance is checked against the
official schema (``schema``), and a question id asked for (``ids=`` or a keys file) that is not
in the file fails loudly (``UnknownQuestion``), so a subset run never silently shrinks.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from benchmarks.longmemeval.hub import default_dest, download, fetch_hint, variant_named
from benchmarks.longmemeval.schema import (
    QUESTION_TYPES,
    Instance,
    SchemaError,
    parse_instance,
    type_name,
)
from benchmarks.runner.types import InputError

__all__ = [
    "DATA_DIR",
    "DATA_FILE",
    "DATA_ORIGIN",
    "DATA_SHA256",
    "EXTRA_FILES",
    "FIXTURE_FILE",
    "HF_PATH",
    "SHIPPED_SOURCE",
    "LoadedFile",
    "UnknownQuestion",
    "load",
    "parse_file",
    "read_keys",
    "select",
]

DATA_DIR = Path(__file__).resolve().parents[1] / "data" / "longmemeval"
DATA_FILE = DATA_DIR / "longmemeval_s_single_e47becba.json"
DATA_ORIGIN = "benchmarks/data/longmemeval/longmemeval_s_single_e47becba.json"
DATA_SHA256 = "9c5d1cd86db0d66671786bae984d94337cde306f1235a14bb12bd6a958b27d81"
FIXTURE_FILE = DATA_DIR / "fixture.json"
# The extra real instances, one file per haystack style (a file loads as one variant), with
# their sha256 (SOURCES.md: where each record comes from and what was rebuilt).
EXTRA_FILES: dict[str, tuple[Path, str]] = {
    "s": (
        DATA_DIR / "longmemeval_extra_s.json",
        "63cf7666f4ca10c356550aa7684c6dbaffafe1aa5097779e7d8ac45bbae482db",
    ),
    "oracle": (
        DATA_DIR / "longmemeval_extra_oracle.json",
        "1598b13583323399f69420ce586611314bc9aa8e1399cd9609966895cfb0efdf",
    ),
}
# Where the shipped instance comes from (SOURCES.md next to it has the whole provenance).
SHIPPED_SOURCE = (
    "one LongMemEval_S instance (e47becba), zjunlp/LightMem @ "
    "59e64bfa7813f4794f33844adfab72233eee5b47: tutorial-notebooks/longmemeval_single.json"
)
HF_PATH = "hf"  # the `path` value that asks for the hub download


class UnknownQuestion(InputError, KeyError):
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


@dataclass(frozen=True)
class LoadedFile:
    origin: str  # the file read (repository-relative for the shipped one)
    sha256: str  # of the file's JSON bytes (after gunzip, if gzipped)
    instances: tuple[Instance, ...]


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
            origin, f"expected a JSON list of instances, got {type_name(rows)} at the top level"
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
        file = download(variant_named(variant), default_dest())
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
    the partial question keys of docs/notes/data-sources.md), or a JSON list."""
    file = Path(path)
    text = file.read_text(encoding="utf-8")
    rows: list[Any]
    if text.lstrip().startswith("["):
        rows = json.loads(text)
    else:
        rows = []
        for n, line in enumerate(text.split("\n"), start=1):
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
