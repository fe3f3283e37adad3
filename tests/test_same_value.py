"""The same-value rule (docs/contract.md): writing the value a cell already holds is support of
its head, not a new version, through `Memory.accept` and through the patch path alike
(`pmem.patch.repeats_head`), so rerunning a script never doubles a key's history."""

from __future__ import annotations

import itertools
import os
import tempfile

from hypothesis import given, settings
from hypothesis import strategies as st

from pmem import Memory, copy_log
from pmem.patch import repeats_head
from tests.conftest import Clock


def dump(m: Memory) -> tuple:
    return (
        [c.to_dict() for c in m.frontier()],
        {k: [v.to_dict() for v in m.versions(k)] for k in m.keys()},
        [(e.seq, e.at, e.op, e.key, e.body) for e in m.entries()],
    )


def revise(key: str, value: str, **kw) -> dict:
    return {"op": "revise", "key": key, "new_value": value, **kw}


def test_the_rule() -> None:
    assert repeats_head("a", "a")
    assert not repeats_head("a", "b")
    assert not repeats_head("a", None)  # an empty cell repeats nothing
    assert not repeats_head(None, None)
    assert not repeats_head("a", "a ")  # exact: values are compared as stored


def test_accepting_the_current_value_again_is_support() -> None:
    m = Memory(clock=Clock())
    e1, e2 = m.observe("room is 4A"), m.observe("still 4A")
    first = m.accept("room", "4A", evidence=e1)
    confirmed = m.cell("room").head.confirmed_at  # type: ignore[union-attr]
    again = m.accept("room", "4A", evidence=e2)
    assert again == first  # the id of the version that holds the value
    (v,) = m.versions("room")
    assert (v.id, v.value, v.status, v.support) == (first, "4A", "active", 2)
    assert v.evidence == (e1, e2)
    assert v.confirmed_at > confirmed
    assert m.cell("room").support == 2 and m.cell("room").history == ()
    assert [e.op for e in m.entries()] == ["observe", "observe", "accept", "support"]
    assert m.stats()["versions"] == 1
    assert m.check() == []


def test_a_changed_value_is_still_a_new_version() -> None:
    m = Memory(clock=Clock())
    a = m.accept("k", "a")
    b = m.accept("k", "b")
    c = m.accept("k", "a")  # back to a: a change, so a new version
    assert len({a, b, c}) == 3
    assert [v.status for v in m.versions("k")] == ["superseded", "superseded", "active"]


def test_a_script_run_twice_leaves_the_history_it_left_once() -> None:
    def script(m: Memory) -> None:
        e = m.observe("Ada lives in Paris and works at ACME.")
        m.accept("ada.city", "Paris", evidence=e)
        m.accept("ada.employer", "ACME", evidence=e, valid_from="2026-01-01")

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "m.sqlite")
        with Memory(path) as m:
            script(m)
            once = {k: [(v.id, v.value, v.status) for v in m.versions(k)] for k in m.keys()}
        with Memory(path) as m:  # the rerun, on the reopened store
            script(m)
            twice = {k: [(v.id, v.value, v.status) for v in m.versions(k)] for k in m.keys()}
            assert twice == once
            assert [c.support for c in m.frontier()] == [2, 2]
            assert m.check() == []


def test_accept_then_apply_and_apply_then_accept_agree() -> None:
    runs = []
    for order in ("accept first", "apply first"):
        m = Memory(clock=Clock())
        e = m.observe("k is a")
        if order == "accept first":
            m.accept("k", "a", evidence=e)
            decision = m.apply(revise("k", "a", evidence=e)).decision
        else:
            m.apply(revise("k", "a", evidence=e))
            decision = m.accept("k", "a", evidence=e)  # an id, compared below
        runs.append(dump(m))
        assert len(m.versions("k")) == 1 and m.cell("k").support == 2
        if order == "accept first":
            assert decision == "support"
        else:
            assert decision == m.cell("k").head.id  # type: ignore[union-attr]
    assert runs[0] == runs[1]


def test_an_accept_patch_of_the_current_value_is_support_too() -> None:
    m = Memory(clock=Clock())
    assert m.apply({"op": "accept", "key": "k", "new_value": "a"}).decision == "create"
    r = m.apply({"op": "accept", "key": "k", "new_value": "a"})
    assert (r.decision, r.version) == ("support", m.versions("k")[0].id)
    # a revise patch of the head's value is support whatever the status it names (as before)
    assert m.apply(revise("k", "a", status="contradicted")).decision == "support"
    assert len(m.versions("k")) == 1 and m.cell("k").support == 3


def test_a_forced_patch_of_the_current_value_is_support() -> None:
    m = Memory(clock=Clock())
    m.accept("k", "a")
    # a reject naming the head's own value is refused; hard_commit forces it, as support
    r = m.apply({"op": "reject", "key": "k", "new_value": "a"}, hard_commit=True)
    assert (r.decision, r.forced, r.version) == ("support", True, m.versions("k")[0].id)
    assert len(m.versions("k")) == 1 and m.cell("k").support == 2


def test_the_head_value_on_a_contested_cell_supports_it_and_leaves_it_contested() -> None:
    m = Memory(clock=Clock())
    head = m.accept("room", "4A")
    m.contest("room", "2B")
    assert m.accept("room", "4A") == head
    cell = m.cell("room")
    assert (cell.status, cell.support, [a.value for a in cell.alternatives]) == (
        "contested",
        2,
        ["2B"],
    )
    m.accept("room", "2B")  # an alternative's value is a change: it heads the cell
    assert (m.cell("room").value, m.cell("room").status) == ("2B", "active")


def test_valid_from_of_the_head_is_left_as_it_was() -> None:
    m = Memory(clock=Clock())
    m.accept("k", "a", valid_from="2026-01-01")
    m.accept("k", "a", valid_from="2026-06-01")
    (v,) = m.versions("k")
    assert v.valid_from is not None and v.valid_from.date().isoformat() == "2026-01-01"


def test_an_old_log_with_a_same_value_accept_copies_and_reopens_as_it_was() -> None:
    """A log written before the rule may accept the head's own value: it derives two versions,
    and copying or reopening it must keep them."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "old.sqlite")
        with Memory(path, clock=Clock()) as old:
            old.accept("k", "a")
            old._copy_accept("k", "a", None, None, None)  # what `accept` wrote before the rule
            before = dump(old)
            assert [v.status for v in old.versions("k")] == ["superseded", "active"]
        with Memory(path) as reopened:
            assert dump(reopened) == before
            copy = Memory()
            copy_log(reopened, copy)
            assert dump(copy) == before
            assert copy.check() == []


VALUES = st.sampled_from(["a", "b", "c"])


@settings(max_examples=200, deadline=None)
@given(st.lists(VALUES, min_size=1, max_size=25))
def test_versions_count_the_value_changes(values: list[str]) -> None:
    m = Memory(clock=Clock())
    for value in values:
        m.accept("k", value)
    changes = 1 + sum(1 for x, y in itertools.pairwise(values) if x != y)
    assert len(m.versions("k")) == changes
    assert m.cell("k").value == values[-1]
    # the head's support: the accepts of its value since the last change
    last_run = next((i for i, v in enumerate(reversed(values)) if v != values[-1]), len(values))
    assert m.cell("k").support == last_run
    assert m.check() == []


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["x", "y"]), VALUES), max_size=25))
def test_accept_and_the_patch_path_agree_on_any_sequence(writes: list[tuple[str, str]]) -> None:
    direct, patched = Memory(clock=Clock()), Memory(clock=Clock())
    for key, value in writes:
        direct.accept(key, value)
        patched.apply(revise(key, value))
    assert dump(direct) == dump(patched)
