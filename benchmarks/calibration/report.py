"""The embedder calibration's table (docs/calibration.md): per threshold, the sweep of its
population and the value its criterion chooses (`CRITERIA`, each with its reason), as markdown
and CSV. The populations come from the benchmarks (`Harvest`: the keys a state run extracted;
`TurnPairs`: dated turns); `scripts/calibrate_embedder.py` embeds them and calls this.
"""

from __future__ import annotations

import csv
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from benchmarks.calibration import thresholds as cal
from benchmarks.runner.types import InputError
from benchmarks.stats import binomial_ci

ROOT = Path(__file__).resolve().parents[2]
TOP_K = 12  # B.1: the cosine top-12 turns are what pruning sees

# Which population decides each threshold, by which rule, and why (docs/calibration.md).
CRITERIA: dict[str, tuple[str, cal.Criterion]] = {
    "soft_identity": (
        "key_decisions",
        cal.Criterion(
            "max_f1",
            why="a gate before §3.3's same/different check, but the local check scored on the "
            "committed run's gated pairs is no better than chance (see Data), so the gate must "
            "carry precision itself; a false merge and a missed one each cost one key, and F1 "
            "weighs them equally",
        ),
    ),
    "merge_high": (
        "key_decisions",
        cal.Criterion(
            "max_recall_at_precision",
            0.90,
            why="Appendix D's default arm merges outright at this cosine with no check, so a "
            "merge is final: precision first. The floor is 0.90, not 0.95: on this data no "
            "threshold below 0.97 reaches 0.95, and 0.97 keeps an eighth of the merges",
        ),
    ),
    "merge_low": (
        "key_decisions",
        cal.Criterion(
            "max_threshold_at_recall",
            0.90,
            why="Appendix D's forced-merge arm ('merge 0.70') and the lower band of "
            "merge=confirm: recall first, the highest cosine that still finds 90% of the merges",
        ),
    ),
    "prune_pair": (
        "turn_pairs",
        cal.Criterion(
            "max_threshold_at_recall",
            1.0,
            why="every pair at or above it gets B.1's yes/no supersession query, which is what "
            "supplies precision; a missed update pair leaves the stale turn in the read. With "
            "so few labelled update pairs (see Data), recall is kept whole: the highest "
            "threshold that keeps all of them",
        ),
    ),
}
# The values a profile held before its calibration (none: it had none), shown beside the
# chosen ones. The local e5 profile's were guesses ("provisional, not yet calibrated").
PROVISIONAL: dict[str, dict[str, float]] = {
    "local": {"soft_identity": 0.90, "prune_pair": 0.86, "merge_high": 0.93, "merge_low": 0.88},
}
USED_BY = {
    "soft_identity": "`WritePath.identify` (pmem_state*)",
    "merge_high": "`KeyCanonicalizer` (pmem_materialized*; merge high, confirm)",
    "merge_low": "`KeyCanonicalizer` (pmem_materialized*_merge070; merge low, confirm)",
    "prune_pair": "`PrunedTurnArm.candidate_pairs` (pmem_turns_pruned, pmem_turns_gate_*)",
}


class CalibrationInputError(InputError, ValueError):
    """Input the calibration cannot use; the message names the file and what is wrong."""


@dataclass(frozen=True, slots=True)
class Harvest:
    """A run's extracted keys in stream order, each with its gold key (None: not aligned), and
    its same/different checks (key a, key b, said same)."""

    run: str
    source: str
    model: str
    file_sha256: str
    calls: int
    mentions: list[tuple[str, tuple[str, str] | None]]
    checks: list[tuple[str, str, bool]]


@dataclass(frozen=True, slots=True)
class TurnPairs:
    """Turn pairs labelled update / other (the prune threshold's population), a line per
    source instance saying what it gave, and where they came from."""

    pairs: list[cal.Scored]
    lines: list[str]
    sources: str


# -- the populations and the choice ------------------------------------------------------------


@dataclass
class Calibration:
    """Each population's items, sweep and note; the chosen point per threshold; data lines."""

    populations: dict[str, tuple[list[cal.Scored], list[cal.Point], str]]
    chosen: dict[str, cal.Point | None]
    data: list[str] = field(default_factory=list)


def _count(items: Sequence[cal.Scored]) -> str:
    by: dict[str, int] = {}
    for i in items:
        by[i.kind] = by.get(i.kind, 0) + 1
    return ", ".join(f"{k} {n:,}" for k, n in sorted(by.items()))


def calibrate(
    harvest: Harvest, key_vectors: Mapping[str, np.ndarray], turns: TurnPairs
) -> Calibration:
    """The three populations, their sweeps and each threshold's choice (`CRITERIA`)."""
    keys, labels, ambiguous = cal.label_keys(harvest.mentions)
    replay = cal.nearest_key_decisions(keys, labels, key_vectors)
    pairs = cal.key_pairs(keys, labels, key_vectors)
    populations = {
        "key_decisions": (
            replay.decisions,
            cal.sweep(replay.decisions, positives=replay.mergeable),
            "Each distinct key against its nearest earlier key. tp: the nearest names the same "
            f"gold key and passes; fn: the {replay.mergeable} candidates with an earlier form of "
            "their gold key, less tp (a wrong nearest key is a miss at any threshold).",
        ),
        "key_pairs": (
            pairs,
            cal.sweep(pairs),
            "Every pair of distinct labelled keys, for reference: the pass rate of each negative "
            "type. Precision here is over all pairs of the stream, not the gate's.",
        ),
        "turn_pairs": (
            turns.pairs,
            cal.sweep(turns.pairs),
            f"Pairs of each question's top-{TOP_K} turns with different dates (the pairs B.1 "
            "asks about), and every update pair, retrieved or not.",
        ),
    }
    aligned = sum(1 for _, g in harvest.mentions if g is not None)
    said = cal.check_confusion(harvest.checks, labels)
    data = [
        f"* Keys: the {harvest.calls} extraction replies in `{harvest.run}` ({harvest.source}, "
        f"writer `{harvest.model}`, ingest_calls.jsonl.gz sha256 `{harvest.file_sha256[:16]}…`)"
        f": {len(harvest.mentions)} extracted facts, {aligned} aligned to a gold (subject, "
        f"relation); {len(keys)} distinct keys, {len(labels)} labelled, {len(ambiguous)} "
        "ambiguous.",
        f"* key_decisions: {len(replay.decisions)} ({_count(replay.decisions)}); "
        f"{replay.unscored} candidates not scored (they or their nearest key unlabelled).",
        f"* key_pairs: {len(pairs):,} ({_count(pairs)}).",
        f"* turn_pairs: {len(turns.pairs)} ({_count(turns.pairs)}) from {turns.sources}:",
        *turns.lines,
        "* The local same/different check (§3.3) on the committed run's gated pairs, labelled: "
        + ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in said.items())
        + ".",
    ]
    chosen = {k: cal.choose(populations[pop][1], crit) for k, (pop, crit) in CRITERIA.items()}
    return Calibration(populations, chosen, data)


# -- writing -----------------------------------------------------------------------------------


def _fmt(x: float | None, digits: int = 3) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def _ci(k: int, n: int) -> str:
    if n == 0:
        return ""
    low, high = binomial_ci(k, n)
    return f" [{low:.2f}, {high:.2f}]"


def _at(points: Sequence[cal.Point], t: float) -> cal.Point | None:
    return next((p for p in points if abs(p.threshold - t) < 1e-9), None)


def chosen_rows(
    result: Calibration, profile: Mapping[str, float], provisional: Mapping[str, float]
) -> list[str]:
    """The chosen-threshold table: each value, its figures with Wilson 95% intervals, the value
    the profile holds now (it should be the chosen one), and the provisional value's figures."""
    lines = [
        "| threshold | decides | population | criterion | chosen | passed | precision [95% CI] "
        "| recall [95% CI] | F1 | in the profile | provisional | precision / recall there |",
        "|---|---|---|---|---:|---:|---|---|---:|---:|---:|---|",
    ]

    def value(x: float | None) -> str:
        return "–" if x is None else f"{x:.2f}"

    for key, (pop, crit) in CRITERIA.items():
        items, points, _ = result.populations[pop]
        p, old = result.chosen[key], provisional.get(key)
        q = _at(points, old) if old is not None else None
        there = f"{_fmt(q.precision, 2)} / {_fmt(q.recall, 2)}" if q else "–"
        row = f"| {key} | {USED_BY[key]} | {pop} | {crit.describe()} | "
        tail = f"{value(profile.get(key))} | {value(old)} | {there} |"
        if p is None:
            lines.append(row + "none meets it | | | | | " + tail)
            continue
        prec = _fmt(p.precision, 2) + _ci(p.tp, p.tp + p.fp)
        rec = _fmt(p.recall, 2) + _ci(p.tp, p.tp + p.fn)
        cells = f"**{p.threshold:.2f}** | {p.tp + p.fp} of {len(items)} | {prec} | {rec} | "
        lines.append(row + cells + f"{_fmt(p.f1, 2)} | " + tail)
    return lines


def render(
    result: Calibration,
    title: str,
    profile: Mapping[str, float],
    provisional: Mapping[str, float],
) -> str:
    lines = [
        title,
        "",
        "Built by `make calibrate-embedder` (scripts/calibrate_embedder.py); docs/calibration.md "
        "says how every pair is built and labelled. A comparison passes at cosine >= the "
        "threshold, as in the arms; the grid is 0.50 to 0.99 in steps of 0.01.",
        "",
        "## Chosen thresholds",
        "",
        *chosen_rows(result, profile, provisional),
        "",
        "Why each criterion:",
        "",
        *(f"* **{k}** ({c.describe()}): {c.why}." for k, (_, c) in CRITERIA.items()),
        "",
        "## Data",
        "",
        *result.data,
    ]
    for pop, (_, points, note) in result.populations.items():
        kinds = sorted({k for p in points for k in p.passed})
        lines += ["", f"## Sweep: {pop}", "", note, ""]
        head = ["threshold", "tp", "fp", "fn", "precision", "recall", "F1"]
        lines.append("| " + " | ".join(head + [f"passed {k}" for k in kinds]) + " |")
        lines.append("|" + "---:|" * (len(head) + len(kinds)))
        for p in points:
            cells = [f"{p.threshold:.2f}", p.tp, p.fp, p.fn, _fmt(p.precision), _fmt(p.recall)]
            cells += [_fmt(p.f1), *(p.passed.get(k, 0) for k in kinds)]
            lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    return "\n".join(lines) + "\n"


def write(
    result: Calibration,
    out: Path,
    name: str,
    title: str,
    profile: Mapping[str, float],
    provisional: Mapping[str, float],
) -> list[Path]:
    """``<name>.md`` (the table), ``<name>.csv`` (every sweep) and ``<name>_pairs.csv`` (each
    key decision and turn pair with its cosine and label; the 60k key pairs are left out)."""
    out.mkdir(parents=True, exist_ok=True)
    kinds = sorted({k for _, pts, _ in result.populations.values() for p in pts for k in p.passed})
    sweep_csv = out / f"{name}.csv"
    with sweep_csv.open("w", newline="") as f:
        w = csv.writer(f)
        head = ["population", "threshold", "tp", "fp", "fn", "tn", "precision", "recall", "f1"]
        w.writerow(head + [f"passed_{k}" for k in kinds])
        for pop, (_, points, _) in result.populations.items():
            for p in points:
                row = [pop, f"{p.threshold:.2f}", p.tp, p.fp, p.fn, p.tn]
                row += [_fmt(p.precision, 4), _fmt(p.recall, 4), _fmt(p.f1, 4)]
                w.writerow(row + [p.passed.get(k, "") for k in kinds])
    pairs_csv = out / f"{name}_pairs.csv"
    with pairs_csv.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["population", "source", "a", "b", "kind", "positive", "cosine", "retrieved"])
        for pop, (items, _, _) in result.populations.items():
            if pop == "key_pairs":
                continue
            for i in items:
                seen = "" if i.retrieved is None else int(i.retrieved)
                label = [i.kind, int(i.positive), f"{i.score:.4f}", seen]
                w.writerow([pop, i.source, i.a, i.b, *label])
    md = out / f"{name}.md"
    md.write_text(render(result, title, profile, provisional))
    return [md, sweep_csv, pairs_csv]
