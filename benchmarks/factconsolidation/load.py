"""Loading a FactConsolidation source: the shipped file, a local JSON file, or the hub.

The eight sources (``sh``/``mh`` x 6k/32k/64k/262k, Appendix B.4) are rows of MemoryAgentBench's
Conflict_Resolution split. The split ships with the repository (``benchmarks/data/
memoryagentbench``; provenance and checksums in SOURCES.md there), and what was read is
recorded (``origin``, ``sha256``) so manifests agree across machines. ``path="hf"`` reads the
hub's parquet of the split at a pinned commit, checked by sha256 (``benchmarks.runner.hubfile``).
"""

from __future__ import annotations

import difflib
import gzip
import hashlib
import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from benchmarks.factconsolidation.facts import Fact, parse_context
from benchmarks.runner.hubfile import HubError, HubFile, hub_download
from benchmarks.runner.types import InputError

__all__ = [
    "DATA_DIR",
    "DATA_FILE",
    "DATA_GZ_SHA256",
    "DATA_ORIGIN",
    "DATA_SHA256",
    "HF_DATASET",
    "HF_PARQUET",
    "HF_PATH",
    "HF_REVISION",
    "HF_SPLIT",
    "HOPS",
    "LENGTHS",
    "SOURCES",
    "SOURCE_PREFIX",
    "SourceData",
    "UnknownSource",
    "load",
    "normalize_source",
    "rows_from_hub",
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
# The commit and the parquet's size and sha256 that third-party harnesses record for the split
# (docs/notes/data-sources.md); the path is the one they download (not checked against the hub).
HF_REVISION = "7ea066982b140a19337e17e60d45d4076e042faf"
HF_PARQUET = HubFile(
    HF_DATASET,
    HF_REVISION,
    f"data/{HF_SPLIT}-00000-of-00001.parquet",
    "24d5c3f09ce0ce15625cb9f8a98f44f0d864ca6c94d7b4ad04eb697ca3a5ff45",
    1_491_588,
)

SOURCE_PREFIX = "factconsolidation_"
LENGTHS = ("6k", "32k", "64k", "262k")
HOPS = ("sh", "mh")
SOURCES = tuple(f"{hop}_{length}" for length in LENGTHS for hop in HOPS)


class DataFileError(InputError, ValueError):
    """A data file that cannot be read as the Conflict_Resolution split (cut short, not JSON)."""


class UnknownSource(InputError, ValueError):
    """An unknown source name; the message lists the valid ones and the nearest match."""


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
    origin: str  # the file read, or "hf:ai-hyz/MemoryAgentBench@<commit>:Conflict_Resolution"
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
    try:
        data = _read_json_bytes(Path(path))
        rows = json.loads(data)
    except (OSError, EOFError, ValueError) as err:  # unreadable, a cut gzip, cut or foreign JSON
        raise DataFileError(f"{path}: not a readable FactConsolidation file ({err})") from None
    if not isinstance(rows, list):
        raise DataFileError(f"{path}: expected a JSON list of rows (the Conflict_Resolution split)")
    return tuple(rows), hashlib.sha256(data).hexdigest()


def _parquet_rows_reader() -> Any:
    """A function reading a parquet file into a list of plain rows: pyarrow's where it is
    installed, else the `datasets` package's; a HubError naming both when neither is."""
    try:
        import pyarrow.parquet as pq  # type: ignore[import-not-found,import-untyped]
    except ImportError:
        pass
    else:
        return lambda path: pq.read_table(path).to_pylist()
    try:
        from datasets import Dataset  # type: ignore[import-not-found]
    except ImportError:
        raise HubError(
            f"path='hf' reads the hub's parquet ({HF_PARQUET.filename}), which needs pyarrow "
            "(pip install pyarrow) or the Hugging Face datasets package (pip install datasets); "
            f"omit path to use the copy shipped in {DATA_ORIGIN}"
        ) from None
    return lambda path: [dict(row) for row in Dataset.from_parquet(str(path))]


def rows_from_hub(
    pin: HubFile = HF_PARQUET, *, cache_dir: str | Path | None = None
) -> tuple[tuple[dict[str, Any], ...], str]:
    """The official split from the hub: the pinned parquet, fetched by ``hf_hub_download`` at
    the pinned commit and checked by sha256 (``hub_download``), read into rows. The sha256
    returned is of the rows' canonical JSON, so it does not depend on the parquet reader."""
    read = _parquet_rows_reader()  # before any download: say what is missing first
    path = hub_download(
        pin, hint=f"omit path to use the copy shipped in {DATA_ORIGIN}", cache_dir=cache_dir
    )
    try:
        rows = tuple(dict(row) for row in read(path))
    except Exception as exc:  # a parquet the reader cannot read, despite its hash
        raise DataFileError(f"{path}: not a readable parquet of {pin.label} ({exc})") from None
    canonical = json.dumps(rows, sort_keys=True, ensure_ascii=False).encode()
    return rows, hashlib.sha256(canonical).hexdigest()


def _rows(path: str | Path | None) -> tuple[tuple[dict[str, Any], ...], str, str]:
    if path == HF_PATH:
        rows, sha = rows_from_hub()
        return rows, sha, f"hf:{HF_DATASET}@{HF_REVISION}:{HF_SPLIT}"
    file = Path(path) if path is not None else DATA_FILE
    stat = file.stat()
    rows, sha = _rows_from_file(str(file.resolve()), stat.st_mtime_ns, stat.st_size)
    # The shipped file is named relative to the repository, so manifests agree across machines.
    origin = DATA_ORIGIN if path is None else str(file)
    return rows, sha, origin


def load(source: str, path: str | Path | None = None) -> SourceData:
    """Load and parse one source.

    ``path``: None for the shipped gzip, a local JSON (or gzipped JSON) file in the official
    row format, or ``"hf"`` for the official hub parquet at the pinned commit (only when asked;
    needs huggingface_hub and pyarrow or datasets, and a hub or a hub cache that holds it).
    Raises ``UnknownSource`` for a bad name and ``UnparsedFact`` listing every unparsed line.
    """
    short = normalize_source(source)
    rows, sha, origin = _rows(path)
    for i, r in enumerate(rows):
        if not isinstance(r, dict) or not isinstance(r.get("metadata") or {}, dict):
            raise DataFileError(f"{origin}: row {i} is not an object with a `metadata` object")
    matching = [
        (i, r) for i, r in enumerate(rows)
        if (r.get("metadata") or {}).get("source") == SOURCE_PREFIX + short
    ]  # fmt: skip
    if len(matching) != 1:
        raise DataFileError(
            f"{origin}: expected one row for {SOURCE_PREFIX + short}, found {len(matching)}"
        )
    index, row = matching[0]
    where = f"{origin}: row {index} ({SOURCE_PREFIX + short})"
    questions = _strings(row.get("questions"), f"{where}: `questions`")
    if not isinstance(row.get("answers"), list):
        raise DataFileError(f"{where}: `answers` must be a list, one per question")
    answers = tuple(
        tuple(_flatten(a, f"{where}: answer {n}")) for n, a in enumerate(row["answers"])
    )
    metadata = row.get("metadata") or {}
    ids = (
        _strings(metadata["qa_pair_ids"], f"{where}: `metadata.qa_pair_ids`")
        if metadata.get("qa_pair_ids")
        else tuple(f"{SOURCE_PREFIX}{short}_no{i}" for i in range(len(questions)))
    )
    if not len(questions) == len(answers) == len(ids):
        raise DataFileError(
            f"{where}: {len(questions)} questions, {len(answers)} answers, {len(ids)} ids"
        )
    if len(set(ids)) != len(ids):
        twice = next(i for i in ids if ids.count(i) > 1)
        raise DataFileError(f"{where}: question id {twice!r} is asked more than once")
    if not isinstance(row.get("context"), str):
        raise DataFileError(f"{where}: `context` must be the text of the facts")
    facts = parse_context(row["context"], short)
    return SourceData(short, facts, questions, answers, ids, origin, sha)


def _strings(value: Any, what: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise DataFileError(f"{what} must be a list of strings")
    return tuple(value)


def _flatten(golds: Any, what: str = "an answer") -> list[str]:
    """An answer's gold strings: a string, or lists of them nested any way."""
    if isinstance(golds, str):
        return [golds]
    if not isinstance(golds, list):
        raise DataFileError(f"{what} must be a string or a list of strings, not {golds!r}"[:200])
    return [g for item in golds for g in _flatten(item, what)]
