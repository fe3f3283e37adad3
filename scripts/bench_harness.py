"""Overhead of the model client: 2,000 chat calls against a server with a fixed 50 ms latency.

At concurrency 20 the ideal wall time is 2,000 × 0.05 s / 20 = 5 s; everything above it is the
client's (and the server's) own cost. Prints the wall time and `overhead ratio: X` (target
X ≤ 1.3). The cache is disabled and every prompt is unique, so each call is a real request.

By default the scripted server runs in its own process, as vLLM or llama.cpp would, so the
figure measures our client rather than two Pythons sharing one interpreter lock.

    python scripts/bench_harness.py [--calls 2000] [--concurrency 20] [--latency 0.05]
                                    [--in-process] [--repeats 1]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time

from benchmarks.models.client import ChatModel, Endpoint, aclose_clients
from benchmarks.models.scripted import ScriptedServer
from benchmarks.models.server import ManagedServer, SubprocessServer
from benchmarks.models.usage import UsageMeter


def scripted_server(latency_s: float, in_process: bool) -> ManagedServer:
    if in_process:
        return ScriptedServer(latency_s=latency_s)
    command = [
        sys.executable,
        "-m",
        "benchmarks.models.scripted",
        "--port",
        "{port}",
        "--latency-s",
        str(latency_s),
    ]
    return SubprocessServer(command, startup_timeout_s=30)


async def drive(
    base_url: str, calls: int, concurrency: int, run: int
) -> tuple[float, float, UsageMeter]:
    """(wall seconds, CPU seconds of this process, meter) for `calls` unique completions."""
    meter = UsageMeter()
    endpoint = Endpoint(base_url, "scripted", concurrency=concurrency, timeout_s=30)
    # Warm the shared connection pool through a throw-away client: set-up is not measured.
    await ChatModel(endpoint, "warm-up", max_tokens=16).complete("warm-up")
    model = ChatModel(endpoint, "reader", cache=None, meter=meter, max_tokens=16)
    prompts = [f"run {run} question {i}: where is the key?" for i in range(calls)]
    cpu, started = time.process_time(), time.perf_counter()
    results = await asyncio.gather(*(model.complete(p) for p in prompts))
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    assert len(results) == calls and all(r.text for r in results)
    await aclose_clients()
    return wall, cpu, meter


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--concurrency", type=int, default=20)
    ap.add_argument("--latency", type=float, default=0.05, help="server latency in seconds")
    ap.add_argument("--in-process", action="store_true", help="server threads in this process")
    ap.add_argument("--repeats", type=int, default=1, help="report the median of N runs")
    args = ap.parse_args(argv)

    ideal = args.calls * args.latency / args.concurrency
    walls = []
    with scripted_server(args.latency, args.in_process) as server:
        for run in range(args.repeats):
            wall, cpu, meter = asyncio.run(
                drive(server.base_url, args.calls, args.concurrency, run)
            )
            walls.append(wall)
            per_call = cpu / args.calls * 1000
            print(
                f"run {run + 1}: {wall:.2f} s, {per_call:.2f} ms CPU per call in this process "
                f"({meter.summary_line()})",
                flush=True,
            )
    wall = statistics.median(walls)
    where = "in this process" if args.in_process else "in its own process"
    print(
        f"{args.calls} calls, concurrency {args.concurrency}, "
        f"latency {args.latency * 1000:g} ms, server {where}"
    )
    print(f"wall time: {wall:.2f} s (ideal {ideal:.2f} s)")
    print(f"overhead ratio: {wall / ideal:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
