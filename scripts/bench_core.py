"""Benchmark of the P-Mem core: operation throughput, reopening, materialization.

The stream: 20,000 accepts over 8,000 keys with 10% revokes (2,000, each on a key that has a
head), interleaved at random with seed 0. Prints medians over repeated runs.

    python scripts/bench_core.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable

from pmem import Memory

ACCEPTS, KEYS, REVOKE_SHARE = 20_000, 8_000, 0.10


def stream(seed: int = 0) -> list[tuple[str, str, str | None]]:
    """Accepts and revokes in one arrival order. Every key is written at least once and a revoke
    only hits a key with a predecessor to reinstate, so the final frontier holds all 8,000 cells."""
    rng = random.Random(seed)
    first = [f"object_{i}.location" for i in range(KEYS)]
    rng.shuffle(first)
    depth: dict[str, int] = {}
    ops: list[tuple[str, str, str | None]] = []
    revokes = int(ACCEPTS * REVOKE_SHARE)
    accepts = 0
    while accepts < ACCEPTS or revokes:
        # Spread the revokes evenly: draw one with the share of revokes still to place.
        revoke_now = rng.random() < revokes / (revokes + ACCEPTS - accepts)
        live = [k for k, d in depth.items() if d > 1] if revoke_now else []
        if live:
            key = rng.choice(live)
            depth[key] -= 1
            ops.append(("revoke", key, None))
            revokes -= 1
        elif accepts >= ACCEPTS:
            break  # no key left with a predecessor to reinstate
        else:
            key = first[accepts] if accepts < KEYS else f"object_{rng.randrange(KEYS)}.location"
            depth[key] = depth.get(key, 0) + 1
            ops.append(("accept", key, f"receptacle {accepts}"))
            accepts += 1
    return ops


def ingest(m: Memory, ops: list[tuple[str, str, str | None]]) -> None:
    for op, key, value in ops:
        if op == "accept":
            m.accept(key, value)  # type: ignore[arg-type]
        else:
            m.revoke(key)


def timed(fn: Callable[[], object], repeats: int) -> float:
    samples = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t)
    return statistics.median(samples)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    ops = stream()
    n = len(ops)
    n_revoke = sum(op == "revoke" for op, _, _ in ops)
    print(
        f"stream: {n:,} operations ({n - n_revoke:,} accepts, {n_revoke:,} revokes) "
        f"over {KEYS:,} keys"
    )
    rows: list[tuple[str, str]] = []

    t = timed(lambda: ingest(Memory(), ops), args.repeats)
    rows.append(("in memory", f"{n / t:,.0f} ops/s"))

    with tempfile.TemporaryDirectory() as tmp:
        counter = iter(range(10**6))

        def persisted_batch() -> None:
            with Memory(os.path.join(tmp, f"b{next(counter)}.sqlite")) as m, m.batch():
                ingest(m, ops)

        t = timed(persisted_batch, args.repeats)
        rows.append(("persisted, one batch", f"{n / t:,.0f} ops/s"))

        sub = ops[:5_000]

        def persisted_each() -> None:
            with Memory(os.path.join(tmp, f"e{next(counter)}.sqlite")) as m:
                ingest(m, sub)

        t = timed(persisted_each, max(1, args.repeats // 2))
        rows.append(
            ("persisted, one transaction per op", f"{len(sub) / t:,.0f} ops/s (first 5,000)")
        )

        path = os.path.join(tmp, "full.sqlite")
        with Memory(path) as m, m.batch():
            ingest(m, ops)
        t = timed(lambda: Memory(path).close(), args.repeats)
        rows.append(("reopen (replay the log)", f"{t * 1000:,.0f} ms"))

        with Memory(path) as m:
            cells = m.frontier()
            t = timed(lambda: m.render(m.frontier()), args.repeats)
            rows.append((f"materialize + render {len(cells):,} cells", f"{t * 1000:,.0f} ms"))
            t = timed(lambda: m.render(m.frontier(), disclose=("history", "support")), args.repeats)
            rows.append(("  ... with history and support", f"{t * 1000:,.0f} ms"))
            t = timed(m.check, max(1, args.repeats // 2))
            rows.append(("check() (replays and validates)", f"{t * 1000:,.0f} ms"))

    width = max(len(r[0]) for r in rows)
    for name, figure in rows:
        print(f"  {name:<{width}}  {figure}")
    print(f"(medians of {args.repeats}; python {sys.version.split()[0]}, {os.cpu_count()} cpu)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
