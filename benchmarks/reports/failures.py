"""Where the wrong answers of exported runs were lost, from their files alone (no model call).

Each run whose benchmark has a stage rule (its class's ``failure_stage``; the runner applies
it after every scoring) gets what the runner would have written: stages.jsonl.gz and
summary.json's ``failure_stages``. One breakdown covers every current run (a measurement
section of the report): results/failure_stages/failure_stages.{md,csv}, a row per run (arm and
benchmark cell) with its answered and wrong questions and the wrong ones per stage.
docs/failure_stages.md defines the stages.

    python -m benchmarks.reports.failures [--runs results/runs] [--out results] [--check]
    pmem-results show results/runs/table6/<run> --stage stale     # the cases of one stage
"""

from __future__ import annotations

import gzip
import importlib
import json
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from benchmarks.reports.diff import artifact_main, first_changed
from benchmarks.reports.document import named
from benchmarks.reports.figures import COLORS, FULL_IN, figure
from benchmarks.reports.names import display_name, sort_arms
from benchmarks.results.loader import read_only, summary_with
from benchmarks.results.records import FAILURE_STAGES, Failure
from benchmarks.runner.currency import what_changed
from benchmarks.runner.failures import StageRule, failures_of

STAGES_FILE = "stages.jsonl.gz"
TABLE = "failure_stages"  # results/<TABLE>/<TABLE>.md: a measurement section of the report


def rule_of(folder: Path) -> StageRule | None:
    """The stage rule of the benchmark a run folder's manifest names, or None (none declared,
    or the class cannot be imported here)."""
    try:
        config = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))["config"]
        module, _, name = config["benchmark"]["_target_"].rpartition(".")
        benchmark = getattr(importlib.import_module(module), name)
    except (OSError, ValueError, KeyError, TypeError, ImportError, AttributeError):
        return None
    return getattr(benchmark, "failure_stage", None)


def _stages_bytes(failures: list[Failure]) -> bytes:
    text = "".join(json.dumps(f.to_json(), ensure_ascii=False) + "\n" for f in failures)
    return gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0)


@dataclass(frozen=True)
class Attributed:
    """One run's failures as its benchmark's rule gives them."""

    experiment: str
    folder: Path
    failures: list[Failure]
    counts: dict[str, Any]  # summary.json's failure_stages


def attributed_runs(runs: Path) -> list[Attributed]:
    """Every finished, answered, current run whose benchmark has a rule, attributed."""
    out = []
    for summary in sorted(runs.glob("*/*/summary.json")):
        folder = summary.parent
        if read_only(folder):
            continue  # it recorded reads only: nothing was answered
        rule = rule_of(folder)
        if rule is not None and not what_changed(folder):
            out.append(Attributed(folder.parent.name, folder, *failures_of(folder, rule)))
    return out


def _cell(folder: Path) -> str:
    config = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))["config"]
    return str(config["benchmark"].get("name") or folder.name.split("__")[1])


def _arm(folder: Path) -> str:
    return folder.name.split("__")[0]


def _config(folder: Path) -> str:
    """The run's config hash (its folder name's last part): one arm may run one benchmark in
    several configurations (data files, variants)."""
    return folder.name.rsplit("__", 1)[-1]


def breakdown(found: list[Attributed]) -> pd.DataFrame:
    rows = [
        {"experiment": a.experiment, "arm": _arm(a.folder), "benchmark": _cell(a.folder),
         "config": _config(a.folder), "answered": a.counts["answered"],
         "wrong": a.counts["wrong"], **a.counts["by_stage"]}
        for a in found
    ]  # fmt: skip
    df = pd.DataFrame(rows, columns=["experiment", "arm", "benchmark", "config", "answered",
                                     "wrong", *FAILURE_STAGES])  # fmt: skip
    order = ["experiment", "benchmark", "arm", "config"]
    return df.sort_values(order, kind="stable").reset_index(drop=True)


def by_arm(df: pd.DataFrame) -> pd.DataFrame:
    """The breakdown summed per experiment and arm (over its benchmark cells and configs)."""
    counts = ["answered", "wrong", *FAILURE_STAGES]
    return df.groupby(["experiment", "arm"], sort=False)[counts].sum().reset_index()


def draw(df: pd.DataFrame, path: Path) -> None:
    """Stacked bars, one per arm, a panel per experiment: the share of its answered questions
    each stage lost (the bar's length is the arm's error rate)."""
    summed = by_arm(df)
    experiments = sorted(summed["experiment"].unique())
    heights = [int((summed["experiment"] == e).sum()) for e in experiments]
    size = (FULL_IN, 0.7 + sum(0.17 * h + 0.35 for h in heights))
    grid = {"height_ratios": [h + 1.0 for h in heights]}
    with figure(path, nrows=len(experiments), figsize=size, gridspec_kw=grid, sharex=True,
                squeeze=False, layout="constrained") as (fig, axes):  # fmt: skip
        for ax, experiment in zip(axes[:, 0], experiments, strict=True):
            rows = summed[summed["experiment"] == experiment].set_index("arm")
            rows = rows.loc[list(reversed(sort_arms(list(rows.index))))]
            left = pd.Series(0.0, index=rows.index)
            for i, stage in enumerate(FAILURE_STAGES):
                share = 100 * rows[stage] / rows["answered"]
                ax.barh([display_name(a) for a in rows.index], share, left=left, height=0.7,
                        color=COLORS[i], label=stage)  # fmt: skip
                left += share
            ax.set_xlim(0, 100)
            ax.grid(axis="x", color="#dddddd", linewidth=0.5)
            ax.grid(axis="y", visible=False)
            n = int(rows["answered"].sum())
            ax.set_title(f"{experiment} ({n} answered questions)", loc="left", fontsize=7.5,
                         fontweight="bold")  # fmt: skip
        axes[-1, 0].set_xlabel("share of answered questions answered wrong, by stage (%)")
        handles, labels = axes[0, 0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="outside lower center", ncol=len(FAILURE_STAGES),
                   frameon=False)  # fmt: skip


def write_table(found: list[Attributed], out: Path) -> str:
    """The breakdown under `out`/failure_stages (.md, .csv and the figure as .png and .svg);
    returns the markdown."""
    df = breakdown(found)
    md = (
        "# Where the wrong answers were lost\n\n"
        "Every wrong answer of the committed runs whose benchmark attributes failures, by the "
        "first stage that lost it (docs/failure_stages.md defines each per benchmark): "
        "`pmem-results show results/runs/<experiment>/<run> --stage <stage>` lists its cases. "
        "The figure sums each arm's runs per experiment.\n\n" + named(df).to_markdown(index=False)
    )
    folder = out / TABLE
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{TABLE}.md").write_text(md + "\n", encoding="utf-8")
    df.to_csv(folder / f"{TABLE}.csv", index=False)
    if not df.empty:
        draw(df, folder / f"{TABLE}.png")
    return md


def build(runs: Path, out: Path) -> str:
    """Attribute every run, write each run folder's stages file and summary counts, and the
    breakdown under `out`/failure_stages. Returns the markdown."""
    found = attributed_runs(runs)
    for a in found:
        (a.folder / STAGES_FILE).write_bytes(_stages_bytes(a.failures))
        summary = summary_with(a.folder, failure_stages=a.counts)
        (a.folder / "summary.json").write_text(summary, encoding="utf-8")
    return write_table(found, out)


def check(runs: Path, out: Path) -> tuple[bool, str]:
    """Whether every run's stages and counts, and the committed breakdown, are what the rules
    give on the runs' records."""
    found = attributed_runs(runs)
    for a in found:
        stages = a.folder / STAGES_FILE
        if not stages.exists() or gzip.decompress(stages.read_bytes()) != gzip.decompress(
            _stages_bytes(a.failures)
        ):
            return False, f"{stages} is not what the rule gives: python -m {__spec__.name}"
        if json.loads((a.folder / "summary.json").read_text()).get("failure_stages") != a.counts:
            return False, f"{a.folder}/summary.json's failure_stages are not the rule's counts"
    with tempfile.TemporaryDirectory() as scratch:
        write_table(found, Path(scratch))
        names = [f"{TABLE}.{suffix}" for suffix in ("md", "csv", "png", "svg")]
        theirs = first_changed(out / TABLE, Path(scratch) / TABLE, names)
    if theirs is not None:
        return False, f"{theirs} is not what {runs} gives: python -m {__spec__.name}"
    return True, f"every wrong answer under {runs} carries its rule's stage"


def main(argv: list[str] | None = None) -> int:
    def built(runs: Path, out: Path) -> tuple[str, str]:
        return build(runs, out), f"\nwrote {out / TABLE}/{TABLE}.md and .csv"

    return artifact_main(
        argv, prog="python -m benchmarks.reports.failures", label="failure stages",
        description=__doc__.splitlines()[0], check=check, build=built,
    )  # fmt: skip


if __name__ == "__main__":
    raise SystemExit(main())
