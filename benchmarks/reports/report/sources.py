"""Where each of the report's tables comes from: live runs when there are any, else the
committed results, so a fresh clone (no runs/) still gets the whole page.

A live table is rebuilt by the project's own builders into a scratch folder (what `make tables`
writes, never over results/), and both kinds are read the same way. The builder's stderr notes
and its Python warnings travel with the table, warnings as category and message only: the page
must be the same bytes on every checkout (no source path) and in every process (a warning shown
once per process would appear only on the first build).
"""

from __future__ import annotations

import io
import re
import tempfile
import warnings
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from benchmarks.reports import registry, tables
from benchmarks.reports.document import Document
from benchmarks.reports.markdown import Block, parse, split_title
from benchmarks.reports.report.cells import Cell, cells_for
from benchmarks.results import NoRuns, load_summaries

__all__ = ["Figure", "Section", "gather", "section_of", "table_names"]


# The paper's order: ALFWorld revision and FactConsolidation first, then LongMemEval.
@dataclass
class Figure:
    """A PNG for the page: its file name, bytes, and where it came from."""

    name: str
    data: bytes
    origin: str


@dataclass
class Section:
    """One table of the page, from one source."""

    name: str
    title: str
    blocks: list[Block]
    frame: pd.DataFrame | None
    live: bool
    origin: str
    figures: list[Figure] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    cells: list[Cell] = field(default_factory=list)

    @property
    def profile(self) -> str:
        """The models behind the numbers, from the run frame."""
        df = self.frame
        if df is None or df.empty:
            return "not recorded in the committed table"
        if "profile" in df.columns and df["profile"].notna().any():
            return "; ".join(sorted({str(p) for p in df["profile"].dropna()}))
        parts = []
        for column, label in (("llm", "reader"), ("writer", "writer"), ("embedder", "embedder")):
            if column in df.columns and df[column].notna().any():
                parts.append(f"{label} {', '.join(sorted({str(v) for v in df[column].dropna()}))}")
        return "; ".join(parts) or "not recorded in the committed table"

    @property
    def sizes(self) -> str:
        """n: questions per run (and runs), from the run frame."""
        df = self.frame
        if df is None or df.empty or "n" not in df.columns:
            return "see the table"
        values = sorted({int(v) for v in df["n"].dropna()})
        if not values:
            return "see the table"
        each = str(values[0]) if len(values) == 1 else f"{values[0]}–{values[-1]}"
        return f"{each} questions per run, {len(df)} run(s)"


def table_names(runs: Path | None = None) -> list[str]:
    """Every table the benchmarks declare (and those of the benchmarks the runs name), in the
    paper's order."""
    return list(registry.tables([runs] if runs is not None else []))


def _experiment(name: str) -> str:
    spec = registry.table(name)
    return spec.experiment if spec is not None else name


def _counts(runs: Path, experiment: str) -> tuple[int, int]:
    """(paper runs, scripted dry runs) finished under runs/<experiment>."""
    try:
        df = load_summaries(runs, experiment, include_scripted=True)
    except NoRuns:
        return 0, 0
    scripted = int(df["scripted"].sum())
    return len(df) - scripted, scripted


def _figures(folder: Path, name: str, origin: str, names: set[str]) -> list[Figure]:
    """The PNGs of one table in a figures folder: `<name>.png` and `<name>_*.png`, unless a
    longer table name claims the file (table6_single's figures are not Table 6's)."""
    out = []
    for png in sorted(folder.glob("*.png")) if folder.is_dir() else []:
        if owner(png.stem, names) == name:
            out.append(Figure(png.name, png.read_bytes(), origin))
    return out


def owner(stem: str, names: set[str]) -> str | None:
    """The table a figure file belongs to, by its name (the longest table name it starts with)."""
    hits = [n for n in names if stem == n or stem.startswith(n + "_")]
    return max(hits, key=len) if hits else None


def _frame(csv: Path) -> pd.DataFrame | None:
    if not csv.exists() or not csv.read_text().strip():
        return None
    return pd.read_csv(csv)


def section_of(name: str, md: str, frame: pd.DataFrame | None, live: bool, origin: str) -> Section:
    """A table's section: a built table's blocks come from its document (each table from its
    frame); a committed table, which has only its Markdown, is read from it."""
    title, blocks = split_title(md.blocks() if isinstance(md, Document) else parse(md))
    section = Section(name, title or name, blocks, frame, live, origin)
    section.cells = cells_for(name, frame, blocks)
    return section


def _live(name: str, runs: Path, names: set[str], profile: str | None) -> Section | str | None:
    """The table rebuilt from live runs into a scratch folder; a note when it cannot be;
    None when there are no paper runs for it."""
    spec = registry.table(name, [runs])
    experiment = _experiment(name)
    paper_runs, _ = _counts(runs, experiment)
    if not paper_runs:
        return None
    notes = io.StringIO()
    with tempfile.TemporaryDirectory(prefix=f"report-{name}-") as scratch:
        out = Path(scratch)
        try:
            with (
                redirect_stderr(notes),
                redirect_stdout(io.StringIO()),
                warnings.catch_warnings(record=True) as raised,
            ):
                warnings.simplefilter("always")
                if spec is not None and spec.audit is not None:
                    md = spec.audit(runs, experiment, out)
                    csv_path = out / f"{name}.csv"
                else:
                    md = tables.build(name, runs, out, profile=profile)
                    csv_path = out / "tables" / f"{name}.csv"
        except (NoRuns, SystemExit) as e:
            return f"live build from {runs / experiment} found nothing to build: {e}"
        except Exception as e:  # a builder's failure must not hide the other tables
            return f"live build from {runs / experiment} failed: {type(e).__name__}: {e}"
        origin = f"live runs under {runs / experiment} ({paper_runs} finished run(s))"
        section = section_of(name, md, _frame(csv_path), True, origin)
        section.figures = _figures(out / "figures", name, f"rebuilt from {runs}", names)
    section.notes = [
        re.sub(r"^tables: ", "", line) for line in notes.getvalue().splitlines() if line.strip()
    ]
    for w in raised:
        note = f"{w.category.__name__}: {w.message}"
        if note not in section.notes:
            section.notes.append(note)
    return section


def _committed(name: str, results: Path, names: set[str]) -> Section | None:
    md = results / "tables" / f"{name}.md"
    if not md.exists():
        return None
    csv = md.with_suffix(".csv")
    files = f"{md}" + (f" and {csv.name}" if csv.exists() else "")
    section = section_of(name, md.read_text(), _frame(csv), False, f"committed results: {files}")
    section.figures = _figures(results / "figures", name, f"committed {results}/figures", names)
    return section


def gather(
    runs: Path, results: Path, profile: str | None = None
) -> tuple[list[Section], dict[str, str], list[Figure]]:
    """Every table the page shows (live where there are paper runs, else committed), the
    tables it cannot show and why, and the committed figures no table claims. `profile`
    picks the live runs' profile where several are present (the table builders' choice
    otherwise, which they state)."""
    names = table_names(runs)
    known = set(names)
    sections: list[Section] = []
    missing: dict[str, str] = {}
    for name in names:
        live = _live(name, runs, known, profile)
        note = live if isinstance(live, str) else None
        section = live if isinstance(live, Section) else _committed(name, results, known)
        if section is None:
            experiment = _experiment(name)
            _, dry = _counts(runs, experiment)
            why = f"no paper runs under {runs / experiment}"
            if dry:
                why += f" (only {dry} scripted dry run(s), which never enter a paper table)"
            missing[name] = f"{why} and no committed {results}/tables/{name}.md"
            continue
        if note:
            section.notes.insert(0, note + "; the committed table is shown instead")
        if not section.live:
            _, dry = _counts(runs, _experiment(name))
            if dry:
                section.notes.append(
                    f"{dry} scripted dry run(s) under {runs / _experiment(name)} set aside: "
                    "a scripted profile never enters a paper table (their samples are below)"
                )
        sections.append(section)
    claimed = {f.name for s in sections for f in s.figures if not s.live}
    shown = {s.name for s in sections}
    folder = results / "figures"
    other = [
        Figure(png.name, png.read_bytes(), f"committed {results}/figures")
        for png in (sorted(folder.glob("*.png")) if folder.is_dir() else [])
        if png.name not in claimed and owner(png.stem, shown) is None
    ]
    return sections, missing, other
