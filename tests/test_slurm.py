"""The cluster recipe, checked without a cluster: sbatch syntax and the sweep's --dry-run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_sbatch_files_parse() -> None:
    for script in ("slurm/sweep.sbatch", "slurm/vllm_servers.sh"):
        subprocess.run(["bash", "-n", str(ROOT / script)], check=True)


def test_sweep_dry_run_prints_servers_and_commands() -> None:
    out = subprocess.run(
        [
            sys.executable,
            "scripts/slurm_sweep.py",
            "t",
            "experiment=smoke",
            "benchmark.episodes=3,6",
            "--dry-run",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert out.count("# task") == 2
    assert "vllm serve Qwen/Qwen3-4B-Instruct-2507" in out
    assert "--runner pooling --hf-overrides '{\"is_matryoshka\": true}'" in out
    assert "vllm serve Qwen/Qwen3.6-35B-A3B-FP8" in out
    assert (
        "pmem-bench llm=vllm embedder=vllm judge=vllm experiment=smoke benchmark.episodes=6" in out
    )
    assert "sbatch --array=0-1 slurm/sweep.sbatch slurm/sweeps/t.txt" in out
    assert not (ROOT / "slurm/sweeps/t.txt").exists()  # a dry run writes nothing


def test_sweep_refuses_a_config_that_does_not_compose() -> None:
    out = subprocess.run(
        [sys.executable, "scripts/slurm_sweep.py", "t", "arm=long_contxt", "--dry-run"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert out.returncode != 0
    assert "did you mean 'long_context'" in out.stderr
