"""`python -m benchmarks.runner ...` is `pmem-bench ...`."""

from benchmarks.runner.cli import main

main()
