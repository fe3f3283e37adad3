"""The peer arms' shared parts, without any peer package: the gateway and the install error."""

from __future__ import annotations

import asyncio
from typing import ClassVar

import httpx2 as httpx  # the HTTP library the openai SDK (3.x) brings
import pytest

from baselines.peers.base import PeerArm, PeerCallFailed, PeerNotInstalled, items_of
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
            sent = server.count("/chat/completions")
            listed = httpx.post(f"{gw.base_url}/chat/completions", json=[chat_body("hi")])
            assert listed.json()["error"]["message"] == "request body is not a JSON object"
            assert listed.status_code == 400 and server.count("/chat/completions") == sent
            # answers the package could swallow are kept for the arm's check; a missing route is
            # not (packages probe routes and handle the 404 themselves)
            assert len(gw.failures) == 2
            assert "HTTP 404" in gw.failures[0] and "gpt-4o" in gw.failures[0]
            assert gw.failures[1].endswith("HTTP 400: request body is not a JSON object")


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


def test_identical_requests_in_flight_are_paid_once(tmp_path) -> None:
    """HippoRAG sends its NER and triple calls eight at a time with a 5-minute read timeout; on
    a one-slot local server the last ones wait longer than that, and the package retries the
    same body while the first is still queued upstream. The retry waits for that call."""
    from concurrent.futures import ThreadPoolExecutor

    with ScriptedServer([("capital", "Paris")], models=["scripted"], latency_s=0.5) as server:
        meter = UsageMeter()
        writer, embedder = clients(server.base_url, ResponseCache(tmp_path / "c.sqlite"), meter)
        with Gateway(writer, embedder) as gw:
            url = f"{gw.base_url}/chat/completions"
            with ThreadPoolExecutor(3) as pool:
                replies = list(
                    pool.map(lambda _: httpx.post(url, json=chat_body("capital?")), [1, 2, 3])
                )
            assert [r.status_code for r in replies] == [200] * 3
            assert len({r.content for r in replies}) == 1
            assert server.count("/chat/completions") == 1
            assert meter.role("writer").calls == 1 and meter.role("writer").cache_hits == 2


def test_identical_requests_through_two_gateways_are_paid_once(tmp_path, capfd) -> None:
    """Each episode's peer has a gateway of its own, each on its own event loop, and they share
    the run's writer and cache. Episodes ingested at once send identical bodies (the conflict
    probe's "-pre" and final episodes of a case share their events): the second waits for the
    first's call across the loops, not a RuntimeError ("attached to a different loop") that
    the package sees as a dropped connection."""
    from concurrent.futures import ThreadPoolExecutor

    with ScriptedServer([("capital", "Paris")], models=["scripted"], latency_s=0.5) as server:
        meter = UsageMeter()
        writer, embedder = clients(server.base_url, ResponseCache(tmp_path / "c.sqlite"), meter)
        with Gateway(writer, embedder) as one, Gateway(writer, embedder) as two:
            urls = [f"{gw.base_url}/chat/completions" for gw in (one, two, one, two)]
            with ThreadPoolExecutor(4) as pool:
                replies = list(pool.map(lambda u: httpx.post(u, json=chat_body("capital?")), urls))
            assert [r.status_code for r in replies] == [200] * 4
            assert len({r.content for r in replies}) == 1
            assert server.count("/chat/completions") == 1
            assert meter.role("writer").calls == 1 and meter.role("writer").cache_hits == 3
    assert "Traceback" not in capfd.readouterr().err


def test_a_package_that_stops_waiting_gets_one_line_and_its_retry_costs_nothing(
    tmp_path, capfd, caplog
) -> None:
    """The package closes its connection before the reply (its own timeout): the gateway says
    so in one line, no BrokenPipeError traceback, and the package's retry of the same body is
    answered from the response cache."""
    import json
    import socket
    import struct
    import time

    with ScriptedServer([("capital", "Paris")], models=["scripted"], latency_s=0.5) as server:
        meter = UsageMeter()
        writer, embedder = clients(server.base_url, ResponseCache(tmp_path / "c.sqlite"), meter)
        with Gateway(writer, embedder) as gw, caplog.at_level("INFO", "baselines.peers.gateway"):
            port = int(gw.base_url.rsplit(":", 1)[1].split("/")[0])
            body = json.dumps(chat_body("capital?")).encode()
            sock = socket.create_connection(("127.0.0.1", port))
            sock.sendall(
                b"POST /v1/chat/completions HTTP/1.1\r\nHost: gw\r\n"
                b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body) + body
            )
            deadline = time.monotonic() + 10
            while not server.count("/chat/completions"):  # the call reached the model
                assert time.monotonic() < deadline
                time.sleep(0.02)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            sock.close()  # a reset, as a client that timed out leaves it
            while not gw.gone:
                assert time.monotonic() < deadline, "the gateway never noticed"
                time.sleep(0.02)
            retry = httpx.post(f"{gw.base_url}/chat/completions", json=chat_body("capital?"))
            assert retry.json()["choices"][0]["message"]["content"] == "Paris"
            assert server.count("/chat/completions") == 1
            assert meter.role("writer").cache_hits == 1
    assert "Traceback" not in capfd.readouterr().err
    (line,) = [r.getMessage() for r in caplog.records if "stopped waiting" in r.getMessage()]
    assert "/v1/chat/completions" in line and "answered from the response cache" in line


class _Swallowing(PeerArm):
    """A package that, like Mem0, logs a failed model call and carries on without its reply."""

    module: ClassVar[str] = "json"  # any importable module: the package is this class
    extra: ClassVar[str] = "swallowing"
    incremental: ClassVar[bool] = True

    def __init__(self, services: Services, workdir: str, model: str = "scripted") -> None:
        super().__init__(services, workdir=workdir)
        self.model = model  # the model the package asks the gateway for

    async def ingest_items(self, items, endpoints) -> None:
        for item in items:
            body = chat_body(item.text, self.model)
            url = f"{endpoints.llm_base_url}/chat/completions"
            reply = await asyncio.to_thread(httpx.post, url, json=body)
            self.stats["kept"] = self.stats.get("kept", 0) + (reply.status_code == 200)


def test_a_package_that_carries_on_after_a_failed_call_stops_the_run(tmp_path) -> None:
    """Mem0 answers a failed extraction with "no memories to extract" and goes on: scored, its
    store would look like a complete one. The arm stops at the first error answer, naming it."""
    events = [Event("e0", "capital of France?", at="2024-01-01")]
    with ScriptedServer([("capital", "Paris")], models=["scripted", "scripted-embed"]) as server:
        writer, embedder = clients(server.base_url, ResponseCache(None), UsageMeter())
        services = Services(writer=writer, embedder=embedder)
        fine = _Swallowing(services, workdir=str(tmp_path / "a"))
        asyncio.run(fine.ingest(events))  # every call answered: no complaint
        assert fine.stats["kept"] == 1
        asyncio.run(fine.aclose())

        # an unknown upstream model: HTTP 404, which the package swallows
        failing = _Swallowing(services, workdir=str(tmp_path / "b"), model="gpt-4o")
        named = r"swallowing package got 1 error.*HTTP 404.*gpt-4o"
        with pytest.raises(PeerCallFailed, match=named):
            asyncio.run(failing.ingest(events))
        asyncio.run(failing.aclose())


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


_HUB_AFTER_A_PEER = """
import os
import sys
from typing import ClassVar
from baselines.peers.base import PeerArm
from benchmarks.runner.arm import Services

class Stdlib(PeerArm):  # a package that is always there: only the arm's own setup runs
    module: ClassVar[str] = "json"
    extra: ClassVar[str] = "stdlib"

Stdlib(Services(), workdir=sys.argv[1])
import huggingface_hub.constants as hub  # first imported after the peer arm was built
print(hub.HF_HUB_OFFLINE, os.environ.get("HF_HUB_OFFLINE"), os.environ.get("TRANSFORMERS_OFFLINE"))
"""


def test_building_a_peer_arm_leaves_the_hub_usable(tmp_path) -> None:
    """huggingface_hub reads its offline switch once, at its first import: a peer arm that set
    HF_HUB_OFFLINE would refuse every later download in the process (a LongMemEval file, the
    FactConsolidation parquet). Only a fresh interpreter shows the order, so one is started."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    pytest.importorskip("huggingface_hub")
    switches = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
    env = {k: v for k, v in os.environ.items() if k not in switches}
    out = subprocess.run(
        [sys.executable, "-c", _HUB_AFTER_A_PEER, str(tmp_path / "arm")],
        capture_output=True,
        text=True,
        env=env,
        cwd=Path(__file__).parents[1],
        timeout=120,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["False", "None", "None"]


def test_scoped_environ_puts_back_what_was_there(monkeypatch) -> None:
    """What a peer package reads at import or construction (Mem0's home, HippoRAG's key) is set
    for that block only: afterwards the process sees its own environment again."""
    import os

    from baselines.peers.base import scoped_environ

    monkeypatch.delenv("PMEM_T_UNSET", raising=False)
    monkeypatch.setenv("PMEM_T_SET", "mine")
    with scoped_environ({"PMEM_T_UNSET": "a", "PMEM_T_SET": "b"}):
        assert (os.environ["PMEM_T_UNSET"], os.environ["PMEM_T_SET"]) == ("a", "b")
    assert "PMEM_T_UNSET" not in os.environ and os.environ["PMEM_T_SET"] == "mine"

    with scoped_environ({"PMEM_T_UNSET": "a", "PMEM_T_SET": "b"}, keep_set=True):
        assert (os.environ["PMEM_T_UNSET"], os.environ["PMEM_T_SET"]) == ("a", "mine")
    assert "PMEM_T_UNSET" not in os.environ

    with pytest.raises(RuntimeError), scoped_environ({"PMEM_T_UNSET": "a"}):
        raise RuntimeError("an import that fails")
    assert "PMEM_T_UNSET" not in os.environ
