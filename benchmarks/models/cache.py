"""A response cache keyed by what a request *means*, so a crashed or repeated run re-pays nothing.

The key (`cache_key`) holds only what decides the answer, never base URL, concurrency, timeouts
or retries. A cache lives on one machine; to resume a run on another, its entries travel as a
dump (gzipped JSON lines, one entry each, byte-stable; an imported entry never replaces one held):

    python -m benchmarks.models.cache export results/cache/NAME.jsonl.gz [--since T] [--kind chat]
    python -m benchmarks.models.cache import results/cache/*.jsonl.gz
"""

from __future__ import annotations

import argparse
import concurrent.futures
import gzip
import hashlib
import json
import os
import re
import sqlite3
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

__all__ = ["BadDump", "ResponseCache", "cache_key", "canonical_json"]

# the columns of one entry, in a dump's lines as in the table
COLUMNS = ("key", "kind", "model", "request", "response", "created")
# What `export --kind` names, and the stored kinds each covers: "chat" is every chat completion,
# the harness's own and the peer packages' through their gateway (baselines/peers/gateway.py
# stores those as gateway-chat): both cost minutes on a local model, embeddings milliseconds.
KIND_GROUPS = {
    "chat": ("chat", "gateway-chat"),
    "embedding": ("embedding", "gateway-embeddings"),
    "tokenize": ("tokenize",),
}

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key      TEXT PRIMARY KEY,
    kind     TEXT NOT NULL,
    model    TEXT NOT NULL,
    request  TEXT,
    response TEXT NOT NULL,
    created  REAL NOT NULL
)
"""


def canonical_json(value: Any) -> str:
    """One spelling per value: sorted keys, no whitespace, unicode kept as is."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def compact_json(value: Any) -> str:
    """`value` as stored: no whitespace, keys in their order. A request is kept as it was sent,
    because a json_schema's property order is the order a grammar-constrained server writes the
    fields in, which changes what a model writes (a replay of a sorted copy is a different
    request); only the key is canonical."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def cache_key(request: Mapping[str, Any]) -> str:
    """sha256 hex of the canonical JSON of a semantic request.

    The semantic request is the model, revision, messages, sampling parameters, schema and draw
    index. Operational settings (base URL, concurrency, timeouts, retries) never enter it, so
    moving a run to another server or tuning its concurrency still hits.
    """
    return hashlib.sha256(canonical_json(request).encode("utf-8")).hexdigest()


# Filesystems shared between nodes, where SQLite's WAL mode (one shared-memory index beside the
# database) is unsafe: https://www.sqlite.org/wal.html, "WAL does not work over a network
# filesystem". A cluster job keeps its cache on node-local disk and merges it after.
NETWORK_FILESYSTEMS = frozenset(
    {"nfs", "nfs4", "lustre", "gpfs", "beegfs", "cifs", "smb3", "smbfs", "ceph", "glusterfs",
     "fuse.glusterfs", "fuse.sshfs", "fuse.beegfs", "afs", "9p", "panfs", "wekafs"}
)  # fmt: skip


MOUNTS = Path("/proc/mounts")


def filesystem_of(path: Path, mounts: str | None = None) -> str | None:
    """The filesystem type under `path`: the longest mount point that holds it in /proc/mounts
    (or `mounts`, that file's text); None where the mounts cannot be read."""
    if mounts is None:
        try:
            mounts = MOUNTS.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None
    target = str(path.resolve())
    best, kind = "", None
    for line in mounts.splitlines():
        fields = line.split()
        if len(fields) < 3:
            continue
        point = fields[1].replace("\\040", " ")
        inside = target == point or target.startswith(point.rstrip("/") + "/")
        if inside and len(point) > len(best):
            best, kind = point, fields[2]
    return kind


class CacheOnNetworkFilesystem(ValueError):
    """The response cache was asked to live where SQLite cannot share it safely."""


class ResponseCache:
    """SQLite store of raw responses; `ResponseCache(None)` is a disabled cache.

    Calls are short synchronous statements, so use from one asyncio loop never interleaves; a
    lock makes it safe from threads too, and WAL plus a busy timeout from several processes.

    Every response is committed on arrival (WAL mode, autocommit), so a kill -9 loses only the
    calls in flight. `synchronous=NORMAL` is durable against a process crash; only a power loss
    can drop the last few commits, which a rerun simply pays again.
    """

    def __init__(self, path: str | os.PathLike[str] | None) -> None:
        self.path = Path(path) if path is not None else None
        self.hits = 0
        self.misses = 0
        # Requests in flight (key -> concurrent.futures.Future of the raw response), kept by
        # the async clients so that identical concurrent requests are paid once; thread-safe
        # futures, because one cache serves several event loops (each peer gateway runs its own)
        self.inflight: dict[str, concurrent.futures.Future[Any]] = {}
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            kind = filesystem_of(self.path.parent)
            if kind in NETWORK_FILESYSTEMS and not os.environ.get("PMEM_CACHE_ON_NETWORK_FS"):
                raise CacheOnNetworkFilesystem(
                    f"the response cache {self.path} is on {kind}, a network filesystem, where "
                    "SQLite's WAL mode is unsafe for parallel jobs: set run.cache to node-local "
                    "disk (run.cache=$TMPDIR/cache.sqlite) and merge it after with "
                    "`python -m benchmarks.models.cache export/import` (slurm/README.md)"
                )
            db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute("PRAGMA busy_timeout=30000")
            db.execute(_SCHEMA)
            self._db = db

    @property
    def enabled(self) -> bool:
        return self._db is not None

    def get(self, key: str) -> Any | None:
        """The stored response for `key`, or None (a miss); counts hits and misses."""
        if self._db is None:
            return None
        with self._lock:
            row = self._db.execute(
                "SELECT response FROM responses WHERE key = ?", (key,)
            ).fetchone()
            if row is None:
                self.misses += 1
                return None
            self.hits += 1
        return json.loads(row[0])

    def put(
        self,
        key: str,
        response: Any,
        *,
        kind: str = "",
        model: str = "",
        request: Mapping[str, Any] | None = None,
    ) -> None:
        """Store one response now; a key already present keeps its first response."""
        if self._db is None:
            return
        row = (
            key,
            kind,
            model,
            None if request is None else compact_json(request),
            compact_json(response),
            time.time(),
        )
        with self._lock:
            self._db.execute("INSERT OR IGNORE INTO responses VALUES (?, ?, ?, ?, ?, ?)", row)

    def __contains__(self, key: object) -> bool:
        if self._db is None:
            return False
        with self._lock:
            found = self._db.execute("SELECT 1 FROM responses WHERE key = ?", (key,)).fetchone()
        return found is not None

    def __len__(self) -> int:
        if self._db is None:
            return 0
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def stats(self) -> dict[str, Any]:
        path = None if self.path is None else str(self.path)
        return {"path": path, "hits": self.hits, "misses": self.misses, "entries": len(self)}

    def dump(
        self,
        out: str | os.PathLike[str],
        *,
        since: float | None = None,
        kinds: Sequence[str] | None = None,
    ) -> int:
        """Write the entries (those created at or after `since`, a unix time; of `kinds` only,
        e.g. ["chat"]: the calls that cost minutes, where embeddings cost milliseconds) to
        `out` as gzipped JSON lines in key order (mtime 0: the same entries give the same
        bytes), the stored request and response texts as they are; how many were written."""
        if self._db is None:
            raise ValueError("a disabled cache has nothing to dump")
        where = ["1"]
        args: list[float | str] = []
        if since is not None:
            where.append("created >= ?")
            args.append(since)
        if kinds:
            where.append(f"kind IN ({', '.join('?' * len(kinds))})")
            args.extend(kinds)
        with self._lock:
            rows = self._db.execute(
                f"SELECT {', '.join(COLUMNS)} FROM responses WHERE {' AND '.join(where)} "
                "ORDER BY key",
                args,
            ).fetchall()
        text = "".join(canonical_json(dict(zip(COLUMNS, r, strict=True))) + "\n" for r in rows)
        # written aside and moved into place: a dump rewritten while a run goes on (the stage
        # script's DUMP) and stopped mid-write leaves the previous dump whole, and two writers
        # at once (its timer and its stop) each move a whole file
        target = Path(out)
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, partial = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0))
            os.chmod(partial, 0o644)  # a dump is committed like any file, not kept private
            os.replace(partial, target)
        except BaseException:
            Path(partial).unlink(missing_ok=True)
            raise
        return len(rows)

    def load(self, source: str | os.PathLike[str]) -> tuple[int, int]:
        """Add the entries of a dump; a key this cache holds keeps its own response. Every line
        is checked before any is added, so a bad file adds nothing (`BadDump` names the line).
        (added, already here).

        Replies depend on the machine kind that made them (docs/models.md, "The local profile's
        slots"), so a run resumed from a dump made elsewhere mixes two machines' replies; its
        manifest names the machine it ran on."""
        if self._db is None:
            raise ValueError("a disabled cache cannot load a dump")
        rows = _read_dump(Path(source))
        insert = (
            f"INSERT INTO responses ({', '.join(COLUMNS)}) VALUES (?, ?, ?, ?, ?, ?) "
            "ON CONFLICT(key) DO NOTHING"  # a held key keeps its reply; any other error raises
        )
        with self._lock:
            before = int(self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])
            self._db.execute("BEGIN")
            try:
                self._db.executemany(insert, rows)
            except BaseException:
                self._db.execute("ROLLBACK")  # all or nothing; the connection stays usable
                raise
            self._db.execute("COMMIT")
            added = int(self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]) - before
        return added, len(rows) - added

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    def __enter__(self) -> ResponseCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        where = "disabled" if self.path is None else str(self.path)
        return f"ResponseCache({where}, hits={self.hits}, misses={self.misses})"


class BadDump(ValueError):
    """A file that is not a cache dump (or a damaged one); the message names the line."""


def _entry_problem(row: tuple[Any, ...]) -> str | None:
    """Why a dump's entry cannot go into the table as it is (None: it can)."""
    key, kind, model, request, response, created = row
    if not (isinstance(key, str) and re.fullmatch("[0-9a-f]{64}", key)):
        return f"key must be a sha256 hex digest, not {key!r}"
    if not (isinstance(kind, str) and isinstance(model, str) and isinstance(response, str)):
        return "kind, model and response must be texts"
    if request is not None and not isinstance(request, str):
        return "request must be a JSON text or null"
    if isinstance(created, bool) or not isinstance(created, int | float):
        return "created must be a unix time"
    return None


def _read_dump(path: Path) -> list[tuple[Any, ...]]:
    try:
        text = gzip.decompress(path.read_bytes()).decode("utf-8")
    except FileNotFoundError:
        raise BadDump(f"{path}: no such file") from None
    except (OSError, EOFError, UnicodeDecodeError) as err:
        raise BadDump(f"{path}: not a gzipped cache dump ({err})") from None
    rows = []
    # lines end at \n only: str.splitlines would also split at U+2028 and U+0085, which JSON
    # leaves unescaped in a text
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    for number, line in enumerate(lines, 1):
        try:
            entry = json.loads(line)
            json.loads(entry["response"])  # the stored reply must parse, as `get` parses it
            row = tuple(entry[c] for c in COLUMNS)
        except (ValueError, TypeError, KeyError) as err:
            raise BadDump(
                f"{path} line {number}: not a cache entry (needs {', '.join(COLUMNS)}; "
                f"{type(err).__name__}: {err})"
            ) from None
        if problem := _entry_problem(row):
            raise BadDump(f"{path} line {number}: {problem}")
        rows.append(row)
    return rows


def _utc(text: str) -> float:
    """An ISO 8601 time as a unix time; one with no zone is UTC (as manifests record times)."""
    moment = datetime.fromisoformat(text)
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m benchmarks.models.cache",
        description="Carry response-cache entries between machines, so a run resumed on "
        "another one pays nothing twice.",
    )
    sub = p.add_subparsers(dest="command", required=True)
    ex = sub.add_parser("export", help="write the cache's entries to a gzipped dump")
    ex.add_argument("out", type=Path)
    ex.add_argument(
        "--since",
        help="only entries made at or after this time (ISO 8601; no zone: UTC), e.g. "
        "2026-12-04T09:00",
    )
    ex.add_argument(
        "--kind",
        action="append",
        choices=tuple(KIND_GROUPS),
        help="only entries of this kind (repeatable; default: all); chat includes the peer "
        "packages' chat calls through their gateway, embedding their embeddings",
    )
    im = sub.add_parser("import", help="add the entries of dumps (never replacing an entry)")
    im.add_argument("dumps", type=Path, nargs="+")
    for q in (ex, im):
        q.add_argument(
            "--cache",
            type=Path,
            default=Path("runs/cache.sqlite"),
            help="the cache file (run.cache; Table 11's runs use runs/table11/cache.sqlite)",
        )
    args = p.parse_args(argv)
    if args.command == "export":
        if not args.cache.exists():
            print(f"cache: {args.cache}: no such cache (--cache names one)", file=sys.stderr)
            return 2
        try:
            since = _utc(args.since) if args.since else None
        except ValueError:
            print(f"cache: --since {args.since!r} is not an ISO 8601 time", file=sys.stderr)
            return 2
        with ResponseCache(args.cache) as cache:
            kinds = [k for group in args.kind for k in KIND_GROUPS[group]] if args.kind else None
            n = cache.dump(args.out, since=since, kinds=kinds)
        print(f"wrote {n} entries to {args.out} ({args.out.stat().st_size:,} bytes)")
        return 0
    with ResponseCache(args.cache) as cache:
        for dump in args.dumps:
            try:
                added, present = cache.load(dump)
            except BadDump as err:
                print(f"cache: {err}; nothing of it was added", file=sys.stderr)
                return 2
            print(f"{dump}: {added} entries added to {args.cache}, {present} already there")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
