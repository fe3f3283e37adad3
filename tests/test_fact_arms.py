"""FactConsolidation arms (Appendix B.4): the P-Mem state arm with the template-oracle and the
LLM writer, and the raw facts arms. The embedder is the scripted word-hash embedding computed
in process; the LLM writer talks to a scripted server on 127.0.0.1 only."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import numpy as np
import pytest
from hydra import compose, initialize_config_dir
from hydra.utils import instantiate

from baselines.pmem_arms.state import (
    STATE_HEADER,
    OracleStateArm,
    StateArm,
    cell_text,
    oracle_key,
    parse_lookup,
)
from baselines.reference.raw import RawFactsArm
from benchmarks.factconsolidation import FactConsolidation, gold_state
from benchmarks.models.client import ChatModel, Endpoint
from benchmarks.models.scripted import ScriptedServer, embed_text
from benchmarks.runner.arm import Services
from benchmarks.runner.cli import CONFIG_DIR
from benchmarks.runner.types import Event, InputError, Question
from benchmarks.scoring.scorers import SubstringMatch


class HashEmbedder:
    """The scripted embedder's vectors without the server (texts sharing words are similar)."""

    async def embed(self, texts: list[str], kind: str = "passage") -> np.ndarray:
        return np.asarray([embed_text(t) for t in texts], dtype=np.float32)


def run(coro: Any) -> Any:
    return asyncio.run(coro)


@pytest.fixture(scope="module")
def sh6k() -> tuple[FactConsolidation, Any]:
    bench = FactConsolidation("sh_6k")
    return bench, bench.episodes()[0]


@pytest.fixture(scope="module")
def oracle_arm(sh6k) -> OracleStateArm:
    _, episode = sh6k
    arm = OracleStateArm(Services(embedder=HashEmbedder()))
    run(arm.ingest(episode.events))
    return arm


def test_oracle_writer_holds_the_gold_final_value_for_every_key(sh6k, oracle_arm) -> None:
    bench, episode = sh6k
    gold = gold_state(bench.data.facts)
    held = {c.key: c.value for c in oracle_arm.memory.frontier()}
    assert len(held) == len(gold)
    right = sum(held.get(oracle_key(s, r)) == h.current for (s, r), h in gold.items())
    assert right == len(gold)  # 100% of keys
    overwritten = sum(h.overwritten for h in gold.values())
    assert oracle_arm.stats["decisions"] == {"accept": overwritten, "create": len(gold)}
    # nothing is lost: every earlier value is retained behind the head
    assert len(episode.events) == sum(len(oracle_arm.memory.versions(k)) for k in held)


def test_a_reader_given_the_right_cell_scores_it(sh6k, oracle_arm) -> None:
    _, episode = sh6k
    questions = [q for q in episode.questions if q.meta["key"] and q.meta["stale_scoreable"]]
    assert questions
    hits = 0
    for question in questions:
        subject, relation = question.meta["key"]
        key = oracle_key(subject, relation)
        context = run(oracle_arm.read(question))
        lines = context.text.split("\n")
        assert lines[0] == STATE_HEADER and len(lines) == 13  # header + top-12 cells
        if key not in context.ids:
            continue
        hits += 1
        # a reader that copies the value of the first cell line whose key is the question's
        line = next(x for x in lines[1:] if x.startswith(f"{key}: "))
        assert line == cell_text(key, question.meta["current"])
        record = {"prediction": line.split(": ", 1)[1], "golds": list(question.golds)}
        assert run(SubstringMatch().score(record))["correct"]
    assert hits >= len(questions) // 2  # the word-hash embedder finds most by the subject


def test_state_arm_saves_and_loads(tmp_path, sh6k, oracle_arm) -> None:
    _, episode = sh6k
    assert oracle_arm.save(tmp_path)
    again = OracleStateArm(Services(embedder=HashEmbedder()))
    assert again.load(tmp_path)
    question = episode.questions[0]
    assert run(again.read(question)) == run(oracle_arm.read(question))
    assert not OracleStateArm().load(tmp_path / "missing")
    again.k = None  # B.4's full-state read: every cell, in order of first arrival
    full = run(again.read(question))
    assert full.ids == tuple(again.keys) and len(full.text.split("\n")) == len(again.keys) + 1


def fact_events(lines: list[str]) -> list[Event]:
    return [Event(f"f{i}", f"{i + 1}. {t}", meta={"serial": i + 1}) for i, t in enumerate(lines)]


def test_raw_facts_arms_list_top12_by_similarity_or_by_stream_index() -> None:
    lines = [f"The capital of Country{i % 20} is City{i}." for i in range(40)]
    events = fact_events(lines)
    question = Question("q", "What is the capital of Country3?", ("City23",))
    plain = RawFactsArm(Services(embedder=HashEmbedder()), k=12)
    tagged = RawFactsArm(Services(embedder=HashEmbedder()), k=12, tags=True, order="stream")
    run(plain.ingest(events))
    run(tagged.ingest(events))
    a, b = run(plain.read(question)), run(tagged.read(question))
    assert len(a.text.split("\n")) == 12 and len(b.text.split("\n")) == 12
    assert set(a.ids) == set(b.ids)  # the same retrieval, listed differently
    scores = HashEmbedder()
    q = run(scores.embed([question.text]))[0]
    # the store holds the sentence without its serial: that is what is embedded and listed
    stored = [lines[int(i[1:])] for i in a.ids]
    assert a.text.split("\n") == stored
    sims = [float(run(scores.embed([t]))[0] @ q) for t in stored]
    assert sims == sorted(sims, reverse=True)  # retrieval order
    positions = [int(i[1:]) for i in b.ids]
    assert positions == sorted(positions)
    assert b.text.split("\n") == [f"[t={i}] {lines[i]}" for i in positions]
    with pytest.raises(ValueError, match=r"arm\.order"):
        RawFactsArm(k=12, order="random")
    with pytest.raises(InputError, match=r"event 'x'.*not a fact line"):
        run(RawFactsArm(Services(embedder=HashEmbedder())).ingest([Event("x", "no serial here")]))


SERIAL = re.compile(r"^\d+\.")
TAG = re.compile(r"^\[t=(\d+)\] ")


def test_the_raw_facts_read_shows_no_order_and_the_tagged_read_shows_the_arrival_index(
    sh6k,
) -> None:
    """RQ6's contrast (Table 7): the plain store is unordered (no serial, no index in what the
    reader sees), the tagged one gives every line its arrival index; on every sh_6k question."""
    _, episode = sh6k
    events = episode.events
    plain = RawFactsArm(Services(embedder=HashEmbedder()), k=12)
    tagged = RawFactsArm(Services(embedder=HashEmbedder()), k=12, tags=True, order="stream")
    run(plain.ingest(events))
    run(tagged.ingest(events))
    position = {e.id: i for i, e in enumerate(events)}
    for question in episode.questions:
        a, b = run(plain.read(question)), run(tagged.read(question))
        lines = a.text.split("\n")
        assert len(lines) == 12 and not any(SERIAL.match(x) or "[t=" in x for x in lines)
        for line, event_id in zip(lines, a.ids, strict=True):
            serial = events[position[event_id]].meta["serial"]
            assert events[position[event_id]].text == f"{serial}. {line}"
            assert str(serial) not in line.split()  # no number of it anywhere in the line
        tags = [TAG.match(x) for x in b.text.split("\n")]
        assert all(tags) and set(b.ids) == set(a.ids)
        indices = [int(m[1]) for m in tags if m]
        assert indices == sorted(indices) == [position[i] for i in b.ids]
        # the arrival index is the stream position, which at every source is the serial
        assert indices == [events[i].meta["serial"] for i in indices]


def test_raw_facts_arm_saves_and_loads_its_store(tmp_path, sh6k) -> None:
    _, episode = sh6k
    arm = RawFactsArm(Services(embedder=HashEmbedder()), tags=True, order="stream")
    run(arm.ingest(episode.events))
    assert arm.save(tmp_path)
    again = RawFactsArm(Services(embedder=HashEmbedder()), tags=True, order="stream")
    assert again.load(tmp_path)
    question = episode.questions[3]
    assert run(again.read(question)) == run(arm.read(question))


def writer_reply(messages: list[dict]) -> str:
    """A scripted extraction writer: each `N. The X of S is O.` line -> {key: S_X, value: O}."""
    text = messages[-1]["content"]
    if text.startswith("Extract every fact"):
        body = text.split("Text:\n", 1)[1]
        facts = [
            {"key": f"{s}_{rel}".lower().replace(" ", "_"), "value": o}
            for rel, s, o in re.findall(r"^\d+\. The (\w+) of (.+?) is (.+)\.$", body, re.M)
        ]
        return json.dumps(facts)
    if text.startswith("Do these two keys"):
        return "different"
    return "?"


def test_llm_writer_creates_cells_and_supersedes_in_stream_order() -> None:
    lines = [
        "The capital of Avalon is Camelot.",
        "The currency of Avalon is gold.",
        "The capital of Avalon is Lyonesse.",
        "The capital of Brigadoon is Mist.",
    ] + [f"The capital of Place{i} is Town{i}." for i in range(60)]
    lines.append("The capital of Avalon is Tintagel.")  # in a later chunk than the first
    events = fact_events(lines)
    with ScriptedServer(writer_reply) as server:
        writer = ChatModel(Endpoint(server.base_url, "scripted"), role="writer")
        arm = StateArm(Services(writer=writer, embedder=HashEmbedder()), soft_identity=None)
        run(arm.ingest(events))
        extractions = server.count("/chat/completions")
    assert extractions == arm.stats["records"] > 1  # one call per B.4 chunk
    assert [v.value for v in arm.memory.versions("avalon_capital")] == [
        "Camelot",
        "Lyonesse",
        "Tintagel",
    ]
    assert arm.memory.cell("avalon_capital").value == "Tintagel"
    assert arm.memory.cell("avalon_currency").value == "gold"
    assert arm.stats["decisions"] == {"accept": 2, "create": 63}
    # the word-hash embedder reads a snake_case key as one word, so the question names it
    context = run(arm.read(Question("q", "What is avalon_capital?", ("Tintagel",))))
    assert "avalon_capital" in context.ids
    assert "avalon_capital: Tintagel" in context.text.split("\n")[1:]


def test_configs_build_the_arms() -> None:
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        cfg = compose(config_name="config", overrides=["experiment=table7", "embedder=scripted"])
        assert cfg.benchmark.source == "sh_6k" and "substring" in cfg.scorers
        built = {}
        for name in ("pmem_state", "pmem_state_oracle", "raw_facts", "raw_facts_tags"):
            c = compose(config_name="config", overrides=[f"arm={name}", "embedder=scripted"])
            built[name] = instantiate({k: v for k, v in c.arm.items() if k != "name"})
    assert isinstance(built["pmem_state"], StateArm) and built["pmem_state"].soft_identity == 0.72
    assert type(built["pmem_state_oracle"]) is OracleStateArm
    assert type(built["raw_facts"]) is RawFactsArm and type(built["raw_facts_tags"]) is RawFactsArm
    assert built["raw_facts"].k == 12 and built["raw_facts"].order == "similarity"
    assert not built["raw_facts"].tags
    assert built["raw_facts_tags"].tags and built["raw_facts_tags"].order == "stream"
    with pytest.raises(ValueError, match="does not match"):
        StateArm(writer="oracle")


def test_parse_lookup_reads_the_entity_and_relation_or_nothing() -> None:
    assert parse_lookup("LOOKUP: Lionel Messi | country of citizenship") == (
        "Lionel Messi country of citizenship"
    )
    assert parse_lookup("I need more.\n**Lookup:** Acme Corp") == "Acme Corp"
    assert parse_lookup("Paris") is None
    assert parse_lookup("") is None


def test_iterative_readout_adds_six_new_cells_per_lookup_then_forces_an_answer(
    sh6k, oracle_arm
) -> None:
    """B.4: up to three lookups of six further cells each, deduplicated, then an answer."""
    bench, episode = sh6k
    question = episode.questions[0]
    prompts: list[str] = []
    subjects = iter(["the capital", "the chairperson", "the head of state"])

    def reader(body: dict) -> str:
        text = body["messages"][-1]["content"]
        prompts.append(text)
        if "Lookups left:" in text:  # a reader that always wants more
            return f"LOOKUP: {next(subjects)} | relation"
        return "Final answer"

    with ScriptedServer(script=reader, models=["scripted"]) as server:
        model = ChatModel(Endpoint(server.base_url, "scripted"), role="reader")
        arm = oracle_arm
        arm.lookups, arm.lookup_k = 3, 6
        try:
            context, reply = run(
                arm.respond(question, lambda t: model.complete(bench.answer_messages(question, t)))
            )
        finally:
            arm.lookups = 0
    assert reply.text == "Final answer" and len(prompts) == 4
    for left, prompt in zip((3, 2, 1), prompts, strict=False):
        assert f"Lookups left: {left}." in prompt
    assert "Lookups left" not in prompts[-1] and "LOOKUP" not in prompts[-1]  # forced
    assert len(context.ids) == len(set(context.ids)) == 12 + 3 * 6
    assert context.meta["lookups"] == 3 and len(context.meta["lookup_queries"]) == 3
    for key in context.ids:  # every shown cell is listed once in what the reader saw last
        assert prompts[-1].count(f"\n{key}: ") == 1
    # a reader that answers at once costs one call and sees the plain state read
    single = run(
        arm.respond(question, lambda t: asyncio.sleep(0, result=type("R", (), {"text": t})()))
    )
    assert single[0].ids == run(arm.read(question)).ids and "Lookups" not in single[1].text
