"""Where a sweep's model time goes, per arm and kind of call: prompt tokens the server processed
against those it reused from its prompt cache, tokens decoded, and the server's own prompt and
decode time (what llama.cpp reports per reply; the harness records it for every paid call).

    python scripts/profile_calls.py RUNS_ROOT [--experiment table6] [--out FILE.md]

Reads the run folders' call records (the ingests' calls.jsonl, the questions' sample logs); calls
answered from the response cache cost nothing and are left out. Run it on a sweep made with a
fresh cache (`run.root=<new folder>`): e.g. a slice of Table 6,

    pmem-bench -m experiment=table6 benchmark.cases=3 benchmark.L=2,8 run.root=/tmp/prof \\
        arm=pmem_commit,raw_topk,raw_tags,raw_recon,raw_oracle_order
    python scripts/profile_calls.py /tmp/prof --experiment table6
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import pandas as pd

from benchmarks.results import NoRuns, load_runs
from benchmarks.results.loader import load_ingest

KINDS = ["arm", "stage", "role", "call"]


def paid_calls(root: Path, experiment: str | None) -> pd.DataFrame:
    """One row per paid chat call: its arm, stage (ingest or read), role, kind (the schema's
    name, else the role) and the server's figures."""
    rows: list[dict[str, Any]] = []
    try:
        ingest = load_ingest(root, experiment, include_scripted=True)
    except NoRuns:
        ingest = pd.DataFrame()
    for _, c in ingest.iterrows():
        rows.append({"arm": c["arm"], "stage": "ingest", **c.to_dict()})
    questions = load_runs(root, experiment, include_scripted=True)
    for _, q in questions.iterrows():
        for c in q.get("calls") or []:
            rows.append({"arm": q["arm"], "stage": "read", **c})
    df = pd.DataFrame(rows)
    if df.empty or "reply" not in df:
        return df
    df = df[df["reply"].notna() & ~df["cached"].fillna(False).astype(bool)]
    df = df.assign(call=df["schema"].fillna(df["role"]) if "schema" in df else df["role"])
    for column in ("reused_tokens", "prompt_ms", "decode_ms"):
        if column not in df:
            df[column] = float("nan")
    return df


def profile(df: pd.DataFrame) -> pd.DataFrame:
    """Per arm, stage, role and kind of call: calls, tokens per call (prompt, reused,
    processed, decoded), the server's prompt and decode seconds, and the share of all the
    server's time."""
    g = df.groupby(KINDS)
    out = pd.DataFrame(
        {
            "calls": g.size(),
            "prompt tok": g["prompt_tokens"].mean(),
            "reused tok": g["reused_tokens"].mean(),
            "processed tok": g["prompt_tokens"].mean() - g["reused_tokens"].mean(),
            "decoded tok": g["completion_tokens"].mean(),
            "prompt s": g["prompt_ms"].sum() / 1000,
            "decode s": g["decode_ms"].sum() / 1000,
        }
    )
    total = out["prompt s"].sum() + out["decode s"].sum()
    out["share %"] = 100 * (out["prompt s"] + out["decode s"]) / total if total else float("nan")
    return out.round(1).reset_index()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("root", type=Path)
    p.add_argument("--experiment")
    p.add_argument("--out", type=Path)
    args = p.parse_args(argv)
    try:
        df = paid_calls(args.root, args.experiment)
    except NoRuns as err:
        print(f"profile_calls: {err}", file=sys.stderr)
        return 2
    if df.empty:
        print(f"profile_calls: no paid chat call under {args.root}", file=sys.stderr)
        return 2
    table = profile(df).to_markdown(index=False)
    print(table)
    reused = df["reused_tokens"].sum() / df["prompt_tokens"].sum()
    server = (df["prompt_ms"].sum() + df["decode_ms"].sum()) / 1000
    print(
        f"\n{len(df):,} paid chat calls; {100 * reused:.0f}% of prompt tokens reused from the "
        f"server's prompt cache; {server:,.0f} s of server time, "
        f"{100 * df['prompt_ms'].sum() / 1000 / server:.0f}% of it prompt processing"
    )
    if args.out:
        args.out.write_text(table + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
