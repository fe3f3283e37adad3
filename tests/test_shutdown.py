"""A run stopped while the server misbehaves (timeouts, 500s, malformed replies, retries in
flight on every worker) ends with the stop summary alone: one line on stderr, the documented
exit code, no traceback and no asyncio or aiohttp noise from the calls it abandoned."""

from __future__ import annotations

import signal
import subprocess
import time

import pytest

from benchmarks.models.scripted import ScriptedServer
from tests.test_runner import RULES, bench_command, external

FAULTS = {"p_500": 0.3, "p_timeout": 0.3, "p_malformed": 0.1, "timeout_sleep_s": 2.0}
NOISE = ("Traceback", "Unclosed", "Task was destroyed", "Exception ignored", "never retrieved")


@pytest.mark.parametrize("multirun", [False, True])
@pytest.mark.parametrize(
    ("stop", "code", "last_line"),
    [
        (signal.SIGINT, 130, "pmem-bench: stopped by Ctrl-C; "),
        (signal.SIGTERM, 143, "pmem-bench: stopped by SIGTERM; "),
        (None, 2, "pmem-bench: error: "),  # the server gives out: retries exhausted
    ],
)
def test_a_run_stopped_under_faults_prints_only_the_stop_summary(
    tmp_path, stop, code, last_line, multirun
) -> None:
    retries = "llm.max_retries=1" if stop is None else "llm.max_retries=50"
    with ScriptedServer(RULES, latency_s=0.2, seed=3, **FAULTS) as s:  # type: ignore[arg-type]
        root = tmp_path / "runs"
        cmd = bench_command(
            root,
            *external(s, "llm.timeout_s=0.5", retries, "llm.backoff_s=0.05"),
            "benchmark.episodes=30",
            "run.episode_concurrency=8",
        )
        if multirun:
            cmd = [*cmd[:3], "-m", *cmd[3:], "benchmark.objects=3,4"]
        proc = subprocess.Popen(
            cmd, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
        )
        if stop is not None:
            deadline = time.monotonic() + 60
            while not list(root.glob("smoke/*/predictions.jsonl")):
                assert time.monotonic() < deadline and proc.poll() is None
                time.sleep(0.05)
            time.sleep(0.5)  # workers now sit in retries and timed-out reads
            proc.send_signal(stop)
        _, err = proc.communicate(timeout=120)
    assert proc.returncode == code, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith(last_line), err
    assert not any(noise in err for noise in NOISE), err
