"""The runner: `pmem-bench`, the stages of a run, run folders, the model stack, and the
interfaces arms implement (`MemoryArm`, `Context`, `Services` in `benchmarks.runner.arm`) and
benchmarks provide (`Benchmark`, `Episode`, `Event`, `Question` in `benchmarks.runner.types`).

`main` is the `pmem-bench` entry point. It imports the runner (and with it the harness's
dependencies) through `benchmarks.extras.run_cli`: `pip install .` is the library alone, and a
user who runs `pmem-bench` on it gets one line naming the extra, not an ImportError.
"""

from __future__ import annotations

from benchmarks.extras import run_cli


def main() -> None:
    run_cli("pmem-bench", "benchmarks.runner.cli:main")
