"""The LLM write path against a scripted OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import re

import pytest

from benchmarks.models.client import ChatModel, Embedder, Endpoint
from benchmarks.models.scripted import ScriptedServer
from pmem import Memory
from pmem.write import WritePath, normalize_key, parse_facts


def reply(messages: list[dict]) -> str:
    """A scripted writer: facts are `key: value` lines of the text; names containing the same
    last word are the same attribute; annotations follow a marker in the observation."""
    text = messages[-1]["content"]
    if text.startswith("Extract every fact"):
        body = text.split("Text:\n", 1)[1]
        if "GARBAGE" in body:
            return "sorry, I cannot do that"
        facts = [
            {"key": k.strip(), "value": re.sub(r"\s*\[\w+\]", "", v).strip()}
            for k, v in re.findall(r"^([\w ]+):(.+)$", body, re.M)
        ]
        return "```json\n" + json.dumps(facts) + "\n```"
    if text.startswith("Do these two keys"):
        a, b = re.findall(r"^[AB]: (\S+)$", text, re.M)
        return "same" if a.split("_")[-1] == b.split("_")[-1] else "different"
    if text.startswith("A memory holds"):
        marker = re.search(r"\[(\w+)\]", text)
        return json.dumps({"op": marker.group(1)}) if marker else "nonsense"
    return "?"


@pytest.fixture
def models():
    with ScriptedServer(reply) as server:

        def endpoint(model: str) -> Endpoint:
            return Endpoint(server.base_url, model)

        writer = ChatModel(endpoint("scripted"), role="writer")
        embedder = Embedder(endpoint("scripted"), role="embedder")
        yield writer, embedder, server


def run(coro):
    return asyncio.run(coro)


def test_stream_order_fixes_supersession(models) -> None:
    writer, embedder, _ = models
    m = Memory()
    wp = WritePath(m, writer, embedder, soft_identity=None)
    run(wp.write(["alice city: Paris\nalice job: nurse", "alice city: Rome"]))
    assert m.cell("alice_city").value == "Rome"
    assert [v.value for v in m.cell("alice_city").history] == ["Paris"]
    assert m.cell("alice_job").value == "nurse"
    assert wp.stats.decisions == {"create": 2, "accept": 1}
    assert wp.stats.records == 2 and wp.stats.facts == 3


def test_soft_identity_merges_a_renamed_key(models) -> None:
    writer, embedder, _ = models
    m = Memory()
    wp = WritePath(m, writer, embedder, soft_identity=0.3)
    run(wp.write(["alice home city: Paris", "alice residence city: Rome"]))
    assert [c.key for c in m.frontier()] == ["alice_home_city"]
    assert m.cell("alice_home_city").value == "Rome"
    assert (wp.stats.gated, wp.stats.merged) == (1, 1)


def test_without_soft_identity_the_rename_forks_a_stale_cell(models) -> None:
    writer, embedder, _ = models
    m = Memory()
    run(
        WritePath(m, writer, embedder, soft_identity=None).write(
            ["alice home city: Paris", "alice residence city: Rome"]
        )
    )
    assert {c.key: c.value for c in m.frontier()} == {
        "alice_home_city": "Paris",
        "alice_residence_city": "Rome",
    }


def test_a_different_verdict_keeps_keys_apart(models) -> None:
    writer, embedder, _ = models
    m = Memory()
    wp = WritePath(m, writer, embedder, soft_identity=0.3)
    run(wp.write(["alice home city: Paris", "alice home country: France"]))
    assert len(m.frontier()) == 2
    assert (wp.stats.gated, wp.stats.merged) == (1, 0)


def test_failed_extraction_is_counted_and_writes_nothing(models) -> None:
    writer, embedder, _ = models
    m = Memory()
    wp = WritePath(m, writer, embedder, soft_identity=None)
    run(wp.write(["GARBAGE"]))
    assert m.frontier() == [] and wp.stats.extraction_failures == 1


def test_annotation_chooses_typed_operations_and_falls_back_to_noop(models) -> None:
    writer, embedder, _ = models
    m = Memory()
    wp = WritePath(m, writer, embedder, soft_identity=None, annotate=True)
    run(
        wp.write(
            [
                "standup room: 4A [accept]",
                "standup room: 2B [contest]",
                "standup room: 2B [resolve]",
                "standup room: 9Z [contest] [garbage]",
                "standup room: 7C",  # no marker: an invalid annotation -> noop
                "other thing: x [revoke]",  # revoke on an empty cell: precondition fails -> noop
            ]
        )
    )
    cell = m.cell("standup_room")
    assert (cell.value, cell.status) == ("2B", "contested")  # 9Z was contested after resolve
    assert [v.value for v in cell.alternatives] == ["9Z"]
    assert "other_thing" not in [c.key for c in m.frontier()]
    assert wp.stats.annotation_fallbacks == 2
    assert wp.stats.decisions["noop"] == 1 and wp.stats.decisions["support"] == 1
    assert m.check() == []


@pytest.mark.parametrize(
    ("raw", "keys"),
    [
        ([{"key": "Alice's City", "value": "Paris"}], ["alice_s_city"]),
        ({"facts": [{"key": "a", "value": "1"}]}, ["a"]),
        ([{"key": "", "value": "1"}, {"key": "b", "value": " "}, "junk"], []),
    ],
)
def test_parse_facts(raw, keys) -> None:
    facts, _ = parse_facts(raw)
    assert [f.key for f in facts] == keys


def test_normalize_key() -> None:
    assert normalize_key("  Personal-Best 5K time ") == "personal_best_5k_time"


def test_extraction_has_its_own_budget_not_the_readers(models) -> None:
    """The profile's max_tokens is the reader's answer budget (32 in table7); an extraction
    reply of a whole chunk's facts must not be cut by it."""
    _, embedder, server = models
    short = ChatModel(Endpoint(server.base_url, "scripted"), role="writer", max_tokens=32)
    m = Memory()
    wp = WritePath(m, short, embedder, soft_identity=None)
    lines = "\n".join(f"person{i} city: Town{i}" for i in range(20))  # ~100 reply tokens
    run(wp.write([lines]))
    assert wp.stats.extraction_failures == 0 and wp.stats.facts == 20
    assert server.last_body()["max_tokens"] == 1024
