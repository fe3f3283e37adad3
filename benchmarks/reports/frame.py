"""What every table reads from run folders: one row per run, one row per question, ingest cost.

Every table builder has the contract ``builder(df, runs, out) -> markdown`` over the frame
`collect` returns and shares the header, cells and ingest records here; the builders import
this module and the registry (benchmarks/reports/tables.py) imports the builders, one way only.
Everything comes from runs/<experiment>/*/{manifest,summary}.json, the predictions and scores
beside them and the snapshots' ingest.json, so a table can be rebuilt without a model.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from math import nan as NAN
from pathlib import Path
from typing import Any

import pandas as pd

from benchmarks import stats
from benchmarks.reports.document import markdown_table
from benchmarks.results.loader import NoRuns, load_runs, load_summaries
from benchmarks.results.records import FAILURE_STAGES
from benchmarks.runner.currency import what_changed

# A table builder: the experiment's frame (`collect`), the runs root, the output root -> markdown.
Builder = Callable[[pd.DataFrame, Path, Path], str]

# What makes two runs one cell of a table: a run that matches another on all of these competes
# with it, and one of them is reported (`latest_per_config`).
CELL_KEYS = ("arm", "benchmark", "data", "source", "L", "d", "probe", "sessions", "writer")


def say(message: str) -> None:
    """What the table builder decided, on stderr (stdout is the table)."""
    print(f"tables: {message}", file=sys.stderr)


def collect(
    runs: Path,
    experiment: str,
    *,
    profile: str | None = None,
    include_scripted: bool = False,
) -> pd.DataFrame:
    """The runs one table is built from: one row per cell, all of one profile.

    Scripted dry runs never enter (unless `include_scripted`, for tests and labelled dry-run
    tables). When runs of several profiles (models, revisions) are present, one is kept
    (`profile` names it; otherwise the one filling the most cells) and the rest are named as set
    aside; within a cell the run with the most cases wins, so a 5-case check can never silently
    replace a 140-case table. Raises `NoRuns`."""
    df = load_summaries(runs, experiment, include_scripted=True)
    if not include_scripted and df["scripted"].any():
        dry = df[df["scripted"]]
        say(
            f"{experiment}: {len(dry)} scripted dry run(s) set aside (a scripted profile never "
            "enters a paper table)"
        )
        df = df[~df["scripted"]]
        if df.empty:
            raise NoRuns(f"no paper runs under {runs / experiment}: only scripted dry runs")
    df = current_runs(df, experiment)
    if profile is not None:
        chosen = df[(df["profile"] == profile) | (df["llm"] == profile)]
        if chosen.empty:
            known = "; ".join(sorted(df["profile"].unique()))
            raise NoRuns(f"no runs of profile {profile!r} under {runs / experiment} ({known})")
        df = chosen
    df = one_profile(df, experiment)
    return latest_per_config(df, experiment)


class StaleRuns(NoRuns):
    """Every run of a table shows what the code no longer does (`current_runs`)."""


def current_runs(df: pd.DataFrame, experiment: str) -> pd.DataFrame:
    """The runs whose data, prompts and arm are still the code's (`benchmarks.runner.currency`);
    each other run is named with what changed and left out of the table. Raises `StaleRuns`
    when none is left."""
    stale: dict[str, list[str]] = {}
    for run, folder in zip(df["run"], df["folder"], strict=True):
        if changed := what_changed(Path(folder)):
            stale[run] = changed
            say(f"{experiment}/{run} refused (the code changed since): {'; '.join(changed)}")
    if not stale:
        return df
    kept = df[~df["run"].isin(stale)]
    if kept.empty:
        raise StaleRuns(
            f"every run under {experiment} is refused, the code changed since: "
            + "; ".join(f"{run}: {', '.join(why)}" for run, why in stale.items())
        )
    return kept


def one_profile(df: pd.DataFrame, experiment: str) -> pd.DataFrame:
    """The runs of one profile: the one filling the most cells, then with the most cases, then
    the newest; the runs of every other profile are named as set aside."""
    groups = dict(iter(df.groupby("profile")))
    if len(groups) == 1:
        return df
    cells = [c for c in CELL_KEYS if c in df.columns]

    def rank(item: tuple[str, pd.DataFrame]) -> tuple[int, float, str]:
        g = item[1]
        return len(g.drop_duplicates(cells)), g["cases"].fillna(0).sum(), str(g["started_at"].max())

    ordered = sorted(groups.items(), key=rank, reverse=True)
    profile, kept = ordered[0]
    say(f"{experiment}: built from the {len(kept)} run(s) of profile {profile}")
    for other, g in ordered[1:]:
        say(
            f"{experiment}: set aside {len(g)} run(s) of profile {other} (a table is one "
            f"profile's: kept the one with more cells, then more cases, then newer; "
            f"--profile picks another): {', '.join(g['run'])}"
        )
    return kept


def latest_per_config(df: pd.DataFrame, experiment: str) -> pd.DataFrame:
    """One row per cell (arm, benchmark, writer, and the benchmark's parameters). When runs
    compete for a cell, the one with more cases wins (a 5-case check never replaces a 140-case
    run), then a complete one, then the newest (a config changed since: another scorer,
    prompt...); each run set aside is named with why. The writer model is part of the cell:
    the same arm with a write path of its own (Appendix D's 35B extractor) is a row of its own."""
    identity = [c for c in CELL_KEYS if c in df.columns]
    df = df.assign(_cases=df["cases"].fillna(0)).sort_values(["_cases", "complete", "started_at"])
    cell_of = pd.Series(
        ["|".join(map(str, row)) for row in df[identity].itertuples(index=False)], index=df.index
    )
    kept = df.drop_duplicates(identity, keep="last")
    winners = dict(zip(cell_of[kept.index], kept.index, strict=True))
    for index, old in df[df.duplicated(identity, keep="last")].iterrows():
        winner = df.loc[winners[cell_of[index]]]
        if winner["_cases"] > old["_cases"]:
            more, fewer = int(winner["_cases"]), int(old["_cases"])
            why = f"a run with more cases ({winner['run']}: {more} vs {fewer})"
        elif winner["complete"] and not old["complete"]:
            why = f"a complete run ({winner['run']})"
        else:
            why = f"a newer run of the same arm and benchmark ({winner['run']})"
        say(f"{experiment}/{old['run']} is superseded by {why}; not reported")
    return kept.drop(columns=["folder", "_cases"], errors="ignore").reset_index(drop=True)


def per_question(runs: Path, experiment: str, *, include_scripted: bool = True) -> pd.DataFrame:
    """One row per scored question of an experiment, for tables that join questions (Table 8
    joins each case's final question with its "-pre" question). Callers keep the runs `collect`
    chose (by run name), so scripted runs are loaded here and filtered there."""
    q = load_runs(runs, experiment, include_scripted=include_scripted)
    q["case"] = q["id"].str.removesuffix("-pre")
    q["phase"] = q["id"].map(lambda i: "pre" if i.endswith("-pre") else "final")
    q["gold"] = q["golds"].map(lambda g: g[0] if g else None)
    q["retained"] = q["context_meta"].map(lambda m: (m or {}).get("retained_values"))
    return q


def questions_of(runs: Path, experiment: str, df: pd.DataFrame) -> pd.DataFrame:
    """`per_question` restricted to the runs `collect` reported (`df`)."""
    q = per_question(runs, experiment)
    return q[q["run"].isin(df["run"])]


# -- header and cells ---------------------------------------------------------------------------


def cell(acc: float, lo: float, hi: float, n: int) -> str:
    return f"{acc:.1f} [{lo:.0f}–{hi:.0f}] (n={n})"


INTERVAL_CELLS = (
    "Cells: ours, accuracy % with a 95% Wilson interval [low–high], then / the paper's figure "
    "(Qwen3-4B-Instruct-2507, n=140) where it reports one."
)
RATE_CELLS = "Cells: ours in % (n); the paper's figure (Qwen3-4B-Instruct-2507, n=140) beside it."


def case_counts(df: pd.DataFrame) -> str:
    """ ", 20 cases per cell", or with the rows that differ named:
    ", 50 cases per cell (hipporag 30, long_context 20)"."""
    sized = df.dropna(subset=["cases"])
    if sized.empty:
        return ""
    usual = int(sized["cases"].mode().max())
    others = sized[sized["cases"] != usual].drop_duplicates("arm")
    note = ", ".join(
        f"{r['arm']} {int(r['cases'])}" for _, r in others.sort_values("arm").iterrows()
    )
    return f", {usual} cases per cell" + (f" ({note})" if note else "")


def header(title: str, df: pd.DataFrame, cells: str = INTERVAL_CELLS) -> str:
    """The table's title and what it was built from: the models, the profile (models and
    revisions), the case count, and whether these are scripted dry runs."""
    models = ", ".join(sorted({str(m) for m in df["llm"].dropna()}))
    embedders = ", ".join(sorted({str(m) for m in df["embedder"].dropna()})) or "none"
    incomplete = df[~df["complete"]]
    note = f"\n\n**Incomplete runs:** {', '.join(incomplete['run'])}" if len(incomplete) else ""
    built = ""
    if "profile" in df.columns:
        profiles = "; ".join(f"`{p}`" for p in sorted(df["profile"].dropna().unique()))
        built = f"\n\nBuilt from {len(df)} run(s) of profile {profiles}{case_counts(df)}."
        if df["scripted"].any():
            built += " **Scripted dry runs: not model results.**"
    return (
        f"# {title}\n\nOur runs: reader/writer `{models}`, embedder `{embedders}`. {cells}"
        f"{built}{judge_audit_line(df)}{note}\n"
    )


#: a judge whose false-accept interval reaches above this is flagged in its table's caption
FALSE_ACCEPT_BOUND = 0.10


def judge_audit_line(df: pd.DataFrame) -> str:
    """What the judge's planted-answer audit says, for a table of judged runs ("" for tables no
    judge scored): each judge's false-accept and false-reject rates with their intervals, and
    a warning when the false-accept interval reaches above `FALSE_ACCEPT_BOUND`."""
    if "profile" not in df.columns or not df["profile"].astype(str).str.contains(", judge ").any():
        return ""
    audits: dict[str, dict[str, dict[str, Any]]] = {}  # judge -> question set -> audit
    for audit in df.get("judge_audit", pd.Series(dtype=object)).dropna():
        sets = audits.setdefault(audit["judge"], {})
        sets.setdefault(audit.get("question_set") or str(audit["questions"]), audit)
    if not audits:
        return (
            "\n\n**Judge audit:** not recorded for these runs (they predate it; a rerun, or "
            "`run.rescore=true`, records the judge's verdicts on planted answers)."
        )

    def pooled(sets: list[dict[str, Any]], kind: str) -> dict[str, Any] | None:
        errors = sum(a[kind]["errors"] for a in sets if a.get(kind))
        n = sum(a[kind]["n"] for a in sets if a.get(kind))
        return {"errors": errors, "n": n, "ci95": stats.binomial_ci(errors, n)} if n else None

    def rate(r: dict[str, Any] | None) -> str:
        if not r:
            return "none planted"
        low, high = r["ci95"]
        share = 100 * r["errors"] / r["n"]
        return f"{r['errors']} of {r['n']} ({share:.0f}% [{100 * low:.0f}–{100 * high:.0f}])"

    lines = []
    for judge, by_set in sorted(audits.items()):
        sets = list(by_set.values())
        accept = pooled(sets, "false_accept")
        questions = sum(a["questions"] for a in sets)
        line = (
            f"\n\n**Judge audit** (`{judge}`, {questions} questions, planted answers): false "
            f"accepts {rate(accept)}, false rejects {rate(pooled(sets, 'false_reject'))}."
        )
        if accept and accept["ci95"][1] > FALSE_ACCEPT_BOUND:
            line += (
                f" **This judge may accept wrong answers** (its false-accept interval reaches "
                f"above {100 * FALSE_ACCEPT_BOUND:.0f}%): read its verdicts with care."
            )
        lines.append(line)
    return "".join(lines)


# -- where the wrong answers were lost (summary.json's failure_stages) ---------------------------


def stage_section(df: pd.DataFrame) -> str:
    """A table's detail section of wrong answers by the stage that lost them, a row per run
    (its arm and the cell keys that vary in the table); "" when no run counted them."""
    if "stage.wrong" not in df.columns or df["stage.wrong"].isna().all():
        return ""
    counted = df[df["stage.wrong"].notna()]
    keys = ["arm"] + [
        c for c in CELL_KEYS[1:] if c in counted.columns and counted[c].nunique(dropna=True) > 1
    ]
    stages = [f"stage.{s}" for s in FAILURE_STAGES]
    rows = counted.reindex(columns=[*keys, "n", "stage.wrong", *stages]).fillna(
        {c: 0 for c in stages}
    )
    rows = rows.sort_values(keys, kind="stable").astype({c: int for c in ["stage.wrong", *stages]})
    rows.columns = [*keys, "answered", "wrong", *FAILURE_STAGES]
    return (
        "\n\n## Where the wrong answers were lost\n\nEach run's wrong answers by the first stage "
        "that lost them (docs/failure_stages.md defines each for this benchmark); `pmem-results "
        "show <run folder> --stage <stage>` lists the cases.\n\n"
        + markdown_table(rows, index=False)
    )


# -- ingest cost (snapshots/*/ingest.json) -----------------------------------------------------


def ingest_cost(run: Path) -> dict[str, Any] | None:
    """What building a run's memory cost (its snapshots' ingest.json), summed."""
    files = sorted(run.glob("snapshots/*/ingest.json"))
    if not files:
        return None
    total = {"calls": 0, "cached": 0, "tokens": 0, "wall_s": 0.0}
    for f in files:
        data = json.loads(f.read_text())
        total["wall_s"] += data["wall_s"]
        for u in data["usage"].values():
            total["calls"] += u["calls"]
            total["cached"] += u["cache_hits"]
            total["tokens"] += u["prompt_tokens"] + u["completion_tokens"]
    return total


def format_cost(c: dict[str, Any]) -> str:
    return f"{c['calls']:,} ({c['cached']:,}) calls, {c['tokens']:,} tok, {c['wall_s']:,.0f} s"


def history_costs(run: Path) -> pd.DataFrame:
    """Per history (episode snapshot): writer and embedder calls and tokens, wall time, and
    the snapshot's sizes, from snapshots/*/ingest.json and the files beside it."""
    rows = []
    for ingest in sorted(run.glob("snapshots/*/ingest.json")):
        data = json.loads(ingest.read_text())
        usage = data.get("usage", {})
        writer, embedder = usage.get("writer", {}), usage.get("embedder", {})
        folder = ingest.parent
        # the store's files; an export carries none (NaN: unknown, not an empty store)
        stores = [f.stat().st_size for f in folder.iterdir() if f.name.startswith("store.sqlite")]
        meta = folder / "state.json"
        index = folder / "cells.npy"
        store = sum(stores) + (meta.stat().st_size if meta.exists() else 0) if stores else NAN
        rows.append(
            {
                "snapshot": folder.name,
                "writer_calls": writer.get("calls", 0) + writer.get("cache_hits", 0),
                "writer_cached": writer.get("cache_hits", 0),
                "write_tokens": writer.get("prompt_tokens", 0) + writer.get("completion_tokens", 0),
                "embed_calls": embedder.get("calls", 0) + embedder.get("cache_hits", 0),
                "embed_cached": embedder.get("cache_hits", 0),
                "embed_tokens": embedder.get("prompt_tokens", 0),
                "wall_s": data.get("wall_s", 0.0),
                "store_bytes": store,
                "index_bytes": index.stat().st_size if index.exists() else (0 if stores else NAN),
            }
        )
    return pd.DataFrame(rows)
