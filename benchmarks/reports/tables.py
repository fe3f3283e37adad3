"""Build the paper's tables from run folders: ours (n, 95% interval) beside the paper's numbers.

    python -m benchmarks.reports table6 [--runs runs] [--out results] [--profile P]
    python -m benchmarks.reports all            # every table that has runs (make tables)
    python -m benchmarks.reports all --check --runs results/runs   # committed = rebuilt?

Reads run folders only (no model), writes results/tables/<name>.md and .csv and a figure where
one helps, from one profile and case count, never scripted dry runs (`frame.collect`).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from benchmarks.reports import registry
from benchmarks.reports.diff import first_change
from benchmarks.reports.frame import CELL_KEYS, NoRuns, collect, say, stage_section
from benchmarks.reports.pool import pooled
from benchmarks.runner.currency import what_changed
from benchmarks.scoring import hand_verdicts

__all__ = ["WouldDropRows", "build", "build_all", "check", "check_all", "dropped_rows", "main"]

#: the columns that say which cell of a table a row is (those of them a table's csv has): the
#: frame's cell keys, and LongMemEval's reading settings. The data file is `data` (its name;
#: the run's folder, `folder`, is never in a table).
ROW_AXES = (*CELL_KEYS, "variant", "reading", "keys")
#: results/tables/claims.md: not a table of one experiment (benchmarks/reports/claims.py)
CLAIMS = "claims"


class WouldDropRows(Exception):
    """A rebuild would lose or weaken rows the table on disk has (their runs are not here);
    `lost` names them (`dropped_rows`)."""

    def __init__(self, message: str, lost: list[str]) -> None:
        super().__init__(message)
        self.lost = lost


def listed(rows: list[str], first: int) -> str:
    """The first `first` rows and how many more: what a one-line message has room for."""
    more = len(rows) - first
    return "; ".join(rows[:first]) + (f"; and {more} more" if more > 0 else "")


def dropped_rows(old_csv: Path, new: pd.DataFrame) -> list[str]:
    """The rows of the table on disk (its csv) that `new` would lose, as `arm=… source=…`
    labels with why: no run for the cell, a run of fewer questions (`n`), or a run still going
    where a scored row was. [] when there is no table yet or every row keeps its weight."""
    try:
        old = pd.read_csv(old_csv)
    except (FileNotFoundError, pd.errors.EmptyDataError):
        return []
    new = pd.read_csv(io.StringIO(new.to_csv(index=False)))  # the same types as the old csv
    axes = [c for c in ROW_AXES if c in old.columns]
    if not axes or old.empty:
        return []

    def keys(df: pd.DataFrame) -> list[tuple[str, ...]]:
        cols = [df[c].map(_cell_value) if c in df.columns else [""] * len(df) for c in axes]
        return list(zip(*cols, strict=True))

    def questions(df: pd.DataFrame) -> list[float]:  # NaN: a row with no scores (partial)
        return list(df["n"].astype(float)) if "n" in df.columns else [float("nan")] * len(df)

    best: dict[tuple[str, ...], float] = {}
    for key, n in zip(keys(new), questions(new), strict=True):
        best[key] = max(best.get(key, -1.0), -1.0 if n != n else n)  # -1: present, unscored
    lost: dict[str, None] = {}
    for key, n in zip(keys(old), questions(old), strict=True):
        label = " ".join(f"{a}={v}" for a, v in zip(axes, key, strict=True) if v)
        if key not in best:
            lost[f"{label} (no run)"] = None
        elif n == n and best[key] < 0:
            lost[f"{label} (scored, now a run still going)"] = None
        elif n == n and best[key] < n:
            lost[f"{label} (n {n:.0f} -> {best[key]:.0f})"] = None
    return list(lost)


def _cell_value(value: object) -> str:
    """One spelling per axis value across csv round trips: '' for missing, 2 for 2.0."""
    if value is None or (isinstance(value, float) and value != value):
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _with_partial(df: pd.DataFrame, name: str, runs: Path, profile: str | None) -> pd.DataFrame:
    """`df` and, for a table that shows runs still going as labelled rows, those runs too."""
    spec = registry.table(name, [runs])
    if spec is None or spec.partial is None:
        return df
    try:
        partial = spec.partial(runs, name, profile)
    except NoRuns:
        return df
    return pd.concat([df, partial], ignore_index=True)


def build(
    name: str,
    runs: Path,
    out: Path,
    *,
    profile: str | None = None,
    include_scripted: bool = False,
    replace: bool = False,
    also: Sequence[Path] = (),
) -> str:
    """Collect an experiment's runs, build its table, write the .md and .csv; the markdown.
    Raises `NoRuns` (writing nothing) when the experiment has no runs the table may use, and
    `WouldDropRows` (writing nothing) when the table on disk has rows these runs do not
    (committed results whose runs are elsewhere), unless `replace`. `also`: more roots whose
    runs of the same profile join those under `runs`, which win (`pool.pooled`; e.g.
    results/runs, so a peer run made here adds its rows to the committed table)."""
    with pooled([runs, *also], name) as root:
        shown = " with ".join(str(r / name) for r in [runs, *also])
        return _build(
            name, root, out, shown, profile=profile, include_scripted=include_scripted,
            replace=replace,
        )  # fmt: skip


def _build(
    name: str,
    runs: Path,
    out: Path,
    shown: str,
    *,
    profile: str | None,
    include_scripted: bool,
    replace: bool,
) -> str:
    spec = registry.table(name, [runs])
    if spec is None or spec.build is None:
        raise NoRuns(f"{name}: no benchmark declares a table of that name built from runs")
    try:
        df = collect(runs, name, profile=profile, include_scripted=include_scripted)
        present = _with_partial(df, name, runs, profile)
    except NoRuns:
        if spec.partial is None:
            raise
        # nothing finished yet: the runs still going (or stopped) are the table, labelled
        df = present = spec.partial(runs, name, profile)
    tables = out / "tables"
    lost = [] if replace else dropped_rows(tables / f"{name}.csv", present)
    if lost:
        raise WouldDropRows(
            f"{name}: the runs under {shown} would lose or weaken {len(lost)} row(s) of "
            f"{tables / name}.md: {listed(lost, 4)}; build from where those rows' runs are (--runs "
            "results/runs reads the exported ones, --with results/runs adds them to these) or "
            "rerun them, or pass --replace to write the table anyway",
            lost,
        )
    md = spec.build(df, runs, out) + stage_section(df)
    tables.mkdir(parents=True, exist_ok=True)
    (tables / f"{name}.md").write_text(md + "\n")
    df.to_csv(tables / f"{name}.csv", index=False)
    return md


def build_all(
    runs: Path,
    out: Path,
    *,
    profile: str | None = None,
    include_scripted: bool = False,
    replace: bool = False,
    also: Sequence[Path] = (),
) -> dict[str, str]:
    """Every table with runs under `runs`; what happened to each, one line per table."""
    if not runs.is_dir() or not any(runs.glob("*/*/summary.json")):
        say(f"no finished runs under {runs}/: nothing rebuilt, the tables in {out}/ are unchanged")
        return {}
    done = {}
    for name in sorted(n for n, t in registry.tables([runs]).items() if t.build is not None):
        if not (runs / name).is_dir():
            continue
        try:
            build(
                name, runs, out, profile=profile, include_scripted=include_scripted,
                replace=replace, also=also,
            )  # fmt: skip
        except (NoRuns, WouldDropRows, hand_verdicts.BadVerdicts) as err:
            done[name] = f"{err}; {out / 'tables' / name}.md left as it is"
        else:
            done[name] = f"wrote {out / 'tables' / name}.md and .csv"
        say(f"{name}: {done[name]}")
    return done


def check(name: str, runs: Path, out: Path, *, profile: str | None = None) -> tuple[bool, str]:
    """Whether the committed table `out/tables/<name>.md` is what the runs under `runs` build
    (results/runs: the exported runs of a clean clone). Rebuilt in a scratch folder, so nothing
    under `out` changes, then compared byte for byte, .md and .csv: (True, how many runs) when
    identical; (False, why) when a committed row has no run there, or the rebuild differs (a
    table edited by hand, or built from runs that were not exported)."""
    committed = out / "tables"
    spec = registry.table(name, [runs])
    experiment = spec.experiment if spec is not None else name
    audit = spec.audit if spec is not None else None
    refusals = _refusals(runs / experiment)
    with tempfile.TemporaryDirectory() as scratch:
        rebuilt = Path(scratch) / "tables"
        rebuilt.mkdir()
        if (committed / f"{name}.csv").exists():  # what the row guard compares with
            shutil.copyfile(committed / f"{name}.csv", rebuilt / f"{name}.csv")
        try:
            with contextlib.redirect_stderr(io.StringIO()):  # the builders' notes: not asked for
                if audit is not None:
                    audit(runs, experiment, rebuilt)
                else:
                    build(name, runs, Path(scratch), profile=profile)
        except NoRuns as err:
            return False, refusals + str(err)
        except WouldDropRows as err:
            rows = len(pd.read_csv(committed / f"{name}.csv"))
            return (
                False,
                f"{refusals}{len(err.lost)} of {rows} committed row(s) have no current run under "
                f"{runs}: {listed(err.lost, 2)}",
            )
        except Exception as err:  # a record a builder reads is missing or damaged: say so, go on
            return False, f"cannot be rebuilt from {runs}: {type(err).__name__}: {err}"
        for suffix in (".md", ".csv"):
            theirs, ours = committed / f"{name}{suffix}", rebuilt / f"{name}{suffix}"
            if theirs.exists() and theirs.read_bytes() == ours.read_bytes():
                continue
            old = theirs.read_text().split("\n") if theirs.exists() else []
            new = ours.read_text().split("\n")
            if old == new:  # the same lines: the bytes differ in line ends or encoding
                return False, f"{theirs} differs from what {runs} builds in its bytes only"
            line, col, a, b = first_change(old, new)
            return False, (
                f"{refusals}{theirs} is not what {runs} builds, from line {line}, column {col}: "
                f"committed {a!r}, rebuilt {b!r} ({_stack()})"
            )
    runs_used = sum(1 for _ in (runs / experiment).glob("*/manifest.json"))
    return True, f"rebuilds byte for byte from the {runs_used} run(s) under {runs / experiment}"


def _refusals(folder: Path) -> str:
    """'refused: <run> (<what changed>); ' for each finished run under `folder` that no longer
    shows what the code does (`benchmarks.runner.currency`), '' when there is none."""
    found = []
    for run in sorted(p.parent for p in folder.glob("*/summary.json")):
        if changed := what_changed(run):
            found.append(f"refused {run.name} ({'; '.join(changed)})")
    return "".join(f"{line}; " for line in found)


def _stack() -> str:
    """The formatting stack that rebuilt a table: a difference can be a release that prints
    numbers differently rather than a changed result (constraints.txt pins the one the committed
    tables were written with)."""
    import tabulate

    return (
        f"formatted with pandas {pd.__version__}, tabulate {tabulate.__version__}; the committed "
        "tables' versions are in constraints.txt"
    )


def _verdict(ok: bool, why: str) -> str:
    return f"{'ok' if ok else 'NOT BACKED'}: {why}"


def check_all(runs: Path, out: Path, *, profile: str | None = None) -> dict[str, tuple[bool, str]]:
    """`check` for every committed table, one line each on stdout; a table no builder here
    makes is named as not backed."""
    done: dict[str, tuple[bool, str]] = {}
    committed = sorted((out / "tables").glob("*.md"))
    if not committed:
        print(f"no committed tables under {out / 'tables'}: nothing to check")
    for md in committed:
        name = md.stem
        if name == CLAIMS:  # the claims table's own check: python -m benchmarks.reports.claims
            continue
        if name in registry.tables([runs]):
            done[name] = check(name, runs, out, profile=profile)
        else:
            done[name] = (False, "no table builder has this name")
        print(f"{name}: {_verdict(*done[name])}")
    return done


def main(argv: list[str] | None = None, *, prog: str | None = None) -> int:
    p = argparse.ArgumentParser(prog=prog, description=__doc__.splitlines()[0])
    p.add_argument("table", help="a table's name (its experiment), or all")
    p.add_argument("--runs", type=Path, default=Path("runs"))
    p.add_argument("--out", type=Path, default=Path("results"))
    p.add_argument(
        "--with",
        dest="also",
        type=Path,
        action="append",
        default=[],
        metavar="RUNS",
        help="add this root's runs of the same profile as those under --runs (a run under --runs "
        "wins over its copy here), e.g. --with results/runs: a peer run made here joins the "
        "committed rows; repeatable",
    )
    p.add_argument(
        "--profile", help="build from this profile's runs (its label or reader model) only"
    )
    p.add_argument(
        "--include-scripted",
        action="store_true",
        help="let scripted dry runs in (the table says so); never for results/",
    )
    p.add_argument(
        "--replace",
        action="store_true",
        help="write the table even when it loses rows the table on disk has (their runs are "
        "not under --runs); without it such a table is left as it is",
    )
    p.add_argument(
        "--check",
        action="store_true",
        help="write nothing: say whether each committed table under --out is what the runs "
        "under --runs build, byte for byte (exit 1 when one is not); use --runs results/runs",
    )
    args = p.parse_args(argv)
    known = registry.tables([args.runs, *args.also])
    if args.table != "all" and args.table not in known:
        p.error(f"no benchmark declares a table {args.table!r}; known: {', '.join(known)}")
    if args.check and args.also:
        p.error("--with builds a table from pooled runs; --check compares with --runs alone")
    if args.check:  # one line per committed table on stdout; exit 1 unless all are backed
        if args.table == "all":
            results = check_all(args.runs, args.out, profile=args.profile)
        else:
            results = {args.table: check(args.table, args.runs, args.out, profile=args.profile)}
            print(f"{args.table}: {_verdict(*results[args.table])}")
        return 0 if results and all(ok for ok, _ in results.values()) else 1
    spec = known.get(args.table)
    if spec is not None and spec.audit is not None:
        p.error(
            f"{args.table} is an audit of {spec.experiment}'s runs, written by its own command "
            f"(see its benchmark's package); here only --check takes it"
        )
    options = {
        "profile": args.profile,
        "include_scripted": args.include_scripted,
        "replace": args.replace,
        "also": args.also,
    }
    if args.table == "all":
        build_all(args.runs, args.out, **options)
        return 0
    try:
        print(build(args.table, args.runs, args.out, **options))
    except (NoRuns, WouldDropRows, hand_verdicts.BadVerdicts) as err:
        print(f"tables: {err}; nothing written", file=sys.stderr)
        return 2
    print(f"\nwrote {args.out / 'tables' / args.table}.md and .csv", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
