"""Soft identity's routing under the key variants a small writer names (docs/routing.md).

    .venv/bin/python scripts/measure_routing.py                   # local embedder, L=4, 20 cases
    .venv/bin/python scripts/measure_routing.py --embedder vllm   # the paper's embedder

The commit arm (configs/arm/pmem_commit_pool.yaml: identity routing, every event of the pool)
ingests ALFWorld-Revision's interleaved chains with a scripted writer: its key call names the
observed object corrupted one way (`benchmarks.alfworld_revision.routing.KINDS`) on half of the
events, seeded per event, exactly on the rest; its patch call keeps the cell (routing is
decided before it). Two same/different checks: `perfect` (says "same" exactly when both keys
name one object: only the embedding gate can fail) and `gate alone` (always "same": the
embedding threshold decides). The embedder is real (the profile's server, through the response
cache). Writes <out>/routing.md, .csv and .json (what produced them).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import sys
from pathlib import Path
from typing import Any

from hydra import compose, initialize_config_dir
from hydra.utils import instantiate
from omegaconf import OmegaConf

from benchmarks.alfworld_revision.routing import KINDS, classify, corrupt, key_of, table
from benchmarks.models.cache import ResponseCache
from benchmarks.models.usage import UsageMeter
from benchmarks.runner.arm import Services
from benchmarks.runner.cli import CONFIG_DIR
from benchmarks.runner.runs import git_state
from benchmarks.runner.stack import ModelStack

CHECKS = ("perfect", "gate alone")
_OBSERVATION = re.compile(r"\nObservation: (?P<text>[^\n]*)\n?\Z")
_PAIR = re.compile(r"\nA: (?P<a>[^\n]+)\nB: (?P<b>[^\n]+)")


class Reply:
    def __init__(self, text: str, parsed: Any = None) -> None:
        self.text, self.parsed = text, parsed


class CorruptingWriter:
    """A scripted writer: names each observation's object as `names` says, keeps every cell,
    and answers the same/different check by `check`."""

    def __init__(self, names: dict[str, tuple[str, str]], check: str) -> None:
        self.names = names  # observation -> (object, the name the key call gives it)
        self.owner = {key_of(name): obj for obj, name in names.values()}
        self.check = check

    async def complete(self, messages: Any, **kw: Any) -> Reply:
        prompt = messages if isinstance(messages, str) else messages[-1]["content"]
        if kw.get("schema_name") == "key":
            observed = _OBSERVATION.search(prompt)
            _, name = self.names[observed["text"]] if observed else ("", "")
            return Reply("", {"key": key_of(name)})
        if kw.get("schema_name") == "revise":
            return Reply("", {"op": "noop", "key": "", "old_value": None, "new_value": None,
                              "status": None, "supersedes": None})  # fmt: skip
        pair = _PAIR.search(prompt)
        if pair is None:
            raise ValueError(f"unexpected writer call: {prompt[:80]!r}")
        if self.check == "gate alone":
            return Reply("same")
        a, b = self.owner.get(pair["a"]), self.owner.get(pair["b"])
        return Reply("same" if a is not None and a == b else "different")


def names_for(events: list[Any], kind: str, seed: int) -> dict[str, tuple[str, str, str]]:
    """Per observation: its object, the name the key call gives it, and its form: `kind` on
    half of the events (every event for `exact`) where the kind applies, else "as named"."""
    out = {}
    for event in events:
        obj = event.meta["object"]
        rng = random.Random(f"{seed}:{event.id}:{kind}")
        bent = corrupt(obj, kind, rng) if (kind == "exact" or rng.random() < 0.5) else None
        out[event.text] = (obj, bent or obj, kind if bent is not None else "as named")
    return out


async def measure(cfg: dict[str, Any], cache: Path, seed: int) -> list[dict[str, Any]]:
    """One row per corrupted event: (check, corruption, where it went)."""
    bench = instantiate({k: v for k, v in cfg["benchmark"].items() if k != "name"})
    episodes = bench.episodes()
    meter = UsageMeter()
    stack = ModelStack(cfg, ResponseCache(str(cache)), meter, cache.parent / "logs")
    rows: list[dict[str, Any]] = []
    try:
        embedder = await stack.get("embedder")
        for check in CHECKS:
            for kind in KINDS:
                for episode in episodes:
                    named = names_for(list(episode.events), kind, seed)
                    writer = CorruptingWriter({t: (o, n) for t, (o, n, _) in named.items()}, check)
                    spec = {k: v for k, v in cfg["arm"].items() if k != "name"}
                    arm = instantiate(spec, services=Services(writer=writer, embedder=embedder))
                    arm.wording = bench.wording
                    await arm.ingest(list(episode.events))
                    for event, outcome in zip(episode.events, classify(arm.routes), strict=True):
                        if named[event.text][2] == kind:
                            rows.append({"check": check, "kind": kind, "outcome": outcome})
    finally:
        await stack.close()
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--embedder", default="local")
    p.add_argument("--L", type=int, default=4)
    p.add_argument("--cases", type=int, default=20)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--cache", type=Path, default=Path("runs/cache.sqlite"))
    p.add_argument("--out", type=Path, default=Path("results/routing"))
    args = p.parse_args(argv)
    overrides = [
        "experiment=table6", "arm=pmem_commit_pool", f"embedder={args.embedder}",
        f"benchmark.L={args.L}", f"benchmark.cases={args.cases}",
    ]  # fmt: skip
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        cfg = OmegaConf.to_container(compose("config", overrides=overrides), resolve=True)
    assert isinstance(cfg, dict)
    args.cache.parent.mkdir(parents=True, exist_ok=True)
    rows = asyncio.run(measure(cfg, args.cache, args.seed))
    df = table(rows)
    embedder = cfg["embedder"]
    threshold = cfg["arm"]["soft_identity"]
    args.out.mkdir(parents=True, exist_ok=True)
    df.to_csv(args.out / "routing.csv", index=False)
    md = "\n".join([
        "# Routing under corrupted keys (the commit arm, pool route)",
        "",
        f"ALFWorld-Revision L={args.L}, {args.cases} cases, every event of the interleaved pool; "
        f"embedder `{embedder['model']}@{embedder.get('revision')}`, soft identity threshold "
        f"{threshold}; a scripted writer names the object corrupted on half of the events "
        "(the others exactly; `exact`: every event exactly). Shares of the corrupted events, "
        "in %: routed to its object's own cell, to another object's cell, or to a new cell "
        "(a fork). `perfect`: the same/different check says same exactly when both keys name "
        "one object; `gate alone`: the embedding threshold decides.",
        "",
        df.to_markdown(index=False),
        "",
        f"Made by `python scripts/measure_routing.py --embedder {args.embedder} --L {args.L} "
        f"--cases {args.cases} --seed {args.seed}`.",
    ])  # fmt: skip
    (args.out / "routing.md").write_text(md + "\n")
    made = {"overrides": overrides, "seed": args.seed, "git": git_state(),
            "embedder": {k: embedder.get(k) for k in ("model", "revision")},
            "soft_identity": threshold}  # fmt: skip
    (args.out / "routing.json").write_text(json.dumps(made, indent=2) + "\n")
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
