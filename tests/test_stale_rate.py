"""FactConsolidation's stale rate (B.4) as a scorer, and rates in the run summary."""

from __future__ import annotations

import asyncio

import pytest

from benchmarks.factconsolidation import FactConsolidation
from benchmarks.factconsolidation.scoring import StaleRate
from benchmarks.runner.pipeline import summarize

META = {"stale_scoreable": True, "superseded": ["Rome"]}


@pytest.mark.parametrize(
    ("prediction", "stale"),
    [
        ("Rome", True),
        ("Answer: Rome\nsomething else", True),
        ("Watertown", False),  # correct
        ("It was Rome, now Watertown", False),  # correct by the substring rule, so not stale
        ("Paris", False),  # wrong, but not a superseded value
    ],
)
def test_stale_is_wrong_and_naming_a_superseded_value(prediction: str, stale: bool) -> None:
    record = {"prediction": prediction, "golds": ["Watertown"], "meta": META}
    assert asyncio.run(StaleRate().score(record)) == {"stale": stale}


def test_questions_outside_the_denominator_get_no_score() -> None:
    record = {"prediction": "Rome", "golds": ["x"], "meta": {"stale_scoreable": False}}
    assert asyncio.run(StaleRate().score(record)) == {}


def test_the_denominator_on_real_data_and_the_summary_rate() -> None:
    (episode,) = FactConsolidation("sh_6k").episodes()
    scorer = StaleRate()
    rows = []
    for q in episode.questions:
        old = (q.meta.get("superseded") or ["none"])[0]
        record = {"prediction": old, "golds": list(q.golds), "meta": q.meta}
        rows.append({"id": q.id, "stale": asyncio.run(scorer.score(record))})
    scored = [r for r in rows if r["stale"]]
    assert len(scored) == 74  # the stale denominator at sh_6k (docs/factconsolidation.md)
    predictions = [
        {"id": r["id"], "context_chars": 0, "context_tokens": 0, "context_tokens_exact": True}
        for r in rows
    ]
    rate = summarize(predictions, rows, len(rows))["rates"]["stale.stale"]
    assert rate["n"] == 74 and rate["count"] == 74  # answering every old value: all stale
