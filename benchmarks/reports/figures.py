"""The tables' figures, drawn for a paper: one headless matplotlib figure per file.

    python -m benchmarks.reports.figures [--tables results/tables] [--out results/figures]

Redraws the committed figures from the committed per-run frames (results/tables/<table>.csv), so
a clone without run folders can redraw them; --check writes nothing and says whether each
committed .png and .svg is, byte for byte, what its frame draws. Every figure is a function of
its frame alone, so the table builders and this command draw the same figure.
"""

from __future__ import annotations

import argparse
import math
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pandas as pd

from benchmarks.reports import registry
from benchmarks.reports.diff import first_change
from benchmarks.reports.names import display_name, sort_arms
from benchmarks.reports.registry import Drawing

COLUMN_IN = 3.4  # one column of a two-column paper, inches
FULL_IN = 7.0  # the full text width
# Okabe & Ito's palette: distinguishable in color-blind vision and in grey print.
COLORS = (
    "#0072B2",
    "#D55E00",
    "#009E73",
    "#CC79A7",
    "#E69F00",
    "#56B4E9",
    "#000000",
    "#8C6D31",
    "#999999",
)
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "h")
# Ours: solid and dotted families; the paper's reference alone is drawn dashed (PAPER_LINE).
LINESTYLES: tuple[Any, ...] = ("-", (0, (1, 1)), "-.", (0, (5, 1, 1, 1, 1, 1)))
PAPER_LINE: Any = (0, (4, 2.5))
STYLE: dict[str, Any] = {
    "font.size": 8,
    "axes.titlesize": 8,
    "axes.labelsize": 8,
    "xtick.labelsize": 7,
    "ytick.labelsize": 7,
    "legend.fontsize": 7,
    "lines.linewidth": 1.2,
    "lines.markersize": 4.5,
    "errorbar.capsize": 1.5,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "axes.grid.axis": "y",
    "grid.color": "#dddddd",
    "grid.linewidth": 0.5,
    "axes.axisbelow": True,
    "svg.hashsalt": "pmem",  # stable ids: a redrawn figure diffs only where it changed
    "svg.fonttype": "none",  # text stays text: smaller files, editable in a paper's tools
}


@contextmanager
def figure(path: Path, **subplots: Any) -> Iterator[tuple[Any, Any]]:
    """``with figure(path, figsize=...) as (fig, ax):`` draw, and on exit the figure is saved
    to `path` (.png, its folder made) and beside it as .svg, cropped to what was drawn (a
    legend below the axes included), and closed. `subplots` go to `plt.subplots`."""
    import matplotlib

    matplotlib.use("Agg")  # headless: tables are built on clusters and in CI
    import matplotlib.pyplot as plt

    with plt.rc_context(STYLE):
        fig, ax = plt.subplots(**subplots)
        try:
            yield fig, ax
            path.parent.mkdir(parents=True, exist_ok=True)
            saved = {"bbox_inches": "tight", "pad_inches": 0.03}
            fig.savefig(path, dpi=200, metadata={"Software": None}, **saved)
            fig.savefig(path.with_suffix(".svg"), metadata={"Date": None}, **saved)
        finally:
            plt.close(fig)


# -- what every figure shares -------------------------------------------------------------------
# Drawn at a paper's column width with fonts readable there, saved as .png (the report and README)
# and .svg (a paper), and closed so a long `make tables` does not hold them all. Each arm keeps its
# display name (names.py) and one color, marker and line style, and is dodged a little along x so
# two arms with identical values stay two lines. Ours are filled with 95% intervals, the paper's
# hollow and dashed; every title says n.


def arm_style(i: int) -> dict[str, Any]:
    """The i-th arm's color, marker and line style: no two arms of a figure share all three."""
    return {
        "color": COLORS[i % len(COLORS)],
        "marker": MARKERS[i % len(MARKERS)],
        "linestyle": LINESTYLES[i % len(LINESTYLES)],
    }


def dodge(i: int, count: int, step: float) -> float:
    """The i-th of `count` arms' offset along x, centred on zero, `step` apart."""
    return (i - (count - 1) / 2) * step


def n_text(values: pd.Series) -> str:
    """n as a title prints it: one number, or the range when the cells differ."""
    v = values.dropna().astype(int)
    if not len(v):
        return "?"
    low, high = int(v.min()), int(v.max())
    return f"{low}" if low == high else f"{low}–{high}"


def title(ax: Any, heading: str, caption: str) -> None:
    """A bold heading and, under it, the caption that says what the marks are and their n."""
    lines = caption.count("\n") + 1
    ax.set_title(heading, loc="left", fontweight="bold", fontsize=8, pad=4 + 8 * lines)
    ax.text(0, 1.015, caption, transform=ax.transAxes, va="bottom", fontsize=6.5, color="#333")


def legend_below(ax: Any, handles: Sequence[Any], ncol: int = 2) -> None:
    """The legend under the axes, outside them, so it never covers a line."""
    ax.legend(
        handles=list(handles),
        loc="upper center",
        bbox_to_anchor=(0.5, -0.2),
        ncol=ncol,
        frameon=False,
        handlelength=2.6,
        columnspacing=1.2,
    )


def key_handles(ours: str, reference: str) -> list[Any]:
    """Legend entries that say which marks are ours and which the paper's."""
    from matplotlib.lines import Line2D

    return [
        Line2D([], [], color="#444444", marker="o", linestyle="-", label=ours),
        Line2D(
            [], [], color="#444444", marker="o", mfc="none", linestyle=PAPER_LINE, label=reference
        ),
    ]


def is_nan(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


# -- Table 6 and every accuracy-by-parameter figure -------------------------------------------


def accuracy_by_parameter(
    df: pd.DataFrame,
    scorer: str,
    parameter: str,
    reference: Mapping[str, Mapping[Any, float]],
    path: Path,
    heading: str,
    *,
    reference_n: int | None = None,
    xlabel: str | None = None,
) -> None:
    """Accuracy per arm against a doubling parameter (L, d): ours filled with 95% intervals,
    the paper's figures hollow and dashed at the same x, each arm dodged a little."""
    from matplotlib.lines import Line2D
    from matplotlib.ticker import FixedLocator, NullLocator, ScalarFormatter

    arms = sort_arms(df["arm"])
    values = sorted(df[parameter].unique())
    log = len(values) > 1 and min(values) > 0
    with figure(path, figsize=(COLUMN_IN, 2.5)) as (_, ax):
        handles = []
        for i, arm in enumerate(arms):
            style = arm_style(i)
            g = df[df["arm"] == arm].sort_values(parameter)
            shift = dodge(i, len(arms), 0.045 if log else 0.02 * (max(values) - min(values) or 1))

            def at(x: Any, shift: float = shift) -> float:
                return float(x) * 2**shift if log else float(x) + shift

            acc = g[f"{scorer}.acc"]
            ax.errorbar(
                [at(x) for x in g[parameter]],
                acc,
                yerr=[acc - g[f"{scorer}.lo"], g[f"{scorer}.hi"] - acc],
                elinewidth=0.7,
                zorder=3,
                **style,
            )
            ref = reference.get(arm, {})
            xs = [x for x in values if x in ref]
            if xs:
                ax.plot(
                    [at(x) for x in xs],
                    [ref[x] for x in xs],
                    color=style["color"],
                    marker=style["marker"],
                    mfc="none",  # a ring around our point where the two agree
                    ms=6.5,
                    linestyle=PAPER_LINE,
                    linewidth=0.9,
                    alpha=0.85,
                    zorder=4,
                )
            handles.append(Line2D([], [], label=display_name(arm), **style))
        if log:
            ax.set_xscale("log", base=2)
        ax.xaxis.set_major_locator(FixedLocator([float(v) for v in values]))
        ax.xaxis.set_minor_locator(NullLocator())
        ax.xaxis.set_major_formatter(ScalarFormatter())
        ax.set_xlabel(xlabel or parameter)
        ax.set_ylabel("accuracy (%)")
        ax.set_ylim(0, 104)
        paper_n = f", n = {reference_n}" if reference_n else ""
        title(
            ax,
            heading,
            f"ours: filled, n = {n_text(df[f'{scorer}.n'])} per point, 95% Wilson interval; "
            f"\npaper: hollow, dashed{paper_n}. Arms shifted slightly along x to stay visible.",
        )
        ours_key, paper_key = key_handles("ours", "paper")
        legend_below(ax, [*handles, ours_key, paper_key])


# -- rebuilding the committed figures -----------------------------------------------------------


def rebuild(tables: Path, out: Path) -> list[Path]:
    """Every committed figure whose per-run frame is there, redrawn; the .png paths written."""
    written = []
    for name, draw in drawings().items():
        frame = tables / f"{name}.csv"
        if frame.exists():
            draw(pd.read_csv(frame), out / f"{name}.png")
            written.append(out / f"{name}.png")
    return written


def drawings() -> dict[str, Drawing]:
    """Each table with a committed figure: the function drawing it from the table's csv."""
    return {name: t.figure for name, t in registry.tables().items() if t.figure is not None}


def check(tables: Path, figures: Path) -> dict[str, tuple[bool, str]]:
    """Each committed figure under `figures` against what its frame under `tables` draws, byte
    for byte, writing nothing: {name: (ok, why)}. A figure no registered drawing claims, or one
    whose frame is missing, fails too: nothing could say it is current."""
    verdicts: dict[str, tuple[bool, str]] = {}
    with tempfile.TemporaryDirectory(prefix="pmem-figures-") as tmp:
        drawn = {path.stem: path for path in rebuild(tables, Path(tmp))}
        committed = sorted(figures.glob("*.png")) if figures.is_dir() else []
        for name in sorted({p.stem for p in committed} | set(drawn)):
            if name not in drawn:
                why = (
                    f"no drawing registered for {name}" if name not in drawings()
                    else f"no frame {tables / name}.csv to draw it from"
                )  # fmt: skip
                verdicts[name] = (False, f"{figures / name}.png cannot be checked: {why}")
                continue
            verdicts[name] = _compare(drawn[name], figures / f"{name}.png")
    return verdicts


def _compare(drawn: Path, theirs: Path) -> tuple[bool, str]:
    """A committed figure's .svg and .png against the freshly drawn pair: the SVG first, as
    text, because it can say where the two differ."""
    for suffix in (".svg", ".png"):
        ours, committed = drawn.with_suffix(suffix), theirs.with_suffix(suffix)
        if not committed.exists():
            return False, f"no {committed}: redraw it without --check"
        if committed.read_bytes() == ours.read_bytes():
            continue
        if suffix == ".png":
            return False, f"{committed} differs from what its frame draws in its pixels only"
        old, new = committed.read_text().split("\n"), ours.read_text().split("\n")
        line, col, a, b = first_change(old, new)
        return False, (
            f"{committed} is not what its frame draws, from line {line}, column {col}: "
            f"committed {a!r}, drawn {b!r}; redraw it without --check"
        )
    return True, "drawn byte for byte (.png, .svg) from its frame"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m benchmarks.reports.figures", description=__doc__.splitlines()[0]
    )
    p.add_argument("--tables", type=Path, default=Path("results/tables"))
    p.add_argument("--out", type=Path, default=Path("results/figures"))
    p.add_argument(
        "--check",
        action="store_true",
        help="write nothing: say whether each figure under --out is what its frame under "
        "--tables draws, byte for byte (exit 1 when one is not)",
    )
    args = p.parse_args(argv)
    if args.check:
        verdicts = check(args.tables, args.out)
        for name, (ok, why) in verdicts.items():
            print(f"{name}: {'ok' if ok else 'STALE'}: {why}")
        if not verdicts:
            print(f"figures: nothing to check under {args.out}")
        return 0 if verdicts and all(ok for ok, _ in verdicts.values()) else 1
    written = rebuild(args.tables, args.out)
    for path in written:
        print(f"wrote {path} and {path.with_suffix('.svg').name}")
    if not written:
        print(f"figures: no per-run frame under {args.tables} ({', '.join(drawings())}.csv)")
    return 0 if written else 1


if __name__ == "__main__":
    raise SystemExit(main())
