"""The paper's claims as checks on per-question outcomes: what a reproduction on another model can
test is a claim's direction and significance, not each cell's figure.

    python -m benchmarks.reports.claims [--runs results/runs] [--out results]   # write
    python -m benchmarks.reports.claims --check --runs results/runs   # committed = rebuilt?

Each benchmark package declares its claims (`<package>.claims.CLAIMS`, a list of `Claim`): two
sides (an arm in a cell of a table's runs), the per-question outcome compared and the direction
the paper states. A claim is checked on the current runs of one profile (`frame.collect`):
paired (the same questions on both sides: exact McNemar, paired bootstrap of the difference) or
unpaired (different questions, e.g. L=1 against L=8: Fisher's exact test, a bootstrap of each
side). Verdict: **holds** (the paper's direction, p < 0.05), **does not hold**, or **not run**
(no current run on a side; the command that runs it is named).
"""

from __future__ import annotations

import contextlib
import io
import math
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from numbers import Number
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from benchmarks import stats
from benchmarks.reports import registry
from benchmarks.reports.diff import artifact_main, first_changed
from benchmarks.reports.frame import NoRuns, collect, questions_of
from benchmarks.reports.names import display_name

__all__ = ["ALPHA", "COLUMNS", "Claim", "Side", "all_claims", "evaluate", "main", "write"]

ALPHA = 0.05
COLUMNS = [
    "claim", "section", "statement", "arms", "profile", "n", "unit", "a_value", "b_value",
    "effect", "ci_low", "ci_high", "test", "p", "verdict", "direction", "paper", "command",
]  # fmt: skip
Outcome = str | Callable[[pd.DataFrame], pd.Series]


@dataclass(frozen=True, slots=True)
class Side:
    """One side of a claim: an arm's runs in one cell of a table (`cell`: run columns, e.g.
    {"L": 8} or {"source": "mh_6k"})."""

    arm: str
    cell: Mapping[str, Any] = field(default_factory=dict)

    def label(self) -> str:
        where = ", ".join(f"{k}={v}" for k, v in self.cell.items())
        return f"{display_name(self.arm)}" + (f" ({where})" if where else "")


@dataclass(frozen=True, slots=True)
class Claim:
    """A claim of the paper as a comparison of per-question outcomes of two sides."""

    id: str
    section: str  # where the paper makes it (§4.2.1, App. B.4)
    statement: str  # the claim in one line, in the paper's words where possible
    experiment: str  # the table whose runs test it
    a: Side
    b: Side
    #: a per-question column of the table's runs (True/False, or a number such as a read's
    #: characters; None: not scored) or a function of the questions frame giving one
    outcome: Outcome
    #: the paper: ">" a above b, "<" a below b, "=" a and b the same within `margin`
    direction: str = ">"
    #: for "=": the largest difference (percentage points for a rate, the outcome's units for
    #: a number) the paper's "the same" allows; the claim holds when the 95% interval of the
    #: difference lies inside [-margin, margin]
    margin: float | None = None
    #: which questions count (None: every scored one), and those words for the table
    questions: Callable[[pd.DataFrame], pd.Series] | None = None
    subset: str = ""
    command: str = ""  # what runs the sides' runs (named when the claim is not run)
    paper: str = ""  # the paper's figures for a and b, as it prints them

    def __post_init__(self) -> None:
        if self.direction not in (">", "<", "="):
            raise ValueError(f"claim {self.id}: direction {self.direction!r}; use >, < or =")
        if self.direction == "=" and self.margin is None:
            raise ValueError(f"claim {self.id}: a claim of no difference needs its margin")


def all_claims(runs: Path | None = None) -> list[Claim]:
    """Every benchmark's claims, in the report's table order."""
    return [c for package in registry.benchmark_packages([runs] if runs else []) for c in
            registry.claims_of(package)]  # fmt: skip


def _values(q: pd.DataFrame, claim: Claim) -> pd.Series:
    """The claim's outcome per question id (bools for a rate, floats for a measurement)."""
    if claim.questions is not None:
        q = q[claim.questions(q).fillna(False).astype(bool)]
    values = claim.outcome(q) if callable(claim.outcome) else q.get(claim.outcome)
    if values is None:
        return pd.Series(dtype=object)
    values = pd.Series(values, index=q.index)
    keep = values.map(lambda v: isinstance(v, bool | np.bool_ | Number) and not _nan(v))
    kept = values[keep]
    numeric = any(not isinstance(v, bool | np.bool_) for v in kept)
    return pd.Series(
        kept.astype(float if numeric else bool).to_numpy(), index=q.loc[keep, "id"].to_numpy()
    )


def _same(value: Any, wanted: Any) -> bool:
    """A run's cell value is the one a side names: None matches a missing value, 8 matches 8.0
    (a column with a missing value is a float column), anything else by its text."""
    if wanted is None or _nan(wanted):
        return value is None or _nan(value)
    if isinstance(value, Number) and isinstance(wanted, Number) and not isinstance(wanted, bool):
        return float(value) == float(wanted)  # type: ignore[arg-type]
    return str(value) == str(wanted)


def _nan(value: Any) -> bool:
    return isinstance(value, float | np.floating) and math.isnan(value)


def _side(q: pd.DataFrame, df: pd.DataFrame, side: Side) -> pd.DataFrame:
    runs = df[df["arm"] == side.arm]
    for key, value in side.cell.items():
        if key not in runs.columns or runs.empty:
            return q.iloc[0:0]
        runs = runs[runs[key].map(lambda v, want=value: _same(v, want)).astype(bool)]
    return q[q["run"].isin(runs["run"])]


Loaded = tuple[pd.DataFrame, pd.DataFrame] | None


def load(runs: Path, experiment: str) -> Loaded:
    """A table's current runs (one profile) and their questions; None when it has none."""
    try:
        with contextlib.redirect_stderr(io.StringIO()):  # the builders' notes: not asked for
            df = collect(runs, experiment)
            return df, questions_of(runs, experiment, df)
    except NoRuns:
        return None


def evaluate(claim: Claim, runs: Path, loaded: dict[str, Loaded] | None = None) -> dict[str, Any]:
    """One row of the claims table: the claim checked on the current runs under `runs`
    (`loaded`: the tables' runs read so far, by experiment, shared between claims)."""
    row: dict[str, Any] = {
        "claim": claim.id,
        "section": claim.section,
        "statement": claim.statement,
        "arms": f"{claim.a.label()} {claim.direction} {claim.b.label()}"
        + (f"; {claim.subset}" if claim.subset else ""),
        "paper": claim.paper,
        "command": claim.command,
    }
    loaded = {} if loaded is None else loaded
    if claim.experiment not in loaded:
        loaded[claim.experiment] = load(runs, claim.experiment)
    found = loaded[claim.experiment]
    if found is None:
        return {**row, "verdict": "not run"}
    df, q = found
    a = _values(_side(q, df, claim.a), claim)
    b = _values(_side(q, df, claim.b), claim)
    if a.empty or b.empty:
        return {**row, "profile": df["profile"].iloc[0], "verdict": "not run"}
    row["profile"] = df["profile"].iloc[0]
    row.update(compare(a, b, claim))
    return row


def compare(a: pd.Series, b: pd.Series, claim: Claim) -> dict[str, Any]:
    """The test of one claim on its two sides' outcomes (indexed by question id): paired on the
    questions both hold when one side's are all among the other's, else unpaired; rates in %,
    measurements as they are."""
    rate = a.dtype == bool and b.dtype == bool
    scale = 100.0 if rate else 1.0
    shared = a.index.intersection(b.index)
    if len(shared) and len(shared) == min(len(a), len(b)):  # one side's questions are the other's
        # (or the first ones of them: a 20-question run beside a 50-question one)
        a, b = a[shared], b[shared]
        xa, xb = list(a.astype(float)), list(b.astype(float))
        p = stats.mcnemar_exact(list(a), list(b)).p_value if rate else stats.sign_test(xa, xb)
        ci = stats.paired_bootstrap_ci(xa, xb)
        test = "McNemar exact" if rate else "sign test"
        found: dict[str, Any] = {"test": f"{test}, paired bootstrap", "n": len(a)}
    else:
        xa, xb = list(a.astype(float)), list(b.astype(float))
        p = stats.fisher_exact(list(a), list(b)) if rate else stats.mann_whitney(xa, xb)
        ci = stats.unpaired_bootstrap_ci(xa, xb)
        test = "Fisher exact" if rate else "Mann-Whitney U"
        found = {"test": f"{test}, bootstrap", "n": f"{len(a)} / {len(b)}"}
    effect, low, high = scale * ci.estimate, scale * ci.low, scale * ci.high
    if claim.direction == "=":
        margin = float(claim.margin or 0.0)
        inside = -margin <= low and high <= margin
        direction = f"within ±{margin:g}" if inside else f"not within ±{margin:g}"
        verdict = "holds" if inside else "does not hold"
    else:
        sign = 1 if claim.direction == ">" else -1
        direction = "as claimed" if effect * sign > 0 else "none" if effect == 0 else "opposite"
        verdict = "holds" if effect * sign > 0 and p < ALPHA else "does not hold"
    return {
        **found,
        "unit": "%" if rate else "value",
        "a_value": scale * float(a.mean()),
        "b_value": scale * float(b.mean()),
        "effect": effect,
        "ci_low": low,
        "ci_high": high,
        "p": p,
        "direction": direction,
        "verdict": verdict,
    }


def frame(runs: Path, checked: Sequence[Claim] | None = None) -> pd.DataFrame:
    """Every claim (or those `checked`) checked, one row each, in the columns of claims.csv."""
    loaded: dict[str, Loaded] = {}
    chosen = all_claims(runs) if checked is None else checked
    rows = [evaluate(c, runs, loaded) for c in chosen]
    return pd.DataFrame(rows).reindex(columns=COLUMNS)


def shown(df: pd.DataFrame) -> list[dict[str, Any]]:
    """The claims as the page and claims.md print them: formatted cells, one dict a claim."""
    return [
        {
            **{k: ("" if _nan(v) else v) for k, v in r.items()},
            "n": "–" if _nan(r["n"]) else r["n"],
            "effect": _effect(r),
            "p": "–" if _nan(r["p"]) else f"{r['p']:.3g}",
            "ours": _rates(r),
        }
        for _, r in df.iterrows()
    ]


def markdown(df: pd.DataFrame) -> str:
    """claims.md: the verdicts first, then the table."""
    counts = df["verdict"].value_counts()
    profiles = sorted({str(p) for p in df["profile"].dropna()})
    table = pd.DataFrame(shown(df), columns=[*COLUMNS, "ours"])
    table = table[["claim", "section", "arms", "n", "ours", "paper", "effect", "p", "verdict"]]
    not_run = df[df["verdict"] == "not run"]
    commands = "\n".join(
        f"- `{r['claim']}`: `{r['command']}`" for _, r in not_run.iterrows() if r["command"]
    )
    return "\n".join(
        [
            "# The paper's claims, checked on our runs",
            "",
            f"{counts.get('holds', 0)} hold, {counts.get('does not hold', 0)} do not hold, "
            f"{counts.get('not run', 0)} not run, of {len(df)} claims (§4.1–4.3, Appendices "
            "B–F). A claim holds when our runs show the paper's direction at p < 0.05 (exact "
            "McNemar on the same questions, Fisher's exact test on different ones); ours: side "
            "A vs side B (% for a rate, the outcome's units for a measurement such as read "
            "size), beside the paper's; effect: A minus B (percentage points for a rate), with "
            "its 95% bootstrap interval. The profile is another model than the paper's: a claim "
            "is tested for its direction and significance, never its figures.",
            "",
            "Profile: " + ("; ".join(f"`{p}`" for p in profiles) or "none (nothing run)") + ".",
            "",
            table.to_markdown(index=False),
            "",
            "Statements (the paper's words):",
            "",
            *[f"- `{r['claim']}` ({r['section']}): {r['statement']}" for _, r in df.iterrows()],
            *(["", "Not run on this profile, and what runs it:", "", commands] if commands else []),
        ]
    )


def _effect(row: pd.Series) -> str:
    if _nan(row.get("effect")):
        return "–"
    return f"{row['effect']:+.1f} [{row['ci_low']:+.1f}, {row['ci_high']:+.1f}]"


def _rates(row: pd.Series) -> str:
    if _nan(row.get("a_value")):
        return "–"
    if row.get("unit") == "%":
        return f"{row['a_value']:.0f} vs {row['b_value']:.0f}"
    return f"{row['a_value']:,.4g} vs {row['b_value']:,.4g}"


def write(runs: Path, out: Path, checked: Sequence[Claim] | None = None) -> str:
    """Write results/tables/claims.md and .csv; the markdown."""
    df = frame(runs, checked)
    md = markdown(df)
    tables = out / "tables"
    tables.mkdir(parents=True, exist_ok=True)
    (tables / "claims.md").write_text(md + "\n")
    df.to_csv(tables / "claims.csv", index=False, float_format="%.6g")
    return md


def check(runs: Path, out: Path, checked: Sequence[Claim] | None = None) -> tuple[bool, str]:
    """Whether the committed claims table is what the runs under `runs` give, byte for byte."""
    with tempfile.TemporaryDirectory() as scratch:
        write(runs, Path(scratch), checked)
        names = ("claims.md", "claims.csv")
        theirs = first_changed(out / "tables", Path(scratch) / "tables", names)
    if theirs is None:
        return True, f"every verdict is what the runs under {runs} give"
    if not theirs.exists():
        return False, f"{theirs} is missing: python -m benchmarks.reports.claims"
    return False, f"{theirs} is not what {runs} gives: python -m benchmarks.reports.claims"


def main(argv: list[str] | None = None) -> int:
    def built(runs: Path, out: Path) -> tuple[str, str | None]:
        if not any(runs.glob("*/*/summary.json")):
            return f"claims: no finished runs under {runs}/: the claims table is unchanged", None
        return write(runs, out), f"\nwrote {out / 'tables'}/claims.md and .csv"

    return artifact_main(
        argv, prog="python -m benchmarks.reports.claims", label="claims",
        description=__doc__.splitlines()[0], check=check, build=built,
    )  # fmt: skip


if __name__ == "__main__":
    raise SystemExit(main())
