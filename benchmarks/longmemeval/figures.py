"""§4.1.1's figure: mean read tokens per query as the haystack grows, ours beside the
paper's."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from benchmarks.longmemeval import paper
from benchmarks.reports.figures import (
    COLUMN_IN,
    PAPER_LINE,
    arm_style,
    dodge,
    figure,
    key_handles,
    legend_below,
    n_text,
    title,
)
from benchmarks.reports.names import display_name, sort_arms


def haystack_sizes(df: pd.DataFrame) -> pd.Series:
    """Sessions per haystack of each run: the `haystack` column the growth builder measures
    from the prediction records when the frame has it; else the sweep's `sessions`, and for
    the released haystack (`sessions` empty) the sessions the chunk read indexed
    (`meta.units`: one unit per session), which is what a committed CSV keeps."""
    if "haystack" in df and df["haystack"].notna().all():
        return df["haystack"].astype(float)
    sizes = df["sessions"].astype(float) if "sessions" in df else pd.Series(float("nan"), df.index)
    if "haystack" in df:
        sizes = df["haystack"].astype(float).fillna(sizes)
    if sizes.isna().any() and "meta.units" in df:
        released = df.loc[sizes.isna(), "meta.units"].dropna()
        if len(released):
            sizes = sizes.fillna(float(released.max()))
    return sizes


def plot_haystack_growth(df: pd.DataFrame, path: Path) -> None:
    """§4.1.1 from the growth sweep's per-run frame: mean read tokens per query against the
    sessions in the haystack, on linear axes (the growth, or its absence, is the point)."""
    from matplotlib.lines import Line2D
    from matplotlib.ticker import FuncFormatter

    g = df.assign(haystack=haystack_sizes(df)).dropna(subset=["haystack"])
    arms = sort_arms(g["arm"])
    ref_sessions = list(paper.GROWTH_SESSIONS)
    n = n_text(g["n"])
    with figure(path, figsize=(COLUMN_IN, 2.5)) as (_, ax):
        handles = []
        for i, arm in enumerate(arms):
            style = arm_style(i)
            a = g[g["arm"] == arm].sort_values("haystack")
            shift = dodge(i, len(arms), 0.6)
            ax.plot(a["haystack"] + shift, a["mean_tokens"], zorder=3, **style)
            ref = paper.GROWTH.get(arm)
            hollow = {"color": style["color"], "marker": style["marker"], "mfc": "none", "ms": 6.5}
            if ref and ref["shape"] == "flat":
                xs = [x + shift for x in ref_sessions]
                ax.plot(xs, [ref["tokens"]] * len(xs), ls=PAPER_LINE, lw=0.9, zorder=4, **hollow)
            elif ref:
                ax.plot(ref_sessions[-1] + shift, ref["tokens"], ls="none", zorder=4, **hollow)
            handles.append(Line2D([], [], label=display_name(arm), **style))
        ax.set_xlim(0, max(g["haystack"].max(), ref_sessions[-1]) * 1.05)
        ax.set_ylim(0, None)
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v / 1000:g}k" if v else "0"))
        ax.set_xlabel("sessions in the haystack")
        ax.set_ylabel("mean read tokens per query")
        title(
            ax,
            "§4.1.1: read cost as the haystack grows",
            f"ours: filled, n = {n} question{'' if n == '1' else 's'} per point; paper: hollow, "
            "dashed"
            "\n(flat reads at 8–48 sessions; long-context at 48). Linear axes.",
        )
        ours_key, paper_key = key_handles("ours", "paper (§4.1.1 text)")
        legend_below(ax, [*handles, ours_key, paper_key])
