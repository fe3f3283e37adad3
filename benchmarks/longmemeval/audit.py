"""How far to trust a LongMemEval judge: planted answers it must accept or reject.

On a seeded sample of a run's questions (all of them when there are at most `SAMPLE`), the
run's judge, with the official prompt and call, also sees two planted answers per question:
the question's own gold (it should accept it) and the gold of another question of the same
type (it should reject it; any other question's when the type has one question only). The
run records the false-accept and false-reject rates with 95% Wilson intervals
(summary.json's ``judge_audit``, each planted case in judge_audit.jsonl). The planted answers
depend on the questions only, so two runs on one question set audit the same cases.

A superseded value would be a third planted answer; LongMemEval marks none (B.1's values are
judged themselves), so it is left out. `kappa` gives two judges' agreement on one set of
predictions; `judge_agreement` says it for a table: the judge against the hand verdicts, and every
two judges that scored the same answers. Runs exported before the audit get it from
`audit_runs`.
"""

from __future__ import annotations

import hashlib
import itertools
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from benchmarks import stats
from benchmarks.longmemeval.judge import _judge_id, official_verdict

__all__ = ["SAMPLE", "SEED", "Plant", "judge_agreement", "judge_audit", "kappa", "plants", "rates"]

SAMPLE = 50  # questions audited per run at most
SEED = 0


@dataclass(frozen=True, slots=True)
class Plant:
    """One planted answer: the record the judge sees and whether it should accept it."""

    question_id: str
    kind: str  # "gold": the question's own gold; "other": another question's
    should_accept: bool
    record: Mapping[str, Any]


def _gold(record: Mapping[str, Any]) -> str:
    return str((record.get("golds") or [""])[0])


def plants(records: Sequence[Mapping[str, Any]], seed: int = SEED) -> list[Plant]:
    """The planted answers for a run's prediction records: pure and seeded, so the same
    questions give the same cases whatever the arm."""
    by_id = {str(r["id"]): r for r in records if r.get("golds")}
    ids = sorted(by_id)
    rng = random.Random(seed)
    sample = sorted(rng.sample(ids, SAMPLE)) if len(ids) > SAMPLE else ids
    out = []
    for qid in sample:
        record = by_id[qid]
        kind = (record.get("meta") or {}).get("question_type")
        gold = _gold(record)
        same = [i for i in ids if i != qid and _gold(by_id[i]) != gold]
        typed = [i for i in same if (by_id[i].get("meta") or {}).get("question_type") == kind]
        base = {"id": qid, "question": record["question"], "golds": record["golds"]}
        base["meta"] = record.get("meta") or {}
        out.append(Plant(qid, "gold", True, {**base, "prediction": gold}))
        if typed or same:
            other = _gold(by_id[rng.choice(typed or same)])
            out.append(Plant(qid, "other", False, {**base, "prediction": other}))
    return out


def rates(verdicts: Sequence[tuple[Plant, bool]]) -> dict[str, Any]:
    """False-accept and false-reject rates with 95% Wilson intervals (None when nothing of
    that kind was planted)."""

    def rate(errors: int, n: int) -> dict[str, Any] | None:
        if n == 0:
            return None
        low, high = stats.binomial_ci(errors, n)
        return {"errors": errors, "n": n, "rate": errors / n, "ci95": [low, high]}

    bad = [accepted for plant, accepted in verdicts if not plant.should_accept]
    good = [accepted for plant, accepted in verdicts if plant.should_accept]
    return {
        "false_accept": rate(sum(bad), len(bad)),
        "false_reject": rate(sum(not a for a in good), len(good)),
    }


async def judge_audit(
    records: Sequence[Mapping[str, Any]], judge: Any, seed: int = SEED
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(summary.json's ``judge_audit``, the cases for judge_audit.jsonl): the run's judge on
    its planted answers (calls through the response cache, like every judge call)."""
    verdicts = []
    cases = []
    for plant in plants(records, seed):
        accepted, reply, template = await official_verdict(plant.record, judge)
        verdicts.append((plant, accepted))
        cases.append(
            {
                "id": plant.question_id,
                "kind": plant.kind,
                "should_accept": plant.should_accept,
                "accepted": accepted,
                "answer": plant.record["prediction"],
                "reply": reply,
                "template": template,
            }
        )
    audited = sorted({p.question_id for p, _ in verdicts})
    summary = {
        "judge": _judge_id(judge),
        "questions": len(audited),
        # which questions: runs that share it share the audit (a table counts it once)
        "question_set": hashlib.sha256("\n".join(audited).encode()).hexdigest()[:12],
        "seed": seed,
        **rates(verdicts),
    }
    return summary, cases


def kappa(a: Sequence[bool], b: Sequence[bool]) -> float | None:
    """Cohen's kappa of two judges' verdicts on the same answers (None when undefined: no
    answers, or both judges always gave one verdict)."""
    if len(a) != len(b):
        raise ValueError(f"kappa needs paired verdicts, got {len(a)} and {len(b)}")
    n = len(a)
    if n == 0:
        return None
    observed = sum(x == y for x, y in zip(a, b, strict=True)) / n
    pa, pb = sum(a) / n, sum(b) / n
    expected = pa * pb + (1 - pa) * (1 - pb)
    return None if expected == 1 else (observed - expected) / (1 - expected)


def judge_agreement(q: pd.DataFrame) -> str:
    """Cohen's κ of the judge's verdicts with the hand verdicts (on the answers read by hand),
    and of each two judges that scored the same answers (the same file, question and words),
    with the questions they disagree on: sentences for a table's notes. `q`: per-answer rows
    with `judge` (who judged), `correct` (its verdict), `by_hand` (True, False or None),
    `file`, `id` and `key` (the answer's words)."""
    notes = []
    read = q[q["by_hand"].notna()]
    if len(read):
        judged, hand = list(read["correct"].astype(bool)), list(read["by_hand"].astype(bool))
        notes.append(
            f"Cohen's κ of the judge and the hand verdicts: {_k(kappa(judged, hand))} over "
            f"{len(read)} answers."
        )
    answer = ["file", "id", "key"]
    verdicts = {
        judge: g.drop_duplicates(answer).set_index(answer)["correct"].astype(bool)
        for judge, g in q.dropna(subset=["judge"]).groupby("judge")
    } if "judge" in q.columns else {}  # fmt: skip
    for a, b in itertools.combinations(sorted(verdicts), 2):
        shared = verdicts[a].index.intersection(verdicts[b].index)
        if not len(shared):
            continue
        va, vb = verdicts[a][shared], verdicts[b][shared]
        differ = sorted({i for (_, i, _), x, y in zip(shared, va, vb, strict=True) if x != y})
        notes.append(
            f"Two judges scored the same {len(shared)} answers (`{a}`, `{b}`): Cohen's κ "
            f"{_k(kappa(list(va), list(vb)))}; they disagree on {', '.join(differ) or 'none'}."
        )
    return " ".join(notes)


def _k(value: float | None) -> str:
    return "undefined (one verdict throughout)" if value is None else f"{value:.2f}"
