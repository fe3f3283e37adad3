"""The field report's additions: valid vs recorded time, confirmations, citations."""

from __future__ import annotations

import datetime as dt

import pytest

from pmem import InvalidOperation, Memory


@pytest.fixture
def goal() -> Memory:
    """A goal amended on 13 October but read on 20 October (the field report's example)."""
    m = Memory()
    m.accept("company.goal", "1k signups", valid_from="2026-09-01", at="2026-09-02T10:00:00Z")
    m.accept("company.goal", "2k signups", valid_from="2026-10-13", at="2026-10-20T09:00:00Z")
    return m


def test_valid_to_is_derived_from_the_successor(goal: Memory) -> None:
    old, new = goal.versions("company.goal")
    assert old.valid_from == dt.datetime(2026, 9, 1, tzinfo=dt.UTC)
    assert old.valid_to == dt.datetime(2026, 10, 13, tzinfo=dt.UTC)
    assert new.valid_to is None


def test_what_held_on_a_date(goal: Memory) -> None:
    assert goal.as_of("company.goal", valid_at="2026-10-15").value == "2k signups"
    assert goal.as_of("company.goal", valid_at="2026-10-12").value == "1k signups"
    assert goal.as_of("company.goal", valid_at="2026-08-01") is None


def test_what_memory_believed_on_a_date(goal: Memory) -> None:
    assert goal.as_of("company.goal", recorded_at="2026-10-15").value == "1k signups"
    assert goal.as_of("company.goal", recorded_at="2026-10-21").value == "2k signups"
    assert goal.as_of("company.goal", recorded_at="2026-09-01") is None


def test_bitemporal_query(goal: Memory) -> None:
    # On 15 Oct memory did not yet know of the 13 Oct amendment.
    believed = goal.as_of("company.goal", valid_at="2026-10-14", recorded_at="2026-10-15")
    assert believed.value == "1k signups"
    assert goal.as_of("company.goal", valid_at="2026-10-14").value == "2k signups"


def test_retracted_values_never_held(goal: Memory) -> None:
    goal.accept("company.goal", "9k signups", valid_from="2026-11-01", at="2026-11-02")
    goal.revoke("company.goal", at="2026-11-03")  # a misquote
    assert goal.as_of("company.goal", valid_at="2026-11-20").value == "2k signups"
    assert goal.as_of("company.goal", recorded_at="2026-11-02T12:00:00").value == "9k signups"


def test_times_accept_strings_dates_and_datetimes() -> None:
    m = Memory()
    m.accept("k", "a", valid_from=dt.date(2026, 1, 1), at=dt.datetime(2026, 1, 2, 12))
    m.accept("k", "b", valid_from="2026-02-01T00:00:00+02:00", at="2026-02-02")
    a, b = m.versions("k")
    assert a.valid_to == dt.datetime(2026, 1, 31, 22, tzinfo=dt.UTC)
    assert b.recorded_at == dt.datetime(2026, 2, 2, tzinfo=dt.UTC)
    with pytest.raises(InvalidOperation, match="valid_from='yesterday' is not an ISO 8601"):
        m.accept("k", "c", valid_from="yesterday")


def test_unconfirmed_heads(goal: Memory) -> None:
    goal.accept("team.size", "12", at="2026-10-25")
    assert [c.key for c in goal.unconfirmed(since="2026-10-22")] == ["company.goal"]
    reread = goal.observe("re-read the OKR file", at="2026-11-30")
    goal.confirm("company.goal", evidence=reread, at="2026-11-30")
    assert [c.key for c in goal.unconfirmed(since="2026-10-22")] == []
    assert goal.cell("company.goal").head.confirmed_at == dt.datetime(2026, 11, 30, tzinfo=dt.UTC)
    now = dt.datetime(2026, 12, 31, tzinfo=dt.UTC)
    m = Memory(clock=lambda: now)
    m.accept("k", "v", at="2026-12-01")
    assert [c.key for c in m.unconfirmed(since=dt.timedelta(days=14))] == ["k"]
    assert m.unconfirmed(since=dt.timedelta(days=60)) == []


def test_citation_statuses() -> None:
    m = Memory()
    a = m.accept("goal", "1k")
    m.cite("bet:seo", a)
    assert m.citation_status("bet:seo") == "current"
    m.accept("goal", "2k")  # replaced in the world: the bet is stale
    assert m.citation_status("bet:seo") == "stale"
    b = m.accept("goal", "3k")
    m.cite("bet:ads", b)
    m.revoke("goal")  # recorded wrongly: the bet is unfounded
    assert m.citation_status("bet:ads") == "unfounded"
    c = m.contest("goal", "5k")
    m.cite("bet:events", c)
    assert m.citation_status("bet:events") == "contested"
    m.cite("bet:events", a)  # the worst status wins
    assert m.citation_status("bet:events") == "stale"
    with pytest.raises(InvalidOperation, match="no version 'v999'"):
        m.cite("bet:x", "v999")
    with pytest.raises(KeyError):
        m.citation_status("bet:none")
