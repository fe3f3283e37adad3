"""Every row of Table 2, every precondition, rollback (§3.3) and the paper's stories."""

from __future__ import annotations

import pytest

from pmem import InvalidOperation, Memory


@pytest.fixture
def m(clock) -> Memory:
    return Memory(clock=clock)


def statuses(m: Memory, key: str) -> list[tuple[str, str]]:
    return [(v.value, v.status) for v in m.versions(key)]


# -- Table 2, one row each --------------------------------------------------------------------


def test_accept_on_empty_cell_creates_the_head(m: Memory) -> None:
    vid = m.accept("k", "a")
    cell = m.cell("k")
    assert (cell.value, cell.status, cell.head.id) == ("a", "active", vid)
    assert cell.head.supersedes is None


def test_accept_new_value_active_incumbent_superseded(m: Memory) -> None:
    a = m.accept("k", "a")
    b = m.accept("k", "b")
    assert m.cell("k").value == "b"
    assert statuses(m, "k") == [("a", "superseded"), ("b", "active")]
    assert m.version(b).supersedes == a
    assert m.version(a).closed_by == b


def test_reject_with_value_incumbent_contradicted(m: Memory) -> None:
    a = m.accept("k", "a")
    b = m.reject("k", "b")
    assert m.cell("k").value == "b"
    assert statuses(m, "k") == [("a", "contradicted"), ("b", "active")]
    assert m.version(b).supersedes == a


def test_contest_keeps_incumbent_as_contested_head(m: Memory) -> None:
    a = m.accept("k", "a")
    b = m.contest("k", "b")
    cell = m.cell("k")
    assert (cell.value, cell.status) == ("a", "contested")
    assert [v.id for v in cell.alternatives] == [b]
    assert m.version(b).alternative_of == a
    assert statuses(m, "k") == [("a", "contested"), ("b", "alternative")]


def test_revoke_reinstates_predecessor_else_empties(m: Memory) -> None:
    a = m.accept("k", "a")
    m.accept("k", "b")
    assert m.revoke("k") == a
    assert statuses(m, "k") == [("a", "active"), ("b", "revoked")]
    assert m.revoke("k") is None
    cell = m.cell("k")
    assert (cell.value, cell.status, cell.head) == (None, "empty", None)
    assert statuses(m, "k") == [("a", "revoked"), ("b", "revoked")]


def test_revoke_writes_a_tombstone_that_revokes_the_head(m: Memory) -> None:
    m.accept("k", "a")
    b = m.accept("k", "b")
    m.revoke("k")
    v = m.version(b)
    assert v.tombstone is not None and v.tombstone.startswith("t")
    assert m.check() == []


def test_resolve_promotes_alternative_others_contradicted(m: Memory) -> None:
    m.accept("k", "a")
    m.contest("k", "b")
    m.contest("k", "c")
    b = m.resolve("k", "b")
    cell = m.cell("k")
    assert (cell.value, cell.status, cell.head.id, cell.alternatives) == ("b", "active", b, ())
    assert statuses(m, "k") == [("a", "contradicted"), ("b", "active"), ("c", "contradicted")]


def test_resolve_can_keep_the_incumbent(m: Memory) -> None:
    a = m.accept("k", "a")
    m.contest("k", "b")
    assert m.resolve("k", "a") == a
    assert statuses(m, "k") == [("a", "active"), ("b", "contradicted")]


def test_noop_support_changes_nothing_but_the_count(m: Memory) -> None:
    m.accept("k", "a")
    before = statuses(m, "k")
    e = m.observe("still a")
    m.support("k", evidence=e)
    assert statuses(m, "k") == before
    assert m.cell("k").support == 2
    assert e in m.cell("k").head.evidence


# -- preconditions ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "reason"),
    [
        (lambda m: m.contest("k", "x"), "contest needs a current value"),
        (lambda m: m.resolve("k", "x"), "resolve needs a contested cell; this one is empty"),
        (lambda m: m.revoke("k"), "revoke needs a current value"),
        (lambda m: m.reject("k"), "reject needs a current value"),
        (lambda m: m.reject("k", "x"), "reject needs a current value"),
        (lambda m: m.support("k"), "support needs a current value"),
    ],
)
def test_operations_on_an_empty_cell_are_refused(m: Memory, call, reason) -> None:
    with pytest.raises(InvalidOperation, match=reason) as info:
        call(m)
    assert info.value.key == "k"
    assert m.keys() == []


def test_resolve_on_an_uncontested_cell(m: Memory) -> None:
    m.accept("k", "a")
    with pytest.raises(InvalidOperation, match="contested cell; this one is active"):
        m.resolve("k", "a")


def test_resolve_naming_a_value_that_is_not_an_alternative(m: Memory) -> None:
    m.accept("room", "4A")
    m.contest("room", "2B")
    with pytest.raises(InvalidOperation, match=r"'9Z' is neither the head nor an alternative"):
        m.resolve("room", "9Z")
    assert m.cell("room").status == "contested"


def test_contest_with_a_value_already_offered(m: Memory) -> None:
    m.accept("k", "a")
    with pytest.raises(InvalidOperation, match="already the head"):
        m.contest("k", "a")
    m.contest("k", "b")
    with pytest.raises(InvalidOperation, match="already an alternative"):
        m.contest("k", "b")


def test_reject_with_the_head_value(m: Memory) -> None:
    m.accept("k", "a")
    with pytest.raises(InvalidOperation, match="is the head it would contradict"):
        m.reject("k", "a")


@pytest.mark.parametrize("call", [lambda m: m.revoke("k"), lambda m: m.reject("k")])
def test_retraction_of_a_contested_head_asks_for_resolve(m: Memory, call) -> None:
    m.accept("k", "a")
    m.contest("k", "b")
    with pytest.raises(InvalidOperation, match="resolve"):
        call(m)


@pytest.mark.parametrize("key", ["", "   ", None, 3, "two\nlines"])
def test_bad_keys(m: Memory, key) -> None:
    with pytest.raises(InvalidOperation, match="key must"):
        m.accept(key, "v")


@pytest.mark.parametrize("value", ["", "  ", None, 5])
def test_bad_values(m: Memory, value) -> None:
    with pytest.raises(InvalidOperation, match="value must be a non-empty string"):
        m.accept("k", value)


def test_unknown_evidence_id(m: Memory) -> None:
    with pytest.raises(InvalidOperation, match="unknown evidence id 'e99'"):
        m.accept("k", "v", evidence="e99")


def test_recorded_time_only_moves_forward(m: Memory) -> None:
    m.accept("k", "a", at="2026-05-01")
    with pytest.raises(InvalidOperation, match="precedes the last recorded operation"):
        m.accept("k", "b", at="2026-04-01")
    assert m.cell("k").value == "a"


def test_a_refused_operation_changes_nothing(m: Memory) -> None:
    m.accept("k", "a")
    m.contest("k", "b")
    before = (m.render(disclose=["history", "alternatives", "support"]), m.entries())
    for call in (lambda: m.resolve("k", "zz"), lambda: m.revoke("k"), lambda: m.contest("k", "a")):
        with pytest.raises(InvalidOperation):
            call()
    assert (m.render(disclose=["history", "alternatives", "support"]), m.entries()) == before


# -- rollback along the supersedes chain (§3.3) ------------------------------------------------


def test_consecutive_retractions_walk_back_one_at_a_time(m: Memory) -> None:
    for v in ["a", "b", "c", "d"]:
        m.accept("k", v)
    seen = []
    while m.cell("k").head is not None:
        seen.append(m.cell("k").value)
        m.revoke("k")
    assert seen == ["d", "c", "b", "a"]


def test_a_contradicted_version_is_never_reinstated(m: Memory) -> None:
    m.accept("k", "a")
    m.accept("k", "b")
    m.reject("k", "c")  # b recorded wrong, replaced by c
    assert m.revoke("k") is not None
    assert m.cell("k").value == "a"  # skips the contradicted b


def test_reject_without_value_rolls_back_and_marks_contradicted(m: Memory) -> None:
    m.accept("k", "a")
    m.accept("k", "b")
    m.reject("k")
    assert m.cell("k").value == "a"
    assert statuses(m, "k") == [("a", "active"), ("b", "contradicted")]


def test_a_revoked_version_is_never_reinstated(m: Memory) -> None:
    m.accept("k", "a")
    m.accept("k", "b")
    m.revoke("k")  # back to a
    m.accept("k", "c")  # c supersedes a
    m.revoke("k")
    assert m.cell("k").value == "a"
    m.revoke("k")
    assert m.cell("k").head is None


def test_revoking_a_resolved_winner_walks_past_the_contradicted_loser(m: Memory) -> None:
    m.accept("room", "1A")
    m.accept("room", "4A")
    m.contest("room", "2B")
    m.resolve("room", "2B")  # 4A contradicted
    m.revoke("room")  # 2B retracted: 4A never held, 1A did
    assert m.cell("room").value == "1A"


def test_accept_on_a_contested_cell_displaces_the_alternatives(m: Memory) -> None:
    m.accept("room", "4A")
    m.contest("room", "2B")
    c = m.accept("room", "3C")
    cell = m.cell("room")
    assert (cell.value, cell.status, cell.alternatives) == ("3C", "active", ())
    assert statuses(m, "room") == [("4A", "superseded"), ("2B", "superseded"), ("3C", "active")]
    assert m.version(m.versions("room")[1].id).closed_by == c
    m.revoke("room")  # the paper: the predecessor reopens as active
    assert (m.cell("room").value, m.cell("room").status) == ("4A", "active")


# -- the paper's stories -----------------------------------------------------------------------


def test_figure1_personal_best_with_the_old_value_answerable(m: Memory) -> None:
    m.accept("personal_best_5k_time", "27:12", evidence=m.observe("My 5K PB is 27:12."))
    m.accept("personal_best_5k_time", "25:50", evidence=m.observe("beat my PB of 25:50"))
    assert m.render(["personal_best_5k_time"]) == "personal_best_5k_time = 25:50"
    history = m.cell("personal_best_5k_time").history
    assert [(v.value, v.status) for v in history] == [("27:12", "superseded")]
    assert "27:12 (superseded)" in m.render(["personal_best_5k_time"], disclose=["history"])


def test_budget_raise_then_retraction_reinstates_30k(m: Memory) -> None:
    first = m.accept("client.budget", "$30k")
    m.accept("client.budget", "$50k")
    m.revoke("client.budget", evidence=m.observe("the $50k was an error"))
    cell = m.cell("client.budget")
    assert (cell.value, cell.head.id) == ("$30k", first)
    assert [(v.value, v.status) for v in cell.history] == [("$50k", "revoked")]


def test_two_meeting_rooms_contested_then_resolved(m: Memory) -> None:
    m.accept("standup.room", "Room 4A", evidence=m.observe("Room 4A", source="alice"))
    m.contest("standup.room", "Room 2B", evidence=m.observe("Room 2B", source="bob"))
    line = m.render(["standup.room"], disclose=["alternatives"])
    assert line == "standup.room = Room 4A (contested) | alternatives: Room 2B"
    m.resolve("standup.room", "Room 2B")
    line = m.render(["standup.room"], disclose=["alternatives", "history"])
    assert line == "standup.room = Room 2B | history: Room 4A (contradicted)"


# -- rendering -----------------------------------------------------------------------------------


def test_render_modes_and_one_line_values(m: Memory) -> None:
    m.accept("note", "line one\nline two")
    m.support("note")
    assert m.render(["note"], disclose=["support"]) == "note = line one\\nline two | support: 2"
    with pytest.raises(ValueError, match="unknown mode"):
        m.render(["note"], disclose=["everything"])


def test_frontier_skips_empty_cells_and_render_shows_them_on_request(m: Memory) -> None:
    m.accept("a", "1")
    m.accept("b", "2")
    m.revoke("b")
    assert [c.key for c in m.frontier()] == ["a"]
    assert m.render(["b"], disclose=["history"]) == "b = (empty) | history: 2 (revoked)"
    assert m.render() == "a = 1"
