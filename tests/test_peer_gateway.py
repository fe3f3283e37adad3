"""The peer arms' shared parts, without any peer package: the gateway and the install error."""

from __future__ import annotations

from typing import ClassVar

import httpx2 as httpx  # the HTTP library the openai SDK (3.x) brings
import pytest

from baselines.peers.base import PeerArm, PeerNotInstalled, items_of
from baselines.peers.gateway import Gateway
from benchmarks.models.cache import ResponseCache
from benchmarks.models.client import ChatModel, Embedder, Endpoint
from benchmarks.models.scripted import ScriptedServer
from benchmarks.models.usage import UsageMeter
from benchmarks.runner.arm import Services
from benchmarks.runner.types import Event


def clients(url: str, cache: ResponseCache, meter: UsageMeter, model: str = "scripted"):
    fast = {"backoff_s": 0.01, "backoff_max_s": 0.05}
    writer = ChatModel(Endpoint(url, model, **fast), role="writer", cache=cache, meter=meter)
    embedder = Embedder(
        Endpoint(url, "scripted-embed", **fast), role="embedder", cache=cache, meter=meter
    )
    return writer, embedder


def chat_body(text: str, model: str = "scripted") -> dict:
    return {"model": model, "messages": [{"role": "user", "content": text}], "temperature": 0}


def test_gateway_forwards_meters_and_caches(tmp_path) -> None:
    rules = [("capital", "Paris")]
    models = ["scripted", "scripted-embed"]
    with ScriptedServer(rules, models=models, faults={1: "500"}) as server:
        meter = UsageMeter()
        writer, embedder = clients(server.base_url, ResponseCache(tmp_path / "c.sqlite"), meter)
        with Gateway(writer, embedder) as gw:
            assert gw.base_url.startswith("http://127.0.0.1:")
            first = httpx.post(f"{gw.base_url}/chat/completions", json=chat_body("capital?"))
            assert first.status_code == 200
            assert first.json()["choices"][0]["message"]["content"] == "Paris"
            # the injected 500 on the first upstream request was retried by the harness client
            assert meter.role("writer").retries == 1
            assert meter.role("writer").calls == 1
            again = httpx.post(f"{gw.base_url}/chat/completions", json=chat_body("capital?"))
            assert again.json() == first.json()
            assert server.count("/chat/completions") == 2  # the fault + one real call
            assert meter.role("writer").cache_hits == 1

            emb = httpx.post(
                f"{gw.base_url}/embeddings", json={"model": "scripted-embed", "input": ["a b"]}
            )
            assert emb.status_code == 200 and len(emb.json()["data"][0]["embedding"]) == 64
            assert meter.role("embedder").calls == 1
            assert meter.role("writer").prompt_tokens > 0

            listed = httpx.get(f"{gw.base_url}/models")
            assert {m["id"] for m in listed.json()["data"]} == set(models)
            assert gw.requests == {"chat": 2, "embeddings": 1}


def test_gateway_passes_configuration_errors_through_with_their_status(tmp_path) -> None:
    with ScriptedServer(models=["scripted", "scripted-embed"]) as server:
        writer, embedder = clients(server.base_url, ResponseCache(None), UsageMeter())
        with Gateway(writer, embedder) as gw:
            resp = httpx.post(f"{gw.base_url}/chat/completions", json=chat_body("hi", "gpt-4o"))
            assert resp.status_code == 404
            assert "gpt-4o" in resp.json()["error"]["message"]
            missing = httpx.post(f"{gw.base_url}/completions", json=chat_body("hi"))
            assert missing.status_code == 404


def test_stopping_the_gateway_fails_the_call_in_flight_at_once() -> None:
    """A run stopped by SIGTERM stops its peer's gateway; the package's call in flight (minutes
    on the local model) must fail now, not hold the run until it returns."""
    import threading
    import time

    from openai import APIStatusError, OpenAI

    with ScriptedServer(models=["scripted", "scripted-embed"], latency_s=30) as server:
        writer, embedder = clients(server.base_url, ResponseCache(None), UsageMeter())
        gw = Gateway(writer, embedder)
        client = OpenAI(base_url=gw.start(), api_key="none", max_retries=2)
        failure: list[BaseException] = []

        def call() -> None:
            try:
                client.chat.completions.create(**chat_body("slow"))
            except BaseException as exc:  # what the package sees
                failure.append(exc)

        caller = threading.Thread(target=call)
        caller.start()
        deadline = time.monotonic() + 10
        while not server.count("/chat/completions"):  # the call reached the model
            assert time.monotonic() < deadline and caller.is_alive(), failure
            time.sleep(0.02)
        started = time.monotonic()
        gw.stop()
        caller.join(10)
        took = time.monotonic() - started
        assert not caller.is_alive() and took < 1.0  # no retry with backoff either
        assert isinstance(failure[0], APIStatusError) and failure[0].status_code == 503
        assert "the run is stopping" in str(failure[0])
        assert gw.requests["chat"] == 1  # x-should-retry: false, so the SDK did not retry


class _Absent(PeerArm):
    module: ClassVar[str] = "no_such_peer_package_xyz"
    extra: ClassVar[str] = "nopeer"


def test_a_missing_peer_package_names_its_install_command() -> None:
    with pytest.raises(PeerNotInstalled, match=r"make setup-peers PEERS=nopeer.*\.\[nopeer\]"):
        _Absent(Services())


def test_items_are_events_or_line_aligned_chunks() -> None:
    events = [Event(f"e{i}", f"{i}. fact number {i}", at=f"2024-01-0{i + 1}") for i in range(5)]
    assert [(it.index, it.text, it.at) for it in items_of(events, None)][1] == (
        1,
        "1. fact number 1",
        "2024-01-02",
    )
    packed = items_of(events, 40)
    assert len(packed) < len(events)
    assert "\n".join(it.text for it in packed) == "\n".join(e.text for e in events)
    assert all(len(it.text) <= 40 for it in packed)


def test_install_commands_match_the_makefile() -> None:
    import re
    from pathlib import Path

    from baselines.peers.base import NO_DEPS, install_command

    makefile = (Path(__file__).parents[1] / "Makefile").read_text()
    declared = dict(re.findall(r"^NODEPS_(\w+) :=[ \t]*(.*)$", makefile, re.M))
    assert {k: v for k, v in declared.items() if v} == NO_DEPS
    assert install_command("hipporag").endswith("pip install --no-deps hipporag==2.0.0a4)")
    assert "--no-deps" not in install_command("mem0")


def test_turns_of_one_session_form_one_unit() -> None:
    turns = [
        Event(
            f"t{i}",
            f"user: line {i}",
            at=f"2024-01-0{1 + i // 2}",
            meta={"session_id": f"s{i // 2}"},
        )
        for i in range(5)
    ]
    units = items_of(turns, None)
    assert [u.text for u in units] == [
        "user: line 0\nuser: line 1",
        "user: line 2\nuser: line 3",
        "user: line 4",
    ]
    assert [u.at for u in units] == ["2024-01-01", "2024-01-02", "2024-01-03"]
