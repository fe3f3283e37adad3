"""Where an ALFWorld-Revision answer was lost (docs/failure_stages.md), from the object's chain.

The question's gold state is its object's chain (`target_event_ids`: the stale record and the
updates, in arrival order; `golds`: where it is now, or both reports before a conflict is
settled). The first stage that fails, in the order an answer passes them:

* write: the memory does not hold the gold as current: a cell arm's cell for the object holds
  another value (or is not contested when it should hold both reports), every event having
  reached that cell; a peer's introspected store has no valid fact naming the gold.
* route: a cell arm's events for the object did not all reach the cell the question reads (a
  fork or another object's cell), and the cell read does not hold the gold.
* retrieval: the memory holds it (a raw store keeps every event) but the read lacks an event
  the answer needs: the last update (the retraction probe: the record, the update and its
  correction; a conflict: both reports).
* stale: the read held it and the answer names a location the object held before.
* reader: the read held it and the answer is otherwise wrong (another location, a hedge, one
  side of an open conflict).

Labels (`target_event_ids`, the object) are read here after the run, as any audit reads them;
no arm sees them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from benchmarks.alfworld_revision.scoring import names_location
from benchmarks.runner.failures import Attempt


def verdict(attempt: Attempt) -> Mapping[str, Any] | None:
    """The scorer fields that judge this question: the conflict flag before a settling check,
    else the location outcome (Tables 6 and 8, the settled conflict)."""
    conflict = attempt.question_meta.get("expect") == "conflict"
    for fields in attempt.scores.values():
        if not isinstance(fields, Mapping) or fields.get("correct") is None:
            continue
        if ("one_sided" in fields) == conflict and ("outcome" in fields or conflict):
            return fields
    return None


def needed_events(meta: Mapping[str, Any]) -> list[str]:
    """The chain events a read must show for its answer to be recoverable."""
    chain = list(meta.get("target_event_ids") or [])
    phase = meta.get("phase", "final")
    if not chain:
        return []
    if meta.get("expect") == "conflict":
        return chain[:2]  # both reports, asked before the settling check
    if meta.get("probe") == "retraction":
        # final: the record, the mistaken update and its correction; before it: the update
        return chain if phase == "final" else chain[1:2]
    return chain[-1:]  # the update that states where it is now


def _names_all(text: str, places: Sequence[str]) -> bool:
    return bool(places) and all(names_location(text, p) for p in places)


def failure_stage(attempt: Attempt) -> tuple[str, str] | None:
    """None for a right (or unscored) answer, else (stage, why)."""
    fields = verdict(attempt)
    if fields is None or fields.get("correct"):
        return None
    meta, read = attempt.question_meta, attempt.read_meta
    conflict = meta.get("expect") == "conflict"
    golds = list(meta.get("candidates") or attempt.golds) if conflict else list(attempt.golds)
    shown = " or ".join(golds)

    if "cell_value" in read:  # a cell arm: what its cell for the object holds
        value = read.get("cell_value") or ""
        said = repr(value) if value else "nothing (empty)"
        held = (
            read.get("cell_status") == "contested" and _names_all(attempt.read_text or "", golds)
            if conflict
            else any(names_location(value, g) for g in golds)
        )
        if not held:
            routed = read.get("events_routed") or 0
            off_home = read.get("question_reached_cell") == 0 or (
                (read.get("events_reached_cell") or 0) < routed
            )
            if off_home:
                reached = f"{read.get('events_reached_cell')} of {routed}"
                return "route", f"{reached} events reached the cell read, which holds {said}"
            return "write", f"every event reached the cell, which holds {said}, not {shown}"
    elif isinstance(read.get("introspection"), Mapping):  # a peer: its own store, as it says
        facts = read["introspection"].get("facts") or []
        valid = [str(f.get("text", "")) for f in facts if f.get("valid", True)]
        lost = [g for g in golds if not any(names_location(text, g) for text in valid)]
        if lost:
            return "write", f"no valid fact of the store names {' or '.join(lost)}"
        if not _names_all(attempt.read_text or "", golds):
            return "retrieval", f"the store holds {shown}; the read does not name it all"
    else:  # a raw store keeps every event: did the read show the ones the answer needs?
        needed = needed_events(meta)
        if attempt.read_ids is None:
            return "unattributed", "the run kept no sample log of its reads"
        missing = [e for e in needed if e not in attempt.read_ids]
        if missing:
            return "retrieval", f"the read lacks {', '.join(missing)}"
    stale = fields["outcome"] == "stale" if "outcome" in fields else fields.get("stale")
    if stale:
        return "stale", f"the answer {attempt.prediction!r} names an earlier location"
    return "reader", f"the read held {shown}; the answer is {attempt.prediction!r}"
