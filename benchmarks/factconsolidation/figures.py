"""Table 7's figure: accuracy per source and the single-hop stale rate, ours beside the
paper's."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from benchmarks.factconsolidation import paper
from benchmarks.reports.figures import COLORS, FULL_IN, PAPER_LINE, figure, is_nan
from benchmarks.reports.names import display_name, sort_arms
from benchmarks.stats import binomial_ci


def _source_order(source: str) -> tuple[int, int]:
    hop, _, length = source.partition("_")
    lengths = {"6k": 0, "32k": 1, "64k": 2, "262k": 3}
    return ({"sh": 0, "mh": 1}.get(hop, 2), lengths.get(length, 9))


def _source_title(source: str) -> str:
    hop, _, length = source.partition("_")
    return f"{ {'sh': 'single-hop', 'mh': 'multi-hop'}.get(hop, hop) } {length}"


def plot_table7(df: pd.DataFrame, path: Path) -> None:
    """Table 7 (§4.3) from its per-run frame: one panel per source (accuracy), then the
    single-hop stale rate; one row per arm, ours filled with a 95% interval, the paper's
    hollow, a dashed line between them. Rows with no accuracy (a run still ingesting) are left
    out here rather than by the caller, so the builder and the committed CSV draw one figure."""
    df = df[df["substring.acc"].notna()]
    sources = sorted(df["source"].unique(), key=_source_order)
    panels: list[tuple[str, str]] = [(s, "acc") for s in sources]
    if "rate.stale.stale" in df and df["rate.stale.stale"].notna().any():
        stale = [s for s in sources if df.loc[df["source"] == s, "rate.stale.stale"].notna().any()]
        panels += [(s, "stale") for s in stale]
    arms = sort_arms(df["arm"])
    rows = {arm: len(arms) - 1 - i for i, arm in enumerate(arms)}  # the first arm on top
    width = min(FULL_IN, 1.1 + 1.75 * len(panels))
    height = 1.2 + 0.2 * max(len(arms), 3)  # titles, axis and legend take 1.2 in
    usual = int(df["substring.n"].mode().max())  # the usual n; other cells say theirs
    size = {"figsize": (width, height), "ncols": len(panels), "sharey": True, "squeeze": False}
    drew_paper = False
    with figure(path, **size) as (fig, axes):
        for ax, (source, kind) in zip(axes[0], panels, strict=True):
            sub = df[df["source"] == source].set_index("arm")
            sub = sub[~sub.index.duplicated(keep="last")]
            refs = paper.TABLE7_ACCURACY if kind == "acc" else paper.TABLE7_STALE
            for arm in arms:
                if arm not in sub.index:
                    continue
                r, y = sub.loc[arm], rows[arm]
                value, lo, hi, n = _table7_point(r, kind)
                if is_nan(value):
                    continue
                ref = refs.get(arm, {}).get(source)
                if not is_nan(ref):
                    ax.plot([value, ref], [y, y], color="#888888", lw=0.8, ls=PAPER_LINE)
                    ax.plot(ref, y, "s", mfc="none", color=COLORS[1], ms=5.5, zorder=5)
                    drew_paper = True
                ax.errorbar(
                    value,
                    y,
                    xerr=[[value - lo], [hi - value]],
                    fmt="o",
                    color=COLORS[0],
                    elinewidth=0.8,
                    zorder=4,
                )
                if kind == "stale" or n != usual:  # n at the panel's right edge
                    ax.annotate(
                        f"n={n}", (1.0, y), xycoords=("axes fraction", "data"), xytext=(2, 0),
                        textcoords="offset points", va="center", fontsize=5.5, color="#555555",
                    )  # fmt: skip
            ax.set_xlim(0, 104)
            ax.set_title(
                f"{_source_title(source)}\n{'accuracy' if kind == 'acc' else 'stale rate'} (%)",
                fontsize=7.5,
            )
            ax.grid(axis="x", color="#dddddd", lw=0.5)
            ax.grid(axis="y", visible=False)
        axes[0][0].set_yticks(list(rows.values()), [display_name(a) for a in rows])
        axes[0][0].set_ylim(-0.7, len(arms) - 0.3)
        from matplotlib.lines import Line2D

        handles = [
            Line2D([], [], color=COLORS[0], marker="o", ls="-", label="ours, 95% Wilson interval"),
        ]
        if drew_paper:  # a peer the paper did not run gets no paper key
            handles.append(Line2D(
                [], [], color=COLORS[1], marker="s", mfc="none", ls=PAPER_LINE,
                label="paper (n = 100 per cell; stale n = 64–71)",
            ))  # fmt: skip
        fig.legend(
            handles=handles, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=2, frameon=False
        )
        fig.suptitle(
            "Table 7: FactConsolidation, MemoryAgentBench substring rule\n"
            f"ours: n = {usual} questions per cell unless marked (stale rate: over the "
            "stale-scoreable single-hop questions, n marked)",
            fontsize=7.5,
            x=0.01,
            ha="left",
        )
        fig.tight_layout(w_pad=2.5)


def _table7_point(r: pd.Series, kind: str) -> tuple[float, float, float, int]:
    """One cell of Table 7's figure: value, 95% interval and n, in percent."""
    if kind == "acc":
        return (r["substring.acc"], r["substring.lo"], r["substring.hi"], int(r["substring.n"]))
    value, n = r.get("rate.stale.stale"), r.get("rate.stale.stale.n")
    if is_nan(value) or is_nan(n) or not n:
        return (float("nan"), 0.0, 0.0, 0)
    low, high = binomial_ci(round(value * n / 100), int(n))
    return (value, 100 * low, 100 * high, int(n))
