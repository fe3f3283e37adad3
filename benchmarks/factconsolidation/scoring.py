"""FactConsolidation's stale rate (Appendix B.4), by MemoryAgentBench's substring rule."""

from __future__ import annotations

from typing import Any

from benchmarks.scoring.rules import memoryagentbench_score

__all__ = ["StaleRate"]


class StaleRate:
    """FactConsolidation's stale rate (Appendix B.4): over stale-scoreable single-hop questions,
    a prediction is stale when it is wrong by the substring rule and names a superseded value
    of the question's key (both judged like the accuracy: raw output or parsed `Answer:` line).
    Questions outside the denominator get no score."""

    name = "stale"
    needs: tuple[str, ...] = ()

    async def score(self, record: dict[str, Any], models: Any = None) -> dict[str, Any]:
        meta = record.get("meta") or {}
        if not meta.get("stale_scoreable"):
            return {}
        prediction = record["prediction"]
        wrong = not memoryagentbench_score(prediction, list(record["golds"]))[
            "substring_exact_match"
        ]
        superseded = list(meta.get("superseded") or [])
        names_old = bool(superseded) and bool(
            memoryagentbench_score(prediction, superseded)["substring_exact_match"]
        )
        return {"stale": wrong and names_old}
