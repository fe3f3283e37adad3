"""ALFWorld-Revision's scorers (Appendix B.2's location match, §4.2.3's conflict flag)."""

from __future__ import annotations

from typing import Any

from benchmarks.alfworld_revision.cases import verifier_accepts

__all__ = ["ConflictFlagged", "LocationMatch", "names_location"]


def names_location(answer: str, location: str) -> bool:
    """Whether `answer` names `location` as a whole name: case and spacing ignored, and
    "cabinet 1" is not named by "cabinet 10" (the generator's `verifier_accepts`)."""
    return verifier_accepts(answer, location)


class LocationMatch:
    """ALFWorld-Revision accuracy (Appendix B.2: normalized string match against the gold
    location), by whole-name match.

    `correct`: the answer names the gold and no other known location (naming the gold beside a
    stale one is a hedge, not an answer). `stale`: it names a location the target held other
    than the gold (an intermediate hop; in the retraction probe, v2 - Table 8's "wrong").
    `distractor`: it names a location only the distractor chains visit. `outcome` is the one
    exclusive label (correct, hedged, stale, distractor, other). `phases` restricts the scorer
    to questions of those phases (final, pre_retraction); the conflict probe's pre-resolution
    questions are never scored here (see `ConflictFlagged`)."""

    name = "location"
    needs: tuple[str, ...] = ()

    def __init__(self, phases: list[str] | tuple[str, ...] | None = None) -> None:
        self.phases = tuple(phases) if phases else None

    async def score(self, record: dict[str, Any], models: Any = None) -> dict[str, Any]:
        meta = record.get("meta") or {}
        if meta.get("expect") == "conflict":
            return {}
        if self.phases is not None and meta.get("phase", "final") not in self.phases:
            return {}
        answer, golds = record["prediction"], list(record["golds"])
        held = meta.get("target_locations") or meta.get("intermediate_locations") or []
        gold = any(names_location(answer, g) for g in golds)
        stale = any(names_location(answer, loc) for loc in held if loc not in golds)
        distractor = any(
            names_location(answer, loc)
            for loc in meta.get("distractor_locations") or []
            if loc not in golds
        )
        correct = gold and not stale and not distractor
        if correct:
            outcome = "correct"
        elif gold:
            outcome = "hedged"
        else:
            outcome = "stale" if stale else "distractor" if distractor else "other"
        return {"correct": correct, "stale": stale, "distractor": distractor, "outcome": outcome}


class ConflictFlagged:
    """§4.2.3's pre-resolution behaviour: before the settling check, the desired answer
    surfaces the conflict instead of picking a side.

    Judged on the *answer*: `correct` when it names both candidate locations. (The paper's raw
    store "notices" the conflict in 96.4% of cases while both reports are in its top-10 nearly
    always, so noticing is something the reader says, not something the context holds.) The
    store's own view is reported beside it: `store_contested` is whether a commit arm's cell
    was contested when read (from the record's `context_meta`; None for arms without cells).
    `one_sided` names one candidate only; `matches_final_gold` names only the one the check
    will later confirm (a coin flip for last-write-wins). Other questions are not scored."""

    name = "conflict_flagged"
    needs: tuple[str, ...] = ()

    async def score(self, record: dict[str, Any], models: Any = None) -> dict[str, Any]:
        meta = record.get("meta") or {}
        if meta.get("expect") != "conflict":
            return {}
        answer = record["prediction"]
        candidates = list(meta.get("candidates") or record["golds"])
        named = [c for c in candidates if names_location(answer, c)]
        status = (record.get("context_meta") or {}).get("cell_status")
        return {
            "correct": len(candidates) >= 2 and len(named) == len(candidates),
            "one_sided": len(named) == 1,
            "matches_final_gold": named == [meta.get("gold_final")],
            "store_contested": None if status is None else status == "contested",
        }
