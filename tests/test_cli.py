"""The `pmem` command: show, check, replay, export, demo."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys

import pytest

from pmem import Memory
from pmem.cli import main

OPS = [
    {"op": "accept", "key": "client.budget", "new_value": "$30k", "observe": "budget is $30k"},
    {"op": "revise", "key": "client.budget", "old_value": "$30k", "new_value": "$50k"},
    {"op": "revoke", "key": "client.budget", "observe": "the $50k was an error", "source": "email"},
    {"op": "accept", "key": "standup.room", "new_value": "Room 4A"},
    {"op": "contest", "key": "standup.room", "new_value": "Room 2B"},
]


def write_ops(path, ops) -> str:
    path.write_text("\n".join(json.dumps(o) for o in ops) + "\n")
    return str(path)


@pytest.fixture
def store(tmp_path) -> str:
    path = str(tmp_path / "m.sqlite")
    assert main(["replay", path, write_ops(tmp_path / "ops.jsonl", OPS)]) == 0
    return path


def test_replay_reports_decisions(tmp_path, capsys) -> None:
    path = str(tmp_path / "m.sqlite")
    assert main(["replay", path, write_ops(tmp_path / "ops.jsonl", OPS)]) == 0
    out = capsys.readouterr().out
    assert "applied 5 line(s): 1 accept, 1 contest, 2 create, 1 revoke" in out
    with Memory(path) as m:
        assert m.cell("client.budget").value == "$30k"
        ev = m.cell("client.budget").history[0].evidence
        assert m.evidence(ev[0]).source == "email"


def test_show_frontier_and_history(store, capsys) -> None:
    assert main(["show", store]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == [
        "client.budget = $30k",
        "standup.room = Room 4A (contested) | alternatives: Room 2B",
    ]
    assert main(["show", store, "client.budget", "--history"]) == 0
    out = capsys.readouterr().out
    assert "client.budget = $30k | support: 1" in out
    assert "revoked" in out and "tombstone t" in out and "'the $50k was an error'" in out


def test_show_json(store, capsys) -> None:
    assert main(["show", store, "standup.room", "--json", "--history"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["status"] == "contested"
    assert [a["value"] for a in payload["alternatives"]] == ["Room 2B"]
    assert len(payload["versions"]) == 2


def test_show_unknown_key_and_missing_store(store, tmp_path, capsys) -> None:
    assert main(["show", store, "nope"]) == 1
    assert "no key 'nope'" in capsys.readouterr().err
    missing = str(tmp_path / "absent.sqlite")
    assert main(["show", missing]) == 2
    assert "no such store" in capsys.readouterr().err
    assert not (tmp_path / "absent.sqlite").exists()


def test_check_ok_and_a_broken_store(store, tmp_path, capsys) -> None:
    assert main(["check", store]) == 0
    assert ": ok: 2 keys (2 current), 4 versions" in capsys.readouterr().out
    broken = str(tmp_path / "broken.sqlite")
    shutil.copy(store, broken)
    con = sqlite3.connect(broken)
    con.execute("UPDATE log SET op = 'teleport' WHERE seq = 2")
    con.commit()
    con.close()
    assert main(["check", broken]) == 2
    assert "log entry 2 is unreadable: unknown operation 'teleport'" in capsys.readouterr().err


def test_replay_stops_at_an_invalid_line_and_keeps_nothing(store, tmp_path, capsys) -> None:
    bad = [
        {"op": "accept", "key": "new.key", "new_value": "x"},
        {"op": "resolve", "key": "client.budget", "new_value": "$99k"},
    ]
    assert main(["replay", store, write_ops(tmp_path / "bad.jsonl", bad)]) == 2
    err = capsys.readouterr().err
    assert "bad.jsonl:2: resolve needs a contested cell" in err and "nothing from" in err
    with Memory(store) as m:
        assert "new.key" not in m.keys()


def test_replay_keep_going_skips_invalid_lines(store, tmp_path, capsys) -> None:
    bad = [
        {"op": "accept", "key": "new.key", "new_value": "x"},
        {"op": "resolve", "key": "client.budget", "new_value": "$99k"},
        {"op": "bogus", "key": "k"},
    ]
    assert main(["replay", store, write_ops(tmp_path / "bad.jsonl", bad), "--keep-going"]) == 0
    out = capsys.readouterr()
    assert "1 create, 2 skipped (noop)" in out.out
    assert "did you mean" not in out.err or "bogus" in out.err


def test_replay_names_a_line_that_is_not_json(tmp_path, capsys) -> None:
    ops = tmp_path / "ops.jsonl"
    ops.write_text('{"op": "accept", "key": "k", "new_value": "v"}\n{oops\n')
    assert main(["replay", str(tmp_path / "m.sqlite"), str(ops)]) == 2
    assert "ops.jsonl:2: not JSON" in capsys.readouterr().err


def test_export_register(store, capsys) -> None:
    assert main(["export", store]) == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(r["key"], r["value"], r["status"]) for r in records] == [
        ("client.budget", "$30k", "active"),
        ("client.budget", "$50k", "revoked"),
        ("standup.room", "Room 4A", "contested"),
        ("standup.room", "Room 2B", "alternative"),
    ]
    assert records[1]["supersedes"] == records[0]["id"]
    assert records[3]["alternative_of"] == records[2]["id"]
    assert records[0]["evidence"][0]["text"] == "budget is $30k"
    assert main(["export", store, "--heads"]) == 0
    heads = [json.loads(line)["value"] for line in capsys.readouterr().out.splitlines()]
    assert heads == ["$30k", "Room 4A"]


def test_demo_prints_the_stories(capsys) -> None:
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    assert "client.budget = $30k | history: $50k (revoked)" in out
    assert "standup.room = Room 2B | history: Room 4A (contradicted)" in out
    assert "check(): ok" in out


def test_installed_entry_point_has_help() -> None:
    exe = shutil.which("pmem", path=str(__import__("pathlib").Path(sys.executable).parent))
    assert exe is not None
    out = subprocess.run([exe, "--help"], capture_output=True, text=True, check=True).stdout
    for command in ("show", "check", "replay", "export", "demo"):
        assert command in out


def test_demo_refuses_a_store_it_did_not_create(tmp_path, capsys) -> None:
    """`pmem demo --store` on a user's store must not write its stories into it: one line,
    exit 2, the file byte for byte as it was and nothing created beside it."""
    store = tmp_path / "mine.sqlite"
    with Memory(store) as m:
        m.accept("client.budget", "$99k")  # a key the demo also writes
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    assert main(["demo", "--store", str(store)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(store) in err and "already exists" in err
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before
    with Memory(store) as m:
        assert m.cell("client.budget").value == "$99k"

    fresh = tmp_path / "demo.sqlite"
    assert main(["demo", "--store", str(fresh)]) == 0
    assert "check(): ok" in capsys.readouterr().out
    assert main(["demo", "--store", str(fresh)]) == 2  # a rerun never writes into the first
