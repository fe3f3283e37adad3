"""Calibrate an embedder profile's thresholds (soft identity, prune pair, merge high/low).

    .venv/bin/python scripts/calibrate_embedder.py                  # the local e5 profile
    .venv/bin/python scripts/calibrate_embedder.py --lme FILE ...   # LongMemEval files
    make calibrate-embedder

Writes the table (``<out>/embedder_<profile>.md``; docs/calibration.md) and prints the chosen
values for ``configs/embedder/<profile>.yaml``; trailing ``key=value`` arguments are Hydra
overrides. A first local run embeds ~2,000 turns (~27 minutes on 2 cores); a rerun hits the cache.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from benchmarks.calibration import report
from benchmarks.calibration.thresholds import label_keys
from benchmarks.factconsolidation.calibration import DEFAULT_RUN, harvest_keys
from benchmarks.longmemeval.calibration import DEFAULT_LME, load_instances, turn_pairs
from benchmarks.longmemeval.episodes import flatten
from benchmarks.longmemeval.schema import Instance
from benchmarks.models.cache import ResponseCache
from benchmarks.models.usage import UsageMeter
from benchmarks.runner.cli import CONFIG_DIR
from benchmarks.runner.stack import ModelStack
from benchmarks.runner.types import InputError


def shown(path: str) -> str:
    """A path as the table names it: repository-relative when inside the repository."""
    full = Path(path).resolve()
    return str(full.relative_to(report.ROOT)) if full.is_relative_to(report.ROOT) else path


async def embed_all(
    resolved: dict[str, Any], cache: Path, keys: Sequence[str], instances: Sequence[Instance]
) -> tuple[dict[str, np.ndarray], dict[str, tuple[np.ndarray, np.ndarray]], str]:
    """Key vectors (as the write path embeds them), per question (question, turn vectors),
    and the embedder's usage line.

    Every vector comes from the profile's own embedder client and server (`ModelStack`, as a
    run starts them), through the response cache, embedded as the arms embed them: keys as
    queries with ``_`` read as spaces (`WritePath.identify`), turns as passages and questions as
    queries (`TurnArm`).
    """
    with tempfile.TemporaryDirectory(prefix="pmem-calibrate-") as logs:
        meter = UsageMeter()
        stack = ModelStack(resolved, ResponseCache(cache), meter, Path(logs))
        try:
            embedder = await stack.get("embedder")
            texts = [k.replace("_", " ") for k in keys]  # WritePath.identify's text
            vecs = await embedder.embed(texts, kind="query")
            key_vectors = dict(zip(keys, vecs, strict=True))
            turns = {}
            for inst in instances:
                passages = await embedder.embed([e.text for e in flatten(inst)], kind="passage")
                (question,) = await embedder.embed([inst.question], kind="query")
                turns[inst.question_id] = (question, passages)
        finally:
            await stack.close()
    return key_vectors, turns, meter.summary_line()


def compose_profile(embedder: str, overrides: Sequence[str]) -> dict[str, Any]:
    try:
        with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
            cfg = compose(config_name="config", overrides=[f"embedder={embedder}", *overrides])
    except Exception as err:  # a bad profile name or override: Hydra's own message
        raise report.CalibrationInputError(f"embedder={embedder}: {err}") from None
    resolved = OmegaConf.to_container(cfg, resolve=True)
    assert isinstance(resolved, dict)
    spec = resolved.get("embedder") or {}
    if spec.get("model") is None:
        raise report.CalibrationInputError(f"embedder={embedder}: a profile with no model")
    return resolved


def run(args: argparse.Namespace) -> int:
    """Label pairs of the kind each threshold decides, sweep them, write the table.

    Key pairs come from the fact keys the local chat model really extracted in a committed
    FactConsolidation run; turn pairs from the LongMemEval instances given
    (`benchmarks.calibration.report` builds and labels both). Written:
    ``<out>/embedder_<profile>.md`` and ``.csv`` (the sweeps), ``_pairs.csv`` (each decision and
    turn pair with its cosine and label). The profile's YAML is not edited: the chosen values
    are printed, for ``configs/embedder/<profile>.yaml`` with a comment citing the table.
    """
    resolved = compose_profile(args.embedder, args.overrides)
    spec = resolved["embedder"]
    harvest = harvest_keys(Path(args.run).resolve())
    instances, skipped = load_instances(args.lme)
    keys, _, _ = label_keys(harvest.mentions)
    key_vectors, turns, usage = asyncio.run(embed_all(resolved, Path(args.cache), keys, instances))
    result = report.calibrate(harvest, key_vectors, turn_pairs(instances, turns, skipped))
    result.data.append(f"* LongMemEval files: {', '.join(shown(f) for f in args.lme)}.")
    result.data.append(f"* Embedding: {usage}.")
    profile = {k: float(v) for k, v in (spec.get("thresholds") or {}).items()}
    provisional = report.PROVISIONAL.get(args.embedder, {})
    name = f"embedder_{args.embedder}"
    title = (
        f"# Embedder calibration: the `{args.embedder}` profile "
        f"({spec['model']}, {spec.get('revision')})"
    )
    for path in report.write(result, Path(args.out), name, title, profile, provisional):
        print(f"wrote {path}")
    print(f"thresholds:  # chosen by {Path(args.out) / name}.md")
    for key, point in result.chosen.items():
        print(f"  {key}: {'null' if point is None else f'{point.threshold:.2f}'}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="calibrate_embedder", description=__doc__.split("\n\n")[0])
    p.add_argument("--embedder", default="local", help="embedder profile (configs/embedder/)")
    p.add_argument(
        "--run",
        default=str(report.ROOT / DEFAULT_RUN),
        help="a FactConsolidation state run folder with ingest_calls.jsonl.gz",
    )
    p.add_argument(
        "--lme",
        nargs="+",
        default=[str(report.ROOT / f) for f in DEFAULT_LME],
        help="LongMemEval JSON files (official schema; partial records are completed)",
    )
    p.add_argument("--cache", default="runs/cache.sqlite", help="the response cache")
    p.add_argument("--out", default="results/calibration")
    p.add_argument("overrides", nargs="*", help="Hydra overrides of the profile")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return run(args)
    except (InputError, FileNotFoundError) as err:
        print(f"calibrate_embedder: error: {err}".splitlines()[0], file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
