"""The MemoryOS arm's round trip through the real `memoryos-pro` package (make test-peers).

A scripted server on 127.0.0.1 answers every MemoryOS prompt (memoryos/prompts.py) from its
input: keywords are the text's content words, summaries and knowledge restate the observations,
continuity holds when two observations share a content word. Embeddings are the server's word
hashes, so pages that share words with the question are retrieved.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import re
import time
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
    pytest.mark.skipif(
        importlib.util.find_spec("memoryos") is None,
        reason="memoryos-pro is not installed: make setup-peers PEERS=memoryos",
    ),
]

MODELS = ["scripted", "scripted-embed"]
STOP = {
    *("the", "a", "an", "is", "in", "on", "at", "of", "to", "and", "it", "this", "that"),
    *("user", "assistant", "noted", "was", "now", "moved", "timestamp", "into", "from", "with"),
}
FACTS = [
    "The apple is in the fridge.",
    "The mug is in cabinet 3.",
    "The key is on the shelf.",
    "The apple is on the dining table.",  # the apple's update
    "The book is in drawer 2.",
    "The towel is on the towelrack.",
    "The pen is on the desk.",
    "The plate is in the sink.",
    "The lamp is on the sidetable.",
    "The phone is in the bag.",
    "The candle is on the mantel.",
    "The soap is in the bathtub.",
    "The watch is on the dresser.",
    "The spoon is in the drawer 5.",
]


def words(text: str) -> list[str]:
    out = [w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in STOP and len(w) > 1]
    return list(dict.fromkeys(out))


def users(text: str) -> list[str]:
    """The user turns quoted in a MemoryOS prompt ("User: ... Assistant: ..." or lines)."""
    found = re.findall(r"User: (.*?)(?: \(Timestamp:[^)]*\))?(?:\s+Assistant:|\n|$)", text)
    return [u.strip() for u in found if u.strip()]


def script(body: dict[str, Any]) -> str:
    """MemoryOS's prompts, recognised by their system prompt, answered from the input."""
    system = body["messages"][0]["content"]
    user = body["messages"][-1]["content"]
    if "keyword extraction" in system:
        text = user.split("following text:\n", 1)[-1].rsplit("\n\nKeywords:", 1)[0]
        return ", ".join(words(text)[:5]) or "memory"
    if "continuity detector" in system:
        prev = user.split("Previous Page:", 1)[1].split("Current Page:", 1)[0]
        curr = user.split("Current Page:", 1)[1]
        shared = set(words(" ".join(users(prev)))) & set(words(" ".join(users(curr))))
        return "true" if shared else "false"
    if "meta-summary updater" in system:
        return "Observations of where household objects are: " + "; ".join(users(user))
    if "analyzing dialogue topics" in system:
        said = users(user.split("Conversation content:", 1)[1])
        keys = words(" ".join(said))[:4]
        content = "The user noted: " + " ".join(said)
        return json.dumps([{"theme": "object locations", "keywords": keys, "content": content}])
    if "user preference analysis" in system:
        return "Need for Order ( Medium ): the user keeps track of where objects are."
    if "knowledge extraction assistant" in system:
        said = users(user.split("Latest User-AI Conversation:", 1)[1].split("【User", 1)[0])
        facts = "\n".join(f"- {s}" for s in said) or "None"
        return f"【User Private Data】\n{facts}\n【Assistant Knowledge】\nNone"
    raise AssertionError(f"unexpected MemoryOS prompt: {system[:80]!r}")


def arm_for(server: ScriptedServer, workdir: Path | None = None, retries: int = 6, **kw: Any):
    from baselines.peers.memoryos_arm import MemoryOSArm

    fast = {"max_retries": retries, "backoff_s": 0.01, "backoff_max_s": 0.05}
    writer = ChatModel(Endpoint(server.base_url, "scripted", **fast), role="writer")
    embedder = Embedder(Endpoint(server.base_url, "scripted-embed", **fast), role="embedder")
    return MemoryOSArm(
        Services(writer=writer, embedder=embedder),
        k=5,
        workdir=None if workdir is None else str(workdir),
        **kw,
    )


def events() -> list[Event]:
    return [Event(f"e{i}", t, at=f"2024-03-{i + 1:02d}") for i, t in enumerate(FACTS)]


def test_round_trip_stores_retrieves_and_reloads(tmp_path: Path) -> None:
    with ScriptedServer(script=script, models=MODELS) as server:
        started = time.perf_counter()
        arm = arm_for(server)
        asyncio.run(arm.ingest(events()))
        ingest_s = time.perf_counter() - started
        # short-term holds 10 pairs; each add beyond that moves the oldest to mid-term
        assert arm.stats["short_term"] == 9
        assert arm.stats["mid_term_pages"] == len(FACTS) - 9
        assert "llm_errors" not in arm.stats
        assert arm.stats["llm_keywords"] > 0 and arm.stats["llm_multi_summary"] == 5
        # the hard-coded "gpt-4o-mini" of keyword extraction was rewritten (patch 3)
        assert arm.stats["model_rewrites"] == arm.stats["llm_keywords"]

        endpoints = asyncio.run(arm.endpoints())
        found = asyncio.run(arm.search("Where is the apple?", endpoints))
        assert 0 < len(found) <= 5
        apple = [line for line in found if "apple" in line]
        assert any("The apple is in the fridge." in line for line in apple), found
        assert any("The apple is on the dining table." in line for line in apple), found
        # mid-term pages carry their item's date; knowledge mined from hot sessions has none
        assert any(
            line.startswith("[2024-03-01 00:00:00] The apple is in the fridge.") for line in found
        ), found

        context = asyncio.run(arm.read(Question("q1", "Where is the apple?", ("table",))))
        lines = context.text.splitlines()
        assert context.meta["retrieved"] == len(found)
        recent = [line for line in lines if line.startswith("[recent]")]
        assert len(recent) == 9 and recent[-1].endswith(FACTS[-1])  # the short-term window
        assert len(context.ids) == len(lines)

        saved = tmp_path / "snapshot"
        saved.mkdir()
        assert arm.save(saved)
        fresh = arm_for(server, workdir=tmp_path / "fresh")
        assert fresh.load(saved)
        assert fresh.stats["mid_term_pages"] == arm.stats["mid_term_pages"]
        again = asyncio.run(fresh.search("Where is the apple?", endpoints))
        assert any("The apple is in the fridge." in line for line in again), again
        # the continuity chain resumes where the saved arm stopped
        assert fresh._open(endpoints).updater.last_evicted_page_for_continuity is not None
        asyncio.run(fresh.ingest([Event("e99", "The spoon is in the sink.")]))
        assert fresh.stats["mid_term_pages"] == arm.stats["mid_term_pages"] + 1
        asyncio.run(fresh.aclose())
        asyncio.run(arm.aclose())

        models = {
            body.get("model") for path, body in server.received if path == "/chat/completions"
        }
        assert models == {"scripted"}  # never "gpt-4o-mini"
        kinds = {
            body["messages"][0]["content"].split(".")[0]
            for path, body in server.received
            if path == "/chat/completions"
        }
        assert any("keyword extraction" in k for k in kinds)
        assert server.count("/embeddings") > 0
        print(
            f"\nmemoryos round trip: ingest {ingest_s:.2f}s for {len(FACTS)} items, "
            f"{server.count('/chat/completions')} chat and {server.count('/embeddings')} "
            f"embedding requests in all; stats {json.dumps(arm.stats)}"
        )


def test_a_failing_llm_stops_ingest_instead_of_storing_error_text() -> None:

    def broken(body: dict[str, Any]) -> str:
        if "keyword extraction" in body["messages"][0]["content"]:
            raise RuntimeError("scripted failure")
        return script(body)

    with ScriptedServer(script=broken, models=MODELS) as server:
        arm = arm_for(server, retries=0, short_term_capacity=2)
        with pytest.raises(RuntimeError, match=r"LLM call\(s\) to 'scripted' failed"):
            asyncio.run(arm.ingest(events()[:3]))
        asyncio.run(arm.aclose())


def test_concurrent_arms_embed_through_their_own_endpoints() -> None:
    """MemoryOS's embedding function is module-global: each arm's calls, including those from
    MemoryOS's own thread pools, must still reach that arm's endpoint (patch 2)."""
    kitchen = [
        "The cup is in the sink.",
        "The fork is in the oven.",
        "The knife is in the drawer.",
        "The bowl is in the cabinet.",
        "The jar is in the pantry.",
        "The tin is in the fridge.",
    ]
    garage = [
        "The drill is on the bench.",
        "The saw is on the wall.",
        "The hammer is on the hook.",
        "The rake is on the floor.",
        "The hose is on the reel.",
        "The wrench is on the shelf.",
    ]
    with (
        ScriptedServer(script=script, models=MODELS) as one,
        ScriptedServer(script=script, models=MODELS) as two,
    ):
        a = arm_for(one, short_term_capacity=3)
        b = arm_for(two, short_term_capacity=3)

        async def both() -> tuple[list[str], list[str]]:
            await asyncio.gather(
                a.ingest([Event(f"a{i}", t) for i, t in enumerate(kitchen)]),
                b.ingest([Event(f"b{i}", t) for i, t in enumerate(garage)]),
            )
            return await asyncio.gather(
                a.search("Where is the cup?", await a.endpoints()),
                b.search("Where is the drill?", await b.endpoints()),
            )

        found_a, found_b = asyncio.run(both())
        assert any("The cup is in the sink." in line for line in found_a), found_a
        assert any("The drill is on the bench." in line for line in found_b), found_b
        for server, mine, theirs in ((one, kitchen, garage), (two, garage, kitchen)):
            texts = " ".join(
                json.dumps(body) for path, body in server.received if path == "/embeddings"
            )
            assert any(t[:-1] in texts for t in mine)
            assert not any(t[:-1] in texts for t in theirs)
        for arm in (a, b):
            assert arm.stats["embed_requests"] > 0
            asyncio.run(arm.aclose())


def test_config_builds_the_arm(tmp_path: Path) -> None:
    from baselines.peers.memoryos_arm import MemoryOSArm

    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        cfg = compose(config_name="config", overrides=["arm=memoryos"])
    node = {k: v for k, v in cfg.arm.items() if k != "name"}
    arm = instantiate({**node, "workdir": str(tmp_path / "c")})
    assert isinstance(arm, MemoryOSArm)
    assert (arm.k, arm.chunk_size, arm.short_term) == (5, 1000, True)
    assert arm.options["retrieval_queue_capacity"] == 5
    assert arm.options["short_term_capacity"] == 10


class _Stopped(Exception):
    """Stands for a kill: raised from the progress callback after a given unit."""


def test_the_query_embedded_by_two_threads_at_once_is_requested_once() -> None:
    """MemoryOS's retriever embeds the query in two threads at once; with a per-text cache
    alone both missed and both paid, and how often a run paid depended on the threads' timing
    (a resumed run then differed from an unbroken one: CI saw it). One request, one vector."""
    from concurrent.futures import ThreadPoolExecutor

    from baselines.peers.memoryos_arm import RemoteEmbedding

    with ScriptedServer(models=MODELS, latency_s=0.3) as server:
        embedding = RemoteEmbedding(server.base_url, "scripted-embed", "none")
        with ThreadPoolExecutor(4) as pool:
            vecs = list(pool.map(embedding, ["Where is the apple?"] * 4))
        embedding.close()
        paid = [b for p, b in server.received if p == "/embeddings"]
    assert len(paid) == 1 and embedding.requests == 1
    assert all((v == vecs[0]).all() for v in vecs)


def test_a_run_stopped_mid_call_closes_without_waiting_for_the_call() -> None:
    """SIGTERM cancels the ingest, but MemoryOS's operation runs on in its thread and close()
    waits for it: it waited for the model call in flight, minutes on the local model. Stopping
    the gateway first fails that call at once (`PeerArm.aclose`)."""
    slow = {"n": 0}

    def slow_after_a_few(body: dict[str, Any]) -> str:
        slow["n"] += 1
        if slow["n"] > 3:
            time.sleep(60)  # a long generation on 2 cores
        return script(body)

    with ScriptedServer(script=slow_after_a_few, models=MODELS) as server:
        arm = arm_for(server, retries=0)

        async def stop_mid_call() -> float:
            ingest = asyncio.create_task(arm.ingest(events()))
            deadline = time.monotonic() + 60
            while slow["n"] <= 3:
                assert time.monotonic() < deadline and not ingest.done()
                await asyncio.sleep(0.05)
            ingest.cancel()  # what the runner's KeyboardInterrupt does to the episode task
            with pytest.raises(asyncio.CancelledError):
                await ingest
            started = time.monotonic()
            await arm.aclose()
            return time.monotonic() - started

        took = asyncio.run(stop_mid_call())
    assert took < 15  # the call in flight had 60 s to go


def _requests(server: ScriptedServer, start: int = 0) -> list[str]:
    """The model requests the server received from index `start`, as sorted canonical JSON
    (MemoryOS's pools send some concurrently: the order within a unit may vary)."""
    paths = ("/chat/completions", "/embeddings")
    bodies = [json.dumps(b, sort_keys=True) for p, b in list(server.received)[start:] if p in paths]
    return sorted(bodies)


def test_a_killed_ingest_resumes_from_the_cache_paying_nothing_twice(tmp_path: Path) -> None:
    """Issue 15.4: MemoryOS's ingest costs hours on 2 cores, so a killed one must resume from
    the response cache. Undated items (FactConsolidation's chunks) exercise the stream clock:
    with MemoryOS's wall clock and random ids (before patch 6) the replay sent other requests.
    The progress record says how far the stopped ingest got, unit by unit."""
    from benchmarks.models.cache import ResponseCache
    from benchmarks.runner.pipeline import ProgressRecord

    undated = [Event(f"e{i}", text) for i, text in enumerate(FACTS)]

    def arm_with_cache(server: ScriptedServer, cache: Path, workdir: Path):
        fast = {"backoff_s": 0.01, "backoff_max_s": 0.05}
        store = ResponseCache(cache)
        writer = ChatModel(Endpoint(server.base_url, "scripted", **fast), "writer", cache=store)
        embedder = Embedder(
            Endpoint(server.base_url, "scripted-embed", **fast), "embedder", cache=store
        )
        services = Services(writer=writer, embedder=embedder)
        return MemoryOSArm(services, k=5, workdir=str(workdir)), services

    from baselines.peers.memoryos_arm import MemoryOSArm

    async def ingest_and_search(arm) -> list[str]:
        await arm.ingest(undated)
        found = await arm.search("Where is the apple?", await arm.endpoints())
        await arm.aclose()
        return found

    with ScriptedServer(script=script, models=MODELS) as server:
        # the reference: one uninterrupted ingest
        arm, _ = arm_with_cache(server, tmp_path / "ref.sqlite", tmp_path / "ref")
        reference = asyncio.run(ingest_and_search(arm))
        paid_reference = _requests(server)
        assert arm.stats["mid_term_pages"] > 0 and arm.stats["llm_calls"] > 0

        # stopped after 9 of 14 units: its progress record is on disk
        mark = len(server.received)
        arm, services = arm_with_cache(server, tmp_path / "c.sqlite", tmp_path / "a")
        record = ProgressRecord(tmp_path / "progress.json", services)

        def stop_after_nine(done: int, total: int) -> None:
            record(done, total)
            if done == 9:
                raise _Stopped

        arm.on_progress = stop_after_nine
        with pytest.raises(_Stopped):
            asyncio.run(arm.ingest(undated))
        asyncio.run(arm.aclose())
        paid_first = _requests(server, mark)
        progress = json.loads((tmp_path / "progress.json").read_text())
        assert (progress["units_done"], progress["units_total"]) == (9, len(FACTS))
        assert [u["cached"] for u in progress["units"]] == [0] * 9
        assert sum(u["paid"] for u in progress["units"]) == progress["usage"]["writer"]["calls"]

        # the rerun: nothing of the first attempt survives but the response cache
        mark = len(server.received)
        fresh, _ = arm_with_cache(server, tmp_path / "c.sqlite", tmp_path / "b")
        resumed = asyncio.run(ingest_and_search(fresh))
        paid_again = _requests(server, mark)

    assert resumed == reference  # the same memory, read the same way
    assert sorted(paid_first + paid_again) == paid_reference  # each request paid exactly once
    assert paid_first and paid_again


@pytest.mark.parametrize(
    "reply",
    [
        '["The apple is in the fridge.", "The mug is in cabinet 3."]',  # seen with the 1.5B model
        '{"theme": "objects", "content": "where objects are"}',
        '"objects and where they are"',
        "Topics: objects and where they are.",  # not JSON: MemoryOS's own fallback, counted
    ],
)
def test_a_summary_memoryos_cannot_file_takes_its_fallback_counted(reply: str) -> None:
    """Patch 7: MemoryOS falls back to one general session when the multi-topic summary is not
    JSON, but JSON of another shape crashed its updater ('str' object has no attribute 'get');
    now it takes the same fallback. Both are counted as fallbacks, the second also as
    unusable."""
    from baselines.peers.memoryos_arm import usable_summaries

    def wrong_shape(body: dict[str, Any]) -> str:
        if "analyzing dialogue topics" in body["messages"][0]["content"]:
            return reply
        return script(body)

    with ScriptedServer(script=wrong_shape, models=MODELS) as server:
        arm = arm_for(server)
        asyncio.run(arm.ingest(events()))
        wrong_json = reply.startswith(("[", "{", '"'))
        summaries = arm.stats["llm_multi_summary"]
        assert arm.stats.get("summaries_unusable", 0) == (summaries if wrong_json else 0)
        assert arm.stats["summaries_fallback"] == summaries > 0  # every one took the fallback
        assert arm.stats["mid_term_pages"] == len(FACTS) - 9  # filed by the fallback
        found = asyncio.run(arm.search("Where is the apple?", asyncio.run(arm.endpoints())))
        assert any("The apple is in the fridge." in line for line in found), found
        asyncio.run(arm.aclose())
    if wrong_json:
        assert usable_summaries(json.loads(reply)) == []
    # a reply MemoryOS could already take passes unchanged; only what would crash it is dropped
    item = {"theme": "t", "keywords": "a, b"}  # no content: MemoryOS's default summary
    assert usable_summaries([item, "stray"]) == [item]
