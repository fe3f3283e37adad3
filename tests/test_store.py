"""Persistence: the SQLite log, reopening, bad files, batches, kill -9, and forget."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time

import pytest

from pmem import InvalidOperation, Memory, StoreError
from pmem.store import SCHEMA_VERSION


def dump(m: Memory) -> tuple:
    return (
        [c.to_dict() for c in m.frontier()],
        {k: [v.to_dict() for v in m.versions(k)] for k in m.keys()},
        [(c.item, c.version, c.status) for c in m.citations()],
    )


def story(m: Memory) -> None:
    e = m.observe("budget is $30k", source="email")
    v = m.accept("budget", "$30k", evidence=e, valid_from="2026-01-05")
    m.accept("budget", "$50k")
    m.cite("plan", v)
    m.revoke("budget")
    m.accept("room", "4A")
    m.contest("room", "2B")
    m.support("budget")


def test_reopening_restores_exactly_the_same_state(tmp_path, clock) -> None:
    path = tmp_path / "m.sqlite"
    with Memory(path, clock=clock) as m:
        story(m)
        expected = dump(m)
    with Memory(path) as again:
        assert dump(again) == expected
        assert again.check() == []


def test_in_memory_and_persisted_agree(tmp_path, clock) -> None:
    a = Memory(clock=clock)
    story(a)
    b = Memory(tmp_path / "m.sqlite", clock=type(clock)())
    story(b)
    assert dump(a) == dump(b)


def test_a_file_that_is_not_sqlite_is_refused_untouched(tmp_path) -> None:
    path = tmp_path / "notes.txt"
    path.write_bytes(b"these are my notes, not a database\n" * 200)
    before = path.read_bytes()
    with pytest.raises(
        StoreError, match=r"notes.txt: not a P-Mem store: the file is not a readable SQLite"
    ):
        Memory(path)
    assert path.read_bytes() == before


def test_a_foreign_sqlite_file_is_refused_untouched(tmp_path) -> None:
    path = tmp_path / "other.db"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE customers(name TEXT)")
    con.execute("INSERT INTO customers VALUES ('ada')")
    con.commit()
    con.close()
    before = path.read_bytes()
    with pytest.raises(StoreError, match=r"an SQLite database, but not a P-Mem store .*customers"):
        Memory(path)
    assert path.read_bytes() == before


def test_a_newer_schema_is_refused_with_both_versions(tmp_path) -> None:
    path = tmp_path / "m.sqlite"
    with Memory(path) as m:
        m.accept("k", "v")
    con = sqlite3.connect(path)
    con.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    con.close()
    with pytest.raises(
        StoreError,
        match=rf"schema {SCHEMA_VERSION + 1}, but this pmem reads schema {SCHEMA_VERSION}",
    ):
        Memory(path)


def test_a_corrupt_log_entry_is_named(tmp_path) -> None:
    path = tmp_path / "m.sqlite"
    with Memory(path) as m:
        m.accept("k", "v")
        m.accept("k", "w")
    con = sqlite3.connect(path)
    con.execute("UPDATE log SET body = '{not json' WHERE seq = 2")
    con.commit()
    con.close()
    with pytest.raises(StoreError, match="log entry 2 is unreadable"):
        Memory(path)


def test_a_directory_is_not_a_store(tmp_path) -> None:
    with pytest.raises(StoreError, match="is a directory"):
        Memory(tmp_path)


def test_a_failed_batch_keeps_nothing_in_file_or_memory(tmp_path, clock) -> None:
    path = tmp_path / "m.sqlite"
    m = Memory(path, clock=clock)
    m.accept("k", "a")
    before = dump(m)
    with pytest.raises(InvalidOperation), m.batch():
        m.accept("k", "b")
        m.accept("other", "x")
        m.resolve("k", "b")  # not contested: the whole batch goes
    assert dump(m) == before
    m.close()
    with Memory(path) as again:
        assert dump(again) == before


def test_a_failed_batch_in_memory_rolls_back_too(clock) -> None:
    m = Memory(clock=clock)
    m.accept("k", "a")
    with pytest.raises(RuntimeError), m.batch():
        m.accept("k", "b")
        raise RuntimeError("crash")
    assert m.cell("k").value == "a" and len(m.versions("k")) == 1


def test_ids_are_never_reused(tmp_path, clock) -> None:
    path = tmp_path / "m.sqlite"
    with Memory(path, clock=clock) as m:
        m.accept("a", "1")
        last = m.accept("secret", "x")
        m.forget("secret")
    with Memory(path) as m:
        new = m.accept("b", "2")
        assert int(new[1:]) > int(last[1:])


def test_forget_deletes_the_key_its_evidence_and_citations(tmp_path, clock) -> None:
    path = tmp_path / "m.sqlite"
    with Memory(path, clock=clock) as m:
        shared = m.observe("Ada lives in Paris and works at ACME")
        private = m.observe("Ada's passport number is X1234567")
        m.accept("ada.city", "Paris", evidence=shared)
        m.accept("ada.employer", "ACME", evidence=shared)
        v = m.accept("ada.passport", "X1234567", evidence=private)
        m.accept("ada.passport", "Y7654321")
        m.cite("visa-application", v)
        removed = m.forget("ada.passport")
        assert removed == 4  # two accepts, one citation, the private observation
        assert "ada.passport" not in m.keys()
        assert m.citations() == []
        assert m.evidence(shared).text.startswith("Ada lives")
        with pytest.raises(KeyError):
            m.evidence(private)
        assert m.check() == []
        state = dump(m)
    raw = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    assert b"X1234567" not in raw and b"Y7654321" not in raw
    with Memory(path) as m:
        assert dump(m) == state and m.check() == []


def test_forget_an_unknown_key(clock) -> None:
    with pytest.raises(InvalidOperation, match="no such key"):
        Memory(clock=clock).forget("nobody")


def test_kill_9_loses_nothing_that_was_committed(tmp_path) -> None:
    path = tmp_path / "m.sqlite"
    code = textwrap.dedent(
        f"""
        import sys
        from pmem import Memory
        m = Memory({str(path)!r})
        i = 0
        while True:
            m.accept(f"k{{i % 50}}", f"v{{i}}")
            i += 1
            print(i, flush=True)
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    deadline = time.monotonic() + 30
    count = 0
    while count < 300 and time.monotonic() < deadline:
        count = int(proc.stdout.readline())
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    with Memory(path) as m:
        n = m.stats()["versions"]
        assert n >= count  # every acknowledged operation survived
        assert m.check() == []
        assert m.cell(f"k{(n - 1) % 50}").value == f"v{n - 1}"
