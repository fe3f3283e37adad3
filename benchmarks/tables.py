"""Build the paper's tables from run folders: ours (n, 95% interval) beside the paper's numbers.

    python -m benchmarks.tables table6 [--runs runs] [--out results]

Reads runs/<experiment>/*/{manifest,summary}.json only (so tables can be rebuilt any time without
a model), writes results/tables/<name>.md and .csv, and a figure where one helps.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from benchmarks import paper

BENCH_META = ("_target_", "name")


def collect(runs: Path, experiment: str) -> pd.DataFrame:
    """One row per finished run folder of an experiment."""
    rows = []
    for folder in sorted((runs / experiment).glob("*/summary.json")):
        summary = json.loads(folder.read_text())
        manifest = json.loads((folder.parent / "manifest.json").read_text())
        cfg = manifest["config"]
        row: dict[str, Any] = {
            "arm": cfg["arm"]["name"],
            "benchmark": cfg["benchmark"]["name"],
            **{k: v for k, v in cfg["benchmark"].items() if k not in BENCH_META},
            "llm": cfg["llm"].get("model"),
            "embedder": (cfg.get("embedder") or {}).get("model"),
            "n": summary["n"],
            "expected": summary["expected"],
            "complete": summary["complete"],
            "run": folder.parent.name,
        }
        read = summary.get("read", {})
        row["mean_chars"] = read.get("mean_chars")
        row["mean_tokens"] = read.get("mean_tokens")
        for key, value in (read.get("meta") or {}).items():
            row[f"meta.{key}"] = value
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
    return pd.DataFrame(rows)


def cell(acc: float, lo: float, hi: float, n: int) -> str:
    return f"{acc:.1f} [{lo:.0f}–{hi:.0f}] (n={n})"


def by_parameter(
    df: pd.DataFrame, scorer: str, parameter: str, reference: dict[str, dict[Any, float]]
) -> pd.DataFrame:
    """Rows: parameter values; columns: per arm, ours with its interval, then the paper's."""
    out: dict[str, dict[Any, Any]] = {}
    for _, r in df.sort_values(["arm", parameter]).iterrows():
        p = r[parameter]
        out.setdefault(f"{r['arm']} (ours)", {})[p] = cell(
            r[f"{scorer}.acc"], r[f"{scorer}.lo"], r[f"{scorer}.hi"], int(r[f"{scorer}.n"])
        )
        if r["arm"] in reference:
            out.setdefault(f"{r['arm']} (paper)", {})[p] = reference[r["arm"]].get(p, "–")
        out.setdefault(f"{r['arm']} chars", {})[p] = round(r["mean_chars"])
    table = pd.DataFrame(out)
    table.index.name = parameter
    return table


def header(title: str, df: pd.DataFrame) -> str:
    models = ", ".join(sorted({str(m) for m in df["llm"].dropna()}))
    embedders = ", ".join(sorted({str(m) for m in df["embedder"].dropna()})) or "none"
    incomplete = df[~df["complete"]]
    note = f"\n\n**Incomplete runs:** {', '.join(incomplete['run'])}" if len(incomplete) else ""
    return (
        f"# {title}\n\nOur runs: reader/writer `{models}`, embedder `{embedders}`. "
        "Ours: accuracy % with a 95% Wilson interval and n; paper: the published figure "
        f"(Qwen3-4B-Instruct-2507, n=140).{note}\n"
    )


def table6(df: pd.DataFrame, out: Path) -> str:
    t = by_parameter(df, "location", "L", paper.TABLE6_ACCURACY)
    md = (
        header("Table 6: current-value accuracy as revisions accumulate", df)
        + "\n"
        + t.to_markdown()
    )
    coverage = [c for c in df.columns if c == "meta.coverage"]
    if coverage:
        cov = df.pivot_table(index="L", columns="arm", values="meta.coverage")
        md += "\n\nRetrieval coverage: share of the target chain in the top-k (B.2 control):\n\n"
        md += (100 * cov).round(1).to_markdown()
    _plot_by_parameter(
        df,
        "location",
        "L",
        paper.TABLE6_ACCURACY,
        out / "figures" / "table6.png",
        "Table 6: accuracy as revisions accumulate",
    )
    return md


TABLES: dict[str, Callable[[pd.DataFrame, Path], str]] = {"table6": table6}


def _plot_by_parameter(
    df: pd.DataFrame,
    scorer: str,
    parameter: str,
    reference: dict[str, dict[Any, float]],
    path: Path,
    title: str,
) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 4))
    for i, (arm, g) in enumerate(df.sort_values(parameter).groupby("arm")):
        color = f"C{i}"
        ax.errorbar(
            g[parameter],
            g[f"{scorer}.acc"],
            yerr=[g[f"{scorer}.acc"] - g[f"{scorer}.lo"], g[f"{scorer}.hi"] - g[f"{scorer}.acc"]],
            marker="o",
            color=color,
            capsize=3,
            label=f"{arm} (ours)",
        )
        if arm in reference:
            xs = sorted(reference[arm])
            ax.plot(
                xs,
                [reference[arm][x] for x in xs],
                ls="--",
                color=color,
                alpha=0.6,
                label=f"{arm} (paper)",
            )
    ax.set_xscale("log", base=2)
    ax.set_xticks(sorted(df[parameter].unique()))
    ax.get_xaxis().set_major_formatter(matplotlib.ticker.ScalarFormatter())
    ax.set_xlabel(parameter)
    ax.set_ylabel("accuracy (%)")
    ax.set_ylim(0, 105)
    ax.set_title(title)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=150)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("table", choices=sorted(TABLES))
    p.add_argument("--runs", type=Path, default=Path("runs"))
    p.add_argument("--out", type=Path, default=Path("results"))
    p.add_argument("--experiment", help="run folder name if not the table's name")
    args = p.parse_args(argv)
    df = collect(args.runs, args.experiment or args.table)
    md = TABLES[args.table](df, args.out)
    tables = args.out / "tables"
    tables.mkdir(parents=True, exist_ok=True)
    (tables / f"{args.table}.md").write_text(md + "\n")
    df.to_csv(tables / f"{args.table}.csv", index=False)
    print(md)
    print(f"\nwrote {tables / args.table}.md and .csv", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
