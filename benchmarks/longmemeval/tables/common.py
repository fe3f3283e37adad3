"""What every LongMemEval table reads and prints: per-question records, cells, paired tests.

The per-question joins only LongMemEval needs (accuracy per B.1 class, stale answers paired
across arms, the gate's routing), the cells that print them beside the paper's figure, and the
stale-rate figure three tables draw. Paired tests are over the questions both runs answered
(for stale answers, both could score): exact McNemar on the discordant pairs and a seeded
paired bootstrap of the difference (`benchmarks.stats`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from benchmarks.longmemeval import paper
from benchmarks.longmemeval.stats import OFFICIAL_TYPES, OfficialMetrics, official_metrics
from benchmarks.reports.document import markdown_table
from benchmarks.reports.figures import figure
from benchmarks.reports.frame import per_question
from benchmarks.results.loader import read_records
from benchmarks.stats import binomial_ci, mcnemar_exact, paired_bootstrap_ci

CLASS_ORDER = ("superseded", "aggregation", "single")
CELLS = (
    "Cells: ours in % with a 95% Wilson interval [low–high] and (n questions), then / the "
    "paper's figure (Qwen3-4B-Instruct-2507 reader, Qwen3.6-35B-A3B judge) where it reports one."
)


# -- per-question records ---------------------------------------------------------------------


def questions(runs: Path, experiment: str, df: pd.DataFrame) -> pd.DataFrame:
    """One row per scored question of the runs `collect` reports: `frame.per_question`'s
    scores joined with what the prediction records add (type, read tokens, the gate's
    routing), so tables can group by class and pair arms question by question."""
    q = per_question(runs, experiment)
    q = q[q["run"].isin(df["run"])].copy()
    extra = []
    for run in df["run"]:
        for p in read_records(runs / experiment / run, "predictions"):
            meta = p.get("context_meta") or {}
            extra.append(
                {
                    "run": run,
                    "id": p["id"],
                    "question_type": (p.get("meta") or {}).get("question_type"),
                    "context_tokens": p.get("context_tokens"),
                    "pruned_read": meta.get("pruned_read"),
                    "episode": p.get("episode"),
                }
            )
    extra_df = pd.DataFrame(extra).drop_duplicates(["run", "id"])
    return q.merge(extra_df, on=["run", "id"], how="left")


def regime(variant: Any) -> str:
    """Table 3's column: the oracle haystack, or LongMemEval-S (original or cleaned)."""
    return "oracle" if str(variant) == "oracle" else "s"


def label(arm: str) -> str:
    return paper.LABELS.get(arm, arm)


def pct_cell(values: pd.Series) -> str:
    """Accuracy (or a rate) of a boolean series: % [Wilson 95%] (n)."""
    v = values.dropna().astype(bool)
    if not len(v):
        return "–"
    k, n = int(v.sum()), len(v)
    lo, hi = binomial_ci(k, n)
    return f"{100 * k / n:.1f} [{100 * lo:.0f}–{100 * hi:.0f}] ({n})"


def with_ref(ours: str, ref: float | str | None) -> str:
    if ref is None:
        return ours
    return f"{ours} / {ref:.1f}" if isinstance(ref, float | int) else f"{ours} / {ref}"


def run_rate(r: pd.Series, key: str = "rate.stale.stale") -> str:
    value = r.get(key)
    if value is None or value != value:  # absent or NaN: no scoreable question
        return "–"
    n = int(r[f"{key}.n"])
    k = round(value * n / 100)
    lo, hi = binomial_ci(k, n)
    return f"{value:.1f} [{100 * lo:.0f}–{100 * hi:.0f}] ({n})"


def ordered(arms: Sequence[str], preferred: Sequence[str]) -> list[str]:
    first = [a for a in preferred if a in arms]
    return first + sorted(a for a in arms if a not in first)


# -- paired statistics --------------------------------------------------------------------------


def outcomes(q: pd.DataFrame, arm: str, column: str, good: bool = True) -> pd.Series:
    """Per-question outcome of one arm, indexed by question id; `good=False` flips a
    bad-outcome flag (a stale answer) so that True always means the better outcome."""
    sub = q[q["arm"] == arm].drop_duplicates("id", keep="last").set_index("id")
    if column not in sub:
        return pd.Series(dtype=bool)
    values = sub[column].dropna().astype(bool)
    return values if good else ~values


def paired(q: pd.DataFrame, a: str, b: str, column: str, good: bool = True) -> str | None:
    """A vs B on the questions both scored: the difference of good outcomes with a paired
    bootstrap 95% interval, and exact McNemar (a better on n10, b better on n01)."""
    x, y = outcomes(q, a, column, good), outcomes(q, b, column, good)
    common = x.index.intersection(y.index)
    if not len(common):
        return None
    xa, yb = [bool(v) for v in x[common]], [bool(v) for v in y[common]]
    test = mcnemar_exact(xa, yb)
    boot = paired_bootstrap_ci(xa, yb, iterations=10_000, seed=0)
    what = "accuracy" if good else "non-stale answers"
    return (
        f"{label(a)} vs {label(b)} ({what}, n={len(common)}): "
        f"Δ {100 * boot.estimate:+.1f} pp [95% CI {100 * boot.low:+.1f}, {100 * boot.high:+.1f}]; "
        f"McNemar {test.b10}–{test.b01} (first better–second better), p={test.p_value:.3g}"
    )


def paired_block(lines: Sequence[str | None], references: Sequence[str] = ()) -> str:
    kept = [f"* {line}" for line in lines if line]
    if not kept and not references:
        return ""
    ref = [f"* paper: {r}" for r in references]
    return "\n\nPaired comparisons (bootstrap: 10,000 resamples, seed 0):\n\n" + "\n".join(
        kept + ref
    )


# -- B.1 classes --------------------------------------------------------------------------------


def by_class(q: pd.DataFrame, arm: str) -> dict[str, pd.Series]:
    sub = q[q["arm"] == arm]
    out = {"overall": sub["judge.correct"]}
    classes = sub["class.class"] if "class.class" in sub else pd.Series(dtype=object)
    for c in CLASS_ORDER:
        out[c] = sub.loc[classes == c, "judge.correct"]
    return out


# -- LongMemEval's official metrics --------------------------------------------------------------

# print_qa_metrics.py's columns, shortened for a table
OFFICIAL_SHORT = {
    "single-session-user": "ss-user",
    "single-session-preference": "ss-pref",
    "single-session-assistant": "ss-asst",
    "multi-session": "multi",
    "temporal-reasoning": "temporal",
    "knowledge-update": "k-update",
}


def run_metrics(q: pd.DataFrame, run: str) -> OfficialMetrics | None:
    """The official figures (benchmarks/longmemeval/stats.py) over one run's judged questions."""
    sub = q[(q["run"] == run) & q["judge.correct"].notna()] if "judge.correct" in q else q[:0]
    if sub.empty or "question_type" not in sub:
        return None
    return official_metrics(
        (str(i), str(t), bool(c))
        for i, t, c in zip(sub["id"], sub["question_type"], sub["judge.correct"], strict=True)
    )


def _fraction(value: float | None, n: int | None = None) -> str:
    """An official figure (a fraction to 4 places) as % to 2 places, the same digits."""
    if value is None:
        return "–"
    return f"{100 * value:.2f}" + (f" ({n})" if n is not None else "")


def official_block(q: pd.DataFrame, rows: dict[str, str]) -> str:
    """LongMemEval's own metrics beside a table, one row per run (``rows``: run -> row label):
    per-type accuracy (the types any run has), task-averaged, overall and abstention accuracy,
    as print_qa_metrics.py computes and rounds them."""
    names = list(rows.values())
    unique = {
        run: name if names.count(name) == 1 else f"{name} [{run}]" for run, name in rows.items()
    }
    metrics = {name: run_metrics(q, run) for run, name in unique.items()}
    metrics = {name: m for name, m in metrics.items() if m is not None}
    if not metrics:
        return ""
    types = [t for t in OFFICIAL_TYPES if any(m.type_n[t] for m in metrics.values())]
    table = {}
    for name, m in metrics.items():
        row = {OFFICIAL_SHORT[t]: _fraction(m.by_type[t], m.type_n[t]) for t in types}
        row["task-averaged"] = _fraction(m.task_averaged)
        row["overall"] = _fraction(m.overall, m.n)
        row["abstention"] = _fraction(m.abstention, m.abstention_n)
        table[name] = row
    frame = pd.DataFrame.from_dict(table, orient="index")
    frame.index.name = "run"
    return (
        "\n\nLongMemEval's official metrics (print_qa_metrics.py's rules: every question in its "
        "type, abstention questions too; task-averaged = the mean of the six type accuracies, "
        "– when a type has no question, where the script prints nan; abstention = ids with "
        "`_abs`), accuracy % to 2 places (n); `python -m benchmarks.longmemeval export RUN_DIR` "
        "writes a run's verdicts in the official eval-results shape:\n\n" + markdown_table(frame)
    )


# -- figures ------------------------------------------------------------------------------------


def plot_stale(df: pd.DataFrame, out: Path, name: str) -> None:
    """Stale rate by arm with its 95% interval, ours; one figure per table."""
    if "rate.stale.stale" not in df or df["rate.stale.stale"].isna().all():
        return
    sub = df.dropna(subset=["rate.stale.stale"]).sort_values("arm_label")
    lo, hi = [], []
    for _, r in sub.iterrows():
        n = int(r["rate.stale.stale.n"])
        low, high = binomial_ci(round(r["rate.stale.stale"] * n / 100), n)
        lo.append(r["rate.stale.stale"] - 100 * low)
        hi.append(100 * high - r["rate.stale.stale"])
    path = out / "figures" / f"{name}_stale_by_arm.png"
    with figure(path, figsize=(max(4.0, 0.9 * len(sub) + 2), 4)) as (_, ax):
        xs = range(len(sub))
        ax.bar(xs, sub["rate.stale.stale"], yerr=[lo, hi], capsize=3, color="C3")
        ax.set_xticks(list(xs), sub["arm_label"], rotation=40, ha="right", fontsize=7)
        ax.set_ylabel("stale-answer rate (%)")
        ax.set_ylim(0, 105)
        ax.set_title(f"{name}: stale rate by arm (ours, 95% Wilson)")
