"""Several writers on one store file: every write is planned and committed under the store's
write lock on the current log, so a stale handle never commits an operation planned on an old
view, two processes never collide on an id, and a writer kept waiting too long gets one named
error, with nothing acknowledged lost."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pmem import InvalidOperation, Memory, StoreError


def test_a_stale_handle_writes_on_the_current_log(tmp_path: Path) -> None:
    path = tmp_path / "m.sqlite"
    a, b = Memory(path), Memory(path)  # both opened on the empty store
    a.accept("client.budget", "$30k")
    b.accept("client.budget", "$50k")  # b has not seen $30k: it must supersede it, not collide
    assert b.cell("client.budget").history[0].value == "$30k"
    a.revoke("client.budget")  # a has not seen $50k: the revoke must hit $50k, not $30k
    assert a.cell("client.budget").value == "$30k"
    with pytest.raises(InvalidOperation):
        b.resolve("client.budget", "$50k")  # planned on the current log: nothing is contested
    fresh = Memory(path)
    assert fresh.check() == [] and fresh.cell("client.budget").value == "$30k"
    assert [v.status for v in fresh.versions("client.budget")] == ["active", "revoked"]
    for m in (a, b, fresh):
        m.close()


REPLAY = textwrap.dedent(
    """
    import json, sys
    ops = [{"op": "accept", "key": f"{sys.argv[2]}.{i}", "new_value": str(i)} for i in range(300)]
    ops += [{"op": "accept", "key": "shared", "new_value": f"{sys.argv[2]}-{i}"} for i in range(50)]
    open(sys.argv[1], "w").write("".join(json.dumps(o) + "\\n" for o in ops))
    """
)


def test_two_replays_at_once_both_land(tmp_path: Path) -> None:
    store = tmp_path / "m.sqlite"
    Memory(store).close()
    files = []
    for who in ("left", "right"):
        ops = tmp_path / f"{who}.jsonl"
        subprocess.run([sys.executable, "-c", REPLAY, str(ops), who], check=True)
        files.append(ops)
    pmem = Path(sys.executable).with_name("pmem")
    procs = [
        subprocess.Popen([pmem, "replay", str(store), str(f)], stderr=subprocess.PIPE, text=True)
        for f in files
    ]
    for p in procs:
        _, err = p.communicate(timeout=60)
        assert p.returncode == 0, err
    with Memory(store) as m:
        assert m.check() == []
        assert len(m.keys()) == 601  # 300 + 300 own keys and the shared one
        assert len(m.versions("shared")) == 100  # every write of both replays is there
        assert [v.status for v in m.versions("shared")].count("active") == 1


HOLDER = textwrap.dedent(
    """
    import sys, time
    from pmem import Memory
    m = Memory(sys.argv[1])
    with m.batch():
        m.accept("held", "1")
        print("holding", flush=True)
        time.sleep(float(sys.argv[2]))
    print("committed", flush=True)
    """
)


def test_a_writer_kept_waiting_gets_a_named_error_and_loses_nothing(tmp_path: Path) -> None:
    store = tmp_path / "m.sqlite"
    Memory(store).close()
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(store), "7"], stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
    m = Memory(store)
    started = time.monotonic()
    with pytest.raises(StoreError, match="another process is writing to this store") as info:
        m.accept("mine", "1")
    assert str(store) in str(info.value) and time.monotonic() - started < 7
    assert f"pid {holder.pid} on " in str(info.value), "the error names the holder"
    assert holder.stdout.readline().strip() == "committed" and holder.wait(timeout=30) == 0
    assert not Path(f"{store}.writer").exists(), "the holder's note goes with its lock"
    m.accept("mine", "1")  # once the other is done the same write goes through
    assert m.cell("held").value == "1" and m.cell("mine").value == "1" and m.check() == []
    m.close()


OPS = st.lists(
    st.tuples(
        st.integers(0, 1),  # which handle
        st.sampled_from(["accept", "reject", "contest", "resolve", "revoke", "support"]),
        st.sampled_from(["k1", "k2"]),
        st.sampled_from(["a", "b", "c"]),
    ),
    max_size=25,
)


@settings(max_examples=40, deadline=None)
@given(ops=OPS)
def test_interleaved_handles_keep_every_invariant(tmp_path_factory, ops) -> None:
    path = tmp_path_factory.mktemp("w") / "m.sqlite"
    handles = [Memory(path), Memory(path)]
    applied = 0
    for who, op, key, value in ops:
        m = handles[who]
        args = (key,) if op in ("revoke", "support") else (key, value)
        try:
            getattr(m, op)(*args)
            applied += 1
        except InvalidOperation:
            pass
    for m in handles:
        m.close()
    with Memory(path) as fresh:
        assert fresh.check() == []
        assert len(fresh.entries()) == applied, "every acknowledged write is in the log"


def test_cli_reports_a_busy_store_in_one_line(tmp_path: Path) -> None:
    store = tmp_path / "m.sqlite"
    Memory(store).close()
    ops = tmp_path / "ops.jsonl"
    ops.write_text(json.dumps({"op": "accept", "key": "k", "new_value": "v"}) + "\n")
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(store), "7"], stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
    pmem = Path(sys.executable).with_name("pmem")
    out = subprocess.run([pmem, "replay", str(store), str(ops)], capture_output=True, text=True)
    holder.wait(timeout=30)
    assert out.returncode != 0
    (line,) = out.stderr.strip().splitlines()
    assert str(store) in line and "another process is writing" in line
