"""The append-only operation log: the single source of truth of a memory.

Statuses, heads and the frontier are *derived* by replaying this log (`pmem.state`); nothing else
is stored. Two backends share one small interface: a list for in-memory use and SQLite (standard
library `sqlite3`, WAL) for persistence. Entries are intents ("accept key=value"), never derived
edges, so a replay cannot disagree with the code that derives them.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import socket
import sqlite3
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from pmem.graph import StoreError, parse_iso

SCHEMA_VERSION = 1
# PRAGMA application_id marks the file as ours ("PMEM"), so a foreign SQLite file is recognized
# before anything is written to it.
APPLICATION_ID = 0x504D454D
# How long a write waits for another writer's transaction before it is refused.
BUSY_TIMEOUT_S = 5.0
# Beside a store while a batch holds its write lock: who holds it (pid, host, since when).
WRITER_SUFFIX = ".writer"

LOG_OPS = frozenset(
    {"observe", "accept", "reject", "contest", "resolve", "revoke", "support", "cite", "forget"}
)


@dataclass(slots=True)
class Entry:
    """One log record. `seq` numbers every node it creates (see `graph.PREFIX`)."""

    seq: int
    at: dt.datetime  # recorded (transaction) time
    op: str
    key: str | None
    body: dict[str, Any]


class MemoryLog:
    """The log of an in-memory `Memory`: the same semantics as SQLite, minus the file."""

    path: str | None = None

    def __init__(self) -> None:
        self._rows: list[Entry] = []
        self._last_seq = 0
        self._mark: tuple[list[Entry], int] | None = None

    @property
    def last_seq(self) -> int:
        return self._last_seq

    def allocate(self) -> int:
        self._last_seq += 1
        return self._last_seq

    def append(self, entry: Entry) -> None:
        self._rows.append(entry)

    def entries(self, key: str | None = None) -> Iterator[Entry]:
        rows = list(self._rows)
        return iter(rows if key is None else [e for e in rows if e.key == key])

    def delete(self, seqs: Iterable[int]) -> None:
        drop = set(seqs)
        self._rows = [e for e in self._rows if e.seq not in drop]

    def begin(self, announce: bool = False) -> bool:
        """Start a transaction; False: nothing else can write a list in this process's memory."""
        self._mark = (list(self._rows), self._last_seq)
        return False

    def commit(self) -> None:
        self._mark = None

    def rollback(self) -> None:
        assert self._mark is not None
        self._rows, self._last_seq = self._mark
        self._mark = None

    def close(self) -> None:
        pass


class SQLiteLog:
    """The log in one SQLite file: a `meta` table and an append-only `log` table."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        self._in_tx = False
        self._announced = False
        self._conn = _open_checked(self.path)
        self._data_version = -1
        self._refresh()  # the view starts here

    @property
    def last_seq(self) -> int:
        return self._last_seq

    def allocate(self) -> int:
        self._last_seq += 1
        return self._last_seq

    def append(self, entry: Entry) -> None:
        # `Memory` appends inside `begin()`: every write is planned and committed under the lock.
        with self._writable():
            self._conn.execute(
                "INSERT INTO log(seq, at, op, key, body) VALUES (?, ?, ?, ?, ?)",
                (entry.seq, entry.at.isoformat(), entry.op, entry.key, _dumps(entry.body)),
            )

    @contextlib.contextmanager
    def _writable(self) -> Iterator[None]:
        """A write SQLite refuses (a read-only file or folder, a full disk) is a `StoreError`
        naming the store; nothing of the transaction is kept."""
        try:
            yield
        except sqlite3.OperationalError as err:
            kind = "read-only" if "readonly" in str(err) else "not writable"
            raise StoreError(f"{self.path}: the store is {kind} here ({err})") from None

    def entries(self, key: str | None = None) -> Iterator[Entry]:
        try:
            yield from self._entries(key)
        except sqlite3.DatabaseError as err:
            raise StoreError(
                f"{self.path}: the file is damaged ({err}); `pmem check` lists what SQLite finds"
            ) from None

    def _entries(self, key: str | None) -> Iterator[Entry]:
        if key is None:
            rows = self._conn.execute("SELECT seq, at, op, key, body FROM log ORDER BY seq")
        else:
            rows = self._conn.execute(
                "SELECT seq, at, op, key, body FROM log WHERE key = ? ORDER BY seq", (key,)
            )
        for seq, at, op, key, body in rows:
            try:
                if op not in LOG_OPS:
                    raise ValueError(f"unknown operation {op!r}")
                t = parse_iso(at)
                assert t is not None
                yield Entry(seq, t, op, key, json.loads(body))
            except (ValueError, TypeError, AssertionError) as err:
                raise StoreError(f"{self.path}: log entry {seq} is unreadable: {err}") from None

    def delete(self, seqs: Iterable[int]) -> None:
        with self._writable():
            self._conn.executemany("DELETE FROM log WHERE seq = ?", [(s,) for s in seqs])

    def begin(self, announce: bool = False) -> bool:
        """Take the store's write lock (BEGIN IMMEDIATE): one writer at a time, across processes.
        Waits for another writer's transaction as long as the connection's busy timeout, then
        refuses with a `StoreError` naming the store and, when it announced itself, the holder.
        `announce` (a batch, which may hold the lock long) writes who holds it beside the store
        (`<store>.writer`) until the transaction ends. Returns whether another connection
        (another `Memory`, another process) committed since this one last looked: the caller's
        view is stale then, and under the lock it cannot go stale again before this commit."""
        try:
            self._conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as err:
            if "locked" not in str(err) and "busy" not in str(err):
                raise StoreError(f"{self.path}: cannot start a write: {err}") from None
            raise StoreError(
                f"{self.path}: another process is writing to this store ({self._holder()} held "
                f"its write lock for over {BUSY_TIMEOUT_S:g} s); try again once it is done"
            ) from None
        changed = self._refresh()
        self._in_tx = True
        self._mark = self._last_seq
        self._announced = announce and self._announce()
        return changed

    def _announce(self) -> bool:
        since = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
        with contextlib.suppress(OSError):  # a read-only folder: the lock still holds
            with open(self.path + WRITER_SUFFIX, "w", encoding="utf-8") as f:
                f.write(f"pid {os.getpid()} on {socket.gethostname()} since {since}")
            return True
        return False

    def _holder(self) -> str:
        try:
            with open(self.path + WRITER_SUFFIX, encoding="utf-8") as f:
                return f"a batch or a replay by {f.read(200).strip()}"
        except OSError:
            return "a batch or a replay"

    def _end(self) -> None:
        self._in_tx = False
        if self._announced:
            with contextlib.suppress(OSError):
                os.remove(self.path + WRITER_SUFFIX)
            self._announced = False

    def _refresh(self) -> bool:
        """Re-read the last sequence number if the file changed under another connection."""
        version = self._conn.execute("PRAGMA data_version").fetchone()[0]
        if version == self._data_version:
            return False
        self._data_version = version
        self._last_seq = self._conn.execute(
            "SELECT COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'log'), 0)"
        ).fetchone()[0]
        return True

    def commit(self) -> None:
        with self._writable():
            self._conn.execute("COMMIT")
        self._end()

    def rollback(self) -> None:
        self._conn.execute("ROLLBACK")
        self._end()
        self._last_seq = self._mark

    def scrub(self) -> None:
        """After a hard delete: fold the WAL into the main file so no deleted page survives."""
        if not self._in_tx:
            self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def integrity(self) -> list[str]:
        """SQLite's own check of every page and index; a page too damaged to walk is a finding."""
        try:
            rows = self._conn.execute("PRAGMA integrity_check").fetchall()
        except sqlite3.DatabaseError as err:
            return [f"sqlite integrity: {err}"]
        return [] if rows == [("ok",)] else [f"sqlite integrity: {r[0]}" for r in rows]

    def close(self) -> None:
        if self._in_tx:
            self._conn.execute("ROLLBACK")
            self._end()
        self._conn.close()


def _dumps(body: dict[str, Any]) -> str:
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"))


def _open_checked(path: str) -> sqlite3.Connection:
    """Open `path` as a P-Mem store, creating it if new; refuse anything else untouched."""
    if os.path.isdir(path):
        raise StoreError(f"{path}: is a directory, not a P-Mem store file")
    try:
        conn = sqlite3.connect(
            path, isolation_level=None, check_same_thread=False, timeout=BUSY_TIMEOUT_S
        )
        app_id = conn.execute("PRAGMA application_id").fetchone()[0]
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        tables = [
            r[0]
            for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name != 'sqlite_sequence'"
            )
        ]
    except sqlite3.DatabaseError as err:
        raise StoreError(
            f"{path}: not a P-Mem store: the file is not a readable SQLite database ({err})"
        ) from None
    if app_id == 0 and not tables:
        _create_schema(conn)
    elif app_id != APPLICATION_ID:
        conn.close()
        raise StoreError(
            f"{path}: an SQLite database, but not a P-Mem store "
            f"(application_id={app_id:#x}, tables: {', '.join(sorted(tables)) or 'none'}); "
            "refusing to touch it"
        )
    elif version != SCHEMA_VERSION:
        conn.close()
        raise StoreError(
            f"{path}: written with P-Mem store schema {version}, but this pmem reads schema "
            f"{SCHEMA_VERSION}; open it with the pmem release that wrote it"
        )
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    # Forget is a privacy delete: overwrite freed pages instead of leaving the values on disk.
    conn.execute("PRAGMA secure_delete=ON")
    return conn


def _create_schema(conn: sqlite3.Connection) -> None:
    conn.executescript(
        f"""
        BEGIN;
        CREATE TABLE log (
            seq  INTEGER PRIMARY KEY AUTOINCREMENT,
            at   TEXT NOT NULL,
            op   TEXT NOT NULL,
            key  TEXT,
            body TEXT NOT NULL
        );
        CREATE INDEX log_key ON log(key);
        PRAGMA application_id = {APPLICATION_ID};
        PRAGMA user_version = {SCHEMA_VERSION};
        COMMIT;
        """
    )
