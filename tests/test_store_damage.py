"""A damaged store is a named finding, never a raw traceback: rows no operation could have
written, a corrupted page, an empty file; and printing never passes control characters through."""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import io
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pmem import InvalidOperation, Memory, StoreError, cli

PMEM = Path(sys.executable).with_name("pmem")
AT = "2026-01-01T00:00:00+00:00"

# (what, op, key, body) of rows inserted behind the library's back
BROKEN_ROWS = [
    ("accept with no key", "accept", None, {"value": "x"}),
    ("accept with an empty body", "accept", "k", {}),
    ("revoke of an unknown key", "revoke", "nobody", {}),
    ("support of an unknown key", "support", "nobody", {}),
    ("contest of an unknown key", "contest", "nobody", {"value": "y"}),
    ("resolve to a value not on offer", "resolve", "k", {"value": "never offered"}),
    ("observe with no text", "observe", None, {}),
    ("a body that is a JSON list", "accept", "k", [1, 2]),
    ("a body that is not JSON", "accept", "k", "{not json"),
    ("an unknown operation", "teleport", "k", {}),
    ("a cite with no item", "cite", "k", {"version": "v2"}),
]


def damaged_store(tmp_path: Path, op: str, key: str | None, body) -> Path:
    path = tmp_path / "m.sqlite"
    with Memory(path) as m:
        m.observe("budget note")
        m.accept("k", "v1")
    raw = body if isinstance(body, str) else json.dumps(body)
    with sqlite3.connect(path) as db:
        db.execute(
            "INSERT INTO log(seq, at, op, key, body) VALUES (3, ?, ?, ?, ?)", (AT, op, key, raw)
        )
    return path


def digest(path: Path) -> str:
    """The log's rows, as SQLite reads them (the file's bytes move with WAL checkpoints)."""
    with sqlite3.connect(path) as db:
        rows = db.execute("SELECT seq, at, op, key, body FROM log ORDER BY seq").fetchall()
    return hashlib.sha256(repr(rows).encode()).hexdigest()


@pytest.mark.parametrize(
    ("what", "op", "key", "body"), BROKEN_ROWS, ids=[r[0] for r in BROKEN_ROWS]
)
def test_a_broken_log_row_is_a_named_error_and_nothing_is_touched(
    tmp_path: Path, what: str, op: str, key: str | None, body
) -> None:
    path = damaged_store(tmp_path, op, key, body)
    before = digest(path)
    with pytest.raises(StoreError) as info:
        Memory(path)
    assert str(path) in str(info.value) and "log entry 3" in str(info.value), what

    for command in ("check", "show", "export"):
        out = subprocess.run([PMEM, command, str(path)], capture_output=True, text=True)
        (line,) = out.stderr.strip().splitlines()
        assert out.returncode == 2 and line.startswith(f"pmem: {path}: log entry 3"), (what, line)
    assert digest(path) == before, "inspecting a damaged store changes no row of it"


def test_a_corrupted_page_is_reported_by_check(tmp_path: Path) -> None:
    path = tmp_path / "m.sqlite"
    with Memory(path) as m, m.batch():
        for i in range(400):
            m.accept(f"key.{i}", "x" * 200)
    data = bytearray(path.read_bytes())
    page = 4096
    data[3 * page : 3 * page + 512] = b"\xde\xad\xbe\xef" * 128  # overwrite inside a b-tree page
    path.write_bytes(bytes(data))
    out = subprocess.run([PMEM, "check", str(path)], capture_output=True, text=True)
    assert out.returncode in (1, 2) and "Traceback" not in out.stderr + out.stdout
    assert str(path) in out.stdout + out.stderr


def test_an_empty_file_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "empty.sqlite"
    path.touch()
    out = subprocess.run([PMEM, "show", str(path)], capture_output=True, text=True)
    assert out.returncode == 2 and "an empty file, not a P-Mem store" in out.stderr
    assert path.stat().st_size == 0


def test_control_characters_are_printed_as_escapes(tmp_path: Path) -> None:
    path = tmp_path / "m.sqlite"
    with Memory(path) as m:
        m.accept("title", "\x1b]0;owned\x07\x1b[2Jgone")
    out = subprocess.run([PMEM, "show", str(path), "title", "--history"], capture_output=True)
    assert out.returncode == 0 and b"\x1b" not in out.stdout and b"\x07" not in out.stdout
    assert b"\\x1b]0;owned\\x07" in out.stdout


def test_a_recorded_time_far_in_the_future_is_refused_at_entry(tmp_path: Path) -> None:
    m = Memory(tmp_path / "m.sqlite")
    with pytest.raises(InvalidOperation, match="is in the future"):
        m.accept("k", "v", at="9999-12-31T00:00:00+00:00")
    m.accept("k", "v")  # and the store keeps taking writes
    assert m.cell("k").value == "v" and m.check() == []
    m.close()


def test_hard_commit_must_be_a_boolean_in_a_replayed_line(tmp_path: Path) -> None:
    store = tmp_path / "m.sqlite"
    Memory(store).close()
    ops = tmp_path / "ops.jsonl"
    line = {"op": "accept", "key": "k", "new_value": "v", "hard_commit": "no"}
    ops.write_text(json.dumps(line) + "\n")
    out = subprocess.run([PMEM, "replay", str(store), str(ops)], capture_output=True, text=True)
    assert out.returncode == 2 and "hard_commit must be true or false, not 'no'" in out.stderr
    with Memory(store) as m:
        assert m.keys() == []


def test_a_read_only_store_reads_and_refuses_writes_by_name(tmp_path: Path) -> None:
    path = tmp_path / "m.sqlite"
    with Memory(path) as m:
        m.accept("k", "v")
    # root ignores file modes; the immutable attribute binds root too (skipped where unsupported)
    if subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode != 0:
        pytest.skip("chattr +i is not available here")
    try:
        m = Memory(path)
        assert m.cell("k").value == "v"
        with pytest.raises(StoreError, match="the store is read-only"):
            m.accept("k", "w")
        assert m.cell("k").value == "v" and m.check() == []
        m.close()
    finally:
        subprocess.run(["chattr", "-i", str(path)], check=True)


def test_no_recorded_time_within_the_skew_locks_the_store(tmp_path: Path) -> None:
    """An entry dated as far ahead as the skew allows is taken, and every ordinary write after
    it still is: an ordinary write is recorded no earlier than the last operation."""
    m = Memory(tmp_path / "m.sqlite")
    ahead = dt.datetime.now(dt.UTC) + dt.timedelta(minutes=4)
    m.accept("k", "v1", at=ahead)
    m.accept("other", "x")  # an ordinary write: recorded at the entry's time, not refused
    m.accept("k", "v2")
    assert m.cell("k").value == "v2" and m.cell("other").value == "x"
    times = [e.at for e in m.entries()]
    assert times == sorted(times) and times[-1] >= ahead
    with pytest.raises(InvalidOperation, match="is in the future"):
        m.accept("k", "v3", at=dt.datetime.now(dt.UTC) + dt.timedelta(hours=23))
    assert m.cell("k").value == "v2"


def _rewrite_time(path: Path, seq: int, at: str) -> None:
    con = sqlite3.connect(path)
    con.execute("UPDATE log SET at = ? WHERE seq = ?", (at, seq))
    con.commit()
    con.close()


@pytest.mark.parametrize(
    ("at", "why"),
    [
        ("2026-01-01T00:00:00", "has no timezone"),  # naive: compared with aware ones, a crash
        ("2001-01-01T00:00:00+00:00", "precedes the entry before it"),  # time moved backward
    ],
)
def test_a_recorded_time_out_of_order_is_refused_by_open_and_flagged_by_check(
    tmp_path: Path, at: str, why: str
) -> None:
    path = tmp_path / "m.sqlite"
    with Memory(path) as m:
        m.accept("k", "v1", at="2026-03-01T00:00:00+00:00")
        m.accept("k", "v2", at="2026-03-02T00:00:00+00:00")
    last = max(e.seq for e in Memory(path).entries())
    _rewrite_time(path, last, at)
    before = digest(path)
    with pytest.raises(StoreError, match=f"log entry {last} .*{why}"):
        Memory(path)
    out = subprocess.run([PMEM, "check", str(path)], capture_output=True, text=True)
    assert out.returncode != 0 and why in out.stdout + out.stderr
    assert "Traceback" not in out.stderr
    assert digest(path) == before  # neither changed the store


def test_a_value_that_is_not_text_is_refused_by_open_and_flagged_by_check(tmp_path: Path) -> None:
    path = tmp_path / "m.sqlite"
    with Memory(path) as m:
        m.accept("k", "v1")
    con = sqlite3.connect(path)
    con.execute("UPDATE log SET body = json_set(body, '$.value', 5)")
    con.commit()
    con.close()
    before = digest(path)
    with pytest.raises(StoreError, match="its value 5 is not a non-empty string"):
        Memory(path)
    for command in ("show", "check", "export"):
        out = subprocess.run([PMEM, command, str(path)], capture_output=True, text=True)
        assert out.returncode != 0 and "Traceback" not in out.stderr, command
        assert "is not a non-empty string" in out.stdout + out.stderr, command
    assert digest(path) == before


def _typed_store(path: Path) -> dict[str, int]:
    """A store whose log holds every body field the library writes; returns seq by operation."""
    with Memory(path) as m:
        e = m.observe("Alice said the budget is $30k", source="meeting")
        v = m.accept("budget", "$30k", evidence=[e], valid_from="2026-01-01T00:00:00+00:00")
        m.support("budget", evidence=[e])
        m.cite("plan-1", v)
        seqs = {entry.op: entry.seq for entry in m.entries()}
    return seqs


BODY_PLACES = [("observe", "text"), ("observe", "source"), ("accept", "value"),
               ("accept", "evidence"), ("accept", "valid_from"), ("support", "evidence"),
               ("cite", "item"), ("cite", "version")]  # fmt: skip
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=4,
)


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])  # fmt: skip
@given(st.sampled_from(BODY_PLACES), json_values)
def test_a_body_field_of_any_type_opens_typed_or_is_refused_naming_the_entry(
    tmp_path_factory: pytest.TempPathFactory, place: tuple[str, str], value: object
) -> None:
    path = tmp_path_factory.mktemp("typed") / "m.sqlite"
    seq = _typed_store(path)[place[0]]
    with sqlite3.connect(path) as db:
        (body,) = db.execute("SELECT body FROM log WHERE seq = ?", (seq,)).fetchone()
        db.execute(
            "UPDATE log SET body = ? WHERE seq = ?",
            (json.dumps({**json.loads(body), place[1]: value}), seq),
        )
    before = digest(path)
    try:
        with Memory(path) as m:
            for v in m.versions("budget"):
                assert isinstance(v.value, str) and all(isinstance(i, str) for i in v.evidence)
            texts = [m.evidence(i).text for v in m.versions("budget") for i in v.evidence]
            assert all(isinstance(c.item, str) for c in m.citations())
            m.render()
            assert all(isinstance(t, str) for t in texts)
    except StoreError as err:
        assert str(path) in str(err) and f"log entry {seq}" in str(err), str(err)
        assert "\n" not in str(err)
    for command in ("show", "check", "export"):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = cli.main([command, str(path)])  # raises, and fails the test, on a traceback
        assert code in (0, 1, 2), (command, code)
        assert code == 0 or err.getvalue().count("\n") <= 1 or command == "check", err.getvalue()
    assert digest(path) == before
