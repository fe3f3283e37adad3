"""The ALFWorld revision tables (§4.2.1 Table 6 and its single-revision variant, B.3 Table 8,
§4.2.3's contest and resolve), ours beside the paper's, from run folders.

Why a module of its own: these tables share the accuracy-by-parameter layout (ours with a 95%
interval / the paper's figure, per L or d) and the "-pre"/final question join that only the
ALFWorld revision cases have; the run frame, header and cells come from
benchmarks/reports/frame.py, and benchmarks/reports/tables.py registers the builders below.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from benchmarks.reports import paper
from benchmarks.reports.figures import accuracy_by_parameter
from benchmarks.reports.frame import RATE_CELLS, Builder, cell, header, per_question


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
    # drawn from the per-run frame alone, so `python -m benchmarks.reports.figures` redraws the
    # same figure from the committed CSV
    accuracy_by_parameter(
        df,
        "location",
        "L",
        paper.TABLE6_ACCURACY,
        out / "figures" / "table6.png",
        "Table 6: accuracy as revisions accumulate",
        reference_n=140,
    )
    return md


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


TABLES: dict[str, Builder] = {
    "table6": table6,
    "table6_single": table6_single,
    "table8": table8,
    "conflict": conflict,
}
