"""Hub downloads through huggingface_hub, pinned to a commit and checked by sha256.

A tiny hub runs on 127.0.0.1: it answers ``hf_hub_download``'s HEAD and GET on
``/datasets/{repo}/resolve/{revision}/{filename}`` with the headers the library reads
(``X-Repo-Commit``, ``ETag``, ``Content-Length``) and records every request, and ``HF_ENDPOINT``
points at it, so the real library really downloads into a hub cache under ``tmp_path``. Checked:
the pinned commit is what is asked for, a good file verifies and lands where ``fetch`` says, a
file with another sha256 is rejected in one line and deleted from the cache, and offline (with
nothing cached) the error is the one-line hint while a cached file still serves.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote

import pytest

pytest.importorskip("huggingface_hub", reason="huggingface_hub is not installed (harness extra)")

from benchmarks import longmemeval as lme
from benchmarks.factconsolidation.load import (
    DATA_FILE,
    HF_DATASET,
    HF_PARQUET,
    HF_REVISION,
    rows_from_hub,
)
from benchmarks.runner.hubfile import HubError, HubFile, hub_download

REPO_ROOT = Path(__file__).resolve().parents[1]
ORACLE = lme.VARIANTS["oracle"]
ROUTE = re.compile(r"^/datasets/([^/]+/[^/]+)/resolve/([^/]+)/(.+)$")
MAIN_COMMIT = "1" * 40  # what the local hub says `main` resolves to


@dataclass
class LocalHub:
    """What the local hub serves, keyed by (repo, revision, path), and what it was asked."""

    url: str
    files: dict[tuple[str, str, str], bytes] = field(default_factory=dict)
    requests: list[tuple[str, str]] = field(default_factory=list)

    def serve(self, repo: str, revision: str, filename: str, body: bytes) -> None:
        self.files[(repo, revision, filename)] = body

    def asked(self, method: str) -> list[str]:
        """The file paths asked for with that method (the library's own calls, such as its
        agent registry under /api/, left out)."""
        return [path for m, path in self.requests if m == method and path.startswith("/datasets/")]


class _HubHandler(BaseHTTPRequestHandler):
    """HEAD and GET on the resolve route, as the hub answers them for a file served directly."""

    def log_message(self, *args: object) -> None:  # keep the test output quiet
        pass

    def _answer(self, with_body: bool) -> None:
        hub: LocalHub = self.server.hub  # type: ignore[attr-defined]
        hub.requests.append((self.command, self.path))
        match = ROUTE.match(self.path.split("?")[0])
        key = (match[1], unquote(match[2]), unquote(match[3])) if match else None
        body = hub.files.get(key) if key else None
        if key is None or body is None:
            self.send_response(404)
            self.send_header("X-Error-Code", "EntryNotFound")
            self.send_header("X-Error-Message", "Entry not found")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        revision = key[1]
        commit = revision if re.fullmatch(r"[0-9a-f]{40}", revision) else MAIN_COMMIT
        self.send_response(200)
        self.send_header("X-Repo-Commit", commit)
        self.send_header("ETag", f'"{hashlib.sha256(body).hexdigest()}"')
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Content-Type", "application/octet-stream")
        self.end_headers()
        if with_body:
            self.wfile.write(body)

    def do_HEAD(self) -> None:
        self._answer(with_body=False)

    def do_GET(self) -> None:
        self._answer(with_body=True)


@pytest.fixture
def hub(monkeypatch: pytest.MonkeyPatch) -> Iterator[LocalHub]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _HubHandler)
    local = LocalHub(f"http://127.0.0.1:{server.server_address[1]}")
    server.hub = local  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    monkeypatch.setenv("HF_ENDPOINT", local.url)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("HF_DATASETS_OFFLINE", raising=False)
    try:
        yield local
    finally:
        server.shutdown()
        server.server_close()


def _pinned(body: bytes) -> lme.Variant:
    """The oracle variant at its real commit, pinned to the bytes this hub serves."""
    return lme.Variant(
        "oracle",
        ORACLE.repo,
        ORACLE.revision,
        ORACLE.filename,
        hashlib.sha256(body).hexdigest(),
        len(body),
    )


def _resolve_path(pin: HubFile) -> str:
    return f"/datasets/{pin.repo}/resolve/{pin.revision}/{pin.filename}"


def test_a_good_file_is_fetched_at_the_pinned_commit_and_lands_in_dest(
    hub: LocalHub, tmp_path: Path
) -> None:
    body = b'[{"question_id": "q1"}]\n' * 1000
    hub.serve(ORACLE.repo, ORACLE.revision, ORACLE.filename, body)
    variant = _pinned(body)
    got = lme.download(variant, tmp_path / "dest", cache_dir=tmp_path / "hub")
    assert got == tmp_path / "dest" / "longmemeval_oracle.json"
    assert got.read_bytes() == body
    # the commit of the pin, not `main`, is what was asked for: a HEAD, then the GET
    expected = _resolve_path(variant.pin)
    assert "98d7416c24c778c2fee6e6f3006e7a073259d48f" in expected
    assert hub.asked("HEAD") == [expected] and hub.asked("GET") == [expected]
    # the file sits in the hub cache under that commit, as hf_hub_download lays it out
    snapshot = (
        tmp_path
        / "hub"
        / "datasets--xiaowu0162--longmemeval-cleaned"
        / "snapshots"
        / ORACLE.revision
        / ORACLE.filename
    )
    assert snapshot.read_bytes() == body
    # a file already in dest is checked, not fetched again
    assert lme.download(variant, tmp_path / "dest", cache_dir=tmp_path / "hub") == got
    assert len(hub.asked("HEAD") + hub.asked("GET")) == 2


def test_a_file_with_another_sha256_is_rejected_in_one_line_and_deleted(
    hub: LocalHub, tmp_path: Path
) -> None:
    body = b"[]"  # not the official oracle file: the real pin must reject it
    hub.serve(ORACLE.repo, ORACLE.revision, ORACLE.filename, body)
    with pytest.raises(lme.DownloadError) as info:
        lme.download(ORACLE, tmp_path / "dest", cache_dir=tmp_path / "hub")
    message = str(info.value)
    assert "\n" not in message
    assert ORACLE.filename in message and ORACLE.revision in message
    assert f"the pinned {ORACLE.sha256} (15,388,478 bytes)" in message
    assert f"got sha256 {hashlib.sha256(body).hexdigest()} (2 bytes)" in message
    assert message.endswith("that copy was deleted from the hub cache, not used")
    assert not (tmp_path / "dest" / ORACLE.local_name).exists()
    cached = list((tmp_path / "hub").rglob(ORACLE.filename)) + list(
        (tmp_path / "hub").rglob("blobs/*")
    )
    assert cached == []  # neither the snapshot entry nor its blob is left to be reused


def test_offline_with_nothing_cached_is_the_one_line_hint(
    hub: LocalHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hub.serve(ORACLE.repo, ORACLE.revision, ORACLE.filename, b"[]")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(lme.DownloadError) as info:
        lme.download(ORACLE, tmp_path / "dest", cache_dir=tmp_path / "hub")
    message = str(info.value)
    assert "\n" not in message and message.startswith("offline (HF_HUB_OFFLINE=1): ")
    assert f"{hub.url}{_resolve_path(ORACLE.pin)} is not in the hub cache" in message
    assert str(tmp_path / "dest" / ORACLE.local_name) in message
    assert hub.requests == []  # offline means no request at all


def test_offline_a_file_in_the_hub_cache_still_serves(
    hub: LocalHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    body = b'[{"question_id": "cached"}]'
    hub.serve(ORACLE.repo, ORACLE.revision, ORACLE.filename, body)
    variant = _pinned(body)
    lme.download(variant, tmp_path / "first", cache_dir=tmp_path / "hub")
    asked = len(hub.requests)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    got = lme.download(variant, tmp_path / "second", cache_dir=tmp_path / "hub")
    assert got.read_bytes() == body and len(hub.requests) == asked  # nothing asked


def test_factconsolidation_asks_for_the_pinned_commit_and_rejects_another_parquet(
    hub: LocalHub, tmp_path: Path
) -> None:
    pin = HF_PARQUET
    assert pin.revision == "7ea066982b140a19337e17e60d45d4076e042faf"
    assert pin.filename == "data/Conflict_Resolution-00000-of-00001.parquet"
    hub.serve(pin.repo, pin.revision, pin.filename, b"PAR1 not the split PAR1")
    with pytest.raises(HubError, match="is not the pinned 24d5c3f09ce0") as info:
        hub_download(pin, hint="omit path", cache_dir=tmp_path / "hub")
    assert "\n" not in str(info.value) and "1,491,588 bytes" in str(info.value)
    assert hub.asked("HEAD") == [_resolve_path(pin)]
    assert list((tmp_path / "hub").rglob("*.parquet")) == []


def test_factconsolidation_rows_from_the_hub_parquet_are_the_canonical_rows(
    hub: LocalHub, tmp_path: Path
) -> None:
    pa = pytest.importorskip("pyarrow", reason="pyarrow is not installed (writes the parquet)")
    import pyarrow.parquet as pq

    rows = json.loads(gzip.decompress(DATA_FILE.read_bytes()))
    sink = pa.BufferOutputStream()
    pq.write_table(pa.Table.from_pylist(rows), sink)
    body = sink.getvalue().to_pybytes()
    pin = HubFile(
        HF_DATASET,
        HF_REVISION,
        HF_PARQUET.filename,
        hashlib.sha256(body).hexdigest(),
        len(body),
    )
    hub.serve(pin.repo, pin.revision, pin.filename, body)
    got, sha = rows_from_hub(pin, cache_dir=tmp_path / "hub")
    assert list(got) == rows and len(got) == 8
    canonical = json.dumps(tuple(rows), sort_keys=True, ensure_ascii=False).encode()
    assert sha == hashlib.sha256(canonical).hexdigest()
    assert hub.asked("GET") == [_resolve_path(pin)]


def _cli(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "HF_HUB_DISABLE_PROGRESS_BARS": "1", "NO_PROXY": "127.0.0.1", **env}
    return subprocess.run(
        [sys.executable, "-m", "benchmarks.longmemeval", *args],
        cwd=REPO_ROOT,
        env=full,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_fetch_command_downloads_through_hf_home_and_hf_endpoint(
    hub: LocalHub, tmp_path: Path
) -> None:
    body = b'[{"question_id": "s"}]'
    s = lme.VARIANTS["s"]  # no pin known: fetched at `main`, its hash recorded
    hub.serve(s.repo, s.revision, s.filename, body)
    env = {"HF_ENDPOINT": hub.url, "HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "0"}
    done = _cli(["fetch", "--variant", "s", "--dest", str(tmp_path / "dest")], env)
    assert done.returncode == 0, done.stderr
    assert "status:   downloaded" in done.stdout and "recorded in" in done.stdout
    assert (tmp_path / "dest" / "longmemeval_s.json").read_bytes() == body
    assert hub.asked("GET") == [_resolve_path(s.pin)]
    assert list((tmp_path / "hf" / "hub").rglob("longmemeval_s")) != []


def test_the_fetch_command_offline_prints_where_to_put_the_file(
    hub: LocalHub, tmp_path: Path
) -> None:
    env = {"HF_ENDPOINT": hub.url, "HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "1"}
    done = _cli(["fetch", "--variant", "oracle", "--dest", str(tmp_path / "dest")], env)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    status = next(line for line in done.stderr.splitlines() if line.startswith("status:"))
    assert "offline (HF_HUB_OFFLINE=1)" in status and _resolve_path(ORACLE.pin) in status
    assert str(tmp_path / "dest" / ORACLE.local_name) in status
    assert hub.requests == []


def test_without_huggingface_hub_the_error_is_the_install_hint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "huggingface_hub", None)  # as if it were not installed
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("HF_DATASETS_OFFLINE", raising=False)
    with pytest.raises(lme.DownloadError) as info:
        lme.download(ORACLE, tmp_path / "dest", cache_dir=tmp_path / "hub")
    message = str(info.value)
    assert "\n" not in message and "pip install huggingface_hub" in message
    assert _resolve_path(ORACLE.pin) in message
    assert str(tmp_path / "dest" / ORACLE.local_name) in message
