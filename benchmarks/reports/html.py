"""The reproduction report: one self-contained HTML page of every table, ours beside the paper's.

    python -m benchmarks.reports.html [--runs runs] [--results results] \
        [--out results/report.html] [--samples-per-run 40] [--samples-mib 2] [--check]

Each cell with a paper figure gets our 95% Wilson interval and a verdict (`verdict`); each run
its manifest and a drill-down to what the reader saw, wrong answers first, within
`--samples-mib`. The committed page is what `--runs results/runs` builds; `--check` says whether
it still is. The page has no external asset and the same inputs give the same bytes.

This module gathers what the page shows; its markup is in benchmarks/reports/report/templates/.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

import pandas as pd
from markupsafe import Markup

from benchmarks.reports import claims, registry
from benchmarks.reports.diff import first_change
from benchmarks.reports.report.page import anchor, document, manifests_html, render, samples_html
from benchmarks.reports.report.sources import Figure, Section, gather, section_of
from benchmarks.results import NoRuns, load_runs, load_summaries

__all__ = ["Report", "build", "check", "main"]

TITLE = "P-Mem reproduction report"
# Measurements beyond the paper's tables, each written by its script to results/<name>/<name>.md
# (routing: scripts/measure_routing.py, docs/routing.md; failure stages:
# benchmarks/reports/failures.py, docs/failure_stages.md)
MEASUREMENTS = ("routing", "failure_stages")
PAGE = "report.html.j2"  # the head and the body around the table sections
MIB = 1024 * 1024
# The drill-down's share of the page: the committed page must stay small enough to keep in git
# and to open in a browser, however many runs are exported.
SAMPLES_BYTES = 2 * MIB


def _experiment_order(name: str) -> tuple[int, str]:
    order = list(registry.tables())
    return (order.index(name) if name in order else len(order), name)


class Report:
    """Everything the page shows, gathered once: the table sections, the tables that cannot be
    shown, stray figures, and per run its manifest and samples (live runs first, then the
    committed exports under results/runs/ for runs not also live)."""

    def __init__(
        self,
        runs: Path,
        results: Path,
        samples_per_run: int = 40,
        profile: str | None = None,
        samples_bytes: int | None = SAMPLES_BYTES,
    ) -> None:
        self.runs, self.results, self.limit = runs, results, samples_per_run
        self.budget = samples_bytes
        self.sections, self.missing, self.other = gather(runs, results, profile)
        # the claims of the runs the page reads: the live ones, else the committed export
        live = runs.is_dir() and any(runs.glob("*/*/summary.json"))
        self.claims_root = runs if live else results / "runs"
        self.claims = claims.frame(self.claims_root)
        self.measurements = [
            self._measurement(name, md) for name in MEASUREMENTS
            if (md := results / name / f"{name}.md").exists()
        ]  # fmt: skip
        self.manifests: list[tuple[str, str, dict[str, Any], str]] = []
        self.samples: list[tuple[str, str, pd.DataFrame, list[str], str]] = []
        self.roots: list[tuple[str, int, int]] = []  # (origin, paper runs, scripted runs)
        seen: set[tuple[str, str]] = set()
        for root, origin in ((runs, f"live runs under {runs}"), (results / "runs", None)):
            origin = origin or f"committed export {results / 'runs'}"
            self._add_root(root, origin, seen)

    @staticmethod
    def _measurement(name: str, md: Path) -> Section:
        """A measurement's section: its Markdown and the figures its script drew beside it."""
        section = section_of(name, md.read_text(), None, False, f"committed {md}")
        origin = f"committed {md.parent}"
        pngs = sorted(md.parent.glob("*.png"))
        section.figures = [Figure(p.name, p.read_bytes(), origin) for p in pngs]
        return section

    def _add_root(self, root: Path, origin: str, seen: set[tuple[str, str]]) -> None:
        try:
            summaries = load_summaries(root, include_scripted=True)
        except NoRuns:
            return
        summaries = summaries[
            [
                (e, r) not in seen
                for e, r in zip(summaries["experiment"], summaries["run"], strict=True)
            ]
        ]
        if summaries.empty:
            return
        dry = int(summaries["scripted"].sum())
        self.roots.append((origin, len(summaries) - dry, dry))
        try:
            questions = load_runs(root, include_scripted=True)
        except NoRuns:
            questions = pd.DataFrame(columns=["experiment", "run"])
        by_run = {key: g for key, g in questions.groupby(["experiment", "run"], sort=False)}
        order = summaries.assign(_o=summaries["experiment"].map(_experiment_order))
        for _, s in order.sort_values(["_o", "arm", "run"]).iterrows():
            key = (s["experiment"], s["run"])
            seen.add(key)
            manifest = json.loads((Path(s["folder"]) / "manifest.json").read_text())
            self.manifests.append((*key, manifest, origin))
            q = by_run.get(key)
            if q is not None and not q.empty:
                scorers = list((manifest.get("config") or {}).get("scorers") or {})
                self.samples.append((*key, q, scorers, origin))

    @property
    def figures(self) -> list[Figure]:
        return [f for s in self.sections for f in s.figures] + self.other

    def summary(self) -> str:
        live = sum(s.live for s in self.sections)
        cells = [c for s in self.sections for c in s.cells]
        inside = sum(c.verdict.inside for c in cells)
        return (
            f"{len(self.sections)} tables ({live} from live runs, {len(self.sections) - live} "
            f"committed), {len(cells)} verdict cells ({inside} inside, {len(cells) - inside} "
            f"outside), {len(self.figures)} figures, {len(self.manifests)} run manifests, "
            f"{len(self.samples)} runs with samples"
        )

    @property
    def entries(self) -> list[tuple[str, Any, str, str]]:
        """Every table in the paper's order: (name, its section or None, why not, command)."""
        shown = {s.name: s for s in self.sections}
        out = []
        for name, spec in registry.tables([self.runs]).items():
            why = self.missing.get(name, "")
            out.append((name, shown.get(name), why, spec.reproduce))
        return out

    @property
    def profiles(self) -> list[str]:
        """The model profiles behind the page's numbers."""
        found = {p for s in self.sections if s.frame is not None and "profile" in s.frame
                 for p in s.frame["profile"].dropna().astype(str)}  # fmt: skip
        return sorted(found | {str(p) for p in self.claims["profile"].dropna()})

    def html(self) -> str:
        toc = [("claims", "The paper's claims")]
        for name, s, _, _ in self.entries:
            toc.append((anchor("t", name), s.title if s else f"{name} (not run)"))
        toc += [(anchor("t", m.name), m.title) for m in self.measurements]
        if self.other:
            toc.append(("figures", "Other figures"))
        toc += [
            ("manifests", "Runs and their manifests"),
            ("samples", "Samples"),
            ("method", "Method"),
        ]
        head = render(
            PAGE, "head", TITLE, self.runs, self.results, self.roots, self.sections,
            self.entries, self.profiles, claims.shown(self.claims), self.claims_root,
        )  # fmt: skip
        # the manifests and the drill-down come rendered (page.py prepares them): markup as is
        body = render(
            PAGE,
            "body",
            self.entries,
            self.measurements,
            self.other,
            Markup(manifests_html(self.manifests)),
            Markup(samples_html(self.samples, self.limit, self.budget)),
            self.limit,
            None if self.budget is None else self.budget / MIB,
        )
        return document(TITLE, head, toc, body)


def build(
    runs: Path,
    results: Path,
    out: Path,
    samples_per_run: int = 40,
    profile: str | None = None,
    samples_bytes: int | None = SAMPLES_BYTES,
) -> Report:
    """Gather everything and write the page to `out`; the report (for its summary)."""
    report = Report(runs, results, samples_per_run, profile, samples_bytes)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(report.html(), encoding="utf-8")
    return report


def check(
    runs: Path,
    results: Path,
    out: Path,
    samples_per_run: int = 40,
    profile: str | None = None,
    samples_bytes: int | None = SAMPLES_BYTES,
) -> tuple[bool, str]:
    """Whether the page at `out` is, byte for byte, the one these inputs build (the page is
    deterministic), writing nothing: a committed page left behind when a run was exported, or
    edited by hand, cannot pass for the current one. (True, its summary) or (False, where the
    two first differ)."""
    if not out.is_file():
        return False, f"no page at {out}: build it with the same options, without --check"
    report = Report(runs, results, samples_per_run, profile, samples_bytes)
    rebuilt, committed = report.html(), out.read_bytes().decode("utf-8", "replace")
    if rebuilt == committed:
        return True, f"{out} is what {runs} and {results} build: {report.summary()}"
    line, col, a, b = first_change(committed.split("\n"), rebuilt.split("\n"))
    return False, (
        f"{out} is not what {runs} and {results} build, from line {line}, column {col}: "
        f"on disk {a!r}, rebuilt {b!r}; rebuild it with the same options, without --check"
    )


def _mib(text: str) -> int | None:
    """`--samples-mib` in bytes: None for 0 (no limit), at least 1 byte otherwise."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not (value >= 0 and math.isfinite(value * MIB)):
        raise argparse.ArgumentTypeError(f"{text!r}: a size in MiB, 0 or more (0: no limit)")
    return None if value == 0 else max(1, int(value * MIB))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.reports.html", description=__doc__)
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.add_argument("--runs", type=Path, default=Path("runs"), help="live runs root")
    p.add_argument("--results", type=Path, default=Path("results"), help="committed results")
    p.add_argument("--out", type=Path, default=Path("results/report.html"))
    p.add_argument("--samples-per-run", type=int, default=40, metavar="N")
    p.add_argument(
        "--samples-mib",
        type=_mib,
        default=f"{SAMPLES_BYTES / MIB:g}",
        metavar="MIB",
        help="size budget of the per-sample drill-down in MiB (default %(default)s; 0: no limit)",
    )
    p.add_argument("--profile", help="live tables from this profile only (its label or model)")
    p.add_argument(
        "--check",
        action="store_true",
        help="write nothing: say whether --out is, byte for byte, the page these options build "
        "(exit 1 when not); for the committed page use --runs results/runs",
    )
    args = p.parse_args(argv)
    if args.check:
        ok, why = check(
            args.runs, args.results, args.out, args.samples_per_run, args.profile,
            args.samples_mib,
        )  # fmt: skip
        print(f"report: {'ok' if ok else 'NOT BACKED'}: {why}")
        return 0 if ok else 1
    report = build(
        args.runs, args.results, args.out, args.samples_per_run, args.profile, args.samples_mib
    )
    size = args.out.stat().st_size / 1024
    print(f"wrote {args.out} ({size:,.0f} KiB): {report.summary()}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
