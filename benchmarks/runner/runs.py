"""Run folders: named by a hash of the semantic config, append-only records, a manifest.

Rerunning the same config lands in the same folder and resumes it: predictions are appended one
line per sample and flushed, so a kill at any point loses at most the samples in flight (and
their model calls are usually in the response cache already).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import json
import logging
import os
import platform
import re
import socket
import subprocess
import sys
from collections.abc import Callable, Iterable, Iterator
from importlib import metadata
from pathlib import Path
from typing import Any, Generic, TypeVar

# the run's identity (its folder's name), one definition for the runner and the results side
from benchmarks.results.identity import config_hash, sha256_text

# the records' types: the runner writes through them, the loader reads through the same
from benchmarks.results.records import (
    Failure,
    GitState,
    Manifest,
    Prediction,
    Record,
    Sample,
    SchemaError,
    Score,
)

log = logging.getLogger("pmem.bench")

PACKAGES = ("pmem", "openai", "aiohttp", "hydra-core", "omegaconf", "numpy", "tqdm")


class JsonLines:
    """An append-only JSON-lines file that survives a kill mid-write and never loses a good
    record to a bad one.

    `required`: fields every record must carry (a run's records need their ``id``).
    """

    def __init__(
        self,
        path: Path,
        required: tuple[str, ...] = (),
        check: Callable[[dict[str, Any]], str | None] | None = None,
    ) -> None:
        self.path = path
        self.required = required
        self.check = check
        self.rejected = path.with_name(path.name + ".rejected")

    def read(self) -> list[dict[str, Any]]:
        """Every good record, in file order.

        A line that is torn (a kill mid-write), not JSON, or not a record (not an object, or
        missing a required field) is set aside whole in `<name>.rejected` with its line number
        and why, logged as a warning, and taken out of the file; the good lines before and after
        it stay, so a resumed run re-answers only what the bad line held.
        """
        if not self.path.exists():
            return []
        raw = self.path.read_bytes()
        records: list[dict[str, Any]] = []
        kept: list[bytes] = []
        bad: list[tuple[int, bytes, str]] = []
        for number, line in enumerate(raw.splitlines(keepends=True), start=1):
            problem = None
            if not line.endswith(b"\n"):
                problem = "torn (no end of line: a write cut short)"
            else:
                try:
                    record = json.loads(line)
                except ValueError as err:  # JSONDecodeError, or bytes that are not UTF-8
                    problem = f"not JSON ({err})"
                else:
                    if not isinstance(record, dict):
                        problem = f"not a record (a JSON {type(record).__name__})"
                    elif missing := [f for f in self.required if f not in record]:
                        problem = f"not a record (no {', '.join(missing)})"
                    elif self.check is not None and (wrong := self.check(record)):
                        problem = f"not a record ({wrong})"
            if problem is None:
                records.append(record)
                kept.append(line)
            else:
                bad.append((number, line, problem))
        if bad:
            self._set_aside(bad, kept)
        return records

    def _set_aside(self, bad: list[tuple[int, bytes, str]], kept: list[bytes]) -> None:
        now = dt.datetime.now(dt.UTC).isoformat()
        with self.rejected.open("a", encoding="utf-8") as side:
            for number, line, problem in bad:
                text = line.decode("utf-8", "backslashreplace").rstrip("\n")
                side.write(
                    json.dumps({"line": number, "problem": problem, "text": text, "at": now}) + "\n"
                )
                log.warning(
                    "%s: line %d is %s; set aside in %s", self.path, number, problem, self.rejected
                )
            side.flush()
            os.fsync(side.fileno())
        tmp = self.path.with_name(f".{self.path.name}.tmp")
        with tmp.open("wb") as f:
            f.writelines(kept)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.path)

    def append(self, record: dict[str, Any]) -> None:
        line = json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n"
        with self.path.open("a", encoding="utf-8") as f:
            f.write(line)
            f.flush()

    def rewrite(self, records: list[dict[str, Any]]) -> None:
        tmp = self.path.with_suffix(".tmp")
        with tmp.open("w", encoding="utf-8") as f:
            for r in records:
                f.write(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n")
        os.replace(tmp, self.path)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.read())


R = TypeVar("R", bound=Record)


class RecordLines(Generic[R]):
    """A `JsonLines` file of one record type (`Prediction`, `Score`, `Sample`): each record is
    written as its JSON (its schema included) and read back as its type. A line that is not a
    record is set aside as `JsonLines` does; a record of a newer schema stops the read
    (`SchemaError`, naming the file): a newer harness wrote it."""

    def __init__(self, path: Path, kind: type[R], also: tuple[str, ...] = ()) -> None:
        """`also`: fields the runner needs beyond the type's own (a prediction's golds, to score
        it): a record without them is set aside too."""

        def check(record: dict[str, Any]) -> str | None:
            if missing := [name for name in also if record.get(name) is None]:
                return f"no {', '.join(missing)}"
            return kind.problem(record)

        self.lines = JsonLines(path, required=kind.required, check=check)
        self.kind = kind

    @property
    def path(self) -> Path:
        return self.lines.path

    def read(self) -> list[R]:
        return [self.kind.from_json(r, self.path) for r in self.lines.read()]

    def append(self, record: R) -> None:
        self.lines.append(record.to_json())

    def rewrite(self, records: Iterable[R]) -> None:
        self.lines.rewrite([r.to_json() for r in records])


LOCK_FILE = ".lock"
SAMPLES_FILE = "samples.jsonl"
JUDGE_AUDIT_FILE = "judge_audit.jsonl"  # the judge's verdicts on planted answers
CALLS_FILE = "calls.jsonl"  # in each snapshot: the model calls its ingest made


class RunFolderInUse(RuntimeError):
    """Another runner holds the run folder: two would answer every question twice."""


class RunFolder:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.predictions = RecordLines(path / "predictions.jsonl", Prediction, also=("golds",))
        self.scores = RecordLines(path / "scores.jsonl", Score)
        # what the reader saw, per question: the arm's read and every model call it caused
        self.samples = RecordLines(path / SAMPLES_FILE, Sample)
        # where each wrong answer was lost, when the benchmark can tell (`failures`)
        self.failures = RecordLines(path / "stages.jsonl", Failure)
        # every attempt on this folder, stopped or completed, with what it paid (`stopped.json`
        # is the latest stop): a resumed run's own meter counts only its last attempt
        self.attempts = JsonLines(path / "attempts.jsonl", required=("outcome",))
        self.snapshots = path / "snapshots"
        self.logs = path / "logs"

    @classmethod
    def for_config(
        cls, root: str | Path, experiment: str, arm: str, benchmark: str, cfg: dict[str, Any]
    ) -> RunFolder:
        name = f"{arm}__{benchmark}__{config_hash(cfg)[:10]}"
        path = Path(root) / experiment / name
        path.mkdir(parents=True, exist_ok=True)
        folder = cls(path)
        folder.snapshots.mkdir(exist_ok=True)
        folder.logs.mkdir(exist_ok=True)
        return folder

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        """Hold the run folder for this process until the block ends.

        A POSIX record lock (`fcntl.lockf`, which NFS carries between nodes) on `.lock`, which
        also says who holds it: a second runner stops at once with one line naming the first's
        pid and host. The lock dies with its process, so a kill -9 never leaves a folder locked.
        """
        fd = os.open(self.path / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            try:
                fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                holder = os.pread(fd, 512, 0).decode("utf-8", "replace").strip()
                raise RunFolderInUse(
                    f"run folder {self.path} is in use by {holder or 'another runner'}; "
                    "wait for that run to finish or stop it, then rerun to resume"
                ) from None
            since = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
            os.ftruncate(fd, 0)
            os.pwrite(
                fd, f"pid {os.getpid()} on {socket.gethostname()} since {since}\n".encode(), 0
            )
            yield
        finally:
            os.close(fd)  # releases the lock

    def write_json(self, name: str, payload: dict[str, Any]) -> None:
        tmp = self.path / f".{name}.tmp"
        tmp.write_text(json.dumps(payload, indent=2, ensure_ascii=False, default=str) + "\n")
        os.replace(tmp, self.path / name)

    def write_lines(self, name: str, records: Iterable[dict[str, Any]]) -> None:
        """A JSON-lines file written whole (replaced atomically)."""
        tmp = self.path / f".{name}.tmp"
        text = "".join(json.dumps(r, ensure_ascii=False, default=str) + "\n" for r in records)
        tmp.write_text(text)
        os.replace(tmp, self.path / name)

    def read_json(self, name: str) -> dict[str, Any] | None:
        path = self.path / name
        return json.loads(path.read_text()) if path.exists() else None

    def write_record(self, name: str, record: Record) -> None:
        """summary.json or manifest.json, from its type (its schema included)."""
        self.write_json(name, record.to_json())

    def read_record(self, name: str, kind: type[R]) -> R | None:
        """summary.json or manifest.json as its type; None when the folder has none yet."""
        data = self.read_json(name)
        if data is None:
            return None
        if not isinstance(data, dict):
            raise SchemaError(f"{self.path / name}: not a record (a JSON {type(data).__name__})")
        return kind.from_json(data, self.path / name)


# What a credential's key is called, compared with case, `_`, `-` and spaces removed: a key that
# ends with one of these (`openai_api_key`, `hf_token`, `X-Api-Key`, `Authorization`), except one
# that names an environment variable (`api_key_env`) or counts tokens (`max_tokens`).
SECRET_SUFFIXES = (
    "apikey", "token", "password", "passwd", "secret", "authorization", "credential",
    "credentials", "privatekey", "accesskey", "secretkey", "cookie", "bearer",
)  # fmt: skip
_URL_CREDENTIALS = re.compile(r"(?P<scheme>[a-z][a-z0-9+.-]*://)[^/@\s]+@", re.IGNORECASE)
_BEARER = re.compile(r"^\s*(bearer|basic)\s+[A-Za-z0-9._~+/=-]+\s*$", re.IGNORECASE)


_BEARER_IN_TEXT = re.compile(r"\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{8,}", re.IGNORECASE)


def redact_text(text: str) -> str:
    """`text` (an error message, a log line) with credentials inside URLs and `Bearer …` /
    `Basic …` tokens replaced: a message that quotes a URL or a header never carries a
    secret to the screen or a log file."""
    text = _URL_CREDENTIALS.sub(r"\g<scheme><redacted>@", text)
    return _BEARER_IN_TEXT.sub(lambda m: f"{m.group(1)} <redacted>", text)


class RedactingFilter(logging.Filter):
    """A log filter that passes every record with its message through `redact_text`."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        clean = redact_text(message)
        if clean != message:
            record.msg, record.args = clean, ()
        return True


def secret_key(key: str) -> bool:
    """Whether a config key names a credential (its value must never reach a file)."""
    name = re.sub(r"[^a-z0-9]", "", key.lower())
    return not name.endswith("env") and name.endswith(SECRET_SUFFIXES)


def redacted(node: Any) -> Any:
    """`node` with every credential replaced: values of credential-named keys, credentials inside
    URLs (`https://user:secret@host`), and `Bearer …` strings. Keys are read from the
    environment (`api_key_env`); one given on the command line still never reaches a file."""
    if isinstance(node, dict):
        return {
            k: "<redacted>" if secret_key(str(k)) and v is not None else redacted(v)
            for k, v in node.items()
        }
    if isinstance(node, list):
        return [redacted(v) for v in node]
    if isinstance(node, str):
        if _BEARER.match(node):
            return "<redacted>"
        return _URL_CREDENTIALS.sub(r"\g<scheme><redacted>@", node)
    return node


def manifest(
    cfg: dict[str, Any],
    dataset: dict[str, Any],
    prompts: dict[str, str],
    probe: dict[str, str] | None = None,
) -> Manifest:
    """Everything needed to trust and reproduce a run's numbers."""
    return Manifest(
        config=redacted(cfg),
        config_sha256=config_hash(cfg),
        git=git_state(),
        python=sys.version.split()[0],
        platform=platform.platform(),
        machine=machine(),
        packages={p: _version(p) for p in PACKAGES},
        dataset=dataset,
        prompts={name: sha256_text(text) for name, text in sorted(prompts.items())},
        probe=probe,
        started_at=dt.datetime.now(dt.UTC).isoformat(),
    )


# CPU features that change a CPU-served model's arithmetic: llama.cpp and vLLM's CPU build pick
# kernels by them, and greedy replies on an AVX2-only machine differ from an AVX-512 one's
# (docs/models.md), so a local run's answers are reproducible only on a like machine.
CPU_FLAGS = (
    "avx",
    "avx2",
    "fma",
    "f16c",
    "avx512f",
    "avx512bw",
    "avx512_vnni",
    "avx512_bf16",
    "amx_tile",
)


def machine() -> dict[str, Any]:
    """The CPU a run was made on: its model name, core count and the vector flags it has."""
    info: dict[str, Any] = {"cpu": platform.processor() or None, "cores": os.cpu_count()}
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return info
    fields = dict(
        line.split(":", 1) for line in text.split("\n\n", 1)[0].splitlines() if ":" in line
    )
    fields = {k.strip(): v.strip() for k, v in fields.items()}
    info["cpu"] = fields.get("model name") or info["cpu"]
    flags = set(fields.get("flags", "").split())
    info["cpu_flags"] = [f for f in CPU_FLAGS if f in flags]
    return info


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def git_state() -> GitState:
    root = Path(__file__).resolve().parents[2]

    def git(*args: str) -> str | None:
        try:
            out = subprocess.run(
                ["git", *args], cwd=root, capture_output=True, text=True, timeout=10, check=True
            )
        except (OSError, subprocess.SubprocessError):
            return None
        return out.stdout.strip()

    status = git("status", "--porcelain", "--untracked-files=no")
    return {
        "commit": git("rev-parse", "HEAD"),
        "dirty": bool(status) if status is not None else None,
    }
