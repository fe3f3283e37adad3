"""The HippoRAG-v2 arm through the real `hipporag` package, against a scripted server on 127.0.0.1.

The script answers the package's own prompts from the passage text: NER ({"named_entities"}),
NER-conditioned triple extraction ({"triples"}) and, at query time, its recognition-memory filter
(DSPy-style `[[ ## fact_after_filter ## ]]`). Embeddings are the server's word hashes, so
passages sharing words with the question are near it. Any other prompt fails the test.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import threading
import time
from collections import Counter
from typing import Any

import pytest

from baselines.peers.hipporag_arm import PACKAGE_TIMEOUT_S, HippoRAGArm
from benchmarks.models.client import ChatModel, Embedder, Endpoint
from benchmarks.models.scripted import ScriptedServer, message_text
from benchmarks.runner.arm import Services
from benchmarks.runner.types import Event, Question

pytestmark = pytest.mark.peers

LLM, EMBED, KEY = "scripted", "scripted-embed", "key-for-the-endpoints"
EVENTS = (
    Event("e0", "Alice keeps the apple in the fridge.", at="2024-03-01"),
    Event("e1", "Bob parks the bicycle in the garage.", at="2024-03-02"),
    Event("e2", "Carol hangs the coat in the hallway."),  # no date: the text as given
)
PASSAGES = (
    "[2024-03-01] Alice keeps the apple in the fridge.",
    "[2024-03-02] Bob parks the bicycle in the garage.",
    "Carol hangs the coat in the hallway.",
)
SENTENCE = re.compile(r"^(?:\[[^\]]*\] )?(\w+) (\w+) the (.+?) in the (.+?)\.$")
STOP = {"where", "does", "do", "is", "the", "in", "a", "keep", "hang", "park"}


class HippoScript:
    """Answers HippoRAG's prompts; counts them by kind; any unknown prompt is an error."""

    def __init__(self) -> None:
        self.kinds: Counter[str] = Counter()
        self.unknown: list[str] = []
        self._lock = threading.Lock()

    def _count(self, kind: str) -> None:
        with self._lock:
            self.kinds[kind] += 1

    @staticmethod
    def parts(passage: str) -> tuple[str, ...]:
        match = SENTENCE.match(passage.strip())
        assert match is not None, passage
        return match.groups()

    def __call__(self, body: dict[str, Any]) -> str:
        messages = body["messages"]
        system = message_text(messages[0]["content"])
        last = message_text(messages[-1]["content"])
        if system.startswith("Your task is to extract named entities"):
            self._count("ner")
            who, _, thing, place = self.parts(last)  # the user turn is the passage itself
            return json.dumps({"named_entities": [who, thing, place]})
        if system.startswith("Your task is to construct an RDF"):
            self._count("triples")
            fenced = re.search(r"```\n(.*?)\n```", last, re.DOTALL)
            assert fenced is not None
            who, verb, thing, place = self.parts(fenced.group(1))
            return json.dumps({"triples": [[who, verb, thing], [thing, "is in", place]]})
        if "[[ ## fact_before_filter ## ]]" in last:
            self._count("filter")
            question = re.search(r"\[\[ ## question ## \]\]\n(.*?)\n\n", last, re.DOTALL)
            before = re.search(r"\[\[ ## fact_before_filter ## \]\]\n(.*?)\n\n", last, re.DOTALL)
            assert question is not None and before is not None
            words = set(re.findall(r"\w+", question.group(1).lower())) - STOP
            kept = [
                fact
                for fact in json.loads(before.group(1))["fact"]
                if words & set(re.findall(r"\w+", " ".join(fact).lower()))
            ]
            after = json.dumps({"fact": kept})
            return f"[[ ## fact_after_filter ## ]]\n{after}\n\n[[ ## completed ## ]]"
        with self._lock:
            self.unknown.append(system[:120] or last[:120])
        raise ValueError("unknown prompt")


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def services(url: str) -> Services:
    return Services(
        writer=ChatModel(Endpoint(url, LLM, api_key=KEY), role="writer"),
        embedder=Embedder(Endpoint(url, EMBED, api_key=KEY), role="embedder"),
    )


def ask(arm: HippoRAGArm, text: str) -> list[str]:
    return run(arm.read(Question("q", text, ("x",)))).text.splitlines()


def test_ingest_retrieve_snapshot_round_trip(tmp_path, monkeypatch) -> None:
    # the package's clients need OPENAI_API_KEY at construction; the arm sets it when unset,
    # for the construction only
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    script = HippoScript()
    started = time.perf_counter()
    arms: list[HippoRAGArm] = []
    with ScriptedServer(script=script, models=[LLM, EMBED], api_key=KEY) as server:
        try:
            check_round_trip(server, script, arms, tmp_path)
        finally:
            for arm in arms:
                arm.close()
    print(f"hipporag round trip: {time.perf_counter() - started:.1f} s")


def check_round_trip(server: ScriptedServer, script: HippoScript, arms: list, tmp_path) -> None:
    """The server refuses any key but KEY, so every answered call carried the endpoints' key."""
    arm = HippoRAGArm(services(server.base_url), k=3)
    arms.append(arm)
    run(arm.ingest(EVENTS))
    assert "OPENAI_API_KEY" not in os.environ  # the rest of the process never sees the key
    # the package waits for a reply queued behind a slow local server instead of giving up
    # after its own 5 minutes and indexing the passage empty
    assert arm._hippo.llm_model.openai_client.timeout == PACKAGE_TIMEOUT_S
    # two extraction calls per passage, nothing else; the real embedding name was sent
    assert script.kinds == Counter(ner=3, triples=3) and not script.unknown
    assert server.last_body("/embeddings")["model"] == EMBED
    assert server.last_body("/chat/completions")["model"] == LLM
    stats = arm.stats
    assert (stats["passages"], stats["triples"], stats["entities"]) == (3, 6, 9)
    assert stats["passages_without_triples"] == 0
    assert stats["graph_nodes"] == 12 and stats["graph_edges"] >= 9

    # the Alice passage ranks first; k=3 lists all three passages, each once
    lines = ask(arm, "Where does Alice keep the apple?")
    assert lines[0] == PASSAGES[0]
    assert sorted(lines) == sorted(PASSAGES)
    assert script.kinds["filter"] == 1
    assert ask(arm, "Where does Bob park the bicycle?")[0] == PASSAGES[1]

    # snapshot -> fresh arm -> load: retrieval works without indexing again
    assert arm.save(tmp_path / "snap")
    arm.close()
    fresh = HippoRAGArm(services(server.base_url), k=3)
    arms.append(fresh)
    assert fresh.load(tmp_path / "snap")
    assert fresh.stats["passages"] == 3
    chats = server.count("/chat/completions")
    assert ask(fresh, "Where does Carol hang the coat?")[0] == PASSAGES[2]
    assert server.count("/chat/completions") == chats + 1  # its filter call only
    # a question asked before the snapshot: its filter reply comes from the package's cache
    assert ask(fresh, "Where does Alice keep the apple?")[0] == PASSAGES[0]
    assert server.count("/chat/completions") == chats + 1
    assert script.kinds["ner"] == 3 and script.kinds["triples"] == 3

    # a later update ingested into the reloaded arm: both Alice passages come first
    update = Event("e3", "Alice keeps the apple in the pantry.", at="2024-04-01")
    run(fresh.ingest([update]))
    assert fresh.stats["passages"] == 4 and fresh.stats["index_calls"] == 2
    top = ask(fresh, "Where does Alice keep the apple?")[:2]
    assert set(top) == {PASSAGES[0], "[2024-04-01] Alice keeps the apple in the pantry."}
    assert not script.unknown
    # every request reached this loopback server (conftest's guard refuses any other host)
    assert server.count("/chat/completions") == 6 + 2 + 1 + 2 + 1
