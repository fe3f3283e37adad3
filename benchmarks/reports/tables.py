"""Build the paper's tables from run folders: ours (n, 95% interval) beside the paper's numbers.

    python -m benchmarks.reports.tables table6 [--runs runs] [--out results]

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

from benchmarks.reports import paper
from benchmarks.reports.figures import figure

BENCH_META = ("_target_", "name")


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


def cell(acc: float, lo: float, hi: float, n: int) -> str:
    return f"{acc:.1f} [{lo:.0f}–{hi:.0f}] (n={n})"


def by_parameter(
    df: pd.DataFrame, scorer: str, parameter: str, reference: dict[str, dict[Any, float]]
) -> pd.DataFrame:
    """One row per arm; per parameter value, ours with its 95% interval and, after a slash, the
    paper's figure; then the mean read size in characters (the paper's last column)."""
    rows: dict[str, dict[str, Any]] = {}
    for _, r in df.sort_values(["arm", parameter]).iterrows():
        row = rows.setdefault(r["arm"], {})
        ours = f"{r[f'{scorer}.acc']:.1f} [{r[f'{scorer}.lo']:.0f}–{r[f'{scorer}.hi']:.0f}]"
        ref = reference.get(r["arm"], {}).get(r[parameter])
        row[f"{parameter}={r[parameter]}"] = ours + (f" / {ref:.1f}" if ref is not None else "")
        row.setdefault("_chars", []).append(r["mean_chars"])
        row["n per cell"] = int(r[f"{scorer}.n"])
    for row in rows.values():
        row["chars"] = round(sum(row["_chars"]) / len(row["_chars"]))
        del row["_chars"]
    table = pd.DataFrame.from_dict(rows, orient="index")
    values = sorted(df[parameter].unique())
    table = table[[f"{parameter}={v}" for v in values] + ["n per cell", "chars"]]
    table.index.name = "arm"
    return table


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


def table6(df: pd.DataFrame, runs: Path, out: Path) -> str:
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


def _pct(series: pd.Series) -> str:
    values = series.dropna().astype(bool)
    return f"{100 * values.mean():.1f} (n={len(values)})" if len(values) else "–"


def table8(df: pd.DataFrame, runs: Path, out: Path) -> str:
    """Appendix B.3: recovery over committed cases (the "-pre" question answered v2)."""
    q = per_question(runs, "table8")
    q = q[q["run"].isin(df["run"])]  # the runs `collect` reports
    rows = []
    for (arm, d), g in q.groupby(["arm", "d"]):
        pre = g[g.phase == "pre"].set_index("case")
        final = g[g.phase == "final"].set_index("case")
        committed = pre.index[pre["committed.correct"].fillna(False).astype(bool)]
        f = final.loc[final.index.intersection(committed)]
        outcome = f.get("recovered.outcome", pd.Series(dtype=object))
        retained = final.apply(
            lambda r: r["gold"] in r["retained"] if isinstance(r["retained"], list) else None,
            axis=1,
        )
        ref = paper.TABLE8.get(arm, {})
        rows.append(
            {
                "arm": arm,
                "d": d,
                "committed": f"{len(committed)}/{len(pre)}",
                "recovered (ours)": _pct(outcome == "correct"),
                "recovered (paper)": ref.get(f"recovered_d{d}", "–"),
                "wrong = v2": _pct(outcome == "stale"),
                "lost": _pct(~outcome.isin(["correct", "stale"])),
                "v1 in store": _pct(retained) if retained.notna().any() else "–",
                "v1 in store (paper)": ref.get("v1_in_store", "–"),
            }
        )
    table = pd.DataFrame(rows)
    return (
        header("Table 8: reversibility under retraction", df, RATE_CELLS)
        + "\n"
        + table.to_markdown(index=False)
    )


def conflict(df: pd.DataFrame, runs: Path, out: Path) -> str:
    """§4.2.3: the conflict flagged before the settling check, and settled after it."""
    q = per_question(runs, "conflict")
    q = q[q["run"].isin(df["run"])]
    rows = []
    for arm, g in q.groupby("arm"):
        ref = paper.CONFLICT.get(arm, {})
        pre, final = g[g.phase == "pre"], g[g.phase == "final"]
        rows.append(
            {
                "arm": arm,
                "flagged before (ours)": _pct(pre.get("flagged.correct", pd.Series(dtype=bool))),
                "flagged before (paper)": ref.get("flagged_pre", "–"),
                "store contested": _pct(pre.get("flagged.store_contested", pd.Series(dtype=bool))),
                "settled after (ours)": _pct(final.get("settled.correct", pd.Series(dtype=bool))),
                "settled after (paper)": ref.get("accuracy_post", "–"),
            }
        )
    table = pd.DataFrame(rows).set_index("arm")
    return header("§4.2.3: contest and resolve", df, RATE_CELLS) + "\n" + table.to_markdown()


def table6_single(df: pd.DataFrame, runs: Path, out: Path) -> str:
    rows = []
    for _, r in df.sort_values("arm").iterrows():
        rows.append(
            {
                "arm": r["arm"],
                "ours": cell(
                    r["location.acc"], r["location.lo"], r["location.hi"], int(r["location.n"])
                ),
                "paper": paper.TABLE6_SINGLE_ACCURACY.get(r["arm"], "–"),
                "chars": round(r["mean_chars"]),
            }
        )
    table = pd.DataFrame(rows).set_index("arm")
    return header("§4.2.1: a single revision in two-step phrasing", df) + "\n" + table.to_markdown()


def table7(df: pd.DataFrame, runs: Path, out: Path) -> str:
    """§4.3: accuracy by source (ours [interval] (n) / paper), the single-hop stale rate, and
    what each arm's ingest cost."""
    rows: dict[str, dict[str, Any]] = {}
    costs: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for _, r in df.sort_values(["arm", "source"]).iterrows():
        row = rows.setdefault(r["arm"], {})
        ref = paper.TABLE7_ACCURACY.get(r["arm"], {}).get(r["source"])
        n = int(r["substring.n"])
        ours = f"{r['substring.acc']:.0f} [{r['substring.lo']:.0f}–{r['substring.hi']:.0f}] ({n})"
        row[f"{r['source']} acc"] = ours + (f" / {ref}" if ref is not None else "")
        stale = r.get("rate.stale.stale")
        if stale is not None and stale == stale:  # not NaN: a single-hop source
            ref = paper.TABLE7_STALE.get(r["arm"], {}).get(r["source"])
            sn = int(r["rate.stale.stale.n"])
            row[f"{r['source']} stale"] = f"{stale:.1f} ({sn})" + (
                f" / {ref}" if ref is not None else ""
            )
        cost = ingest_cost(runs / "table7" / r["run"])
        paid = costs.setdefault((r["arm"], r["source"].split("_")[1]), [])
        if cost is not None:
            paid.append(cost)
    for (arm, length), paid in costs.items():  # sh and mh share a stream: show the paying run
        if paid:
            rows[arm][f"ingest {length}"] = format_cost(max(paid, key=lambda c: c["calls"]))
    table = pd.DataFrame.from_dict(rows, orient="index").fillna("–")
    table = table[sorted(table.columns, key=_table7_column)]
    table.index.name = "arm"
    _plot_table7(df, out / "figures" / "table7.png")
    cells = (
        "Cells: accuracy % by MemoryAgentBench's substring rule with a 95% Wilson interval and "
        "(n questions), then / the paper's figure (Qwen3-4B-Instruct-2507, n=100 per cell) "
        "where it reports one; stale: % of stale-scoreable single-hop questions answered with a "
        "superseded value (n), / the paper's."
    )
    return (
        header("Table 7: FactConsolidation (accuracy %, single-hop stale rate %)", df, cells)
        + "\n"
        + table.to_markdown()
        + "\n\nIngest: model calls paid while the memory was built (writer chat + embedder "
        "batches; calls answered from the response cache in parentheses), tokens, and wall "
        "time on this machine; – where the run predates the ingest record.\n"
    )


def _table7_column(name: str) -> tuple[int, int, str]:
    kind = {"acc": 0, "stale": 1}.get(name.split()[-1], 2)
    source = name.split()[0] if kind < 2 else name.split()[-1]
    hop, _, length = source.partition("_")
    order = {"6k": 0, "32k": 1, "64k": 2, "262k": 3}
    return (kind, {"sh": 0, "mh": 1}.get(hop, 0), str(order.get(length, length)))


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


TABLES: dict[str, Callable[[pd.DataFrame, Path, Path], str]] = {
    "table7": table7,
    "table6": table6,
    "table6_single": table6_single,
    "table8": table8,
    "conflict": conflict,
}


def _plot_table7(df: pd.DataFrame, path: Path) -> None:
    """Grouped bars: accuracy per arm and source, ours (with 95% intervals) beside the paper's."""
    sources = sorted(df["source"].unique(), key=lambda s: (s.split("_")[0] != "sh", s))
    arms = sorted(df["arm"].unique())
    size = (4.2 * len(sources), 4.2)
    with figure(path, ncols=len(sources), figsize=size, squeeze=False) as (fig, axes):
        for ax, source in zip(axes[0], sources, strict=True):
            sub = df[df["source"] == source].set_index("arm")
            xs = range(len(arms))
            ours = [sub["substring.acc"].get(a, float("nan")) for a in arms]
            lo = [o - sub["substring.lo"].get(a, o) for a, o in zip(arms, ours, strict=True)]
            hi = [sub["substring.hi"].get(a, o) - o for a, o in zip(arms, ours, strict=True)]
            ax.bar([x - 0.2 for x in xs], ours, 0.4, yerr=[lo, hi], capsize=2, label="ours")
            ref = [paper.TABLE7_ACCURACY.get(a, {}).get(source, float("nan")) for a in arms]
            ax.bar([x + 0.2 for x in xs], ref, 0.4, alpha=0.5, hatch="//", label="paper")
            ax.set_xticks(list(xs), arms, rotation=60, ha="right", fontsize=7)
            ax.set_ylim(0, 105)
            ax.set_title(source)
            ax.set_ylabel("accuracy (%)")
        axes[0][0].legend(fontsize=8)
        fig.suptitle("Table 7: FactConsolidation (MemoryAgentBench substring rule)")


def _plot_by_parameter(
    df: pd.DataFrame,
    scorer: str,
    parameter: str,
    reference: dict[str, dict[Any, float]],
    path: Path,
    title: str,
) -> None:
    from matplotlib.ticker import ScalarFormatter  # matplotlib loads only when a table draws

    with figure(path, figsize=(6.5, 4)) as (_, ax):
        for i, (arm, g) in enumerate(df.sort_values(parameter).groupby("arm")):
            color = f"C{i}"
            ax.errorbar(
                g[parameter],
                g[f"{scorer}.acc"],
                yerr=[
                    g[f"{scorer}.acc"] - g[f"{scorer}.lo"],
                    g[f"{scorer}.hi"] - g[f"{scorer}.acc"],
                ],
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
        ax.get_xaxis().set_major_formatter(ScalarFormatter())
        ax.set_xlabel(parameter)
        ax.set_ylabel("accuracy (%)")
        ax.set_ylim(0, 105)
        ax.set_title(title)
        ax.legend(fontsize=7, ncol=2)


# LongMemEval's tables (§4.1, B.1, C, D, E) live in their own module; registered here so one
# `python -m benchmarks.reports.tables NAME` builds every table (imported late: no import cycle).
from benchmarks.reports.longmemeval import TABLES as _LONGMEMEVAL  # noqa: E402

TABLES.update(_LONGMEMEVAL)


def build(name: str, runs: Path, out: Path) -> str:
    """Collect an experiment's runs, build its table, write the .md and .csv; the markdown."""
    df = collect(runs, name)
    md = TABLES[name](df, runs, out)
    tables = out / "tables"
    tables.mkdir(parents=True, exist_ok=True)
    (tables / f"{name}.md").write_text(md + "\n")
    df.to_csv(tables / f"{name}.csv", index=False)
    return md


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("table", choices=sorted(TABLES))
    p.add_argument("--runs", type=Path, default=Path("runs"))
    p.add_argument("--out", type=Path, default=Path("results"))
    args = p.parse_args(argv)
    print(build(args.table, args.runs, args.out))
    print(f"\nwrote {args.out / 'tables' / args.table}.md and .csv", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
