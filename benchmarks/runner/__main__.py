"""`python -m benchmarks.runner ...` is `pmem-bench ...`."""

from benchmarks.runner import main

main()
