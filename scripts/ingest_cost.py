"""What one arm's ingest costs per unit, measured on the first N units of a benchmark's stream.

A full ingest through a peer package can take hours (Appendix F: Graphiti's bottleneck), so the
arm gets the first N units through the run's models, gateway and response cache, and the chat
calls, embedding batches, tokens and wall time per unit print with the whole-stream estimate.

    python scripts/ingest_cost.py arm=graphiti experiment=table7 --units 3
    python scripts/ingest_cost.py arm=mem0 experiment=table7 llm=vllm embedder=vllm --units 10

Overrides are the runner's (Hydra); the results go to stdout and, with --out, a JSON file.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from baselines.base import items_of
from benchmarks.models.cache import ResponseCache
from benchmarks.models.usage import UsageMeter
from benchmarks.runner.arm import Services
from benchmarks.runner.cli import CONFIG_DIR, build
from benchmarks.runner.pipeline import arm_class, ingest_cost, metered_copy
from benchmarks.runner.stack import ModelStack
from benchmarks.runner.types import Event


def first_units(events: list[Event], chunk_size: int | None, n: int) -> list[Event]:
    """The events that make up the first `n` ingest units of the arm."""
    units = items_of(events, chunk_size)[:n]
    wanted = sum(u.text.count("\n") + 1 for u in units) if chunk_size else n
    return events[:wanted]


async def measure(cfg: Any, units: int, log_dir: Path) -> dict[str, Any]:
    resolved = OmegaConf.to_container(cfg, resolve=True)
    bench = build(cfg.benchmark)
    factory = build(cfg.arm, _partial_=True)
    episode = bench.episodes()[0]
    chunk_size = cfg.arm.get("chunk_size")
    all_units = len(items_of(list(episode.events), chunk_size))
    events = first_units(list(episode.events), chunk_size, units)
    stack = ModelStack(resolved, ResponseCache(cfg.run.cache), UsageMeter(), log_dir)
    try:
        shared = Services(**{r: await stack.get(r) for r in arm_class(factory).needs})
        own = metered_copy(shared)
        arm = factory(services=own)
        started = time.perf_counter()
        await arm.ingest(events)
        cost = ingest_cost(own, time.perf_counter() - started)
        await arm.aclose()
    finally:
        await stack.close()
        stack.stop_servers()
    measured = min(units, all_units)
    chat = cost["usage"].get("writer", {})
    per_unit = {
        "wall_s": cost["wall_s"] / measured,
        "chat_calls": (chat.get("calls", 0) + chat.get("cache_hits", 0)) / measured,
        "tokens": (chat.get("prompt_tokens", 0) + chat.get("completion_tokens", 0)) / measured,
    }
    return {
        "arm": cfg.arm.name,
        "benchmark": cfg.benchmark.name,
        "llm": cfg.llm.model,
        "units_measured": measured,
        "units_in_stream": all_units,
        **cost,
        "per_unit": {k: round(v, 2) for k, v in per_unit.items()},
        "stream_estimate_s": round(per_unit["wall_s"] * all_units),
        "arm_stats": getattr(arm, "stats", {}),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--units", type=int, default=3, help="ingest units to feed (default 3)")
    parser.add_argument("--out", type=Path, help="also write the figures here as JSON")
    parser.add_argument("overrides", nargs="*", help="Hydra overrides, as for pmem-bench")
    args = parser.parse_args(argv)
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        cfg = compose(config_name="config", overrides=args.overrides)
    with tempfile.TemporaryDirectory(prefix="pmem-ingest-cost-") as logs:
        result = asyncio.run(measure(cfg, args.units, Path(logs)))
    text = json.dumps(result, indent=1, default=str)
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n")
    p = result["per_unit"]
    print(
        f"{result['arm']}: {p['chat_calls']:.1f} chat calls, {p['tokens']:,.0f} tokens, "
        f"{p['wall_s']:.1f} s per unit; the whole stream ({result['units_in_stream']} units) "
        f"~{result['stream_estimate_s'] / 60:.0f} min",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
