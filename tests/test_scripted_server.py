"""The scripted OpenAI-compatible server and the managed-server machinery, over real HTTP."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import httpx2 as httpx  # the HTTP library the openai SDK (3.x) brings
import pytest

from benchmarks.models.scripted import ScriptedServer
from benchmarks.models.server import ServerStartError, SubprocessServer, free_port, wait_healthy

REPO = Path(__file__).resolve().parents[1]
RULES = [(r"capital of (\w+)", r"The capital of \1 is X."), (r"(?i)hello", "Hi there!")]


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    with ScriptedServer(RULES, default="I don't know.", models=["chat-a", "embed-b"]) as srv:
        yield srv


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=5, trust_env=False) as client:
        yield client


def chat(
    http: httpx.Client, url: str, text: str, model: str = "scripted", **extra: object
) -> httpx.Response:
    body = {"model": model, "messages": [{"role": "user", "content": text}], **extra}
    return http.post(f"{url}/chat/completions", json=body)


def test_models_health_and_counters(server: ScriptedServer, http: httpx.Client) -> None:
    assert server.base_url.startswith("http://127.0.0.1:") and server.base_url.endswith("/v1")
    assert http.get(f"{server.root_url}/health").json() == {"status": "ok"}
    ids = [m["id"] for m in http.get(f"{server.base_url}/models").json()["data"]]
    assert ids == ["chat-a", "embed-b"]
    assert server.count() == 2 and server.count("/models") == 1 and server.count("/health") == 1


def test_rules_first_match_with_groups_then_default(
    server: ScriptedServer, http: httpx.Client
) -> None:
    body = chat(http, server.base_url, "What is the capital of France? hello", "chat-a").json()
    assert body["choices"][0]["message"] == {
        "role": "assistant",
        "content": "The capital of France is X.",
    }
    assert chat(http, server.base_url, "HELLO you", "chat-a").json()["choices"][0]["message"][
        "content"
    ] == ("Hi there!")
    reply = chat(http, server.base_url, "nothing matches", "chat-a").json()
    assert reply["choices"][0]["message"]["content"] == "I don't know."
    # usage: whitespace tokens of every message, and of the reply
    assert reply["usage"] == {"prompt_tokens": 2, "completion_tokens": 3, "total_tokens": 5}
    assert server.count("/v1/chat/completions") == 3


def test_rules_match_the_last_user_message_only(server: ScriptedServer, http: httpx.Client) -> None:
    messages = [
        {"role": "system", "content": "hello system"},
        {"role": "user", "content": "capital of Peru"},
        {"role": "assistant", "content": "..."},
        {"role": "user", "content": [{"type": "text", "text": "and the capital of Chile"}]},
    ]
    body = {"model": "chat-a", "messages": messages}
    reply = http.post(f"{server.base_url}/chat/completions", json=body).json()
    assert reply["choices"][0]["message"]["content"] == "The capital of Chile is X."


def test_a_callable_script_and_max_tokens() -> None:
    def script(messages: list[dict[str, object]]) -> str:
        return f"{len(messages)} messages: one two three four"

    with ScriptedServer(script) as srv, httpx.Client(trust_env=False) as http:
        reply = chat(http, srv.base_url, "x", max_tokens=2).json()
    assert reply["choices"][0]["message"]["content"] == "1 messages:"
    assert reply["choices"][0]["finish_reason"] == "length"


def test_response_format_returns_the_scripted_reply_as_is(http: httpx.Client) -> None:
    with ScriptedServer(default='```json\n{"op": "noop"}\n```') as srv:
        fmt = {"type": "json_schema", "json_schema": {"name": "a", "schema": {"type": "object"}}}
        body = {"model": "scripted", "messages": [], "response_format": fmt}
        reply = http.post(f"{srv.base_url}/chat/completions", json=body).json()
        assert reply["choices"][0]["message"]["content"] == '```json\n{"op": "noop"}\n```'
        assert srv.last_body()["response_format"] == fmt


def test_unknown_model_is_a_404_naming_it(server: ScriptedServer, http: httpx.Client) -> None:
    resp = http.post(f"{server.base_url}/chat/completions", json={"model": "gpt-9", "messages": []})
    assert resp.status_code == 404
    error = resp.json()["error"]
    assert "gpt-9" in error["message"] and error["code"] == "model_not_found"
    resp = http.post(f"{server.base_url}/embeddings", json={"model": "gpt-9", "input": "x"})
    assert resp.status_code == 404


def test_bad_requests_are_400s(server: ScriptedServer, http: httpx.Client) -> None:
    url = f"{server.base_url}/chat/completions"
    assert http.post(url, content=b"{not json").status_code == 400
    assert http.post(url, json={"model": "chat-a", "messages": "hi"}).status_code == 400
    assert http.get(f"{server.base_url}/nothing").status_code == 404


def test_embeddings_are_deterministic_unit_vectors(
    server: ScriptedServer, http: httpx.Client
) -> None:
    url = f"{server.base_url}/embeddings"
    texts = ["the cat sat on the mat", "a cat sat on a mat", "quarterly revenue grew", "x"]
    body = http.post(url, json={"model": "embed-b", "input": texts}).json()
    vecs = [d["embedding"] for d in sorted(body["data"], key=lambda d: d["index"])]
    assert len(vecs) == 4 and all(len(v) == 64 for v in vecs)
    assert all(math.isclose(sum(x * x for x in v), 1.0, rel_tol=1e-9) for v in vecs)

    def cos(a: list[float], b: list[float]) -> float:
        return sum(x * y for x, y in zip(a, b, strict=True))

    assert cos(vecs[0], vecs[1]) > cos(vecs[0], vecs[2])  # shared words are closer
    again = http.post(url, json={"model": "embed-b", "input": "the cat sat on the mat"}).json()
    assert again["data"][0]["embedding"] == vecs[0]
    short = http.post(url, json={"model": "embed-b", "input": ["x"], "dimensions": 8}).json()
    assert len(short["data"][0]["embedding"]) == 8
    assert http.post(url, json={"input": ["x"], "dimensions": 65}).status_code == 400


def test_embedding_dimension_is_configurable(http: httpx.Client) -> None:
    with ScriptedServer(embedding_dim=384) as srv:
        body = http.post(f"{srv.base_url}/embeddings", json={"input": "hello"}).json()
    assert len(body["data"][0]["embedding"]) == 384


def test_tokenize_styles(http: httpx.Client) -> None:
    with ScriptedServer() as srv:
        tokens = http.post(f"{srv.root_url}/tokenize", json={"content": "a b  c"}).json()
        assert len(tokens["tokens"]) == 3
        assert http.post(f"{srv.root_url}/tokenize", json={"prompt": "a"}).json() == {"tokens": []}
    with ScriptedServer(tokenize="vllm") as srv:
        resp = http.post(f"{srv.root_url}/tokenize", json={"model": "scripted", "prompt": "a b"})
        assert resp.json()["count"] == 2
        assert http.post(f"{srv.root_url}/tokenize", json={"content": "a"}).status_code == 400
    with ScriptedServer(tokenize=False) as srv:
        assert http.post(f"{srv.root_url}/tokenize", json={"content": "a"}).status_code == 404


def test_faults_are_seeded_by_request_number(http: httpx.Client) -> None:
    def statuses(seed: int) -> list[int]:
        with ScriptedServer(p_500=0.3, p_429=0.2, p_malformed=0.2, seed=seed) as srv:
            return [chat(http, srv.base_url, "q").status_code for _ in range(30)]

    first = statuses(7)
    assert first == statuses(7)
    assert first != statuses(8)
    assert {500, 429, 200} <= set(first)


def test_fault_kinds(http: httpx.Client) -> None:
    plan = {1: "500", 2: "429", 3: "malformed", 4: "timeout"}
    with ScriptedServer(faults=plan, retry_after_s=0.25, timeout_sleep_s=0.3) as srv:
        url = srv.base_url
        assert chat(http, url, "q").status_code == 500
        limited = chat(http, url, "q")
        assert limited.status_code == 429 and limited.headers["retry-after"] == "0.25"
        broken = chat(http, url, "q")
        assert broken.status_code == 200
        with pytest.raises(json.JSONDecodeError):
            json.loads(broken.content)
        with pytest.raises(httpx.ReadTimeout):
            http.post(f"{url}/chat/completions", json={"messages": []}, timeout=0.1)
        assert chat(http, url, "q").status_code == 200
        assert srv.faults_injected == {"500": 1, "429": 1, "malformed": 1, "timeout": 1}
        assert http.get(f"{url}/models").status_code == 200  # GETs are never faulted


def test_fixed_latency_and_api_key(http: httpx.Client) -> None:
    with ScriptedServer(latency_s=0.2, api_key="sekret") as srv:
        assert chat(http, srv.base_url, "q").status_code == 401
        started = time.perf_counter()
        ok = http.post(
            f"{srv.base_url}/chat/completions",
            json={"messages": [{"role": "user", "content": "q"}]},
            headers={"Authorization": "Bearer sekret"},
        )
        assert ok.status_code == 200 and time.perf_counter() - started >= 0.2


def test_a_stopped_server_refuses_connections(http: httpx.Client) -> None:
    srv = ScriptedServer()
    url = srv.start()
    assert chat(http, url, "q").status_code == 200  # leaves a kept-alive connection
    srv.stop()
    srv.stop()  # idempotent
    with pytest.raises(httpx.TransportError):
        chat(http, url, "q")
    with pytest.raises(RuntimeError, match="not running"):
        _ = srv.base_url


# ---- subprocess servers ----


def _alive(pid: int) -> bool:
    """Running, and not a zombie left for a non-reaping init to collect."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


def _wait_dead(pid: int, timeout_s: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.05)
    return False


def _scripted_command(*extra: str) -> list[str]:
    return [sys.executable, "-m", "benchmarks.models.scripted", "--port", "{port}", *extra]


def test_cli_server_with_a_rules_file(tmp_path: Path, http: httpx.Client) -> None:
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps({"rules": [["ping (\\d+)", "pong \\1"]], "models": ["m1"]}))
    log = tmp_path / "logs" / "scripted.log"
    with SubprocessServer(_scripted_command("--rules", str(rules)), log_path=log) as srv:
        assert srv.base_url.endswith("/v1")
        body = {"model": "m1", "messages": [{"role": "user", "content": "ping 42"}]}
        reply = http.post(f"{srv.base_url}/chat/completions", json=body).json()
        assert reply["choices"][0]["message"]["content"] == "pong 42"
        pid = srv.pid
        assert pid is not None and _alive(pid)
    assert not _alive(pid)
    assert "scripted server: http://127.0.0.1:" in log.read_text()


def test_a_server_that_dies_at_start_shows_its_log() -> None:
    command = [sys.executable, "-c", "import sys; print('boom: no model file'); sys.exit(3)"]
    started = time.monotonic()
    with pytest.raises(ServerStartError, match=r"(?s)code 3.*boom: no model file"):
        SubprocessServer(command, startup_timeout_s=30).start()
    assert time.monotonic() - started < 5


def test_wait_healthy_times_out_naming_the_url() -> None:
    url = f"http://127.0.0.1:{free_port()}/health"
    with pytest.raises(ServerStartError, match=url):
        wait_healthy(url, 0.3)


_CHILD = textwrap.dedent(
    """
    import sys, time
    from benchmarks.models.server import SubprocessServer
    module = "benchmarks.models.scripted"
    server = SubprocessServer([sys.executable, "-m", module, "--port", "{port}"])
    server.start()
    print(server.pid, flush=True)
    if sys.argv[1] == "hang":
        time.sleep(60)
    """
)


def _spawn_parent(mode: str) -> tuple[subprocess.Popen[str], int]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    parent = subprocess.Popen(
        [sys.executable, "-c", _CHILD, mode], stdout=subprocess.PIPE, text=True, env=env
    )
    assert parent.stdout is not None
    return parent, int(parent.stdout.readline())


def test_a_server_left_running_is_stopped_at_interpreter_exit() -> None:
    parent, pid = _spawn_parent("exit")  # exits without calling stop()
    with parent:
        assert parent.wait(timeout=15) == 0
    assert _wait_dead(pid, 2.0)


def test_a_server_dies_with_its_parent_even_on_sigkill() -> None:
    parent, pid = _spawn_parent("hang")
    with parent:
        assert _alive(pid)
        parent.send_signal(signal.SIGKILL)
        parent.wait(timeout=5)
    assert _wait_dead(pid)


_DEAF_CHILD = textwrap.dedent(
    """
    import signal, sys, time
    from benchmarks.models.server import SubprocessServer
    # a server that, like a busy llama-server, does not obey SIGTERM
    deaf = (
        "import runpy, signal, sys; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
        "signal.signal = lambda *a: None; sys.argv = ['scripted', '--port', sys.argv[1]]; "
        "runpy.run_module('benchmarks.models.scripted', run_name='__main__')"
    )
    server = SubprocessServer([sys.executable, "-c", deaf, "{port}"])
    if sys.argv[1] == "kill":
        server.death_signal = signal.SIGKILL
    server.start()
    print(server.pid, flush=True)
    time.sleep(60)
    """
)


@pytest.mark.parametrize("death_signal", ["term", "kill"])
def test_a_server_deaf_to_sigterm_dies_with_its_parent_only_on_sigkill(death_signal: str) -> None:
    """llama-server finishes its batch before it obeys SIGTERM (minutes on 2 cores), so a
    SIGKILLed run left it busy and orphaned; it now asks the kernel for SIGKILL instead."""
    from benchmarks.models.local.llama import LlamaCppServer

    env = {**os.environ, "PYTHONPATH": str(REPO)}
    parent = subprocess.Popen(
        [sys.executable, "-c", _DEAF_CHILD, death_signal],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert parent.stdout is not None
    pid = int(parent.stdout.readline())
    try:
        with parent:
            parent.send_signal(signal.SIGKILL)
            parent.wait(timeout=5)
        assert _wait_dead(pid, 3.0) == (death_signal == "kill")
    finally:
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)
    assert LlamaCppServer.death_signal == signal.SIGKILL


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.10", "::"])
def test_servers_refuse_a_non_loopback_host_unless_asked(host: str) -> None:
    from benchmarks.models.server import ServerStartError, SubprocessServer

    with pytest.raises(ServerStartError, match="not a loopback address"):
        ScriptedServer(host=host)
    with pytest.raises(ServerStartError, match="allow_remote=true"):
        SubprocessServer(["llama-server"], host=host)
    assert ScriptedServer(host=host, allow_remote=True).host == host  # on purpose: allowed
    assert ScriptedServer(host="127.0.0.2").host == "127.0.0.2"
