"""The memory arms, all behind the harness's `MemoryArm` interface (`benchmarks.runner.arm`):
P-Mem's own (`pmem_arms`), the reference arms (`reference`) and the peer systems (`peers`)."""
