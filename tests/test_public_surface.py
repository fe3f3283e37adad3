"""The library's own surface is documented: every public name of `pmem` and every public
member of `pmem.Memory` has a docstring (so `help(pmem.Memory)` explains each one), is named in
docs/contract.md, and the snapshot types print as short one-line summaries."""

from __future__ import annotations

import dataclasses
import datetime as dt
import inspect
import pydoc
import re
from pathlib import Path

import pytest

import pmem
from pmem import Cell, Evidence, Memory, Version
from tests.conftest import Clock

ROOT = Path(__file__).resolve().parent.parent
CONTRACT = (ROOT / "docs" / "contract.md").read_text(encoding="utf-8")
# the context-manager protocol is public surface too (`with Memory(path) as m:`)
DUNDERS = ("__enter__", "__exit__")


def memory_members() -> list[tuple[str, object]]:
    """Every public method and property of `Memory`, and its context-manager protocol."""
    return [
        (name, member)
        for name, member in inspect.getmembers(Memory)
        if (not name.startswith("_") or name in DUNDERS)
        and (callable(member) or isinstance(member, property))
    ]


def own_doc(obj: object) -> str:
    """A docstring written for `obj`: not a builtin's inherited one, not the signature a
    dataclass puts where its docstring is missing."""
    doc = inspect.getdoc(obj) or ""
    if inspect.isclass(obj) and ("__doc__" not in vars(obj) or doc.startswith(f"{obj.__name__}(")):
        return ""
    return doc.strip()


MEMBERS = memory_members()


def test_memory_has_the_members_the_issue_names() -> None:
    names = {n for n, _ in memory_members()}
    expected = [
        "close", "confirm", "support", "keys", "stats", "evidence", "entries", "batch", "as_of",
        "unconfirmed", "cite", "citations", "citation_status", "forget", "check", "render",
        "frontier", "versions", "version", "cell", "apply", "accept", "reject", "contest",
        "resolve", "revoke", "observe", "path",
    ]  # fmt: skip
    assert set(expected) <= names


@pytest.mark.parametrize(("name", "member"), MEMBERS, ids=[n for n, _ in MEMBERS])
def test_every_public_memory_member_has_a_docstring(name: str, member: object) -> None:
    doc = inspect.getdoc(member.fget if isinstance(member, property) else member)
    assert doc and doc.strip(), f"Memory.{name} has no docstring"
    assert doc != inspect.getdoc(object), f"Memory.{name} only inherits object's docstring"


def test_help_lists_every_public_method_with_its_docstring() -> None:
    text = pydoc.render_doc(Memory, renderer=pydoc.plaintext)
    for name, member in memory_members():
        assert re.search(rf"\b{name}\b", text), name
        doc = inspect.getdoc(member.fget if isinstance(member, property) else member)
        assert doc is not None
        first = doc.splitlines()[0].strip()
        assert first in text, f"help(Memory) does not show the docstring of {name}"


@pytest.mark.parametrize(("name", "member"), MEMBERS, ids=[n for n, _ in MEMBERS])
def test_every_public_memory_member_is_in_the_contract(name: str, member: object) -> None:
    if name in DUNDERS:
        assert "with Memory(" in CONTRACT or "with m." in CONTRACT
    else:
        assert re.search(rf"\bm\.{name}\b", CONTRACT), f"docs/contract.md never names m.{name}"


def _constant_comment(name: str) -> str:
    """The `#:` comment right above a module-level constant's assignment in pmem/."""
    for path in sorted((ROOT / "pmem").glob("*.py")):
        lines = path.read_text(encoding="utf-8").splitlines()
        for i, line in enumerate(lines):
            if line.startswith(f"{name} = ") and i and lines[i - 1].startswith("#:"):
                return lines[i - 1].removeprefix("#:").strip()
    return ""


@pytest.mark.parametrize("name", pmem.__all__)
def test_every_exported_name_is_documented(name: str) -> None:
    obj = getattr(pmem, name)
    if inspect.isclass(obj) or inspect.isfunction(obj):
        assert own_doc(obj), f"pmem.{name} has no docstring of its own"
    else:  # a constant: documented by a `#:` comment where it is assigned
        assert _constant_comment(name), f"pmem.{name} has no `#:` comment above its assignment"
    assert f"`{name}" in CONTRACT, f"docs/contract.md never names {name}"


@pytest.mark.parametrize(
    "cls", [getattr(pmem, n) for n in pmem.__all__ if inspect.isclass(getattr(pmem, n))]
)
def test_public_methods_and_properties_of_exported_classes_have_docstrings(cls: type) -> None:
    for name, member in vars(cls).items():
        if name.startswith("_") or inspect.ismemberdescriptor(member):
            continue  # private, or a dataclass field's slot
        if isinstance(member, classmethod | staticmethod):
            member = member.__func__
        if isinstance(member, property):
            member = member.fget
        if callable(member):
            assert inspect.getdoc(member), f"{cls.__name__}.{name} has no docstring"


# -- reprs --------------------------------------------------------------------------------------


@pytest.fixture
def m() -> Memory:
    m = Memory(clock=Clock())
    e1 = m.observe("The standup is in the kitchen.", source="alice")
    e2 = m.observe("Yes, the kitchen.", source="bob")
    m.accept("standup.room", "hall", valid_from="2025-12-01")
    m.accept("standup.room", "kitchen", evidence=e1)
    m.support("standup.room", evidence=e2)
    return m


def test_a_version_prints_as_one_informative_line(m: Memory) -> None:
    old, new = m.versions("standup.room")
    text = repr(new)
    assert "\n" not in text and len(text) < 200
    assert text.startswith("Version(") and text.endswith(")")
    for fact in (new.id, "standup.room", "'kitchen'", "active", f"supersedes {old.id}"):
        assert fact in text, fact
    assert "support 2" in text and "2 evidence" in text
    assert "2026-01-01" in text  # when it was recorded
    old_text = repr(old)
    assert all(f in old_text for f in (old.id, "'hall'", "superseded", f"closed by {new.id}"))
    assert "valid from 2025-12-01" in old_text and "valid to" in old_text
    assert str(new) == text


def test_a_cell_prints_as_one_informative_line(m: Memory) -> None:
    m.contest("standup.room", "garage")
    cell = m.cell("standup.room")
    text = repr(cell)
    assert "\n" not in text and text.startswith("Cell(")
    for fact in ("standup.room", "'kitchen'", "contested", f"head {cell.head.id}"):  # type: ignore[union-attr]
        assert fact in text, fact
    assert "1 alternative" in text and "1 in history" in text
    assert repr(m.cell("never.written")) == "Cell(never.written empty)"


def test_evidence_prints_as_one_informative_line(m: Memory) -> None:
    eid = m.versions("standup.room")[-1].evidence[0]
    text = repr(m.evidence(eid))
    assert "\n" not in text and text.startswith("Evidence(")
    for fact in (eid, "alice", "'The standup is in the kitchen.'", "2026-01-01"):
        assert fact in text, fact


def test_reprs_stay_on_one_line_and_short_whatever_the_text() -> None:
    m = Memory(clock=Clock())
    e = m.observe("line one\nline two\r\n" + "x" * 500)
    m.accept("a key = (odd)", "first\nsecond " + "y" * 500, evidence=e)
    for obj in (m.cell("a key = (odd)"), m.versions("a key = (odd)")[0], m.evidence(e)):
        text = repr(obj)
        assert "\n" not in text and "\r" not in text, text
        assert len(text) < 250, text
    assert "'a key = (odd)'" in repr(m.cell("a key = (odd)"))  # an ambiguous key is quoted


def test_fields_and_equality_are_unchanged(m: Memory) -> None:
    assert [f.name for f in dataclasses.fields(Version)] == [
        "id", "key", "value", "status", "supersedes", "alternative_of", "evidence", "valid_from",
        "valid_to", "recorded_at", "operation", "support", "confirmed_at", "closed_by",
        "tombstone",
    ]  # fmt: skip
    assert [f.name for f in dataclasses.fields(Cell)] == ["key", "head", "alternatives", "history"]
    assert [f.name for f in dataclasses.fields(Evidence)] == ["id", "text", "source", "at"]
    v = m.versions("standup.room")[-1]
    assert v == m.version(v.id) and v == dataclasses.replace(v)
    assert v != dataclasses.replace(v, support=v.support + 1)
    assert m.cell("standup.room") == m.cell("standup.room")
    at = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    assert Evidence("e1", "t", "s", at) == Evidence("e1", "t", "s", at)
