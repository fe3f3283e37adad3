"""What a server says it did for each paid call (prompt tokens reused from its prompt cache, its
prompt and decode time) reaches the call record and the role's meter; a call served from the
response cache adds nothing; any reply shape is read without raising."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from benchmarks.models.base import server_work
from benchmarks.models.cache import ResponseCache
from benchmarks.models.calls import recording
from benchmarks.models.client import ChatModel, Endpoint, run_sync
from benchmarks.models.scripted import ScriptedServer
from benchmarks.models.usage import UsageMeter

PREFIX = "You keep a memory of where objects are. " * 5


def test_the_prompt_cache_and_the_server_times_are_recorded(tmp_path: Path) -> None:
    meter = UsageMeter()
    with (
        ScriptedServer(default="ok", models=["chat"], prompt_cache=True) as server,
        ResponseCache(tmp_path / "responses.sqlite") as cache,
    ):
        model = ChatModel(Endpoint(server.base_url, "chat"), "writer", cache, meter)
        with recording() as calls:
            run_sync(model.complete(PREFIX + "Observation: the mug is on shelf 2."))
            run_sync(model.complete(PREFIX + "Observation: the cup is on desk 1."))
            run_sync(model.complete(PREFIX + "Observation: the mug is on shelf 2."))  # cached
    first, second, replay = calls
    shared = len(PREFIX.split()) + 2  # the instructions and "Observation: the"
    assert first["reused_tokens"] == 0 and second["reused_tokens"] == shared
    assert second["prompt_ms"] == second["prompt_tokens"] - shared  # 1 ms a processed token
    assert second["decode_ms"] == 2.0 * second["completion_tokens"]
    assert replay["cached"] and "reused_tokens" not in replay  # it cost the server nothing
    usage = meter["writer"]
    assert (usage.calls, usage.cache_hits, usage.prompt_reused) == (2, 1, shared)
    processed = first["prompt_tokens"] + second["prompt_tokens"] - shared
    assert abs(usage.server_prompt_s - processed / 1000) < 1e-9


def test_a_server_that_reports_nothing_adds_nothing() -> None:
    meter = UsageMeter()
    with ScriptedServer(default="ok", models=["chat"]) as server:
        model = ChatModel(Endpoint(server.base_url, "chat"), "reader", None, meter)
        with recording() as calls:
            run_sync(model.complete("hello"))
    assert not {"reused_tokens", "prompt_ms", "decode_ms"} & set(calls[0])
    assert (meter["reader"].prompt_reused, meter["reader"].server_prompt_s) == (0, 0.0)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=12), inner),
    max_leaves=12,
)
FIELDS = st.sampled_from(["cached_tokens", "cache_n", "prompt_ms", "predicted_ms", "x"])


@given(
    st.dictionaries(
        st.sampled_from(["usage", "timings", "choices"]),
        JSON | st.dictionaries(FIELDS, JSON | st.dictionaries(FIELDS, JSON)),
    )
)
def test_any_reply_shape_is_read_without_raising(reply: dict[str, Any]) -> None:
    work = server_work(reply)
    assert set(work) <= {"reused_tokens", "prompt_ms", "decode_ms"}
    assert all(isinstance(v, (int, float)) and v >= 0 for v in work.values())
    assert isinstance(work.get("reused_tokens", 0), int)
