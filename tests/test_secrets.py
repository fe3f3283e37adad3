"""A credential given on the command line, under any of the names people give one, never
reaches a file: not the manifest, not the logs, not the response cache."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.runner.runs import redacted, secret_key

PLANTED = {
    "+llm.api_key": "sk-planted-one",
    "+llm.apikey": "sk-planted-two",
    "+llm.headers.Authorization": "Bearer sk-planted-three",
    "+llm.headers.X-Api-Key": "sk-planted-four",
    "+llm.proxy_url": "https://ada:sk-planted-five@proxy.example:3128",
    "+embedder.hf_token": "hf-planted-six",
}


@pytest.mark.parametrize(
    ("key", "secret"),
    [
        ("api_key", True), ("OPENAI_API_KEY", True), ("apikey", True), ("hf_token", True),
        ("Authorization", True), ("X-Api-Key", True), ("client_secret", True),
        ("password", True), ("api_key_env", False), ("max_tokens", False),
        ("prompt_tokens", False), ("tokenizer", False), ("token_budget", False),
    ],
)  # fmt: skip
def test_a_credentials_name_is_known_by_what_it_ends_with(key: str, secret: bool) -> None:
    assert secret_key(key) is secret


def test_credentials_inside_values_are_redacted() -> None:
    cfg = {"base_url": "https://u:pw@host/v1", "auth": "Bearer abc.def", "note": "token budget"}
    assert redacted(cfg) == {
        "base_url": "https://<redacted>@host/v1",
        "auth": "<redacted>",
        "note": "token budget",
    }


def test_a_planted_secret_reaches_no_file_of_the_run(tmp_path: Path) -> None:
    root = tmp_path / "runs"
    overrides = [f"{k}={v}" for k, v in PLANTED.items()]
    out = subprocess.run(
        [
            sys.executable, "-m", "benchmarks.runner", "experiment=smoke", "llm=scripted",
            "embedder=scripted", "run.progress=false", f"run.root={root}", *overrides,
        ],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.name == "manifest.json" for p in files)
    assert any(p.name.startswith("cache.sqlite") for p in files)
    for path in files:
        data = path.read_bytes()
        for secret in re.findall(r"(?:sk|hf)-planted-\w+", " ".join(PLANTED.values())):
            assert secret.encode() not in data, f"{secret} in {path}"


def test_a_secret_in_a_failing_urls_error_reaches_neither_screen_nor_file(tmp_path: Path) -> None:
    """An unreachable server whose URL carries credentials: the error names the URL with the
    credentials replaced, on the screen and in the run's log."""
    root = tmp_path / "runs"
    out = subprocess.run(
        [
            sys.executable, "-m", "benchmarks.runner", "experiment=smoke", "run.progress=false",
            f"run.root={root}", "llm.server=null", "llm.max_retries=0",
            "llm.base_url=http://ada:sk-planted-seven@127.0.0.1:9/v1",
            "+llm.headers.Authorization=Bearer sk-planted-eight",
        ],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )  # fmt: skip
    assert out.returncode != 0
    shown = out.stdout + out.stderr
    assert "sk-planted" not in shown, shown[-1500:]
    assert "127.0.0.1:9" in shown  # the URL is still named
    for path in (p for p in tmp_path.rglob("*") if p.is_file()):
        assert b"sk-planted" not in path.read_bytes(), path
