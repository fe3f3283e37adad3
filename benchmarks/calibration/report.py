"""The embedder calibration's inputs and table (docs/calibration.md; scripts/calibrate_embedder.py
embeds and calls this).

Inputs: the fact keys a committed FactConsolidation state run really extracted (its
``ingest_calls.jsonl.gz``: the write path's extraction replies, one per chunk of the stream),
each aligned to the template parse of its chunk; and LongMemEval instances (dated turns), whose
knowledge-update turns are the positives of the prune threshold. Output: per threshold, the
sweep of its population, the value its criterion chooses (`CRITERIA`, each with its reason),
written as markdown and CSV. The pure parts (sweeps, criteria, alignment, replays) are
`benchmarks.scoring.calibration`.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.factconsolidation import TEMPLATES, FactConsolidation, chunks
from benchmarks.longmemeval.episodes import flatten
from benchmarks.longmemeval.schema import KNOWLEDGE_UPDATE, Instance, SchemaError, parse_instance
from benchmarks.models.structured import StructuredOutputError, parse_json
from benchmarks.runner.types import InputError
from benchmarks.scoring import calibration as cal
from benchmarks.stats import binomial_ci
from pmem.write import EXTRACT_PROMPT, SAME_PROMPT, fact_items

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_RUN = "results/runs/table7/pmem_state__factconsolidation_sh_6k__2a2968c9c1"
DEFAULT_LME = ("benchmarks/data/longmemeval/longmemeval_s_single_e47becba.json",)
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

# Knowledge-update instances whose turns carry no has_answer: the turns that state a value of
# the queried fact, labelled by hand, each with a phrase of it (checked against the turn).
# (session index, turn index, phrase): positions as in the file.
HAND_UPDATES: dict[str, tuple[tuple[int, int, str], ...]] = {
    "db467c8c": (  # "How long have my parents been staying with me in the US?"
        (0, 2, "for the past six months"),
        (1, 0, "staying with me for nine months now"),
        (1, 6, "staying with me for nine months now"),
    ),
    "ed4ddc30": (  # "How many dozen eggs do we currently have stocked up ...?"
        (0, 2, "30 dozen at the moment"),
        (1, 2, "20 dozen stocked up"),
    ),
    "a1eacc2a": (  # "How many short stories have I written since I started writing regularly?"
        (0, 2, "I've written four so far"),
        (1, 0, "complete 7 short stories"),
    ),
}


class CalibrationInputError(InputError, ValueError):
    """Input the calibration cannot use; the message names the file and what is wrong."""


# -- key pairs from a committed run ------------------------------------------------------------


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


def prompt_head(template: str, slot: str) -> str:
    """The prompt as sent, up to the slot (the template's ``{{`` escapes resolved)."""
    slots = {"text": "", "a": "", "b": ""}
    return template.format(**{**slots, slot: "\0"}).split("\0")[0]


def harvest_keys(run: Path) -> Harvest:
    """The keys the run's write path extracted, chunk by chunk in stream order (the order it
    applies them), each aligned to its chunk's gold facts (`cal.align_extraction`)."""
    manifest_file, calls_file = run / "manifest.json", run / "ingest_calls.jsonl.gz"
    for need in (manifest_file, calls_file):
        if not need.exists():
            raise CalibrationInputError(f"--run {run}: no {need.name} (a state run's folder)")
    cfg = json.loads(manifest_file.read_text())["config"]
    raw = calls_file.read_bytes()
    rows = [json.loads(line) for line in gzip.decompress(raw).splitlines() if line.strip()]
    data = FactConsolidation(cfg["benchmark"]["source"], cfg["benchmark"].get("path")).data
    by_chunk, at = {}, 0
    for i, text in enumerate(chunks(data.facts)):
        n = text.count("\n") + 1
        by_chunk[text] = (i, data.facts[at : at + n])
        at += n
    vocab = {
        t.relation: cal.relation_vocabulary(t.relation, f"{t.prefix} {t.middle} {t.suffix}")
        for t in TEMPLATES
    }
    extract, same = prompt_head(EXTRACT_PROMPT, "text"), prompt_head(SAME_PROMPT, "a")
    replies: list[tuple[int, list[tuple[str, tuple[str, str] | None]]]] = []
    checks = []
    for row in rows:
        content = (row.get("messages") or [{}])[0].get("content", "")
        if content.startswith(extract):
            if content[len(extract) :] not in by_chunk:
                raise CalibrationInputError(f"{calls_file}: an extraction prompt of no chunk")
            index, facts = by_chunk[content[len(extract) :]]
            try:
                items = [(k, v) for k, v, _ in fact_items(parse_json(row["reply"]))[0]]
            except StructuredOutputError:
                items = []  # the write path counts an extraction failure: no keys
            golds = cal.align_extraction(items, facts, vocab)
            keyed = [
                (k, (g.subject, g.relation) if g else None)
                for (k, _), g in zip(items, golds, strict=True)
            ]
            replies.append((index, keyed))
        elif content.startswith(same):
            a, b = (line[3:] for line in content.splitlines()[1:3])
            checks.append((a, b, row["reply"].strip().lower().startswith("same")))
    replies.sort(key=lambda r: r[0])  # the write path applies chunks in stream order
    return Harvest(
        run=str(run.relative_to(ROOT)) if run.is_relative_to(ROOT) else str(run),
        source=cfg["benchmark"]["source"],
        model=cfg["llm"]["model"],
        file_sha256=hashlib.sha256(raw).hexdigest(),
        calls=len(replies),
        mentions=[m for _, keyed in replies for m in keyed],
        checks=checks,
    )


# -- turn pairs from LongMemEval files ---------------------------------------------------------


def _completed(raw: Any) -> Any:
    """A partial record made parseable: fields no pair uses filled in (the question date: the
    last session's; session ids: positions; evidence ids: every session)."""
    if not isinstance(raw, dict):
        return raw  # the schema check names it
    row = dict(raw)
    dates = row.get("haystack_dates") or []
    if not row.get("question_date") and dates:
        row["question_date"] = max(dates)
    ids = row.get("haystack_session_ids") or [f"s{i}" for i in range(len(dates))]
    row["haystack_session_ids"] = ids
    if not row.get("answer_session_ids"):
        row["answer_session_ids"] = list(ids)
    return row


def load_instances(files: Sequence[str]) -> tuple[list[Instance], list[str]]:
    """Every usable instance of the files, one per question id (the largest haystack kept: the
    S copy of an instance also shipped as oracle), and one line per record left out."""
    kept: dict[str, Instance] = {}
    skipped = []
    for file in files:
        path = Path(file)
        if not path.exists():
            raise CalibrationInputError(f"--lme {file}: no such file")
        try:
            rows = json.loads(path.read_text())
        except json.JSONDecodeError as err:
            raise CalibrationInputError(f"--lme {file}: not JSON ({err})") from None
        if not isinstance(rows, list):
            raise CalibrationInputError(f"--lme {file}: not a JSON list of instances")
        for i, raw in enumerate(rows):
            try:
                inst = parse_instance(_completed(raw), file, i)
            except SchemaError as err:
                skipped.append(str(err))
                continue
            old = kept.get(inst.question_id)
            if old is None or inst.turns > old.turns:
                kept[inst.question_id] = inst
    return list(kept.values()), skipped


def update_turns(instance: Instance) -> set[str]:
    """The turns stating a value of the queried fact (event ids): knowledge-update questions
    only; the has_answer marks, else the hand labels (each phrase checked against its turn)."""
    if instance.question_type != KNOWLEDGE_UPDATE:
        return set()
    qid = instance.question_id
    marked = {
        f"{qid}-s{s.index}-t{t}"
        for s in instance.sessions
        for t, turn in enumerate(s.turns)
        if turn.has_answer
    }
    if marked:
        return marked
    out = set()
    for s, t, phrase in HAND_UPDATES.get(qid, ()):
        if phrase not in instance.sessions[s].turns[t].content:
            raise CalibrationInputError(f"{qid}: hand label s{s} t{t}: {phrase!r} not in the turn")
        out.add(f"{qid}-s{s}-t{t}")
    return out


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
    harvest: Harvest,
    key_vectors: Mapping[str, np.ndarray],
    instances: Sequence[Instance],
    turn_vectors: Mapping[str, tuple[np.ndarray, np.ndarray]],
    skipped: Sequence[str] = (),
) -> Calibration:
    """The three populations, their sweeps and each threshold's choice (`CRITERIA`)."""
    keys, labels, ambiguous = cal.label_keys(harvest.mentions)
    replay = cal.nearest_key_decisions(keys, labels, key_vectors)
    pairs = cal.key_pairs(keys, labels, key_vectors)
    turns: list[cal.Scored] = []
    lines, idle = [], []
    for inst in instances:
        question, vectors = turn_vectors[inst.question_id]
        updates = update_turns(inst)
        found = cal.turn_pairs(flatten(inst), vectors, question, updates, TOP_K, inst.question_id)
        turns += found
        if not found:
            idle.append(inst.question_id)
            continue
        pos = sum(i.positive for i in found)
        lines.append(
            f"  * {inst.question_id} ({inst.question_type}, {len(inst.sessions)} sessions, "
            f"{inst.turns} turns): {len(updates)} update turns, {pos} update pairs, "
            f"{len(found) - pos} other pairs"
        )
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
            turns,
            cal.sweep(turns),
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
        f"* turn_pairs: {len(turns)} ({_count(turns)}) from {len(instances) - len(idle)} "
        "LongMemEval instances:",
        *lines,
        f"  * no pair to decide (no two dates in the top-{TOP_K}): {', '.join(idle) or 'none'}; "
        f"records left out by the schema check: {len(skipped)}",
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
