"""Running `pmem-bench` as a user does, from tests: a subprocess on the scripted profile."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPTED = ("llm=scripted", "embedder=scripted", "judge=scripted", "run.progress=false")


def pmem_bench(root: Path, *overrides: str, cwd: Path | None = None) -> str:
    """One scripted run (or `-m` sweep) under `root`; its stdout. Fails the test with the end
    of stderr when the run fails."""
    out = subprocess.run(
        [sys.executable, "-m", "benchmarks.runner", *overrides, *SCRIPTED, f"run.root={root}"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout
