"""The prune threshold's population from LongMemEval: pairs of each question's top-k dated
turns, knowledge-update turns the positives (the has_answer marks, else hand labels below)
(docs/calibration.md)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.calibration import thresholds as cal
from benchmarks.calibration.report import TOP_K, CalibrationInputError, TurnPairs
from benchmarks.longmemeval.episodes import flatten
from benchmarks.longmemeval.schema import KNOWLEDGE_UPDATE, Instance, SchemaError, parse_instance

DEFAULT_LME = ("benchmarks/data/longmemeval/longmemeval_s_single_e47becba.json",)

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


def turn_pairs(
    instances: Sequence[Instance],
    turn_vectors: Mapping[str, tuple[np.ndarray, np.ndarray]],
    skipped: Sequence[str] = (),
) -> TurnPairs:
    """Each instance's labelled turn pairs (`cal.turn_pairs` over its top-`TOP_K` turns)."""
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
    lines.append(
        f"  * no pair to decide (no two dates in the top-{TOP_K}): {', '.join(idle) or 'none'}; "
        f"records left out by the schema check: {len(skipped)}"
    )
    return TurnPairs(turns, lines, f"{len(instances) - len(idle)} LongMemEval instances")
