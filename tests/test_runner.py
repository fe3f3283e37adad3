"""pmem-bench end to end against a scripted OpenAI-compatible server on 127.0.0.1: faults,
kill -9 and resume, warm reruns, rescoring, the manifest, and bad configuration."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchmarks.models.scripted import ScriptedServer
from benchmarks.models.server import free_port

RULES = [
    (r"(?s)the (\w+) has been moved from the [\w ]+? to the (\w+)\..*Where is the \1 now\?", r"\2"),
]


def bench_command(root: Path, *overrides: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "benchmarks.runner.cli",
        "experiment=smoke",
        f"run.root={root}",
        "run.progress=false",
        *overrides,
    ]


def bench(root: Path, *overrides: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        bench_command(root, *overrides),
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=root.parent,
    )


def external(server: ScriptedServer, *extra: str) -> list[str]:
    return ["llm=openai", "llm.model=scripted", f"llm.base_url={server.base_url}", *extra]


def run_dir(root: Path) -> Path:
    (folder,) = (root / "smoke").iterdir()
    return folder


def predictions(root: Path) -> list[dict]:
    rows = [json.loads(x) for x in (run_dir(root) / "predictions.jsonl").read_text().splitlines()]
    return sorted(rows, key=lambda r: r["id"])


@pytest.fixture
def server():
    with ScriptedServer(RULES, default="I do not know.") as s:
        yield s


def test_smoke_run_scores_and_writes_a_manifest(tmp_path, server) -> None:
    out = bench(tmp_path / "runs", *external(server))
    assert out.returncode == 0, out.stderr
    folder = run_dir(tmp_path / "runs")
    summary = json.loads((folder / "summary.json").read_text())
    assert summary["complete"] and summary["n"] == 6
    assert summary["scores"]["substring"]["accuracy"] == 1.0
    assert summary["read"]["tokens_exact"] is True
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["dataset"]["sha256"] and manifest["prompts"]["answer"]
    assert manifest["git"]["commit"] and manifest["packages"]["pmem"]
    assert manifest["config"]["llm"]["model"] == "scripted"
    assert "6/6 questions answered" in out.stdout and "cost: reader: 6 calls" in out.stdout


def test_faults_are_retried_and_counted(tmp_path) -> None:
    with ScriptedServer(
        RULES, p_500=0.10, p_timeout=0.05, p_malformed=0.05, timeout_sleep_s=1.5, seed=7
    ) as s:
        out = bench(
            tmp_path / "runs",
            *external(
                s,
                "llm.timeout_s=0.5",
                "llm.max_retries=12",
                "llm.backoff_s=0.01",
                "llm.backoff_max_s=0.05",
            ),
            "benchmark.episodes=20",
            "benchmark.objects=3",
            "run.episode_concurrency=8",
            timeout=300,
        )
        injected = s.faults_injected
    assert out.returncode == 0, out.stderr
    summary = json.loads((run_dir(tmp_path / "runs") / "summary.json").read_text())
    assert summary["n"] == summary["expected"] == 60 and summary["complete"]
    assert len({p["id"] for p in predictions(tmp_path / "runs")}) == 60
    retries = summary["usage"]["reader"]["retries"]
    assert set(injected) == {"500", "timeout", "malformed"}
    assert retries >= sum(injected.values()) >= 10  # every injected fault was retried, and counted
    assert summary["scores"]["substring"]["accuracy"] == 1.0  # no fault leaked into an answer


def _chat_rows(cache: Path) -> int:
    con = sqlite3.connect(cache)
    try:
        return con.execute("SELECT COUNT(*) FROM responses WHERE kind = 'chat'").fetchone()[0]
    finally:
        con.close()


def test_kill_9_then_resume_matches_an_uninterrupted_run(tmp_path) -> None:
    overrides = ["benchmark.episodes=12", "benchmark.objects=3", "run.episode_concurrency=2"]
    with ScriptedServer(RULES, latency_s=0.08) as s:
        # The reference: one uninterrupted run.
        assert bench(tmp_path / "ref", *external(s), *overrides).returncode == 0
        paid_uninterrupted = s.count("/v1/chat/completions")
        s.reset_counts()

        root = tmp_path / "runs"
        cmd = bench_command(root, *external(s), *overrides)
        proc = subprocess.Popen(
            cmd, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            files = list(root.glob("smoke/*/predictions.jsonl"))
            if files and len(files[0].read_text().splitlines()) >= 10:
                break
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        done_before = len(predictions(root))
        assert 10 <= done_before < 36
        cached_at_kill = _chat_rows(root / "cache.sqlite")
        paid_first = s.count("/v1/chat/completions")
        s.reset_counts()

        out = bench(root, *external(s), *overrides)
        assert out.returncode == 0, out.stderr
        paid_resume = s.count("/v1/chat/completions")
        s.reset_counts()

        # A warm rerun of the finished run makes no HTTP call at all.
        assert bench(root, *external(s), *overrides).returncode == 0
        assert s.count() == 0

    resumed = predictions(root)
    assert [r["id"] for r in resumed] == sorted({r["id"] for r in resumed})  # no duplicates
    assert resumed == predictions(tmp_path / "ref")
    assert paid_resume == 36 - cached_at_kill  # no cached call paid twice
    # re-paid: at most the calls in flight at the kill (2 episodes x 3 questions at once)
    assert paid_first + paid_resume <= paid_uninterrupted + 2 * 3


@pytest.mark.parametrize(("sig", "code", "name"), [(signal.SIGTERM, 143, "SIGTERM"),
                                                   (signal.SIGINT, 130, "Ctrl-C")])  # fmt: skip
def test_a_stopped_run_ends_with_one_line_not_a_traceback(tmp_path, sig, code, name) -> None:
    """Ctrl-C and SIGTERM (Slurm's pre-emption) in the middle of a run, as a single run and in a
    Hydra multirun: the run's stop is recorded and the user reads one line saying how to resume."""
    with ScriptedServer(RULES, latency_s=0.5) as s:
        for multirun in ([], ["-m"]):
            root = tmp_path / f"runs{len(multirun)}"
            cmd = bench_command(root, *external(s), "benchmark.episodes=12")
            proc = subprocess.Popen(
                [*cmd[:3], *multirun, *cmd[3:]],
                cwd=tmp_path,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
            )
            deadline = time.monotonic() + 60
            while not list(root.glob("smoke/*/predictions.jsonl")):
                assert time.monotonic() < deadline and proc.poll() is None
                time.sleep(0.05)
            proc.send_signal(sig)
            _, err = proc.communicate(timeout=60)
            assert proc.returncode == code, err
            assert "Traceback" not in err, err
            assert f"pmem-bench: stopped by {name}; " in err.strip().splitlines()[-1]
            assert "rerun the same command to resume" in err
            attempts = (run_dir(root) / "attempts.jsonl").read_text().splitlines()
            stop = json.loads(attempts[-1])
            assert stop["outcome"] == "stopped"
            assert stop.get("signal") == ("SIGTERM" if sig == signal.SIGTERM else None)


def test_rescore_reuses_predictions_without_calls(tmp_path, server) -> None:
    root = tmp_path / "runs"
    assert bench(root, *external(server)).returncode == 0
    before = (run_dir(root) / "predictions.jsonl").read_bytes()
    server.reset_counts()
    out = bench(root, *external(server), "run.rescore=true")
    assert out.returncode == 0, out.stderr
    assert server.count() == 0
    assert (run_dir(root) / "predictions.jsonl").read_bytes() == before
    assert json.loads((run_dir(root) / "summary.json").read_text())["rescore"] is True


def test_a_read_only_run_asks_nothing_and_keeps_a_folder_of_its_own(tmp_path, server) -> None:
    root = tmp_path / "runs"
    out = bench(root, *external(server), "run.answer=false")
    assert out.returncode == 0, out.stderr
    assert "questions read (read only" in out.stdout
    assert server.count("/chat/completions") == 0  # no answer was asked for
    (folder,) = (root / "smoke").iterdir()
    records = [json.loads(x) for x in (folder / "predictions.jsonl").read_text().splitlines()]
    assert records and all(r["prediction"] is None and r["context_chars"] > 0 for r in records)
    summary = json.loads((folder / "summary.json").read_text())
    assert summary["read_only"] is True and summary["scores"] == {}
    assert summary["read"]["mean_chars"] > 0
    # answering the same config is another run folder: read-only records never resume it
    assert bench(root, *external(server)).returncode == 0
    folders = sorted((root / "smoke").iterdir())
    assert len(folders) == 2
    answered = next(f for f in folders if f != folder)
    assert all(
        json.loads(x)["prediction"] is not None
        for x in (answered / "predictions.jsonl").read_text().splitlines()
    )


def test_the_harness_starts_and_stops_the_scripted_profile(tmp_path) -> None:
    out = bench(tmp_path / "runs", "llm=scripted")
    assert out.returncode == 0, out.stderr
    log = run_dir(tmp_path / "runs") / "logs" / "scripted.log"
    assert log.exists()
    assert "substring    6/6" in out.stdout


def test_an_unreachable_base_url_fails_fast_naming_it(tmp_path) -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    started = time.monotonic()
    out = bench(tmp_path / "runs", "llm=openai", "llm.model=x", f"llm.base_url={url}")
    assert out.returncode == 2
    assert time.monotonic() - started < 30
    assert url.removesuffix("/v1") in out.stderr


def test_a_model_the_server_does_not_serve_is_named(tmp_path, server) -> None:
    out = bench(
        tmp_path / "runs", "llm=openai", "llm.model=qwen-nope", f"llm.base_url={server.base_url}"
    )
    assert out.returncode == 2
    assert "qwen-nope" in out.stderr and "scripted" in out.stderr


def test_a_profile_promising_structured_output_is_probed(tmp_path) -> None:
    with ScriptedServer(
        [("Reply with the JSON object", '```json\n{"ok": true}\n```'), *RULES]
    ) as s:
        out = bench(tmp_path / "ok", *external(s, "+llm.probe.structured=true"))
        assert out.returncode == 0, out.stderr
    with ScriptedServer(RULES) as s:
        out = bench(tmp_path / "bad", *external(s, "+llm.probe.structured=true"))
    assert out.returncode == 2
    assert "did not honour a json_schema response_format" in out.stderr
