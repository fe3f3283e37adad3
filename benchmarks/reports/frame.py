"""What every table reads from run folders: one row per run, one row per question, ingest cost.

Why a module of its own: the tables of every benchmark (alfworld, factconsolidation, the
longmemeval_* modules) share one contract, ``builder(df, runs, out) -> markdown`` over the frame
`collect` returns, and the same header, cells and ingest records; this is that shared part, so
the builders import it and the registry (benchmarks/reports/tables.py) imports the builders, one
way only. Everything comes from runs/<experiment>/*/{manifest,summary}.json, the predictions and
scores beside them, and the snapshots' ingest.json: a table can be rebuilt without a model.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from benchmarks.reports import paper

BENCH_META = ("_target_", "name")

# A table builder: the experiment's frame (`collect`), the runs root, the output root -> markdown.
Builder = Callable[[pd.DataFrame, Path, Path], str]


def arm_key(cfg: dict[str, Any]) -> str:
    """A run's row name: the arm's name, plus its writer when the run gives the write path a
    model of its own (`writer=<profile>`): `<arm>_35b` for the paper's 35B extractor (the rows
    of Appendix D), `<arm>@<model>` for any other writer, so the same arm with two writers is
    two rows and never one run hiding the other."""
    name = cfg["arm"]["name"]
    writer = (cfg.get("writer") or {}).get("model")
    if not writer:
        return name
    return name + paper.WRITER_ROWS.get(writer, f"@{writer}")


def collect(runs: Path, experiment: str) -> pd.DataFrame:
    """One row per finished run folder of an experiment."""
    rows = []
    for folder in sorted((runs / experiment).glob("*/summary.json")):
        summary = json.loads(folder.read_text())
        manifest = json.loads((folder.parent / "manifest.json").read_text())
        cfg = manifest["config"]
        row: dict[str, Any] = {
            "arm": arm_key(cfg),
            "benchmark": cfg["benchmark"]["name"],
            **{k: v for k, v in cfg["benchmark"].items() if k not in BENCH_META},
            "llm": cfg["llm"].get("model"),
            # a write path of its own (writer=<profile>); None: the llm profile also writes
            "writer": (cfg.get("writer") or {}).get("model"),
            "embedder": (cfg.get("embedder") or {}).get("model"),
            "n": summary["n"],
            "expected": summary["expected"],
            "complete": summary["complete"],
            "run": folder.parent.name,
            "started_at": manifest.get("started_at"),
        }
        read = summary.get("read", {})
        row["mean_chars"] = read.get("mean_chars")
        row["mean_tokens"] = read.get("mean_tokens")
        for key, value in (read.get("meta") or {}).items():
            row[f"meta.{key}"] = value
        for key, r in (summary.get("rates") or {}).items():
            row[f"rate.{key}"] = 100 * r["rate"]
            row[f"rate.{key}.n"] = r["n"]
        for scorer, s in summary["scores"].items():
            row[f"{scorer}.acc"] = 100 * s["accuracy"]
            row[f"{scorer}.lo"] = 100 * s["ci95"][0]
            row[f"{scorer}.hi"] = 100 * s["ci95"][1]
            row[f"{scorer}.n"] = s["n"]
            for metric, value in s.items():
                if metric not in ("accuracy", "ci95", "n", "correct") and isinstance(value, float):
                    row[f"{scorer}.{metric}"] = 100 * value
        rows.append(row)
    if not rows:
        raise SystemExit(f"no finished runs under {runs / experiment}: run the experiment first")
    return latest_per_config(pd.DataFrame(rows), experiment)


def latest_per_config(df: pd.DataFrame, experiment: str) -> pd.DataFrame:
    """One row per (arm, benchmark, writer): a config changed since (another scorer, prompt,
    sample size...) leaves its older run folder behind; the newest run is the one reported (its n
    is in the table), and the others are named. The writer model is part of the identity: the
    same arm with a write path of its own (Appendix D's 35B extractor) is a row of its own."""
    keys = ("arm", "benchmark", "source", "L", "d", "probe", "sessions", "writer")
    identity = [c for c in keys if c in df.columns]
    df = df.sort_values("started_at")
    older = df[df.duplicated(identity, keep="last")]
    for run in older["run"]:
        print(
            f"tables: {experiment}/{run} is superseded by a newer run of the same arm and "
            "benchmark; not reported",
            file=sys.stderr,
        )
    return df.drop_duplicates(identity, keep="last").reset_index(drop=True)


def per_question(runs: Path, experiment: str) -> pd.DataFrame:
    """One row per scored question of an experiment, for tables that join questions (Table 8
    joins each case's final question with its "-pre" question)."""
    rows = []
    for folder in sorted((runs / experiment).glob("*/summary.json")):
        folder = folder.parent
        cfg = json.loads((folder / "manifest.json").read_text())["config"]
        preds = {}
        for line in (folder / "predictions.jsonl").read_text().splitlines():
            r = json.loads(line)
            preds[r["id"]] = r
        for line in (folder / "scores.jsonl").read_text().splitlines():
            score = json.loads(line)
            pred = preds[score["id"]]
            row: dict[str, Any] = {
                "run": folder.name,
                "arm": arm_key(cfg),
                **{k: v for k, v in cfg["benchmark"].items() if k not in BENCH_META},
                "id": score["id"],
                "case": score["id"].removesuffix("-pre"),
                "phase": "pre" if score["id"].endswith("-pre") else "final",
                "gold": pred["golds"][0],
                "retained": (pred.get("context_meta") or {}).get("retained_values"),
            }
            for scorer, fields in score.items():
                if isinstance(fields, dict):
                    row.update({f"{scorer}.{k}": v for k, v in fields.items()})
            rows.append(row)
    if not rows:
        raise SystemExit(f"no finished runs under {runs / experiment}: run the experiment first")
    return pd.DataFrame(rows)


# -- header and cells ---------------------------------------------------------------------------


def cell(acc: float, lo: float, hi: float, n: int) -> str:
    return f"{acc:.1f} [{lo:.0f}–{hi:.0f}] (n={n})"


INTERVAL_CELLS = (
    "Cells: ours, accuracy % with a 95% Wilson interval [low–high], then / the paper's figure "
    "(Qwen3-4B-Instruct-2507, n=140) where it reports one."
)
RATE_CELLS = "Cells: ours in % (n); the paper's figure (Qwen3-4B-Instruct-2507, n=140) beside it."


def header(title: str, df: pd.DataFrame, cells: str = INTERVAL_CELLS) -> str:
    models = ", ".join(sorted({str(m) for m in df["llm"].dropna()}))
    embedders = ", ".join(sorted({str(m) for m in df["embedder"].dropna()})) or "none"
    incomplete = df[~df["complete"]]
    note = f"\n\n**Incomplete runs:** {', '.join(incomplete['run'])}" if len(incomplete) else ""
    return (
        f"# {title}\n\nOur runs: reader/writer `{models}`, embedder `{embedders}`. {cells}{note}\n"
    )


# -- ingest cost (snapshots/*/ingest.json) -----------------------------------------------------


def ingest_cost(run: Path) -> dict[str, Any] | None:
    """What building a run's memory cost (its snapshots' ingest.json), summed."""
    files = sorted(run.glob("snapshots/*/ingest.json"))
    if not files:
        return None
    total = {"calls": 0, "cached": 0, "tokens": 0, "wall_s": 0.0}
    for f in files:
        data = json.loads(f.read_text())
        total["wall_s"] += data["wall_s"]
        for u in data["usage"].values():
            total["calls"] += u["calls"]
            total["cached"] += u["cache_hits"]
            total["tokens"] += u["prompt_tokens"] + u["completion_tokens"]
    return total


def format_cost(c: dict[str, Any]) -> str:
    return f"{c['calls']:,} ({c['cached']:,}) calls, {c['tokens']:,} tok, {c['wall_s']:,.0f} s"


def history_costs(run: Path) -> pd.DataFrame:
    """Per history (episode snapshot): writer and embedder calls and tokens, wall time, and
    the snapshot's sizes, from snapshots/*/ingest.json and the files beside it."""
    rows = []
    for ingest in sorted(run.glob("snapshots/*/ingest.json")):
        data = json.loads(ingest.read_text())
        usage = data.get("usage", {})
        writer, embedder = usage.get("writer", {}), usage.get("embedder", {})
        folder = ingest.parent
        store = sum(f.stat().st_size for f in folder.iterdir() if f.name.startswith("store.sqlite"))
        meta = folder / "state.json"
        index = folder / "cells.npy"
        rows.append(
            {
                "snapshot": folder.name,
                "writer_calls": writer.get("calls", 0) + writer.get("cache_hits", 0),
                "writer_cached": writer.get("cache_hits", 0),
                "write_tokens": writer.get("prompt_tokens", 0) + writer.get("completion_tokens", 0),
                "embed_calls": embedder.get("calls", 0) + embedder.get("cache_hits", 0),
                "embed_cached": embedder.get("cache_hits", 0),
                "embed_tokens": embedder.get("prompt_tokens", 0),
                "wall_s": data.get("wall_s", 0.0),
                "store_bytes": store + (meta.stat().st_size if meta.exists() else 0),
                "index_bytes": index.stat().st_size if index.exists() else 0,
            }
        )
    return pd.DataFrame(rows)
