"""The patch interface (§3.3): the deterministic controller and hard_commit."""

from __future__ import annotations

import pytest

from pmem import InvalidOperation, Memory, Patch


@pytest.fixture
def m(clock) -> Memory:
    return Memory(clock=clock)


def revise(key: str, new: str | None = None, **kw) -> dict:
    return {"op": "revise", "key": key, "new_value": new, **kw}


def test_create_then_supersede_then_revise(m: Memory) -> None:
    assert m.apply(revise("obj.location", "drawer 1")).decision == "create"
    r = m.apply(revise("obj.location", "shelf 2", old_value="drawer 1"))
    assert (r.decision, m.cell("obj.location").value) == ("accept", "shelf 2")
    r = m.apply(revise("obj.location", "shelf 3", status="contradicted"))
    assert r.decision == "reject"
    assert [v.status for v in m.versions("obj.location")] == [
        "superseded",
        "contradicted",
        "active",
    ]


def test_same_value_is_support(m: Memory) -> None:
    m.apply(revise("k", "a"))
    r = m.apply(revise("k", "a"))
    assert r.decision == "support"
    assert m.cell("k").support == 2
    assert len(m.versions("k")) == 1


def test_contest_and_revoke_through_status(m: Memory) -> None:
    m.apply(revise("k", "a"))
    assert m.apply(revise("k", "b", status="contested")).decision == "contest"
    assert m.apply({"op": "resolve", "key": "k", "new_value": "b"}).decision == "resolve"
    assert m.apply(revise("k", None, status="revoked")).decision == "revoke"
    assert m.cell("k").head is None  # a was contradicted by the resolve, so nothing reopens


def test_named_operations(m: Memory) -> None:
    assert m.apply(Patch(op="accept", key="k", new_value="a")).decision == "create"
    assert m.apply(Patch(op="accept", key="k", new_value="b")).decision == "accept"
    assert m.apply(Patch(op="noop", key="k")).decision == "support"
    assert m.apply(Patch(op="revoke", key="k")).decision == "revoke"
    assert m.cell("k").value == "a"


def test_a_stale_patch_is_refused_without_hard_commit(m: Memory) -> None:
    m.apply(revise("k", "a"))
    m.apply(revise("k", "b"))
    with pytest.raises(InvalidOperation, match="stale patch: it expects the current value 'a'"):
        m.apply(revise("k", "c", old_value="a"))
    assert m.cell("k").value == "b"
    r = m.apply(revise("k", "c", old_value="a"), hard_commit=True)
    assert (r.decision, m.cell("k").value) == ("accept", "c")


def test_supersedes_must_name_the_head(m: Memory) -> None:
    first = m.apply(revise("k", "a")).version
    m.apply(revise("k", "b"))
    with pytest.raises(InvalidOperation, match="stale patch: it supersedes"):
        m.apply(revise("k", "c", supersedes=first))
    assert m.apply(revise("k", "c", supersedes="b")).decision == "accept"


def test_hard_commit_forces_an_inapplicable_contest_into_a_create(m: Memory) -> None:
    with pytest.raises(InvalidOperation, match="contest needs a current value"):
        m.apply({"op": "contest", "key": "k", "new_value": "x"})
    r = m.apply({"op": "contest", "key": "k", "new_value": "x"}, hard_commit=True)
    assert (r.decision, r.forced, m.cell("k").value) == ("create", True, "x")


def test_unknown_op_suggests_the_nearest(m: Memory) -> None:
    with pytest.raises(
        InvalidOperation, match=r"unknown patch op 'acept' \(did you mean 'accept'\?\)"
    ):
        m.apply({"op": "acept", "key": "k", "new_value": "x"})


def test_unknown_status_and_fields(m: Memory) -> None:
    m.apply(revise("k", "a"))
    with pytest.raises(InvalidOperation, match="unknown patch status 'outdated'"):
        m.apply(revise("k", "b", status="outdated"))
    with pytest.raises(InvalidOperation, match=r"unknown field\(s\) \['value'\]"):
        m.apply({"op": "accept", "key": "k", "value": "b"})
    with pytest.raises(InvalidOperation, match="missing field 'key'"):
        m.apply({"op": "accept"})


def test_revise_without_value_needs_a_retracting_status(m: Memory) -> None:
    with pytest.raises(InvalidOperation, match="empty cell needs a new_value"):
        m.apply(revise("k"))
    m.apply(revise("k", "a"))
    with pytest.raises(InvalidOperation, match="needs status 'revoked' or 'contradicted'"):
        m.apply(revise("k"))
