"""Every arm on the one shipped real LongMemEval instance (experiment longmemeval_local, the
local profile): the official judge's verdict, what the arm read, what its write path cost.

Why a module of its own: n=1 per arm, a plumbing record of each arm on a real 53-session
haystack rather than an accuracy estimate, read from the one prediction and score record of
each run and its snapshots' ingest records (benchmarks/reports/frame.py's `history_costs`);
benchmarks/reports/tables.py registers it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from benchmarks.reports.frame import Builder, header, history_costs

REAL_INSTANCE = "e47becba"  # the shipped instance (benchmarks/data/longmemeval)


def _first_record(path: Path) -> dict[str, Any]:
    """The one record of a one-question run's JSON-lines file."""
    return json.loads(next(line for line in path.read_text().splitlines() if line))


def _calls(costs: pd.DataFrame, calls: str, cached: str, tokens: str) -> str:
    """A role's ingest calls (paid and cached) and tokens over a run's histories."""
    if costs.empty:  # no ingest record (nothing was ingested)
        return "–"
    total, hits = int(costs[calls].sum()), int(costs[cached].sum())
    if not total:
        return "–"
    used = costs[tokens].sum()
    return f"{total - hits} paid, {hits} cached" + (f", {used / 1000:,.1f}k tok" if used else "")


def longmemeval_local(df: pd.DataFrame, runs: Path, out: Path) -> str:
    """Every arm on the one shipped real instance (experiment longmemeval_local): the verdict
    of the official judge, what the arm read, and what its write path cost. n=1 per arm: a
    plumbing record of each arm on a real 53-session haystack, not an accuracy estimate."""
    rows = {}
    for _, r in df.sort_values("mean_tokens").iterrows():
        folder = runs / "longmemeval_local" / r["run"]
        p, sc = _first_record(folder / "predictions.jsonl"), _first_record(folder / "scores.jsonl")
        meta = p.get("context_meta") or {}
        costs = history_costs(folder)
        routed = meta.get("pruned_read")
        # arm names, not the paper's labels: on this profile the "35B" router runs on the judge
        shrunk = r.get("sessions")
        name = r["arm"] if pd.isna(shrunk) else f"{r['arm']} ({int(shrunk)} sessions)"
        rows[name] = {
            "haystack": (p.get("meta") or {}).get("haystack_sessions", "–"),
            "judge": "correct" if (sc.get("judge") or {}).get("correct") else "wrong",
            "answer": " ".join(str(p["prediction"]).split())[:60],
            "read tokens": f"{p['context_tokens']:,}",
            "read chars": f"{p['context_chars']:,}",
            "items": p.get("context_items"),
            "facts/cell": f"{meta['facts_per_cell']:.2f}" if "facts_per_cell" in meta else "–",
            "pruned": "–"
            if routed is None
            else (f"{meta.get('pruned', 0)}" if routed else "gated off"),
            "write path (chat)": _calls(costs, "writer_calls", "writer_cached", "write_tokens"),
            "embedder": _calls(costs, "embed_calls", "embed_cached", "embed_tokens"),
            "ingest wall": f"{costs['wall_s'].sum():,.0f} s" if len(costs) else "–",
        }
    table = pd.DataFrame.from_dict(rows, orient="index")
    table.index.name = "arm"
    question = p["question"] if rows else ""
    stored = (sc.get("class") or {}).get("class") if rows else None
    cells = (
        f'One real LongMemEval-S instance ({REAL_INSTANCE}: "{question}"), the local profile '
        "(reader and judge: Qwen2.5-Coder-1.5B Q4_K_M in a 16k window; embedder: "
        "multilingual-e5-small). Read tokens by the reader's tokenizer; ingest counts are this "
        "run's own (a write path cached by an earlier run shows as cached calls). Pruned: turns "
        "the provenance prune dropped, or 'gated off' where the gate sent the question to the "
        f"plain read; the stored B.1 class the class-oracle gate reads: {stored}."
    )
    title = "LongMemEval: every arm on the shipped instance"
    return header(title, df, cells) + "\n" + table.to_markdown()


TABLES: dict[str, Builder] = {"longmemeval_local": longmemeval_local}
