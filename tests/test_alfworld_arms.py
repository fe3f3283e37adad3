"""The ALFWorld-Revision arms driven directly, with a scripted writer, reader and embedder over
real HTTP on 127.0.0.1 (paper §4.2, Appendices B.2-B.3): the template-oracle commit at every L,
retraction with and without retention, contest and resolve, the LLM patch path and its noop
fallbacks, the raw read paths, the scorers, snapshots, and the benchmark adapter."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from baselines.pmem_arms.cells import RetentionStore
from baselines.pmem_arms.commit import (
    REVISE_SCHEMA,
    OracleCommitArm,
    PatchCommitArm,
    oracle_patch,
    revise_schema,
)
from baselines.reference.raw import OracleOrderArm, RawArm, RawReconArm
from benchmarks import alfworld_revision as ar
from benchmarks.alfworld_revision.benchmark import AlfworldRevision
from benchmarks.alfworld_revision.scoring import ConflictFlagged, LocationMatch
from benchmarks.models.client import ChatModel, Embedder, Endpoint, run_sync
from benchmarks.models.scripted import ScriptedServer, embed_text
from benchmarks.runner.arm import MemoryArm, Services
from pmem import Memory, copy_log
from pmem.revise import parse_revise
from tests.alfworld_agent import Agent

CASES = 6


@pytest.fixture(scope="module")
def agent() -> Iterator[tuple[ScriptedServer, Agent]]:
    script = Agent()
    with ScriptedServer(script, models=["scripted", "scripted-embed"]) as server:
        yield server, script


def models(server: ScriptedServer) -> dict[str, Any]:
    url = server.base_url
    return {
        "reader": ChatModel(Endpoint(url, "scripted"), "reader"),
        "writer": ChatModel(Endpoint(url, "scripted"), "writer"),
        "embedder": Embedder(Endpoint(url, "scripted-embed")),
    }


def run(
    server: ScriptedServer, bench: AlfworldRevision, make: Callable[[Services], MemoryArm]
) -> list[dict[str, Any]]:
    """What the pipeline does per episode: a fresh arm ingests, reads, the reader answers."""
    m = models(server)
    services = Services(writer=m["writer"], embedder=m["embedder"])

    async def go() -> list[dict[str, Any]]:
        out = []
        for ep in bench.episodes():
            arm = make(services)
            arm.wording = arm.wording or bench.wording  # as the runner hands it over
            await arm.ingest(ep.events)
            for q in ep.questions:
                ctx = await arm.read(q)
                answer = await m["reader"].complete(bench.answer_messages(q, ctx.text))
                out.append(
                    {
                        "id": q.id,
                        "golds": list(q.golds),
                        "meta": q.meta,
                        "prediction": answer.text,
                        "context": ctx.text,
                        "context_meta": ctx.meta,
                        "ids": ctx.ids,
                    }
                )
        return out

    return run_sync(go())


def score(records: list[dict[str, Any]], scorer: Any) -> list[dict[str, Any]]:
    async def go() -> list[dict[str, Any]]:
        return [await scorer.score(r) for r in records]

    return [s for s in run_sync(go()) if s]


def accuracy(rows: list[dict[str, Any]]) -> float:
    return sum(r["correct"] for r in rows) / len(rows)


def by_phase(records: list[dict[str, Any]], phase: str) -> list[dict[str, Any]]:
    return [r for r in records if r["meta"]["phase"] == phase]


# ---------------------------------------------------------------------------------------------
# Commit: the template-oracle writer (what CI must show, deterministically)
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("route", ["target", "pool"])
@pytest.mark.parametrize("L", ar.SUPPORTED_L)
def test_oracle_commit_is_right_at_every_L(agent, L: int, route: str) -> None:
    server, _ = agent
    bench = AlfworldRevision(probe="chains", L=L, cases=CASES)
    records = run(server, bench, lambda s: OracleCommitArm(s, route=route))
    assert accuracy(score(records, LocationMatch())) == 1.0
    for r in records:
        assert r["context"] == f"[{r['meta']['key']}] {r['golds'][0]}"  # the one-line cell
        assert len(r["context"]) < 45
        meta = r["context_meta"]
        assert meta["noop_fallbacks"] == 0 and meta["cell_status"] == "active"
        written = L + 1 if route == "target" else (1 + ar.DEFAULT_DISTRACTORS) * (L + 1)
        assert meta["events_written"] == written
        assert meta["decisions"] == {"create": written // (L + 1), "accept": written // (L + 1) * L}


@pytest.mark.parametrize("d", ar.SUPPORTED_D)
def test_retention_decides_reversibility(agent, d: int) -> None:
    server, _ = agent
    bench = AlfworldRevision(probe="retraction", d=d, cases=CASES)
    outcomes = {}
    for retention in (True, False):
        records = run(
            server,
            bench,
            lambda s, keep=retention: OracleCommitArm(
                s, retention=keep, disclose=["alternatives", "history"]
            ),
        )
        pre = score(by_phase(records, "pre_retraction"), LocationMatch())
        final = score(by_phase(records, "final"), LocationMatch())
        assert accuracy(pre) == 1.0  # the erroneous update is committed either way
        outcomes[retention] = [f["outcome"] for f in final]
        v1_kept = [r["meta"]["gold_final"] in r["context_meta"]["retained_values"] for r in records]
        assert all(v1_kept) if retention else not any(v1_kept)
    assert outcomes[True] == ["correct"] * CASES  # rollback reopens v1
    assert outcomes[False] == ["other"] * CASES  # the cell was deleted: v1 and v2 both gone


def test_the_contest_path_flags_then_settles_and_crud_picks_a_side(agent) -> None:
    server, _ = agent
    bench = AlfworldRevision(probe="conflict", cases=CASES)
    pmem = run(server, bench, lambda s: OracleCommitArm(s))
    flagged = score(by_phase(pmem, "pre_resolution"), ConflictFlagged())
    assert [f["correct"] for f in flagged] == [True] * CASES
    assert all(f["store_contested"] for f in flagged)
    assert accuracy(score(by_phase(pmem, "final"), LocationMatch())) == 1.0
    assert all(r["context_meta"]["decisions"].get("resolve") == 1 for r in by_phase(pmem, "final"))
    assert "(contested) | alternatives:" in by_phase(pmem, "pre_resolution")[0]["context"]

    crud = run(server, bench, lambda s: OracleCommitArm(s, retention=False))
    flagged = score(by_phase(crud, "pre_resolution"), ConflictFlagged())
    assert not any(f["correct"] for f in flagged)  # last-write-wins: one confident value
    assert [f["matches_final_gold"] for f in flagged] == [k % 2 == 1 for k in range(CASES)]
    assert accuracy(score(by_phase(crud, "final"), LocationMatch())) == 1.0


# ---------------------------------------------------------------------------------------------
# Commit: the LLM patch path
# ---------------------------------------------------------------------------------------------


def test_the_patch_call_sends_the_revise_schema_and_commits(agent) -> None:
    server, script = agent
    before = script.calls["patch"]
    bench = AlfworldRevision(probe="chains", L=4, cases=3)
    records = run(server, bench, lambda s: PatchCommitArm(s))
    assert accuracy(score(records, LocationMatch())) == 1.0
    assert script.calls["patch"] - before == 3 * 5  # one call per target-chain event
    meta = records[0]["context_meta"]
    assert meta["writer"] == "llm" and meta["noop_fallbacks"] == 0 and meta["key_mismatches"] == 0


def test_the_patch_call_body(agent) -> None:
    server, _ = agent
    bench = AlfworldRevision(probe="chains", L=1, cases=1)
    run(server, bench, lambda s: PatchCommitArm(s))
    body = next(b for p, b in reversed(server.received) if "Observation:" in str(b))
    assert body["temperature"] == 0.0
    assert body["response_format"]["json_schema"] == {
        "name": "revise",
        "schema": revise_schema(resolvable=False),  # resolve is offered on a contested cell only
        "strict": True,
    }
    assert REVISE_SCHEMA["properties"]["op"]["enum"] == ["revise", "resolve", "noop"]
    prompt = body["messages"][-1]["content"]
    # the current value, last, after the fixed instructions (a cacheable prompt prefix)
    assert re.search(r"\nCell: \S+\.location = \S+ \d+\nObservation: Update: .+\n\Z", prompt)


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        ("I would rather not.", "unparsed"),
        ('{"op": "dance", "key": "x", "status": null}', "invalid"),
        (
            '{"op": "revise", "key": "k", "old_value": "nowhere 9", "new_value": "desk 1",'
            ' "status": "superseded", "supersedes": null}',
            "refused",
        ),
    ],
)
def test_a_failing_annotation_falls_back_to_noop_and_is_counted(reply: str, reason: str) -> None:
    with ScriptedServer(Agent(garbage=reply), models=["scripted", "scripted-embed"]) as server:
        bench = AlfworldRevision(probe="chains", L=2, cases=2)
        records = run(server, bench, lambda s: PatchCommitArm(s))
    for r in records:  # "refused": the controller refuses an old_value the cell never held
        meta = r["context_meta"]
        assert meta["noop_fallbacks"] == 3 and meta["fallback_reasons"] == {reason: 3}
        assert r["context"].endswith("] (empty)") and meta["decisions"] == {}
        # the key call routed the event; the patch naming another key ("k") is counted
        assert meta["key_mismatches"] == (3 if reason == "refused" else 0)
        assert meta["routing"] == "identity" and meta["events_reached_cell"] == 3
    assert score(records, LocationMatch()) and not any(
        s["correct"] for s in score(records, LocationMatch())
    )


def test_parse_revise_normalises_like_the_annotator() -> None:
    patch, mismatch = parse_revise(
        {
            "op": " Revise ",
            "key": "Mug Location",
            "old_value": "null",
            "new_value": ' "shelf 2." ',
            "status": "SUPERSEDED",
            "supersedes": "",
        },
        "mug.location",
    )
    assert (patch.op, patch.key, patch.old_value, patch.new_value) == (
        "revise",
        "mug.location",
        None,
        "shelf 2",
    )
    assert (patch.status, patch.supersedes, mismatch) == ("superseded", None, True)


def test_the_oracle_parser_maps_each_template() -> None:
    k = "mug.location"
    assert oracle_patch(
        "Earlier observation: mug was in shelf 1.", k, None, "empty", ar.WORDING
    ).new_value
    upd = oracle_patch(
        "Update: mug has been moved from shelf 1 to desk 2.", k, "shelf 1", "active", ar.WORDING
    )
    assert (upd.old_value, upd.new_value, upd.status) == ("shelf 1", "desk 2", "superseded")
    ret = oracle_patch(
        ar.RETRACTION_TEMPLATE.format(obj="mug", v2="desk 2"), k, "desk 2", "active", ar.WORDING
    )
    assert (ret.old_value, ret.new_value, ret.status) == ("desk 2", None, "revoked")
    rep = oracle_patch("Report: mug is in bed 1.", k, "desk 2", "active", ar.WORDING)
    assert rep.status == "contested"
    assert (
        oracle_patch("Check: mug is in desk 2.", k, "desk 2", "contested", ar.WORDING).op
        == "resolve"
    )
    assert oracle_patch("Report: mug is in desk 2.", k, "desk 2", "active", ar.WORDING).op == "noop"


# ---------------------------------------------------------------------------------------------
# Raw read paths
# ---------------------------------------------------------------------------------------------


def test_raw_top_k_lists_k_lines_in_similarity_order_with_coverage(agent) -> None:
    server, _ = agent
    bench = AlfworldRevision(probe="chains", L=4, cases=3)
    records = run(server, bench, lambda s: RawArm(s, k=10))
    for ep, r in zip(bench.episodes(), records, strict=True):
        lines = r["context"].split("\n")
        assert len(lines) == len(r["ids"]) == 10
        q = embed_text(ep.questions[0].text)
        sims = [float(np.dot(q, embed_text(line))) for line in lines]
        assert sims == sorted(sims, reverse=True)
        by_id = {e.id: e for e in ep.events}
        assert [by_id[i].text for i in r["ids"]] == lines
        target = {e.id for e in ep.events if e.meta["chain"] == 0}
        shown = sum(i in target for i in r["ids"])
        meta = r["context_meta"]
        assert (meta["pool"], meta["target_lines"], meta["target_shown"]) == (25, 5, shown)
        assert meta["coverage"] == shown / 5 and meta["slot_share"] == shown / 10


def test_raw_tags_prefix_the_arrival_index(agent) -> None:
    server, _ = agent
    bench = AlfworldRevision(probe="chains", L=2, cases=2)
    plain = run(server, bench, lambda s: RawArm(s))
    tagged = run(server, bench, lambda s: RawArm(s, tags=True))
    for ep, p, t in zip(bench.episodes(), plain, tagged, strict=True):
        arrival = {e.id: e.meta["arrival"] for e in ep.events}
        assert t["ids"] == p["ids"]  # the same ranking
        expected = [
            f"[t={arrival[i]}] {line}"
            for i, line in zip(t["ids"], p["context"].split("\n"), strict=True)
        ]
        assert t["context"].split("\n") == expected


def test_oracle_order_is_the_target_chain_in_arrival_order(agent) -> None:
    server, _ = agent
    bench = AlfworldRevision(probe="chains", L=8, cases=3)
    records = run(server, bench, lambda s: OracleOrderArm(s))
    for ep, r in zip(bench.episodes(), records, strict=True):
        chain = [e.text for e in ep.events if e.meta["chain"] == 0]
        assert r["context"].split("\n") == chain and len(chain) == 9
    assert accuracy(score(records, LocationMatch())) == 1.0


def test_recon_answers_from_one_reconstruction_call(agent) -> None:
    server, script = agent
    before = script.calls["recon"]
    bench = AlfworldRevision(probe="chains", L=1, cases=3)
    records = run(server, bench, lambda s: RawReconArm(s))
    assert script.calls["recon"] - before == 3
    for r in records:
        assert re.fullmatch(r"The \S+ is in .+\.", r["context"])
        assert r["context_meta"]["evidence_chars"] > 300 and len(r["ids"]) == 10


# ---------------------------------------------------------------------------------------------
# Snapshots
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("make", [OracleCommitArm, PatchCommitArm, RawArm, OracleOrderArm])
def test_a_saved_arm_reloads_and_reads_the_same(agent, tmp_path: Path, make: Any) -> None:
    server, _ = agent
    services = Services(**{k: v for k, v in models(server).items() if k != "reader"})
    bench = AlfworldRevision(probe="conflict", cases=1)
    ep = bench.episodes()[0]

    async def go() -> None:
        arm = make(services)
        arm.wording = bench.wording
        await arm.ingest(ep.events)
        assert arm.save(tmp_path)
        before = server.count()
        again = make(services)
        again.wording = bench.wording
        assert again.load(tmp_path)
        assert server.count() == before  # loading calls no model
        q = ep.questions[0]
        assert (await again.read(q)).text == (await arm.read(q)).text
        if make in (OracleCommitArm, PatchCommitArm):
            assert (tmp_path / "store.sqlite").exists()
            assert (await again.read(q)).meta == (await arm.read(q)).meta

    run_sync(go())


def test_copy_log_reproduces_ids_and_state(tmp_path: Path) -> None:
    store = RetentionStore()
    m = store.memory
    e = m.observe("x")
    m.accept("k", "a", evidence=e)
    m.accept("k", "b")
    m.contest("k", "c")
    m.resolve("k", "c")
    m.accept("j", "1")
    m.revoke("j")
    store.save(tmp_path)
    with Memory(tmp_path / "store.sqlite") as disk:
        assert disk.check() == []
        assert [v.to_dict() for v in disk.versions("k")] == [v.to_dict() for v in m.versions("k")]
        assert disk.cell("j").value is None
    with pytest.raises(ValueError, match="not empty"):
        copy_log(m, m)


# ---------------------------------------------------------------------------------------------
# Scorers and the benchmark adapter
# ---------------------------------------------------------------------------------------------


def _record(prediction: str, golds: list[str], **meta: Any) -> dict[str, Any]:
    return {"prediction": prediction, "golds": golds, "meta": meta}


@pytest.mark.parametrize(
    ("answer", "correct", "outcome"),
    [
        ("cabinet 1", True, "correct"),
        ("It is in Cabinet 1.", True, "correct"),
        ("cabinet 10", False, "stale"),
        ("cabinet 1 or cabinet 10", False, "hedged"),
        ("drawer 2", False, "distractor"),
        ("I do not know.", False, "other"),
    ],
)
def test_location_match_is_whole_name(answer: str, correct: bool, outcome: str) -> None:
    rec = _record(
        answer,
        ["cabinet 1"],
        target_locations=["sofa 1", "cabinet 10", "cabinet 1"],
        distractor_locations=["drawer 2"],
        phase="final",
    )
    got = run_sync(LocationMatch().score(rec))
    assert (got["correct"], got["outcome"]) == (correct, outcome)
    assert got["stale"] == ("cabinet 10" in answer)


def test_scorers_skip_the_questions_they_do_not_judge() -> None:
    pre = _record("a 1 or b 1", ["a 1", "b 1"], expect="conflict", candidates=["a 1", "b 1"])
    assert run_sync(LocationMatch().score(pre)) == {}
    assert run_sync(ConflictFlagged().score(pre))["correct"] is True
    final = _record("a 1", ["a 1"], expect="value", phase="final")
    assert run_sync(ConflictFlagged().score(final)) == {}
    assert run_sync(LocationMatch(phases=["pre_retraction"]).score(final)) == {}


def test_pre_questions_are_asked_before_the_retraction_and_the_check() -> None:
    for probe in ("retraction", "conflict"):
        bench = AlfworldRevision(probe=probe, cases=3)
        eps = {ep.id: ep for ep in bench.episodes()}
        for case in bench.cases():
            full, pre = eps[case.id], eps[f"{case.id}-pre"]
            assert pre.events == full.events[:-1]
            assert full.events[-1].meta["kind"] in ("retraction", "settle")
            (q,) = pre.questions
            assert q.meta["gold_final"] == case.gold
            assert q.meta["phase"] in ("pre_retraction", "pre_resolution")


def test_the_fingerprint_names_the_source_and_hashes_the_cases() -> None:
    a = AlfworldRevision(probe="chains", L=2, cases=4).fingerprint()
    b = AlfworldRevision(probe="chains", L=2, cases=4).fingerprint()
    c = AlfworldRevision(probe="chains", L=4, cases=4).fingerprint()
    assert a == b and a["sha256"] != c["sha256"]
    assert a["record_source"] == ar.VALID_SEEN_SOURCE and a["cases"] == 4
    assert '" or "' in AlfworldRevision(probe="conflict").prompts()["answer"]
    assert '" or "' not in AlfworldRevision(probe="chains").prompts()["answer"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"probe": "chain"}, "choose one of"),
        ({"probe": "chains", "L": 3}, "L=3 is not supported"),
        ({"probe": "retraction", "d": 5}, "d=5 is not supported"),
        ({"games_dir": "/nonexistent/alfworld"}, "/nonexistent/alfworld"),
    ],
)
def test_bad_benchmark_settings_are_named(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        AlfworldRevision(**kwargs)


# ---------------------------------------------------------------------------------------------
# Table 2's reject, chosen by the model (issue 14.3)
# ---------------------------------------------------------------------------------------------


class _Reply:
    """One scripted completion (`pmem.protocols.Completion`)."""

    def __init__(self, parsed: dict[str, Any]) -> None:
        self.parsed, self.text = parsed, json.dumps(parsed)


class _Writer:
    """A writer that answers each patch call with the next Revise object of a list, and keeps
    the schema it was asked for."""

    def __init__(self, *replies: dict[str, Any]) -> None:
        self.replies, self.schemas = list(replies), []

    async def complete(self, messages: Any, **kw: Any) -> _Reply:
        self.schemas.append(kw["schema"])
        return _Reply(self.replies.pop(0))


def _revise(old: str | None, new: str | None, status: str | None) -> dict[str, Any]:
    return {"op": "revise", "key": "mug.location", "old_value": old, "new_value": new,
            "status": status, "supersedes": old}  # fmt: skip


def _events(*texts: str) -> list[Any]:
    from benchmarks.runner.types import Event

    return [Event(f"e{i}", t, meta={"object": "mug", "chain": 0}) for i, t in enumerate(texts)]


def test_the_schema_offers_every_status_table_2_lowers() -> None:
    from pmem.patch import REVISE_STATUS

    for resolvable in (True, False):
        offered = set(revise_schema(resolvable)["properties"]["status"]["enum"]) - {None}
        assert offered == {"superseded", "contradicted", "contested", "revoked"}
        assert {REVISE_STATUS[s] for s in offered} == {"accept", "reject", "contest", "revoke"}
    assert "contradicted" in PatchCommitArm.prompts["patch"]  # and the prompt says when


@pytest.mark.parametrize("retention", [True, False])
def test_a_reject_the_model_chooses_lowers_as_table_2_says(retention: bool) -> None:
    """Table 2: reject = the incoming value active, the incumbent contradicted (not superseded:
    it was never true); without retention the CRUD store just overwrites."""
    writer = _Writer(
        _revise(None, "shelf 2", "superseded"),
        _revise("shelf 2", "desk 1", "superseded"),
        _revise("desk 1", "desk 3", "contradicted"),
    )
    arm = PatchCommitArm(
        Services(writer=writer), retention=retention, routing="label", wording=ar.WORDING
    )
    events = _events(
        "Earlier observation: mug was in shelf 2.",
        "Update: mug has been moved from shelf 2 to desk 1.",
        "Correction: the mug was never on desk 1; it has been on desk 3 all along.",
    )
    run_sync(arm.ingest(events))
    assert all("contradicted" in s["properties"]["status"]["enum"] for s in writer.schemas)
    assert arm.decisions == {"create": 1, "accept": 1, "reject": 1} and not arm.fallbacks
    assert arm.store.head("mug.location") == ("desk 3", "active")
    if retention:
        memory = arm.store.memory
        statuses = [(v.value, v.status) for v in memory.versions("mug.location")]
        assert statuses == [("shelf 2", "superseded"), ("desk 1", "contradicted"),
                            ("desk 3", "active")]  # fmt: skip
        assert memory.check() == []


def test_a_value_less_reject_rolls_back_and_marks_the_head_contradicted() -> None:
    writer = _Writer(
        _revise(None, "shelf 2", "superseded"),
        _revise("shelf 2", "desk 1", "superseded"),
        _revise("desk 1", None, "contradicted"),
    )
    arm = PatchCommitArm(Services(writer=writer), routing="label", wording=ar.WORDING)
    run_sync(arm.ingest(_events("a", "b", "c")))
    memory = arm.store.memory
    assert arm.store.head("mug.location") == ("shelf 2", "active")  # the predecessor reopens
    assert [v.status for v in memory.versions("mug.location")][1] == "contradicted"


def test_the_scripted_writer_rejects_a_correction_that_names_the_right_place() -> None:
    from benchmarks.alfworld_revision.scripted import patch_for

    fix = patch_for("mug.location", "desk 1", "Correction: the mug was never on desk 1; it is "
                    "on desk 3.", resolvable=False)  # fmt: skip
    assert (fix["status"], fix["old_value"], fix["new_value"]) == (
        "contradicted",
        "desk 1",
        "desk 3",
    )
    retraction = ar.RETRACTION_TEMPLATE.format(obj="mug", v2="desk 1")
    assert patch_for("mug.location", "desk 1", retraction, resolvable=False)["status"] == "revoked"
