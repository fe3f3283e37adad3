"""The Mem0 arm through mem0ai itself, against the scripted server on 127.0.0.1.

The script answers Mem0's two prompt kinds the way a model following them would: fact
extraction (system prompt + "Input:\\nuser: ...") with one fact per input line, and the update
step (the old memories and the new facts in triple backticks) with UPDATE when a new fact is
about the subject of a stored memory, NONE when it repeats it, ADD otherwise. So a later value
of the same fact overwrites the earlier one: Mem0's CRUD behaviour, which the arm must expose.
"""

from __future__ import annotations

import ast
import asyncio
import importlib.util
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from hydra import compose, initialize_config_dir
from hydra.utils import instantiate

from benchmarks.models.client import ChatModel, Embedder, Endpoint
from benchmarks.models.scripted import ScriptedServer
from benchmarks.runner.arm import Services
from benchmarks.runner.cli import CONFIG_DIR
from benchmarks.runner.types import Event, Question

pytestmark = [
    pytest.mark.peers,
    pytest.mark.skipif(importlib.util.find_spec("mem0") is None, reason="mem0ai not installed"),
]

DIM = 64
LINES = (
    "0. The capital of France is Paris.",
    "1. Anna Berg works in the field of chemistry.",
    "2. The capital of France is Lyon.",
)
CHUNK = 80  # lines 0-1 fill the first chunk (80 characters), line 2 is the second


def subject(fact: str) -> str:
    """What a fact is about: its words before " is ", without the serial number."""
    return re.sub(r"^\d+\.\s*", "", fact).split(" is ")[0].strip(" .")


def backticked(prompt: str, anchor: str) -> Any:
    """The Python literal Mem0 prints in the first triple-backtick block after `anchor`."""
    match = re.search(re.escape(anchor) + r".*?```\s*(.*?)\s*```", prompt, re.S)
    return ast.literal_eval(match.group(1)) if match else []


def mem0_script(body: dict[str, Any]) -> str:
    messages = body["messages"]
    if messages[0]["role"] == "system":  # fact extraction: "Input:\nuser: <item>\n"
        text = messages[1]["content"].split("user: ", 1)[1]
        lines = [line.strip() for line in text.splitlines()]
        return json.dumps({"facts": [x for x in lines if x and not x.startswith("Date:")]})
    prompt = messages[0]["content"]  # the update step
    old = backticked(prompt, "Below is the current content of my memory")
    facts = backticked(prompt, "The new retrieved facts are mentioned in the triple backticks")
    memory, next_id = [], len(old)
    for fact in facts:
        hit = next((m for m in old if subject(m["text"]) == subject(fact)), None)
        if hit is None:
            memory.append({"id": str(next_id), "text": fact, "event": "ADD"})
            next_id += 1
        elif hit["text"] == fact:
            memory.append({"id": hit["id"], "text": fact, "event": "NONE"})
        else:
            memory.append(
                {"id": hit["id"], "text": fact, "event": "UPDATE", "old_memory": hit["text"]}
            )
    return json.dumps({"memory": memory})


@pytest.fixture
def server() -> Any:
    with ScriptedServer(
        script=mem0_script, models=["scripted", "scripted-embed"], embedding_dim=DIM
    ) as srv:
        yield srv


def services(server: ScriptedServer) -> Services:
    return Services(
        writer=ChatModel(Endpoint(server.base_url, "scripted"), role="writer"),
        embedder=Embedder(Endpoint(server.base_url, "scripted-embed"), role="embedder"),
    )


def bodies(server: ScriptedServer, path: str) -> list[dict[str, Any]]:
    return [body for p, body in server.received if p == path]


def question(text: str = "What is the capital of France?") -> Question:
    return Question("q0", text, ("Lyon",))


def test_round_trip_update_search_history_and_snapshot(server, tmp_path: Path) -> None:
    from baselines.peers.mem0_arm import FACTCONSOLIDATION_PROMPT, Mem0Arm

    env_before = os.environ.get("MEM0_DIR")
    arm = Mem0Arm(
        services(server),
        chunk_size=CHUNK,
        workdir=str(tmp_path / "a"),
        fact_prompt="factconsolidation",
    )
    assert arm.k == 12
    events = [Event(f"e{i}", line) for i, line in enumerate(LINES)]
    asyncio.run(arm.ingest(events))
    endpoints = asyncio.run(arm.endpoints())

    # Mem0 extracted three facts from two chunks and overwrote Paris with Lyon (one UPDATE)
    assert arm.stats["items"] == 2
    assert arm.stats["events"] == {"ADD": 2, "UPDATE": 1}
    assert arm.stats["proposed"] == {"ADD": 2, "UPDATE": 1}
    assert arm.stats["llm_calls"] == {"extract": 2, "update": 2} and arm.stats["facts"] == 3
    assert arm.stats["memories"] == 2
    json.dumps(arm.stats)  # serializable, for the snapshot

    context = asyncio.run(arm.read(question()))
    lines = context.text.split("\n")
    assert lines[0] == "2. The capital of France is Lyon."
    assert "Paris" not in context.text  # the CRUD corner: the displaced value is gone
    assert set(lines) == {LINES[1], LINES[2]} and context.meta["shown"] == 2

    # ... but Mem0's own history keeps the trail of the overwritten memory
    stored = {m["memory"]: m["id"] for m in arm.memories(endpoints)}
    france = stored["2. The capital of France is Lyon."]
    trail = arm.history(france, endpoints)
    assert [(h["event"], h["old_memory"], h["new_memory"]) for h in trail] == [
        ("ADD", None, LINES[0]),
        ("UPDATE", LINES[0], LINES[2]),
    ]

    # every call went to the scripted endpoints, in the shape Mem0 sends
    chats, embeds = bodies(server, "/chat/completions"), bodies(server, "/embeddings")
    assert server.count("/chat/completions") == len(chats) == 4  # 2 per chunk
    # the base's width probe, one per extracted fact, one per search
    assert server.count("/embeddings") == len(embeds) == 1 + 3 + 1
    for body in chats:
        assert body["response_format"] == {"type": "json_object"}
        assert body["model"] == "scripted" and body["temperature"] == 0
    extract = [b for b in chats if b["messages"][0]["role"] == "system"]
    assert len(extract) == 2
    assert all(b["messages"][0]["content"] == FACTCONSOLIDATION_PROMPT for b in extract)
    assert extract[0]["messages"][1]["content"] == "Input:\nuser: " + "\n".join(LINES[:2]) + "\n"
    assert all(b["model"] == "scripted-embed" and b["dimensions"] == DIM for b in embeds[1:])
    assert arm.gateway is not None  # Mem0's calls came through the arm's gateway, none around it
    assert arm.gateway.requests == {"chat": len(chats), "embeddings": len(embeds) - 1}

    # every file Mem0 wrote is in the arm's folder; the environment is as it was
    assert {"qdrant", "history.db", "migrations_qdrant"} <= set(os.listdir(arm.workdir))
    assert os.environ.get("MEM0_DIR") == env_before  # set around the import only

    # snapshot -> a fresh arm (the first one reopened meanwhile: two arms open at once)
    assert arm.save(tmp_path / "snap")
    assert asyncio.run(arm.read(question())).text == context.text
    fresh = Mem0Arm(
        services(server),
        chunk_size=CHUNK,
        workdir=str(tmp_path / "b"),
        fact_prompt="factconsolidation",
    )
    assert fresh.load(tmp_path / "snap")
    assert fresh.stats == arm.stats
    chats_before = server.count("/chat/completions")
    assert asyncio.run(fresh.read(question())).text == context.text
    assert server.count("/chat/completions") == chats_before  # search calls no LLM
    fresh_endpoints = asyncio.run(fresh.endpoints())
    assert len(fresh.history(france, fresh_endpoints)) == 2
    assert (tmp_path / "b" / "migrations_qdrant").is_dir()  # its own, not the import's folder
    assert sys.modules["mem0.memory.main"].mem0_dir != str(fresh.workdir)  # restored
    arm.close()
    fresh.close()


def test_default_prompt_is_mem0s_own(server, tmp_path: Path) -> None:
    from baselines.peers.mem0_arm import Mem0Arm

    arm = Mem0Arm(services(server), workdir=str(tmp_path / "d"))
    asyncio.run(arm.ingest([Event("e0", LINES[1], at="2023-05-20")]))
    system = bodies(server, "/chat/completions")[0]["messages"]
    assert system[0]["content"].startswith("You are a Personal Information Organizer")
    assert system[1]["content"] == f"Input:\nuser: Date: 2023-05-20\n{LINES[1]}\n"
    assert arm.stats["events"] == {"ADD": 1} and arm.stats["memories"] == 1
    stored = arm.memories(asyncio.run(arm.endpoints()))
    assert stored[0]["metadata"] == {"item": 0, "at": "2023-05-20"}
    arm.close()


def test_config_builds_the_arm(tmp_path: Path) -> None:
    from baselines.peers.mem0_arm import Mem0Arm

    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        cfg = compose(config_name="config", overrides=["arm=mem0"])
    node = {k: v for k, v in cfg.arm.items() if k != "name"}
    arm = instantiate({**node, "workdir": str(tmp_path / "c")})
    assert isinstance(arm, Mem0Arm)
    assert (arm.k, arm.chunk_size, arm.fact_prompt) == (12, 1000, "factconsolidation")
    with pytest.raises(ValueError, match="fact_prompt"):
        Mem0Arm(fact_prompt="nope")


def test_concurrent_reads_of_one_arm_share_its_store(server, tmp_path: Path) -> None:
    """The runner asks an episode's questions at once; local qdrant allows one client per
    folder, so the arm must serialize its lazy reopen and its searches."""
    from baselines.peers.mem0_arm import Mem0Arm

    arm = Mem0Arm(services(server), k=3, workdir=str(tmp_path / "c"))
    try:
        asyncio.run(arm.ingest([Event("e0", LINES[0])]))
        arm.save(tmp_path / "snap")  # closes the store: the reads below reopen it lazily

        async def many() -> list:
            return await asyncio.gather(*(arm.read(question()) for _ in range(6)))

        contexts = asyncio.run(many())
    finally:
        asyncio.run(arm.aclose())
    assert len(contexts) == 6 and all("Paris" in c.text for c in contexts)


# -- ALFWorld-Revision: the retraction and conflict probes, with store introspection -----------

HOUSEHOLD = (  # a generator sentence -> the fact a careful extractor writes (one sentence)
    (r"^Earlier observation: (?P<obj>.+?) was in (?P<loc>.+?)\.$", "{obj} was in {loc}."),
    (
        r"^Update: (?P<obj>.+?) has been moved (?:from .+? )?to (?P<loc>.+?)\.$",
        "{obj} is in {loc}.",
    ),
    (
        r"^Correction: the report that (?P<obj>.+?) was moved to (?P<loc>.+?) was an error\.$",
        "The report that {obj} was moved to {loc} was an error.",
    ),
    (r"^Report: (?P<obj>.+?) is in (?P<loc>.+?)\.$", "{obj} is reported in {loc}."),
    (r"^Check: (?P<obj>.+?) is in (?P<loc>.+?)\.$", "{obj} is in {loc}."),
)
CLAIMS = (  # a fact -> (kind, object, location)
    (r"^the report that (?P<obj>.+?) was moved to (?P<loc>.+?) was an error$", "retracts"),
    (r"^(?P<obj>.+?) is reported in (?P<loc>.+?)$", "reported"),
    (r"^(?P<obj>.+?) (?:is|was) in (?P<loc>.+?)$", "at"),
)


def claim(fact: str) -> tuple[str, str, str] | None:
    for pattern, kind in CLAIMS:
        m = re.match(pattern, fact.strip().rstrip(".").lower())
        if m:
            return kind, m["obj"], m["loc"]
    return None


class HouseholdMem0:
    """Mem0's two prompts on ALFWorld-Revision sentences, answered as a CRUD model would: a new
    location of an object UPDATEs the memory of its old one (overwritten: the old text survives
    in Mem0's history only); a correction DELETEs the memory of the move it names (nothing
    restores the value before it); `reports_coexist`: a second uncued report is ADDed beside
    the first instead of overwriting it. Counts the events it proposed."""

    def __init__(self, reports_coexist: bool = False) -> None:
        self.reports_coexist = reports_coexist
        self.proposed: list[str] = []

    def __call__(self, body: dict[str, Any]) -> str:
        messages = body["messages"]
        if messages[0]["role"] == "system":  # extraction: "Input:\nuser: <sentence>\n"
            sentence = messages[1]["content"].split("user: ", 1)[1].strip()
            facts = [
                fact.format(**m.groupdict())
                for pattern, fact in HOUSEHOLD
                if (m := re.match(pattern, sentence))
            ]
            return json.dumps({"facts": facts[:1]})
        prompt = messages[0]["content"]
        old = backticked(prompt, "Below is the current content of my memory")
        facts = backticked(prompt, "The new retrieved facts are mentioned in the triple backticks")
        memory, next_id = [], len(old)
        for fact in facts:
            new = claim(fact)
            about = [m for m in old if (c := claim(m["text"])) and new and c[1] == new[1]]
            if new is None or not about:
                memory.append({"id": str(next_id), "text": fact, "event": "ADD"})
                next_id += 1
            elif new[0] == "retracts":
                named = [m for m in about if claim(m["text"])[2] == new[2]]
                memory += [{"id": m["id"], "text": m["text"], "event": "DELETE"} for m in named]
            elif any(claim(m["text"])[2] == new[2] for m in about):
                memory.append({"id": about[0]["id"], "text": fact, "event": "NONE"})
            elif self.reports_coexist and new[0] == "reported":
                memory.append({"id": str(next_id), "text": fact, "event": "ADD"})
                next_id += 1
            else:
                hit = about[0]
                memory.append(
                    {"id": hit["id"], "text": fact, "event": "UPDATE", "old_memory": hit["text"]}
                )
        self.proposed += [m["event"] for m in memory]
        return json.dumps({"memory": memory})


def probe_case(probe: str, **options: Any) -> tuple[Any, Any]:
    """The generator's first case of a probe: its final episode and its "-pre" episode."""
    from benchmarks.alfworld_revision import AlfworldRevision

    final, pre = AlfworldRevision(probe=probe, cases=1, **options).episodes()
    assert pre.id == f"{final.id}-pre"
    return final, pre


def test_mem0_introspection_finds_v1_in_history_after_a_retraction(tmp_path: Path) -> None:
    """A real retraction case (B.3, d=0) through Mem0: the erroneous move overwrites v1
    (UPDATE), the correction deletes the error (DELETE). Search shows neither, but Mem0's
    history still holds v1's text, which the introspection reports and the Table 8 rule
    counts as "v1 in store" (not as a current memory)."""
    from baselines.peers.mem0_arm import Mem0Arm
    from benchmarks.alfworld_revision.tables import store_names

    final, pre = probe_case("retraction", d=0)
    question_pre, question_final = pre.questions[0], final.questions[0]
    v1, v2, subject = question_final.golds[0], question_pre.golds[0], question_pre.meta["object"]
    script = HouseholdMem0()
    with ScriptedServer(
        script=script, models=["scripted", "scripted-embed"], embedding_dim=DIM
    ) as server:
        arm = Mem0Arm(services(server), k=10, workdir=str(tmp_path / "a"), introspect=True)
        try:

            async def run() -> tuple[Any, Any]:
                await arm.ingest(pre.events)
                before = await arm.read(question_pre)
                await arm.ingest(final.events[len(pre.events) :])  # the retraction
                return before, await arm.read(question_final)

            before, after = asyncio.run(run())
        finally:
            asyncio.run(arm.aclose())
    store = after.meta["introspection"]
    assert store["store"] == "mem0" and store["subject"] == subject
    (fact,) = store["facts"]  # one memory about the object, overwritten, then deleted
    assert fact["events"] == ["ADD", "UPDATE", "DELETE"] and not fact["valid"]
    assert fact["former"] == [f"{subject} was in {v1}."]  # v1's text, kept by the history
    assert store_names(store, v1) is True  # v1 in store (history)
    assert store_names(store, v1, valid_only=True) is False  # ... not a current memory
    assert store_names(store, v2, valid_only=True) is False  # the error is gone too
    # before the retraction: the error committed (v2 current), v1 overwritten
    assert store_names(before.meta["introspection"], v2, valid_only=True) is True
    assert store_names(before.meta["introspection"], v1, valid_only=True) is False
    assert v1 not in after.text and v1 not in before.text  # search: the CRUD corner
    assert "introspection" not in after.text


@pytest.mark.parametrize("coexist", [True, False])
def test_mem0_both_reports_valid_only_when_neither_is_overwritten(
    tmp_path: Path, coexist: bool
) -> None:
    from baselines.peers.mem0_arm import Mem0Arm
    from benchmarks.alfworld_revision.tables import store_names

    _, pre = probe_case("conflict")
    question = pre.questions[0]
    first, second = question.meta["candidates"]
    script = HouseholdMem0(reports_coexist=coexist)
    with ScriptedServer(
        script=script, models=["scripted", "scripted-embed"], embedding_dim=DIM
    ) as server:
        arm = Mem0Arm(services(server), workdir=str(tmp_path / "a"), introspect=True)
        try:
            asyncio.run(arm.ingest(pre.events))
            store = asyncio.run(arm.read(question)).meta["introspection"]
        finally:
            asyncio.run(arm.aclose())
    valid = [store_names(store, c, valid_only=True) for c in (first, second)]
    assert valid == ([True, True] if coexist else [False, True])
    assert store_names(store, first) is True  # overwritten or not, the store holds it
    assert len(store["facts"]) == (2 if coexist else 1)


def test_mem0_on_the_retraction_probe_end_to_end(tmp_path: Path) -> None:
    """`pmem-bench experiment=table8 arm=mem0_alfrev` on one case, then Table 8: the Mem0 row
    (ours: the paper has none) says v1 in store from Mem0's history, v1 not valid, the error
    committed in the store before the retraction, and names the paper's B.3 text figures."""
    from tests.peer_runs import build_table, run_probe, table_row, with_reader

    script = HouseholdMem0()
    root = tmp_path / "runs"
    with ScriptedServer(
        script=with_reader(script), models=["scripted", "scripted-embed"], embedding_dim=DIM
    ) as server:
        folder = run_probe(
            root,
            server,
            "experiment=table8",
            "arm=mem0_alfrev",
            "benchmark.d=0",
            "benchmark.cases=1",
        )
    lines = (folder / "predictions.jsonl").read_text().splitlines()
    records = {json.loads(x)["meta"]["phase"]: json.loads(x) for x in lines}
    assert set(records) == {"pre_retraction", "final"}
    assert records["pre_retraction"]["context_meta"]["items"] == 34  # the state before it
    assert records["final"]["context_meta"]["items"] == 35
    markdown = build_table(root, "table8", tmp_path / "out")
    row = table_row(markdown, "mem0")
    assert row["committed"] == "1/1"  # the "-pre" answer named v2
    assert row["v1 in store"] == "100.0 (n=1)" and row["v1 valid"] == "0.0 (n=1)"
    assert row["v2 valid before"] == "100.0 (n=1)"
    assert row["recovered (paper)"] == row["v1 in store (paper)"] == "–"
    assert "Rows with no paper figure (mem0) are ours" in markdown
    assert "B.3 text on mem0" in markdown and "8.6%" in markdown
