"""A model server's reply is checked before anything of it is cached: a reply of the wrong
shape is retried and, if it never comes right, fails the call without poisoning the cache, so
the rerun against a correct server succeeds (a real HTTP server on 127.0.0.1 serving fixed
bodies)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks.models.cache import ResponseCache
from benchmarks.models.client import (
    ChatModel,
    Embedder,
    Endpoint,
    ModelError,
    run_sync,
)
from benchmarks.models.usage import UsageMeter

FAST = {"backoff_s": 0.01, "backoff_max_s": 0.02, "max_retries": 2}


@contextmanager
def serving(reply) -> Iterator[str]:
    """An OpenAI-compatible server whose every POST is answered by `reply(body)`; its URL."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            data = json.dumps(reply(body)).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def chat_reply(usage: Any) -> Any:
    def reply(body: dict[str, Any]) -> dict[str, Any]:
        message = {"role": "assistant", "content": "desk 1"}
        return {"choices": [{"message": message, "finish_reason": "stop"}], "usage": usage}

    return reply


def chat(url: str, cache: ResponseCache) -> ChatModel:
    return ChatModel(Endpoint(url, "m", **FAST), "reader", cache, UsageMeter())  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "usage",
    ["lots", ["prompt_tokens", 3], {"prompt_tokens": "3"}, {"completion_tokens": -1},
     {"prompt_tokens": True}],
)  # fmt: skip
def test_a_reply_with_malformed_usage_is_never_cached(usage: Any, tmp_path: Path) -> None:
    cache = ResponseCache(str(tmp_path / "cache.sqlite"))
    with serving(chat_reply(usage)) as url, pytest.raises(ModelError):
        run_sync(chat(url, cache).complete("where is the mug?"))
    assert len(cache) == 0  # nothing of the malformed replies was kept
    good = {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}
    with serving(chat_reply(good)) as url:
        result = run_sync(chat(url, cache).complete("where is the mug?"))
    assert result.text == "desk 1" and not result.cached and result.prompt_tokens == 3


def embedding_reply(width: int) -> Any:
    def reply(body: dict[str, Any]) -> dict[str, Any]:
        data = [
            {"index": i, "embedding": [1.0] + [0.0] * (width - 1)}
            for i in range(len(body["input"]))
        ]
        return {"data": data, "usage": {"prompt_tokens": 1, "total_tokens": 1}}

    return reply


def test_an_embedder_that_changes_its_dimension_is_stopped_before_caching(
    tmp_path: Path,
) -> None:
    cache = ResponseCache(str(tmp_path / "cache.sqlite"))
    widths = iter([4, 5, 5, 5])
    with serving(lambda body: embedding_reply(next(widths))(body)) as url:
        embedder = Embedder(Endpoint(url, "e", **FAST), cache=cache, batch_size=8)  # type: ignore[arg-type]
        assert run_sync(embedder.embed(["a", "b"])).shape == (2, 4)
        assert run_sync(embedder.embed(["a"])).shape == (1, 4)  # from the cache
        with pytest.raises(ModelError, match=r"dimension 5 .* earlier vectors have dimension 4"):
            run_sync(embedder.embed(["c"]))
    # the five-dimensional vector was never cached: a new client against a four-dimensional
    # server finds "a" and "b" and pays for "c"
    with serving(embedding_reply(4)) as url:
        fresh = Embedder(Endpoint(url, "e", **FAST), cache=cache, batch_size=8)  # type: ignore[arg-type]
        assert run_sync(fresh.embed(["a", "b", "c"])).shape == (3, 4)
        assert fresh.usage.cache_hits == 2


def test_a_cache_of_another_width_is_named_not_mixed(tmp_path: Path) -> None:
    cache = ResponseCache(str(tmp_path / "cache.sqlite"))
    with serving(embedding_reply(4)) as url:
        run_sync(Embedder(Endpoint(url, "e", **FAST), cache=cache).embed(["a"]))  # type: ignore[arg-type]
    with serving(embedding_reply(6)) as url:
        other = Embedder(Endpoint(url, "e", **FAST), cache=cache)  # type: ignore[arg-type]
        with pytest.raises(ModelError, match=r"dimension 6 .* earlier vectors have dimension 4"):
            run_sync(other.embed(["b", "a"]))


reply_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 10**6) | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=6,
)
chat_bodies = st.fixed_dictionaries(
    {},
    optional={
        "choices": st.one_of(
            reply_values,
            st.lists(st.fixed_dictionaries({}, optional={
                "message": st.one_of(reply_values, st.fixed_dictionaries(
                    {}, optional={"content": reply_values, "role": reply_values})),
                "finish_reason": reply_values}), max_size=2),
        ),
        "usage": st.one_of(reply_values, st.fixed_dictionaries(
            {}, optional={"prompt_tokens": reply_values, "completion_tokens": reply_values})),
    },
)  # fmt: skip


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(chat_bodies)
def test_any_chat_reply_is_a_result_or_one_model_error(tmp_path: Path, body: dict) -> None:
    """Whatever a server sends with 200: a result (and then it is cached), or a ModelError (and
    nothing is cached), never another exception from the client."""
    cache = ResponseCache(str(tmp_path / f"cache-{abs(hash(json.dumps(body)))}.sqlite"))
    with serving(lambda _: body) as url:
        model = ChatModel(Endpoint(url, "m", **{**FAST, "max_retries": 0}), "reader", cache)  # type: ignore[arg-type]
        try:
            result = run_sync(model.complete("q"))
        except ModelError:
            assert len(cache) == 0
        else:
            assert isinstance(result.text, str) and result.prompt_tokens >= 0
            assert len(cache) == 1
