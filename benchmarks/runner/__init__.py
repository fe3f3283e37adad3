"""The runner: `pmem-bench`, the stages of a run, run folders, the model stack, and the
interfaces arms implement (`MemoryArm`, `Context`, `Services` in `benchmarks.runner.arm`) and
benchmarks provide (`Benchmark`, `Episode`, `Event`, `Question` in `benchmarks.runner.types`)."""
