"""Overhead of the model client: unique chat calls against a server with a fixed latency.

Ideal wall time is N × L / C (never under ceil(N / C) latencies, printed beside it); prints wall
time, client CPU per call and `overhead ratio: X` (targets: X ≤ 1.05 at 20 in flight, X ≤ 1.10
at 256). The cache is off and every prompt unique, so each call is a real request.

    python scripts/bench_harness.py [--calls 2000] [--concurrency 20] [--latency 0.05]
                                    [--server latency|scripted] [--in-process] [--repeats 1]
                                    [--cache]
"""

from __future__ import annotations

import argparse
import asyncio
import math
import statistics
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.models.base import transport_name
from benchmarks.models.cache import ResponseCache
from benchmarks.models.client import ChatModel, Endpoint, aclose_clients
from benchmarks.models.scripted import ScriptedServer
from benchmarks.models.server import ManagedServer, SubprocessServer
from benchmarks.models.usage import UsageMeter

SERVERS = {"latency": "benchmarks.models.latency_server", "scripted": "benchmarks.models.scripted"}


def bench_server(kind: str, latency_s: float, in_process: bool) -> ManagedServer:
    """The server to measure against, in its own process as vLLM or llama.cpp would be, so the
    figure measures our client rather than two Pythons sharing one interpreter lock.

    "latency" (`benchmarks.models.latency_server`, asyncio: a request in flight costs a timer)
    answers far faster than the rates asked here; "scripted" is the thread-per-request scripted
    server, whose own cost shows at high concurrency.
    """
    if in_process:
        return ScriptedServer(latency_s=latency_s)
    command = [
        sys.executable,
        "-m",
        SERVERS[kind],
        "--port",
        "{port}",
        "--latency-s",
        str(latency_s),
    ]
    return SubprocessServer(command, startup_timeout_s=30)


async def drive(
    base_url: str, calls: int, concurrency: int, run: int, cache: ResponseCache | None = None
) -> tuple[float, float, UsageMeter]:
    """(wall seconds, CPU seconds of this process, meter) for `calls` unique completions; with
    `cache`, each reply is also looked up and stored (the runs' path: every call a miss)."""
    meter = UsageMeter()
    endpoint = Endpoint(base_url, "scripted", concurrency=concurrency, timeout_s=60)
    # Warm the shared connection pool through a throw-away client: set-up is not measured.
    warm = ChatModel(endpoint, "warm-up", max_tokens=16)
    await asyncio.gather(*(warm.complete(f"warm-up {i}") for i in range(concurrency)))
    model = ChatModel(endpoint, "reader", cache=cache, meter=meter, max_tokens=16)
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
    ap.add_argument("--server", choices=sorted(SERVERS), default="latency")
    ap.add_argument("--in-process", action="store_true", help="scripted server threads in here")
    ap.add_argument("--repeats", type=int, default=1, help="report the median of N runs")
    ap.add_argument(
        "--cache", action="store_true", help="store every reply in a fresh SQLite response cache"
    )
    args = ap.parse_args(argv)

    ideal = args.calls * args.latency / args.concurrency
    walls, cpus = [], []
    with (
        bench_server(args.server, args.latency, args.in_process) as server,
        tempfile.TemporaryDirectory() as tmp,
    ):
        for run in range(args.repeats):
            cache = ResponseCache(Path(tmp) / f"cache-{run}.sqlite") if args.cache else None
            wall, cpu, meter = asyncio.run(
                drive(server.base_url, args.calls, args.concurrency, run, cache)
            )
            walls.append(wall)
            cpus.append(cpu / args.calls * 1000)
            print(
                f"run {run + 1}: {wall:.2f} s, {cpus[-1]:.2f} ms client CPU per call "
                f"({meter.summary_line()})",
                flush=True,
            )
    wall = statistics.median(walls)
    where = "scripted, in this process" if args.in_process else f"{args.server}, own process"
    print(
        f"{args.calls} calls, concurrency {args.concurrency}, "
        f"latency {args.latency * 1000:g} ms, server {where}, transport {transport_name()}, "
        f"cache {'on' if args.cache else 'off'}"
    )
    # no client can beat ceil(N/C) waves of one latency each: the ratio's ideal is below that
    floor = math.ceil(args.calls / args.concurrency) * args.latency
    print(f"wall time: {wall:.2f} s (ideal {ideal:.2f} s; {floor:.2f} s for any client)")
    print(f"client CPU per call: {statistics.median(cpus):.3f} ms")
    print(f"overhead ratio: {wall / ideal:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
