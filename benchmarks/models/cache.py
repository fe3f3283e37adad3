"""A response cache keyed by what a request *means*, so a crashed or repeated run re-pays nothing.

The key is the sha256 of the canonical JSON of the semantic request (model, revision, messages,
sampling parameters, schema, draw index). Operational settings (base URL, concurrency, timeouts,
retries) never enter it: moving a run to another server or tuning its concurrency still hits.

Every response is committed on arrival (SQLite in WAL mode, autocommit), so a kill -9 loses only
the calls in flight. `synchronous=NORMAL` is durable against a process crash; only a power loss
can drop the last few commits, which a rerun simply pays again.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["ResponseCache", "cache_key", "canonical_json"]

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


def cache_key(request: Mapping[str, Any]) -> str:
    """sha256 hex of the canonical JSON of a semantic request."""
    return hashlib.sha256(canonical_json(request).encode("utf-8")).hexdigest()


class ResponseCache:
    """SQLite store of raw responses; `ResponseCache(None)` is a disabled cache.

    Calls are short synchronous statements, so use from one asyncio loop never interleaves; a
    lock makes it safe from threads too, and WAL plus a busy timeout from several processes.
    """

    def __init__(self, path: str | os.PathLike[str] | None) -> None:
        self.path = Path(path) if path is not None else None
        self.hits = 0
        self.misses = 0
        # Requests in flight (key -> asyncio.Future of the raw response), kept by the async
        # clients so that identical concurrent requests are paid once.
        self.inflight: dict[str, Any] = {}
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
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
            None if request is None else canonical_json(request),
            json.dumps(response, ensure_ascii=False, separators=(",", ":")),
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
