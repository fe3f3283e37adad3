"""The ALFWorld revision tables (§4.2.1 Table 6 and its single-revision variant, B.3 Table 8,
§4.2.3's contest and resolve), ours beside the paper's, from run folders.

Accuracy by L or d, ours with a 95% interval beside the paper's figure; a "-pre" question is
joined to its final question. benchmarks/reports/tables.py registers the builders.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pandas as pd

from benchmarks.alfworld_revision import paper, verdicts
from benchmarks.alfworld_revision.figures import plot_table6
from benchmarks.alfworld_revision.scoring import names_location
from benchmarks.reports.document import markdown_table
from benchmarks.reports.frame import RATE_CELLS, cell, header, questions_of
from benchmarks.reports.registry import Table
from benchmarks.scoring.scorers import names_subject


def by_parameter(
    df: pd.DataFrame, scorer: str, parameter: str, reference: dict[str, dict[Any, float]]
) -> pd.DataFrame:
    """One row per arm; per parameter value, ours with its 95% interval and, after a slash, the
    paper's figure; then the mean read size in characters (the paper's last column)."""
    rows: dict[str, dict[str, Any]] = {}
    for _, r in df.sort_values(["arm", parameter]).iterrows():
        row = rows.setdefault(r["arm"], {})
        ours = f"{r[f'{scorer}.acc']:.1f} [{r[f'{scorer}.lo']:.0f}–{r[f'{scorer}.hi']:.0f}]"
        ref = reference.get(r["arm"], {}).get(r[parameter])
        row[f"{parameter}={r[parameter]}"] = ours + (f" / {ref:.1f}" if ref is not None else "")
        row.setdefault("_chars", []).append(r["mean_chars"])
        row["n per cell"] = int(r[f"{scorer}.n"])
    for row in rows.values():
        row["chars"] = round(sum(row["_chars"]) / len(row["_chars"]))
        del row["_chars"]
    table = pd.DataFrame.from_dict(rows, orient="index")
    values = sorted(df[parameter].unique())
    table = table[[f"{parameter}={v}" for v in values] + ["n per cell", "chars"]]
    table.index.name = "arm"
    return table


def table6(df: pd.DataFrame, runs: Path, out: Path) -> str:
    t = by_parameter(df, "location", "L", paper.TABLE6_ACCURACY)
    md = (
        header("Table 6: current-value accuracy as revisions accumulate", df)
        + "\n"
        + markdown_table(t)
    )
    coverage = [c for c in df.columns if c == "meta.coverage"]
    if coverage:
        cov = df.pivot_table(index="L", columns="arm", values="meta.coverage")
        md += "\n\nRetrieval coverage: share of the target chain in the top-k (B.2 control):\n\n"
        md += markdown_table((100 * cov).round(1))
    md += commit_routing(questions_of(runs, "table6", df), ["arm", "L"], "location")
    # drawn from the per-run frame alone: `python -m benchmarks.reports.figures` redraws (and
    # checks) the committed figure from the committed CSV with this same function
    plot_table6(df, out / "figures" / "table6.png")
    return md


def commit_routing(q: pd.DataFrame, by: list[str], scorer: str | None = None) -> str:
    """The commit arms' routing audit per group of `by` and, with `scorer`, their misses split
    by where they arose.

    Routing: the share of events that reached their object's cell (`routing_audit`: a fork or a
    merge into another object's cell is a miss), and of questions that read it. A miss is a
    writer error when the cell read does not hold the gold location (the write path, routing
    included, committed something else) and a reader error when it does. `q` is the
    per-question frame; arms that keep no cells (raw reads, peers) record no audit and are
    left out."""
    audited = q["context_meta"].map(lambda m: isinstance(m, dict) and "events_seen" in m)
    q = q[audited]
    rows = []
    for keys, g in q.groupby(by):
        row = dict(zip(by, keys if isinstance(keys, tuple) else (keys,), strict=True))
        meta = pd.json_normalize(list(g["context_meta"]))
        seen, reached = meta["events_seen"].sum(), meta["events_reached_cell"].sum()
        asked = meta.get("question_reached_cell", pd.Series(dtype=float)).dropna()
        row["events to their cell"] = f"{100 * reached / seen:.1f}% of {int(seen)}" if seen else "–"
        row["questions to their cell"] = f"{100 * asked.mean():.1f}%" if len(asked) else "–"
        if scorer is not None:
            scored = g[g[f"{scorer}.correct"].notna()]  # a phase the scorer does not judge
            miss = scored[~scored[f"{scorer}.correct"].astype(bool)]
            held = [
                bool(names_location(str(r["context_meta"].get("cell_value")), r["gold"]))
                for _, r in miss.iterrows()
            ]
            row["misses"] = len(miss)
            row["writer errors"] = held.count(False)
            row["reader errors"] = held.count(True)
        rows.append(row)
    if not rows:
        return ""
    table = markdown_table(pd.DataFrame(rows), index=False, disable_numparse=True)
    title, split = "Commit routing", ""
    if scorer is not None:
        title += " and misses"
        split = (
            f"; a miss (a question the `{scorer}` scorer judges wrong, every case's) is a "
            "writer error when the cell read does not hold the gold location, a reader error "
            "when it does"
        )
    return (
        f"\n\n{title} (B.2; §3.3 soft key identity): events and questions that reached "
        "their object's cell (a fork or a merge into another object's cell is a miss; "
        f"`_label_routed` rows route by the generator's labels){split}:\n\n" + table
    )


def _pct(series: pd.Series) -> str:
    values = series.dropna().astype(bool)
    return f"{100 * values.mean():.1f} (n={len(values)})" if len(values) else "–"


# -- what a peer's store holds (context_meta.introspection, written by baselines/peers) ---------


def places(text: str, subject: str | None, location: str, *, current: bool = False) -> bool:
    """Whether a store's fact text places `subject` at `location`: it names both, whole names
    as the scorers match them ("drawer 1" is not named by "drawer 10"). A graph store may hang
    a fact about another object on the subject's node (the 1.5B writer's Graphiti joins "The
    towel was in towelholder 1" to the candle), so naming the location is not enough. With
    `current`, the location must be named other than as a move's origin: "the bowl was moved
    from diningtable 2 to tvstand 1" places the bowl at tvstand 1, not at diningtable 2. A
    `subject` of None (a read that listed every fact) asks for the location alone."""
    flat = " ".join(text.lower().split())
    if subject is not None and not names_subject(flat, subject):
        return False
    if current:
        origin = rf"\bfrom (?:the )?{re.escape(' '.join(location.lower().split()))}(?!\w)"
        flat = re.sub(origin, " ", flat)
    return names_location(flat, location)


def store_names(introspection: Any, value: str | None, *, valid_only: bool = False) -> Any:
    """Whether a peer store, as its arm listed it at the read (the facts about the question's
    object: Graphiti's edges with their validity, Mem0's memories with their history), places
    the object at `value` (`places`): in any fact, valid or not, or in a text a fact held before
    (Mem0's UPDATE and DELETE history); with `valid_only`, as where the object is now, in the
    current text of a valid fact (a Graphiti edge with neither `invalid_at` nor `expired_at`, a
    Mem0 memory still in the store). None when the read recorded no introspection (the arm
    keeps no such list)."""
    if not isinstance(introspection, dict) or not value:
        return None
    subject = introspection.get("subject")
    for fact in introspection.get("facts") or []:
        if valid_only and not fact.get("valid"):
            continue
        texts = [fact.get("text") or ""]
        if not valid_only:
            texts += list(fact.get("former") or [])
        if any(places(str(t), subject, value, current=valid_only) for t in texts):
            return True
    return False


def _introspection(q: pd.DataFrame) -> pd.Series:
    return q["context_meta"].map(lambda m: (m or {}).get("introspection"))


def _per_case(frame: pd.DataFrame, judge: Any) -> pd.Series:
    """`judge(row)` for every row (True, False or None), as a Series even when `frame` is
    empty (DataFrame.apply would return a frame there)."""
    return pd.Series([judge(r) for _, r in frame.iterrows()], index=frame.index, dtype=object)


def _share(series: pd.Series) -> str:
    """`_pct` over the rows that have a verdict; a dash when none has (an arm without it)."""
    return _pct(series) if series.notna().any() else "–"


def _ref(value: Any) -> str:
    """A paper figure as printed (one decimal), or a dash where the paper reports none."""
    return "–" if value is None else f"{value:.1f}"


def _note(arms: list[str], reference: dict[str, dict[str, Any]]) -> str:
    ours = [a for a in arms if a not in reference]
    if not ours:
        return ""
    return (
        f"\n\nRows with no paper figure ({', '.join(ours)}) are ours: the paper reports no such "
        "row here (docs/peers.md, docs/alfworld_revision.md)."
    )


def table8(df: pd.DataFrame, runs: Path, out: Path) -> str:
    """Appendix B.3: recovery over committed cases (the "-pre" question answered v2).

    "v1 in store": the commit arms' retained values; for the peers, their store's own list
    (`store_names`), with "v1 valid" (v1 still current) and "v2 valid before" (the error
    committed in the store at the "-pre" question) beside it."""
    q = questions_of(runs, "table8", df)
    q = q.assign(introspection=_introspection(q))
    rows = []
    for (arm, d), g in q.groupby(["arm", "d"]):
        pre = g[g.phase == "pre"].set_index("case")
        final = g[g.phase == "final"].set_index("case")
        committed = pre.index[pre["committed.correct"].fillna(False).astype(bool)]
        f = final.loc[final.index.intersection(committed)]
        outcome = f.get("recovered.outcome", pd.Series(dtype=object))
        retained = _per_case(
            final,
            lambda r: r["gold"] in r["retained"] if isinstance(r["retained"], list) else None,
        )
        v1_any = _per_case(final, lambda r: store_names(r["introspection"], r["gold"]))
        v1_valid = _per_case(
            final, lambda r: store_names(r["introspection"], r["gold"], valid_only=True)
        )
        # at the "-pre" question the gold is v2: the error is a current fact of the store
        v2_valid = _per_case(
            pre, lambda r: store_names(r["introspection"], r["gold"], valid_only=True)
        )
        in_store = retained.where(retained.notna(), v1_any)
        ref = paper.TABLE8.get(arm, {})
        rows.append(
            {
                "arm": arm,
                "d": d,
                "committed": f"{len(committed)}/{len(pre)}",
                "committed (paper)": _ref(ref.get(f"committed_d{d}")),
                "recovered (ours)": _pct(outcome == "correct"),
                "recovered (paper)": _ref(ref.get(f"recovered_d{d}")),
                "wrong = v2": _pct(outcome == "stale"),
                "wrong (paper)": _ref(ref.get(f"wrong_d{d}")),
                "lost": _pct(~outcome.isin(["correct", "stale"])),
                "lost (paper)": _ref(ref.get(f"lost_d{d}")),
                "v1 in store": _share(in_store),
                "v1 in store (paper)": _ref(ref.get("v1_in_store")),
                "v1 valid": _share(v1_valid),
                "v2 valid before": _share(v2_valid),
            }
        )
    table = pd.DataFrame(rows)
    notes = _note(sorted(table["arm"].unique()), paper.TABLE8) if len(table) else ""
    for arm, figures in paper.TABLE8_TEXT.items():
        if arm in set(table.get("arm", [])):
            notes += (
                f"\n\nThe paper's B.3 text on {arm}, which has no Table 8 row there (no distance "
                f'named): it "committed the error in only {figures["committed"]}% of cases, and '
                f'v1 survived separately in 11 of those 12" '
                f"({figures['v1_current_of_committed']}%; compare v1 valid)."
            )
    return (
        header("Table 8: reversibility under retraction", df, RATE_CELLS)
        + "\n"
        + markdown_table(table, index=False, disable_numparse=True)
        + '\n\nCommitted: the "-pre" answer names v2; recovered / wrong / lost are over '
        "those cases. v1 in store: retained in the cell (commit arms) or placed there by a "
        "fact the store holds about the object, valid or invalidated, or by its history (peers: "
        "the store's own list); v1 valid: a current fact after the retraction places the object "
        "at v1 (not as a move's origin); v2 valid before: the error is a current fact at the "
        '"-pre" question (the store committed it). A fact places the object at a location when '
        "its text names both (a graph edge joined to the object whose text is about another "
        "object does not count)." + notes + commit_routing(q, ["arm", "d"], "recovered")
    )


def conflict(df: pd.DataFrame, runs: Path, out: Path) -> str:
    """§4.2.3: the conflict flagged before the settling check, and settled after it; for the
    peers, whether both reports are valid facts of their store before the check."""
    q = questions_of(runs, "conflict", df)
    q = q.assign(introspection=_introspection(q))
    rows = []
    for arm, g in q.groupby("arm"):
        ref = paper.CONFLICT.get(arm, {})
        pre, final = g[g.phase == "pre"], g[g.phase == "final"]
        both = _per_case(
            pre,
            lambda r: all_valid(r["introspection"], (r["question_meta"] or {}).get("candidates")),
        )
        rows.append(
            {
                "arm": arm,
                "flagged before (ours)": _pct(pre.get("flagged.correct", pd.Series(dtype=bool))),
                "flagged before (paper)": _ref(ref.get("flagged_pre")),
                "store contested": _pct(pre.get("flagged.store_contested", pd.Series(dtype=bool))),
                "store contested (paper)": _ref(ref.get("contested_pre")),
                "both reports valid": _share(both),
                "both reports valid (paper)": _ref(ref.get("both_valid_pre")),
                "pre matches eventual gold": _pct(
                    pre.get("flagged.matches_final_gold", pd.Series(dtype=bool))
                ),
                "pre matches eventual gold (paper)": _ref(ref.get("pre_matches_gold")),
                "settled after (ours)": _pct(final.get("settled.correct", pd.Series(dtype=bool))),
                "settled after (paper)": _ref(ref.get("accuracy_post")),
            }
        )
    table = pd.DataFrame(rows).set_index("arm")
    return (
        header("§4.2.3: contest and resolve", df, RATE_CELLS)
        + "\n"
        + markdown_table(table, disable_numparse=True)
        + "\n\nBefore the settling check: flagged = the answer names both candidates; store "
        "contested = the commit arm's cell is contested; both reports valid = a current fact of "
        "the peer's store places the object at each candidate, its text naming both (Graphiti: "
        "an edge with neither invalid_at nor expired_at; Mem0: a memory still stored); pre "
        "matches eventual gold = the answer names only the location the check will confirm. "
        "After it: settled = the confirmed location alone."
        + _note(list(table.index), paper.CONFLICT)
        + commit_routing(q, ["arm"])
    )


def all_valid(introspection: Any, candidates: Any) -> Any:
    """Both reports of a conflict case are valid facts of the store (None without a list)."""
    if not isinstance(introspection, dict) or not candidates:
        return None
    return all(store_names(introspection, c, valid_only=True) for c in candidates)


def table6_single(df: pd.DataFrame, runs: Path, out: Path) -> str:
    rows = []
    for _, r in df.sort_values("arm").iterrows():
        rows.append(
            {
                "arm": r["arm"],
                "ours": cell(
                    r["location.acc"], r["location.lo"], r["location.hi"], int(r["location.n"])
                ),
                "paper": paper.TABLE6_SINGLE_ACCURACY.get(r["arm"], "–"),
                "chars": round(r["mean_chars"]),
            }
        )
    table = pd.DataFrame(rows).set_index("arm")
    return (
        header("§4.2.1: a single revision in two-step phrasing", df)
        + "\n"
        + markdown_table(table)
        + commit_routing(questions_of(runs, "table6_single", df), ["arm"], "location")
    )


TABLES = [
    Table("table6", 10, table6, figure=plot_table6, cells=verdicts.table6_cells),
    Table("table6_single", 20, table6_single, cells=verdicts.table6_single_cells),
    Table("table8", 60, table8, cells=verdicts.table8_cells),
    Table("conflict", 70, conflict, cells=verdicts.conflict_cells),
]
