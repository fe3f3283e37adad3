"""Every arm on the shipped real LongMemEval instances (experiment longmemeval_local, the local
profile): on the first one (e47becba) the official judge's verdict, what the arm read and what
its write path cost; then every arm over every shipped file, with n and the question types;
then, per question, each distinct answer with the judge's verdict, the verdict read by hand
(benchmarks/scoring/hand_verdicts.py) and the arms that gave it.

With n ≤ 9 per arm this is a per-instance record, not an accuracy estimate; the answers section
lets a reader check every verdict of the 1.5B local judge against the gold without a run folder.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pandas as pd

from benchmarks.longmemeval.audit import judge_agreement
from benchmarks.longmemeval.loader import DATA_FILE
from benchmarks.longmemeval.schema import is_abstention
from benchmarks.longmemeval.stats import OFFICIAL_TYPES
from benchmarks.reports.document import markdown_table
from benchmarks.reports.frame import header, history_costs, questions_of
from benchmarks.reports.names import display_name
from benchmarks.results.loader import read_records
from benchmarks.scoring import hand_verdicts

REAL_INSTANCE = "e47becba"  # the first shipped instance (benchmarks/data/longmemeval)
_VERDICTS_FILE = hand_verdicts.LONGMEMEVAL_LOCAL.relative_to(hand_verdicts.ROOT).as_posix()


def _arm_label(arm: str, sessions: Any) -> str:
    """The arm's row name (its display name); a run over the first N sessions of each haystack
    is a row of its own."""
    name = display_name(arm)
    return name if pd.isna(sessions) else f"{name} ({int(sessions)} sessions)"


def _judged(g: pd.DataFrame) -> str:
    """The judge's correct count over `g`, "k/n" (a dash for none)."""
    return f"{int(g['correct'].sum())}/{len(g)}" if len(g) else "–"


def _read(g: pd.DataFrame) -> str:
    """The hand verdicts' correct count over `g`, "k/n", with the answers nobody has read yet
    named: "k/n (m unread)" counts only what was read as correct."""
    unread = int(g["by_hand"].isna().sum())
    credited = int((g["by_hand"] == True).sum())  # noqa: E712 (an object column: None is unread)
    return f"{credited}/{len(g)}" + (f" ({unread} unread)" if unread else "")


def _calls(costs: pd.DataFrame, calls: str, cached: str, tokens: str) -> str:
    """A role's ingest calls (paid and cached) and tokens over a run's histories."""
    if costs.empty:  # no ingest record (nothing was ingested)
        return "–"
    total, hits = int(costs[calls].sum()), int(costs[cached].sum())
    if not total:
        return "–"
    used = costs[tokens].sum()
    return f"{total - hits} paid, {hits} cached" + (f", {used / 1000:,.1f}k tok" if used else "")


def longmemeval_local(df: pd.DataFrame, runs: Path, out: Path) -> str:
    """Every arm on the first shipped real instance (the runs of that one question): the
    verdict of the official judge, what the arm read, and what its write path cost; then every
    arm over every shipped file (`every_instance`). n=1 per arm in the first table: a plumbing
    record of each arm on a real 53-session haystack, not an accuracy estimate. The two
    sections over every file share one read of the runs' question records."""
    verdicts = hand_verdicts.load()
    q = questions_of(runs, "longmemeval_local", df)
    if q.empty:
        return first_instance(df, runs, verdicts)
    q = with_labels(q, df, verdicts)
    q = q.assign(judge=q["run"].map(df.set_index("run")["profile"].map(judge_of)))
    return first_instance(df, runs, verdicts) + every_instance(q) + answers(q)


def judge_of(profile: Any) -> str | None:
    """The judge a run's profile names (`…, judge <model>@<revision>`), or None."""
    found = re.search(r", judge (.+)$", profile) if isinstance(profile, str) else None
    return found.group(1) if found else None


def first_instance(
    df: pd.DataFrame, runs: Path, verdicts: dict[hand_verdicts.Key, hand_verdicts.Verdict]
) -> str:
    rows = {}
    for _, r in df.sort_values("mean_tokens").iterrows():
        folder = runs / "longmemeval_local" / r["run"]
        predictions = read_records(folder, "predictions")
        if [x["id"] for x in predictions] != [REAL_INSTANCE]:
            continue  # a run over several questions: its costs are not this instance's
        p, sc = predictions[0], read_records(folder, "scores")[0]
        meta = p.get("context_meta") or {}
        costs = history_costs(folder)
        routed = meta.get("pruned_read")
        file = r["data"] if isinstance(r.get("data"), str) else DATA_FILE.name
        read = verdicts.get((file, REAL_INSTANCE, hand_verdicts.answer_key(p["prediction"])))
        rows[_arm_label(r["arm"], r.get("sessions"))] = {
            "haystack": (p.get("meta") or {}).get("haystack_sessions", "–"),
            "judge": "correct" if (sc.get("judge") or {}).get("correct") else "wrong",
            "by hand": _hand(None if read is None else read.correct),
            "answer": hand_verdicts.flat(p["prediction"])[:60],
            "read tokens": f"{p['context_tokens']:,}",
            "read chars": f"{p['context_chars']:,}",
            "items": p.get("context_items"),
            "facts/cell": f"{meta['facts_per_cell']:.2f}" if "facts_per_cell" in meta else "–",
            "pruned": "–"
            if routed is None
            else (f"{meta.get('pruned', 0)}" if routed else "gated off"),
            "write path (chat)": _calls(costs, "writer_calls", "writer_cached", "write_tokens"),
            "embedder": _calls(costs, "embed_calls", "embed_cached", "embed_tokens"),
            "ingest wall": f"{costs['wall_s'].sum():,.0f} s" if len(costs) else "–",
        }
    table = pd.DataFrame.from_dict(rows, orient="index")
    table.index.name = "arm"
    question = p["question"] if rows else ""
    stored = (sc.get("class") or {}).get("class") if rows else None
    cells = (
        f'One real LongMemEval-S instance ({REAL_INSTANCE}: "{question}"), the local profile '
        "(reader and judge: Qwen2.5-Coder-1.5B Q4_K_M in a 16k window; embedder: "
        "multilingual-e5-small). By hand: the answer's verdict read against the gold (below). "
        "Read tokens by the reader's tokenizer; ingest counts are this "
        "run's own (a write path cached by an earlier run shows as cached calls). Pruned: turns "
        "the provenance prune dropped, or 'gated off' where the gate sent the question to the "
        f"plain read; the stored B.1 class the class-oracle gate reads: {stored}."
    )
    title = "LongMemEval: every arm on the shipped instances"
    return header(title, df, cells) + "\n" + markdown_table(table)


def with_labels(
    q: pd.DataFrame, df: pd.DataFrame, verdicts: dict[hand_verdicts.Key, hand_verdicts.Verdict]
) -> pd.DataFrame:
    """Per-question rows with the row label (`arm`), the data file's name, the official question
    type, whether it is an abstention question, the judge's verdict and the hand verdict on the
    same answer (`by_hand`: True, False, or None where nobody has read it) and its reason
    (`why`)."""
    by_run = df.set_index("run")
    labels = {run: _arm_label(r["arm"], r.get("sessions")) for run, r in by_run.iterrows()}
    q = q.assign(
        arm=q["run"].map(labels),
        # the data file's name; none named (NaN in a frame mixing files): the shipped default
        file=q["run"].map(
            by_run["data"].map(lambda d: d if isinstance(d, str) else DATA_FILE.name)
        ),
        type=q["question_meta"].map(lambda m: (m or {}).get("question_type")),
        abstention=q["id"].map(is_abstention),
        correct=q["judge.correct"].fillna(False).astype(bool),
        key=q["prediction"].map(hand_verdicts.answer_key),
        cut=q["calls"].map(_cut),
    )
    read = [verdicts.get((f, i, k)) for f, i, k in zip(q["file"], q["id"], q["key"], strict=True)]
    return q.assign(
        by_hand=[None if v is None else v.correct for v in read],
        why=[None if v is None else v.reason for v in read],
    )


def every_instance(q: pd.DataFrame) -> str:
    """Per arm, over every shipped file it ran on (whole haystacks; a run over the first N
    sessions is a row of its own): how many instances, how many the official judge marked
    correct, and the same per question type and for the abstention questions (counted in their
    type too, as the official script counts them), with the files each row covers. Judged
    counts, not estimates: n ≤ 9. `q`: the runs' questions, `with_labels`."""
    types = [t for t in OFFICIAL_TYPES if t in set(q["type"])]
    rows = {}
    for arm, g in q.groupby("arm"):
        row: dict[str, Any] = {"n": len(g), "correct": _judged(g), "by hand": _read(g)}
        for t in types:
            row[t] = _judged(g[g["type"] == t])
        row["abstention"] = _judged(g[g["abstention"]])
        row["files"] = ", ".join(sorted(set(g["file"])))
        rows[arm] = row
    # most instances first; ties keep groupby's order (by arm name), so adding a run moves
    # only its own row and a diff of the committed table stays readable
    table = pd.DataFrame.from_dict(rows, orient="index").sort_values(
        "n", ascending=False, kind="stable"
    )
    table.index.name = "arm"
    counts = q.drop_duplicates(["file", "id"]).groupby("type").size()
    asked = ", ".join(f"{t} {counts[t]}" for t in types)
    return (
        "\n\n## Every arm on every shipped instance\n\nThe official judge's verdicts per arm "
        f"over the shipped files it ran on (benchmarks/data/longmemeval/SOURCES.md); {asked} "
        "instance(s) in all. n is per row: an arm not yet run on a file has a smaller n. Judged "
        "counts on real instances, not estimates of LongMemEval's figures; the per-type and "
        "abstention columns are the judge's. By hand: the same "
        f"answers read against the gold one by one ({_VERDICTS_FILE}, each verdict with its "
        "reason; the next section gives each answer both verdicts).\n\n"
        + markdown_table(table, disable_numparse=True)
    )


ANSWER_CHARS = 200  # room for a refusal followed by advice, or a derivation and its result
ANSWER_TAIL = 80  # a long answer's last characters: where a worked answer states its result


def _cell(text: Any, limit: int, tail: int = 0) -> str:
    """One line of markdown-safe text: whitespace collapsed, pipes escaped. Text longer than
    `limit` keeps its beginning and, when `tail` is set, its last `tail` characters, an
    ellipsis between ("3 years old" ends a worked answer)."""
    flat = hand_verdicts.flat(text)
    if len(flat) > limit:
        end = flat[len(flat) - tail :] if tail else ""
        end = end[end.find(" ") + 1 :] if " " in end else end  # from a word's start
        head = flat[: limit - len(end) - (3 if end else 2)].rstrip()
        flat = f"{head} … {end}" if end else f"{head} …"
    return flat.replace("|", "\\|")


def _cut(calls: Any) -> bool:
    """Whether the reader's reply stopped at its token limit (`finish_reason` "length"): a
    worked answer cut there may never reach its result, which a verdict should know."""
    if not isinstance(calls, list):
        return False
    return any(c.get("role") == "reader" and c.get("finish_reason") == "length" for c in calls)


CUT_MARK = "[cut at the reply limit]"


def _hand(verdict: bool | None) -> str:
    return "unread" if pd.isna(verdict) else ("correct" if verdict else "wrong")


def agreement(q: pd.DataFrame) -> str:
    """Over every verdict in `q`, how many answers the hand reading credits, how many of the
    judge's credits it reads as wrong and of its misses as right, how many answers nobody has
    read, and the judges' agreement (`audit.judge_agreement`)."""
    read = q[q["by_hand"].notna()]
    right = read["by_hand"].astype(bool)
    false_credits = int((read["correct"] & ~right).sum())
    false_misses = int((~read["correct"] & right).sum())
    unread = len(q) - len(read)
    cut = int(q["cut"].sum())
    return (
        f"Of {len(q)} verdicts, the judge credits {int(q['correct'].sum())}; read by hand, "
        f"{int(right.sum())} of {len(read)} are correct: {false_credits} of the judge's credits "
        f"are wrong answers and {false_misses} of its misses are right"
        + (f"; {unread} answer(s) not read yet." if unread else ".")
        + (
            f" {cut} of the {len(q)} replies stopped at the reader's token limit (marked "
            f"{CUT_MARK})."
            if cut
            else ""
        )
        + f" {judge_agreement(q)}".rstrip()
    )


def answers(q: pd.DataFrame) -> str:
    """Per shipped question and file: the gold, then each distinct answer (whitespace
    collapsed; a long one as its beginning and its last ANSWER_TAIL characters) with the
    official judge's verdict, the verdict read by hand with its reason, and the arms that gave
    it. Every verdict in the table above is one arm in one of these rows, so a reader can check
    the 1.5B judge against the gold here; an answer the judge scored both ways shows twice.
    `q`: the runs' questions, `with_labels`."""
    q = q.assign(
        answer=lambda f: [
            _cell(a, ANSWER_CHARS, ANSWER_TAIL) + (f" {CUT_MARK}" if cut else "")
            for a, cut in zip(f["prediction"], f["cut"], strict=True)
        ],
        verdict=lambda f: f["correct"].map({True: "correct", False: "wrong"}),
    )
    rows = []
    for (file, qid), g in q.groupby(["file", "id"], sort=True):
        # by the shown answer, then the whole one's key: two answers cut to one cell stay two
        for (verdict, answer, _), h in g.groupby(["verdict", "answer", "key"], sort=True):
            first = h.iloc[0]
            rows.append(
                {
                    "file": file,
                    "question": f"{qid} ({g['type'].iloc[0]})",
                    "gold": _cell(g["gold"].iloc[0], 60),
                    "judge": verdict,
                    "by hand": _hand(first["by_hand"]),
                    "why (by hand)": "–" if pd.isna(first["why"]) else _cell(first["why"], 120),
                    "answer": answer,
                    "arms": "; ".join(sorted({display_name(a) for a in h["arm"]})),
                }
            )
    table = pd.DataFrame(rows).set_index("file")
    return (
        "\n\n## What each arm answered\n\nPer shipped question, each distinct answer (whitespace "
        f"collapsed; one longer than {ANSWER_CHARS} characters as its beginning … its last "
        f"{ANSWER_TAIL}) with the official judge's verdict, the verdict read by hand against the "
        f"gold and why ({_VERDICTS_FILE}, keyed by the whole answer), and the arms that gave it; "
        "the gold is cut at 60 characters. The judge is a model too (the profile's, above). "
        + agreement(q)
        + "\n\n"
        + markdown_table(table, disable_numparse=True)
    )
