"""Failure behaviour over real HTTP: transient faults are retried and counted, configuration
errors fail at once and say what is wrong, an unreachable server fails within seconds."""

from __future__ import annotations

import asyncio
import socket
import threading
import time

import pytest

from benchmarks.models.client import (
    ChatModel,
    Embedder,
    Endpoint,
    ModelConfigError,
    ModelUnavailableError,
    run_sync,
)
from benchmarks.models.scripted import ScriptedServer
from benchmarks.models.server import free_port
from benchmarks.models.usage import UsageMeter

FAST = {"backoff_s": 0.01, "backoff_max_s": 0.05}


def model_for(url: str, meter: UsageMeter, **endpoint: object) -> ChatModel:
    settings = {**FAST, **endpoint}
    return ChatModel(Endpoint(url, "scripted", **settings), "reader", None, meter)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("fault", "reason"),
    [("500", "http_500"), ("429", "http_429"), ("malformed", "malformed"), ("timeout", "timeout")],
)
def test_a_transient_fault_is_retried_counted_and_the_call_succeeds(
    fault: str, reason: str
) -> None:
    with ScriptedServer(default="fine", faults={1: fault}, timeout_sleep_s=1.0) as srv:
        meter = UsageMeter()
        result = run_sync(model_for(srv.base_url, meter, timeout_s=0.5).complete("q"))
        assert result.text == "fine"
        assert srv.count("/chat/completions") == 2 and srv.faults_injected == {fault: 1}
    usage = meter["reader"]
    assert (usage.calls, usage.retries, usage.errors) == (1, 1, 0)
    assert usage.retry_reasons == {reason: 1}


def test_retry_after_on_429_is_honoured() -> None:
    with ScriptedServer(faults={1: "429", 2: "429"}, retry_after_s=0.3) as srv:
        meter = UsageMeter()
        started = time.perf_counter()
        run_sync(model_for(srv.base_url, meter).complete("q"))
        elapsed = time.perf_counter() - started
    assert elapsed >= 0.6  # two waits of 0.3 s, not the 0.01 s backoff
    assert meter["reader"].retries == 2


def test_an_unknown_model_fails_at_once_naming_it() -> None:
    with ScriptedServer(models=["qwen3-4b"]) as srv:
        meter = UsageMeter()
        model = ChatModel(Endpoint(srv.base_url, "qwen3-8b"), "judge", None, meter)
        started = time.perf_counter()
        with pytest.raises(ModelConfigError) as err:
            run_sync(model.complete("q"))
        assert time.perf_counter() - started < 2
        assert srv.count("/chat/completions") == 1  # no retry
        url = srv.base_url
    message = str(err.value)
    assert "qwen3-8b" in message and url in message and "served: qwen3-4b" in message
    assert err.value.status == 404
    assert (meter["judge"].retries, meter["judge"].errors) == (0, 1)


def test_a_wrong_api_key_fails_at_once() -> None:
    with ScriptedServer(api_key="right") as srv:
        model = model_for(srv.base_url, UsageMeter(), api_key="wrong")
        with pytest.raises(ModelConfigError, match=r"401.*API key"):
            run_sync(model.complete("q"))
        assert srv.count("/chat/completions") == 1
        ok = model_for(srv.base_url, UsageMeter(), api_key="right")
        assert run_sync(ok.complete("q")).text == "OK"


def test_a_bad_base_url_is_a_configuration_error() -> None:
    with pytest.raises(ModelConfigError, match="bad base URL"):
        run_sync(model_for("ftp://127.0.0.1:1/v1", UsageMeter()).complete("q"))


def test_an_unreachable_url_fails_within_seconds_naming_it() -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    meter = UsageMeter()
    # default retry settings: a server that never answered is not waited for
    model = ChatModel(Endpoint(url, "scripted"), "reader", None, meter)
    for call in (model.probe(), model.complete("q")):
        started = time.perf_counter()
        with pytest.raises(ModelUnavailableError, match=url):
            run_sync(call)  # type: ignore[arg-type]
        assert time.perf_counter() - started < 3
    assert meter["reader"].retry_reasons == {"connect": 4}


def test_a_server_that_never_accepts_fails_after_one_connect_timeout() -> None:
    """A listener whose accept queue is full drops new connections like a firewalled host."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(0)
        port = listener.getsockname()[1]
        fillers = [socket.socket() for _ in range(3)]
        for sock in fillers:
            sock.setblocking(False)
            sock.connect_ex(("127.0.0.1", port))
        url = f"http://127.0.0.1:{port}/v1"
        model = ChatModel(Endpoint(url, "scripted", connect_timeout_s=0.3), "reader")
        started = time.perf_counter()
        with pytest.raises(ModelUnavailableError, match=f"cannot reach {url}.*connect_timeout"):
            run_sync(model.probe())
        assert time.perf_counter() - started < 3  # one connect timeout of 0.3 s, no retry
        for sock in fillers:
            sock.close()


def test_persistent_failure_ends_in_unavailable_after_the_retries() -> None:
    with ScriptedServer(p_500=1.0) as srv:
        meter = UsageMeter()
        with pytest.raises(ModelUnavailableError, match=r"3 attempt.*http_500") as err:
            run_sync(model_for(srv.base_url, meter, max_retries=2).complete("q"))
        assert srv.base_url in str(err.value)
        assert srv.count("/chat/completions") == 3
    assert (meter["reader"].retries, meter["reader"].errors) == (2, 1)


def test_a_script_that_raises_is_a_500_whose_message_reaches_the_caller() -> None:
    def broken(messages: list[dict[str, object]]) -> str:
        raise KeyError("no rule for this")

    with ScriptedServer(broken) as srv:
        model = model_for(srv.base_url, UsageMeter(), max_retries=1)
        with pytest.raises(ModelUnavailableError, match=r"http_500.*no rule for this"):
            run_sync(model.complete("q"))


def test_a_server_restart_mid_run_is_ridden_out() -> None:
    first = ScriptedServer(default="before")
    url = first.start()
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    meter = UsageMeter()
    model = model_for(url, meter, backoff_s=0.1, backoff_max_s=0.4)
    second = ScriptedServer(default="after", port=port)

    async def scenario() -> list[str]:
        before = await model.complete("q1")
        first.stop()  # the pooled connection now points at nothing
        threading.Timer(0.4, second.start).start()
        after = await model.complete("q2")
        return [before.text, after.text]

    try:
        assert run_sync(scenario()) == ["before", "after"]
    finally:
        second.stop()
    assert meter["reader"].retries >= 1 and meter["reader"].errors == 0
    assert set(meter["reader"].retry_reasons) <= {"connect", "connection"}


def test_a_fault_injection_run_completes_every_call_with_retries_counted() -> None:
    """~200 calls, 10% HTTP 500, 5% timeouts, 5% malformed JSON: every call completes."""
    server = ScriptedServer(
        lambda messages: "answer to " + messages[-1]["content"],
        p_500=0.10,
        p_timeout=0.05,
        p_malformed=0.05,
        timeout_sleep_s=1.0,
        seed=3,
    )
    with server as srv:
        meter = UsageMeter()
        # 10 retries: at a 20% fault rate a call fails only if 11 attempts in a row are faulted
        model = model_for(srv.base_url, meter, timeout_s=0.5, concurrency=20, max_retries=10)

        async def run() -> list[str]:
            results = await asyncio.gather(*(model.complete(f"q{i}") for i in range(200)))
            return [r.text for r in results]

        texts = run_sync(run())
        injected = dict(srv.faults_injected)
        requests = srv.count("/chat/completions")
    assert texts == [f"answer to q{i}" for i in range(200)]
    usage = meter["reader"]
    assert usage.calls == 200 and usage.errors == 0
    assert injected["500"] > 10 and injected["timeout"] > 3 and injected["malformed"] > 3
    assert usage.retries == sum(injected.values()) == requests - 200
    assert usage.retry_reasons == {
        "http_500": injected["500"],
        "timeout": injected["timeout"],
        "malformed": injected["malformed"],
    }
    assert "200 calls (0 cached)" in meter.summary_line()


def test_embeddings_ride_out_faults_too() -> None:
    with ScriptedServer(faults={1: "500", 2: "malformed", 4: "429"}) as srv:
        meter = UsageMeter()
        endpoint = Endpoint(srv.base_url, "scripted", **FAST)  # type: ignore[arg-type]
        embedder = Embedder(endpoint, meter=meter, batch_size=2)
        vecs = run_sync(embedder.embed([f"text {i}" for i in range(6)]))
    assert vecs.shape == (6, 64)
    assert meter["embedder"].calls == 3 and meter["embedder"].retries == 3
