"""What the notebooks (notebooks/*.ipynb) share: a table's runs, its Markdown as DataFrames,
ours beside the paper's with a verdict per cell, and the reports' figures drawn inline.

The notebooks call the table builders and figure functions themselves, so they show exactly what
`python -m benchmarks.reports` writes. Runs come through `benchmarks.results` (`runs/` first,
then `results/runs/`), selected as `frame.collect` selects them; with neither, the committed
`results/tables/<table>.csv` and Markdown stand in, so a fresh clone's notebooks run. Nothing
here calls a model.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from benchmarks.reports.frame import collect
from benchmarks.reports.names import display_name, sort_arms
from benchmarks.reports.verdict import as_probability, verdict
from benchmarks.results import NoRuns, load_summaries
from benchmarks.stats import binomial_ci

__all__ = [
    "NoRuns",
    "Table",
    "beside_paper",
    "figure",
    "inventory",
    "load",
    "prose",
    "repo_root",
    "tables_in",
]


def repo_root(start: Path | None = None) -> Path:
    """The repository a notebook runs in: the first folder up from `start` (the working
    directory: the repository when the tests run a notebook, notebooks/ in Jupyter) that holds
    both benchmarks/ and results/."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "benchmarks").is_dir() and (folder / "results").is_dir():
            return folder
    raise FileNotFoundError(f"no repository (benchmarks/ and results/) above {here}")


def run_roots(root: Path) -> tuple[Path, Path]:
    """Where runs are looked for, in order: the user's runs, then the committed export."""
    return (root / "runs", root / "results" / "runs")


def inventory(root: Path, experiments: Sequence[str]) -> pd.DataFrame:
    """Every finished run of `experiments` the loader finds (scripted dry runs included, and
    marked), counted per place, experiment, profile and case count: what the tables choose
    from. Empty when there are none."""
    found = []
    for where in run_roots(root):
        try:
            runs = load_summaries(where, include_scripted=True)
        except NoRuns:
            continue
        runs = runs[runs["experiment"].isin(experiments)]
        if "cases" not in runs:
            runs = runs.assign(cases=pd.NA)
        found.append(runs.assign(where=str(where.relative_to(root))))
    columns = ["where", "experiment", "profile", "cases", "scripted"]
    if not found or not sum(len(f) for f in found):
        return pd.DataFrame(columns=[*columns, "runs"])
    runs = pd.concat(found, ignore_index=True)
    runs["cases"] = runs["cases"].astype("Int64").astype(str)
    return runs.groupby(columns, dropna=False).size().rename("runs").reset_index()


@dataclass
class Table:
    """One paper table's runs: the per-run frame its builder reads, where it came from, and
    the runs root when it came from run folders (None: the committed CSV)."""

    name: str
    frame: pd.DataFrame
    source: str
    runs: Path | None
    root: Path

    def markdown(self) -> str:
        """The table as `python -m benchmarks.reports <name>` builds it: from the runs when
        there are run folders (into a scratch folder: results/ is left as it is), else the
        committed results/tables/<name>.md."""
        if self.runs is not None:
            from benchmarks.reports.registry import builders

            TABLES = builders()

            with tempfile.TemporaryDirectory() as out:
                return TABLES[self.name](self.frame, self.runs, Path(out))
        return (self.root / "results" / "tables" / f"{self.name}.md").read_text()


def load(name: str, root: Path) -> Table:
    """A table's runs: the user's runs/ through the loader, selected as the table builder
    selects them; else the committed per-run frame (results/tables/<name>.csv, the table as
    committed); else the committed export results/runs/, which may hold only some of a table's
    runs (it is there for drill-downs). Raises `NoRuns` when there is none of these."""
    live, export = run_roots(root)
    csv = root / "results" / "tables" / f"{name}.csv"
    for where in (live, *(() if csv.exists() else (export,))):
        if not (where / name).is_dir():
            continue
        try:
            frame = collect(where, name)
        except NoRuns as err:
            print(f"{name}: {err}")
            continue
        return Table(
            name, frame, f"{len(frame)} run(s) under {where.relative_to(root)}/", where, root
        )
    if not csv.exists():
        raise NoRuns(f"{name}: no runs under runs/ or results/runs/, and no committed {csv.name}")
    source = f"the committed {csv.relative_to(root)} (no runs of {name} under runs/)"
    return Table(name, pd.read_csv(csv), source, None, root)


# -- Markdown tables as DataFrames ---------------------------------------------------------------

_LABELLED = re.compile(r"^(?P<arm>[\w@./-]+)(?P<rest> \(.*\))$")


def _row_name(text: str) -> str:
    """A table's first cell with the arm id replaced by its display name; "(8 sessions)" and
    other notes after it are kept."""
    labelled = _LABELLED.match(text)
    if labelled:
        return display_name(labelled["arm"]) + labelled["rest"]
    return display_name(text)


def _number(column: pd.Series) -> pd.Series:
    try:
        return pd.to_numeric(column.str.replace(",", ""))
    except (ValueError, TypeError):
        return column


def tables_in(markdown: str) -> list[pd.DataFrame]:
    """Every pipe table of a builder's Markdown as a DataFrame, indexed by its first column
    (arms by their display names), numbers as numbers, in the order they appear."""
    blocks: list[list[str]] = []
    current: list[str] = []
    for line in markdown.splitlines():
        if line.startswith("|"):
            current.append(line)
        elif current:
            blocks.append(current)
            current = []
    if current:
        blocks.append(current)
    frames = []
    for block in blocks:
        rows = [[c.strip() for c in line.strip().strip("|").split("|")] for line in block]
        header, body = rows[0], rows[2:]  # rows[1] is the alignment line
        df = pd.DataFrame(body, columns=header)
        first = df.columns[0]
        df[first] = df[first].map(_row_name)
        df = df.set_index(first)
        df.index.name = first or "arm"
        frames.append(df.apply(_number))
    return frames


def prose(markdown: str) -> str:
    """A builder's Markdown before its first table: the title, the models and profile it was
    built from, and what the cells mean."""
    head = markdown.split("\n|", 1)[0]
    return head.strip()


# -- ours beside the paper's ---------------------------------------------------------------------


def beside_paper(
    frame: pd.DataFrame,
    value: str,
    n: str,
    reference: Mapping[str, Any],
    *,
    by: str | None = None,
    paper_n: int | str | None = None,
    keep: Sequence[str] = (),
) -> pd.DataFrame:
    """One row per run: ours (%, its 95% Wilson interval, n) beside the paper's figure, and
    whether our k of n is inside the central 95% binomial interval of the paper's figure at our
    n (benchmarks/reports/verdict.py), computed, not eyeballed. `reference` maps an arm to its
    figure, or (with `by`) to figures by that column's value (L, source); `keep` names frame
    columns to carry along where the frame has them (`sessions`: a shrunk haystack)."""
    rows = []
    for _, r in frame.iterrows():
        ref = reference.get(r["arm"])
        if by is not None and isinstance(ref, Mapping):
            ref = ref.get(r[by])
        ours, count = r.get(value), r.get(n)
        if ours is None or count is None or pd.isna(ours) or pd.isna(count) or not count:
            continue
        count = int(count)
        k = round(ours * count / 100)
        low, high = binomial_ci(k, count)
        judged = "–"
        if ref is not None and not pd.isna(ref):
            judged = verdict(k, count, as_probability(ref, percent=True)).label
        rows.append(
            {
                "arm": display_name(r["arm"]),
                "_arm": r["arm"],
                **({by: r[by]} if by else {}),
                **{c: r[c] for c in keep if c in frame},
                "n": count,
                "ours %": round(float(ours), 1),
                "95% interval": f"{100 * low:.0f}–{100 * high:.0f}",
                "paper %": float(ref) if judged != "–" else float("nan"),
                **({"paper n": str(paper_n) if judged != "–" else "–"} if paper_n else {}),
                "verdict": judged,
            }
        )
    if not rows:
        return pd.DataFrame()
    table = pd.DataFrame(rows)
    order = {arm: i for i, arm in enumerate(sort_arms(table["_arm"]))}
    keys = ["_order", *([by] if by else [])]
    table = table.assign(_order=table["_arm"].map(order)).sort_values(keys, kind="stable")
    return table.drop(columns=["_arm", "_order"]).set_index("arm")


# -- figures ---------------------------------------------------------------------------------


def figure(draw: Callable[[pd.DataFrame, Path], None], frame: pd.DataFrame) -> Any:
    """A report figure drawn inline: `draw` is one of benchmarks/reports/figures.py's figure
    functions (the ones the table builders call), run into a scratch folder and shown."""
    from IPython.display import Image

    with tempfile.TemporaryDirectory() as out:
        path = Path(out) / "figure.png"
        draw(frame, path)
        return Image(data=path.read_bytes(), format="png")
