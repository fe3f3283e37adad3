"""The runner: `pmem-bench`, the stages of a run, run folders, the model stack, and the
interfaces arms implement (`MemoryArm`, `Context`, `Services` in `benchmarks.runner.arm`) and
benchmarks provide (`Benchmark`, `Episode`, `Event`, `Question` in `benchmarks.runner.types`).

`main` is the `pmem-bench` entry point. It checks for the harness's dependencies before importing
them: `pip install .` is the library alone, and a user who runs `pmem-bench` on it gets one line
naming the extra, not an ImportError.
"""

from __future__ import annotations

import importlib.util
import sys

#: import names of the harness extra's packages that `pmem-bench` needs to start
NEEDS = ("hydra", "omegaconf", "openai", "numpy", "pandas", "tqdm")


def main() -> None:
    missing = [name for name in NEEDS if importlib.util.find_spec(name) is None]
    if missing:
        print(
            f"pmem-bench: error: the harness is not installed (missing: {', '.join(missing)}); "
            "install it with: pip install 'pmem[harness]' (in a checkout: make setup)",
            file=sys.stderr,
        )
        sys.exit(2)
    from benchmarks.runner.cli import main as run

    run()
