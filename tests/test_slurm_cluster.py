"""The cluster path through a real Slurm (`make test-slurm` starts a one-node cluster and sets
SLURM_CONF): the job scripts submitted with sbatch from a fresh clone, exactly as a user meets
them, on the scripted profile; the submitit launcher from the login node; a requeue mid-sweep.
Each job's results must equal the same command run without Slurm."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.slurm,
    pytest.mark.skipif(not os.environ.get("SLURM_CONF"), reason="needs make test-slurm"),
]

ROOT = Path(__file__).resolve().parents[1]
VENV = Path(sys.prefix)
SCRIPTED = "llm=scripted embedder=scripted judge=scripted"
DONE = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "PREEMPTED"}


def fresh_clone(tmp_path: Path, name: str = "clone") -> Path:
    """A clone of the checkout's committed state: no runs/, no environment of its own."""
    target = tmp_path / name
    subprocess.run(["git", "clone", "-q", str(ROOT), str(target)], check=True)
    return target


def env_for(clone: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PMEM_", "CHAT_"))}
    env.update(PMEM_VENV=str(VENV), PYTHONPATH=str(clone), PMEM_SERVE="", **extra)
    return env


def sbatch(clone: Path, *args: str, **extra: str) -> int:
    out = subprocess.run(
        ["sbatch", "--parsable", *args], cwd=clone, env=env_for(clone, **extra),
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    return int(out.stdout.strip().split(";")[0])


def job(job_id: int) -> dict[str, str]:
    out = subprocess.run(
        ["scontrol", "show", "job", "-o", str(job_id)], capture_output=True, text=True, check=True
    )
    return dict(f.split("=", 1) for f in out.stdout.split() if "=" in f)


def wait(job_id: int, timeout: float = 900) -> dict[str, str]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        info = job(job_id)
        if info["JobState"] in DONE:
            return info
        time.sleep(2)
    raise AssertionError(f"job {job_id} not finished after {timeout} s: {job(job_id)}")


def predictions(runs: Path) -> dict[str, list[tuple[str, str]]]:
    """Per run folder, its (question id, prediction) pairs (episodes answer concurrently)."""
    out = {}
    for folder in sorted(p.parent for p in runs.glob("*/*/manifest.json")):
        path = folder / "predictions.jsonl"
        text = path.read_text() if path.exists() else ""
        rows = [json.loads(line) for line in text.splitlines() if line.strip()]
        out[f"{folder.parent.name}/{folder.name}"] = sorted(
            (r["id"], r["prediction"]) for r in rows
        )
    return out


def local(clone: Path, script: str, *args: str, **extra: str) -> None:
    """The same job script run without Slurm, in its own clone."""
    out = subprocess.run(
        ["bash", script, *args], cwd=clone, env=env_for(clone, **extra), capture_output=True,
        text=True, timeout=900,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-3000:]


def test_reproduce_sbatch_from_a_fresh_clone_runs_the_table_and_keeps_its_log(
    tmp_path: Path,
) -> None:
    clone = fresh_clone(tmp_path)
    assert not list(clone.glob("runs/*/*/manifest.json")), "a fresh clone holds no runs"
    job_id = sbatch(clone, "slurm/reproduce.sbatch", "table6", CASES="1", PROFILE="scripted")
    info = wait(job_id)
    log = clone / "runs" / "slurm" / f"pmem-reproduce-{job_id}.out"
    assert log.exists(), f"no job log at {log}"
    assert info["JobState"] == "COMPLETED", log.read_text()[-3000:]
    ours = predictions(clone / "runs")
    assert len(ours) == 28 and all(len(p) == 1 for p in ours.values())
    # the job's response cache lived on node-local disk and was left as a dump for later jobs
    assert (clone / "runs" / "cache" / f"job-{job_id}.jsonl.gz").stat().st_size > 0
    assert not (clone / "runs" / "cache.sqlite").exists()

    again = fresh_clone(tmp_path, "local")
    local(again, "slurm/reproduce.sbatch", "table6", CASES="1", PROFILE="scripted")
    assert predictions(again / "runs") == ours


def test_multirun_sbatch_runs_its_sweep(tmp_path: Path) -> None:
    clone = fresh_clone(tmp_path)
    sweep = ["experiment=table6", "benchmark.cases=2", "benchmark.L=1,2", "arm=raw_topk,raw_tags"]
    job_id = sbatch(clone, "slurm/multirun.sbatch", *sweep, PMEM_PROFILE=SCRIPTED)
    info = wait(job_id)
    log = clone / "runs" / "slurm" / f"pmem-multirun-{job_id}.out"
    assert info["JobState"] == "COMPLETED", log.read_text()[-3000:]
    ours = predictions(clone / "runs")
    assert len(ours) == 4 and all(len(p) == 2 for p in ours.values())

    again = fresh_clone(tmp_path, "local")
    local(again, "slurm/multirun.sbatch", *sweep, PMEM_PROFILE=SCRIPTED)
    assert predictions(again / "runs") == ours


def test_the_submitit_launcher_submits_each_run_as_a_job(tmp_path: Path) -> None:
    clone = fresh_clone(tmp_path)
    out = subprocess.run(
        [
            str(VENV / "bin" / "pmem-bench"), "-m", "hydra/launcher=slurm", "experiment=smoke",
            *SCRIPTED.split(), "arm=long_context,no_memory", "hydra.launcher.partition=gpu",
            "run.progress=false",
        ],
        cwd=clone, env=env_for(clone), capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert out.returncode == 0, (out.stdout + out.stderr)[-3000:]
    ours = predictions(clone / "runs")
    assert len(ours) == 2 and all(len(p) == 6 for p in ours.values())
    logs = list((clone / "runs" / "slurm" / "submitit").glob("*/*_log.out"))
    assert len(logs) == 2, "one Slurm job, one log, per run of the sweep"


def test_a_requeued_job_resumes_without_losing_or_repeating_a_prediction(tmp_path: Path) -> None:
    clone = fresh_clone(tmp_path)
    sweep = ["experiment=table6", "benchmark.cases=4", "benchmark.L=8", "arm=pmem_commit"]
    # one episode at a time, at the server's pace: the requeue lands mid-sweep (neither is part
    # of the run's identity)
    slow = [*sweep, "+llm.server.latency_s=0.1", "run.episode_concurrency=1"]
    job_id = sbatch(clone, "slurm/multirun.sbatch", *slow, PMEM_PROFILE=SCRIPTED)
    deadline = time.monotonic() + 600
    first = None
    while first is None and time.monotonic() < deadline:
        found = list((clone / "runs").glob("table6/*/predictions.jsonl"))
        if found and found[0].read_text().strip():
            first = found[0]
        elif job(job_id)["JobState"] in DONE:
            pytest.fail(f"the job ended before it could be requeued: {job(job_id)}")
        time.sleep(0.5)
    assert first is not None, "no prediction written within 10 minutes"
    subprocess.run(["scontrol", "requeue", str(job_id)], check=True)
    info = wait(job_id)
    log = (clone / "runs" / "slurm" / f"pmem-multirun-{job_id}.out").read_text()
    assert info["JobState"] == "COMPLETED", log[-3000:]
    assert int(info.get("Restarts", "0")) >= 1, "the job ran once only"
    assert log.count("Launching 1 jobs") == 2, "a requeued job's log keeps both attempts"
    first, again_ = log.split("Launching 1 jobs")[1:]
    assert "4/4 questions answered" not in first, "the requeue came after the sweep had ended"
    assert "4/4 questions answered" in again_
    ours = predictions(clone / "runs")
    (ids,) = [[i for i, _ in p] for p in ours.values()]
    assert len(ids) == len(set(ids)) == 4, f"predictions lost or repeated: {ids}"

    again = fresh_clone(tmp_path, "local")
    local(again, "slurm/multirun.sbatch", *sweep, PMEM_PROFILE=SCRIPTED)
    theirs = predictions(again / "runs")
    assert {k: sorted(v) for k, v in theirs.items()} == {k: sorted(v) for k, v in ours.items()}
