"""The commit arm on the model's own keys (issue 14.2, paper §3.3 "soft key identity", B.2):
the writer names the key, soft identity routes it to the object's cell, the question's key is
resolved the same way, and the routing audit says how many events reached their object's cell.
A scripted writer and embedder over real HTTP on 127.0.0.1; the library's `SoftIdentity` alone
with a scripted embedder class."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from baselines.pmem_arms.commit import OracleCommitArm, PatchCommitArm, routing_audit
from benchmarks.alfworld_revision.benchmark import AlfworldRevision
from benchmarks.alfworld_revision.scoring import LocationMatch
from benchmarks.models.scripted import ScriptedServer
from benchmarks.runner.arm import Services
from pmem.identity import SoftIdentity
from tests.alfworld_agent import Agent
from tests.test_alfworld_arms import accuracy, run, score

CASES = 4


@pytest.fixture
def misspelling() -> Iterator[tuple[ScriptedServer, Agent]]:
    """A writer that spells each object's key three ways in turn: `{obj}.location`,
    `{obj} location`, `Location of {obj}`."""
    script = Agent(key_styles=("exact", "spaced", "paraphrased"))
    with ScriptedServer(script, models=["scripted", "scripted-embed"]) as server:
        yield server, script


def _arm(**kw: Any):
    return lambda s: PatchCommitArm(s, **kw)


@pytest.mark.parametrize("route", ["target", "pool"])
def test_misspelt_and_paraphrased_keys_reach_the_objects_cell(misspelling, route: str) -> None:
    server, script = misspelling
    bench = AlfworldRevision(probe="chains", L=4, cases=CASES)
    records = run(server, bench, _arm(route=route, soft_identity=0.6))
    assert accuracy(score(records, LocationMatch())) == 1.0
    for r in records:
        meta = r["context_meta"]
        assert meta["routing"] == "identity" and meta["noop_fallbacks"] == 0
        assert meta["events_reached_cell"] == meta["events_routed"] == meta["events_seen"]
        assert meta["cells"] == (1 if route == "target" else 5)  # one cell per object, no fork
        assert meta["question_reached_cell"] == 1
    assert script.calls["same"] > 0  # the merges were confirmed by the writer's check


def test_without_soft_identity_a_paraphrase_forks_a_stale_cell(misspelling) -> None:
    """The control: a threshold no pair reaches leaves each spelling a cell of its own, so the
    question reads a cell the later moves never reached (the failure §3.3 repairs)."""
    server, _ = misspelling
    bench = AlfworldRevision(probe="chains", L=4, cases=CASES)
    records = run(server, bench, _arm(soft_identity=1.01))
    for r in records:
        meta = r["context_meta"]
        assert meta["cells"] == 3 and meta["events_reached_cell"] < meta["events_seen"]
    assert accuracy(score(records, LocationMatch())) < 1.0


def test_a_distractors_key_never_reaches_the_targets_cell(misspelling) -> None:
    """A threshold so low that every pair of keys is shortlisted: the same/different check
    alone keeps each object's events in its own cell."""
    server, script = misspelling
    bench = AlfworldRevision(probe="chains", L=2, cases=CASES)
    before = script.calls["same"]
    records = run(server, bench, _arm(route="pool", soft_identity=-1.0))
    assert accuracy(score(records, LocationMatch())) == 1.0
    for r in records:
        meta = r["context_meta"]
        assert meta["events_reached_cell"] == meta["events_seen"] == 5 * (2 + 1)
        assert meta["cells"] == 5
        # the target's cell holds the target's locations only
        gold_chain = {*r["meta"]["intermediate_locations"], r["golds"][0]}
        assert set(meta["retained_values"]) <= gold_chain | set(r["meta"]["distractor_locations"])
    assert script.calls["same"] - before > CASES * 5  # distractors were shortlisted, and refused


def test_oracle_routing_is_the_labelled_variant(misspelling) -> None:
    """Label routing makes no key call and no same/different check: the label is the cell."""
    server, script = misspelling
    before = dict(script.calls)
    bench = AlfworldRevision(probe="chains", L=2, cases=2)
    records = run(server, bench, _arm(routing="label"))
    assert script.calls["key"] == before.get("key", 0)
    assert script.calls["same"] == before.get("same", 0)
    for r in records:
        meta = r["context_meta"]
        assert meta["routing"] == "label" and meta["cells"] == 1
        assert meta["events_reached_cell"] == meta["events_seen"] == 3
    assert accuracy(score(records, LocationMatch())) == 1.0


def test_the_template_oracle_routes_by_label_only() -> None:
    with pytest.raises(
        ValueError, match=r"arm\.routing='identity'; OracleCommitArm supports label"
    ):
        OracleCommitArm(Services(), routing="identity")
    with pytest.raises(ValueError, match="needs an embedder"):
        PatchCommitArm(Services(writer=object()))


def test_the_routing_audit_counts_forks_and_merges_as_misses() -> None:
    routes = [
        ("apple", "apple.location"),
        ("mug", "mug.location"),
        ("apple", "apple_loc"),  # a fork
        ("mug", "apple.location"),  # a merge into another object's cell
        ("apple", "apple.location"),
        ("apple", None),  # not routed (a failed annotation)
    ]
    home, reached = routing_audit(routes)
    assert home == {"apple": "apple.location", "mug": "mug.location"} and reached == 3
    assert routing_audit([("mug", "apple.location"), ("apple", "apple.location")]) == (
        {"mug": "apple.location"},
        1,
    )


class _Words:
    """A scripted embedder class: one dimension per word of a small vocabulary."""

    VOCAB = ("apple", "mug", "location", "of")

    async def embed(self, texts: Any, kind: str = "passage") -> list[list[float]]:
        out = []
        for t in texts:
            words = t.lower().replace(".", " ").split()
            v = [float(w in words) for w in self.VOCAB]
            n = sum(x * x for x in v) ** 0.5 or 1.0
            out.append([x / n for x in v])
        return out


class _Same:
    def __init__(self, answer: str) -> None:
        self.answer, self.asked = answer, []

    async def complete(self, prompt: Any, **kw: Any) -> Any:
        self.asked.append(prompt)
        return type("R", (), {"text": self.answer, "parsed": None})()


def test_soft_identity_routes_registers_finds_and_restores() -> None:
    async def go() -> None:
        same = _Same("same")
        ids = SoftIdentity(_Words(), same, threshold=0.8)
        assert await ids.identify("apple.location") == "apple.location"
        assert await ids.identify("location of apple") == "apple.location"  # cos 0.82, same
        assert await ids.find("mug location") is None and ids.keys == ["apple.location"]
        assert (ids.gated, ids.merged) == (1, 1) and len(same.asked) == 1
        copy = SoftIdentity(_Words(), _Same("different"), threshold=0.8)
        copy.restore(ids.state())
        assert copy.keys == ids.keys and await copy.find("location of apple") == "apple.location"
        assert await copy.find("apple location") is None  # shortlisted, judged different

    asyncio.run(go())
