"""How many llama-server slots the local profile should use, and which server options: replay
recorded requests at 1, 2, 4 slots, and under other llama-server options (`--extra`).

Replays a run's cached chat requests (Table 6's by default; needs `make setup-local` and a cache
such as `make reproduce-table6` writes, only read) in first-made order against a fresh
llama-server per slot count, and prints wall time, speed-up and how many replies are
byte-identical to the recorded one-slot replies (caches filled before commit 5f9f624 stored
sorted json_schema keys, so their structured requests replay as different ones; docs/models.md).
`--in-flight 1` batches nothing but lets alternating request kinds keep their own cached prefix.

    python scripts/bench_local_slots.py [--cache runs/cache.sqlite] [--requests 120]
                                        [--slots 1,2,4] [--ctx 4096] [--in-flight N]
                                        [--extra "" --extra "--spec-type ngram-simple"]

Each `--extra` is one setting of extra llama-server arguments ("" for none), crossed with the
slot counts; the first setting is the one the others are compared with.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shlex
import sqlite3
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.models.base import ModelClient, aclose_clients
from benchmarks.models.endpoint import Endpoint
from benchmarks.models.local import CHAT_MODEL_ALIAS, LlamaServer


def recorded_requests(cache: Path, model: str, n: int) -> list[tuple[dict[str, Any], str]]:
    """The first `n` chat (request body, reply text) pairs stored for `model`, oldest first."""
    db = sqlite3.connect(f"file:{cache}?mode=ro", uri=True)
    rows = db.execute(
        "SELECT request, response FROM responses WHERE kind = 'chat' AND model = ? "
        "AND request IS NOT NULL ORDER BY created LIMIT ?",
        (model, n),
    ).fetchall()
    db.close()
    out = []
    for request, response in rows:
        body = json.loads(request)
        text = json.loads(response)["choices"][0]["message"].get("content") or ""
        out.append((body, text))
    return out


async def replay(
    base_url: str, model: str, bodies: list[dict[str, Any]], in_flight: int
) -> tuple[float, list[str]]:
    """(wall seconds, reply texts) for every body, `in_flight` at a time."""
    client = ModelClient(
        Endpoint(base_url, model, concurrency=in_flight, timeout_s=600), "bench", None, None
    )
    url = f"{base_url}/chat/completions"

    def valid(data: Any) -> None:
        data["choices"][0]["message"]

    started = time.perf_counter()
    replies = await asyncio.gather(*(client.request("POST", url, b, valid) for b in bodies))
    wall = time.perf_counter() - started
    await aclose_clients()
    return wall, [r[0]["choices"][0]["message"].get("content") or "" for r in replies]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache", type=Path, default=Path("runs/cache.sqlite"))
    ap.add_argument("--requests", type=int, default=120)
    ap.add_argument("--slots", default="1,2,4", help="comma-separated slot counts")
    ap.add_argument("--ctx", type=int, default=4096, help="context window per slot")
    ap.add_argument(
        "--in-flight", type=int, default=None, help="requests in flight (default: the slots)"
    )
    ap.add_argument(
        "--extra", action="append", default=None, metavar="ARGS",
        help="extra llama-server arguments of one setting; repeat to compare settings",
    )  # fmt: skip
    args = ap.parse_args(argv)
    settings = args.extra or [""]
    if not args.cache.is_file():
        print(f"error: no response cache at {args.cache} (make reproduce-table6 writes one)")
        return 2
    pairs = recorded_requests(args.cache, CHAT_MODEL_ALIAS, args.requests)
    if not pairs:
        print(f"error: {args.cache} holds no chat requests for {CHAT_MODEL_ALIAS}")
        return 2
    bodies = [b for b, _ in pairs]
    recorded = [t for _, t in pairs]
    tokens = [b.get("max_tokens", 0) for b in bodies]
    print(
        f"{len(bodies)} recorded requests from {args.cache} "
        f"(max_tokens median {statistics.median(tokens):g})"
    )
    rows, base_wall, first = [], None, None
    runs = [(int(s), extra) for s in args.slots.split(",") for extra in settings]
    for slots, extra in runs:
        extra_args = ["--load-mode", "none", *shlex.split(extra)]
        server = LlamaServer(ctx=args.ctx, parallel=slots, extra_args=extra_args)
        with server:
            in_flight = args.in_flight or slots
            wall, replies = asyncio.run(replay(server.base_url, server.model, bodies, in_flight))
        base_wall = base_wall or wall
        first = first or replies
        same_recorded = sum(a == b for a, b in zip(replies, recorded, strict=True))
        same_first = sum(a == b for a, b in zip(replies, first, strict=True))
        rows.append((f"{slots} {extra}".strip(), wall, base_wall / wall, same_recorded,
                     same_first))  # fmt: skip
        print(
            f"slots {slots} {extra} ({in_flight} in flight): {wall:.1f} s, "
            f"{len(bodies) / wall:.2f} requests/s, "
            f"x{base_wall / wall:.2f}, identical to recorded {same_recorded}/{len(bodies)}, "
            f"to the first setting {same_first}/{len(bodies)}",
            flush=True,
        )
    print("\n| slots, options | wall (s) | speed-up | identical to recorded | identical to first |")
    print("|---:|---:|---:|---:|---:|")
    for slots, wall, speed, same_r, same_f in rows:
        n = len(bodies)
        print(f"| {slots} | {wall:.1f} | {speed:.2f} | {same_r}/{n} | {same_f}/{n} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
