"""Appendix F's write-path audit rule (benchmarks/reports/write_audit.py)."""

from __future__ import annotations

from benchmarks.factconsolidation import KeyHistory
from benchmarks.reports.write_audit import audit_state
from tests.test_fact_arms import oracle_arm, sh6k  # noqa: F401 - fixtures


def gold(*keys: tuple[str, str, tuple[str, ...]]) -> dict:
    return {(s, r): KeyHistory((s, r), tuple(enumerate(values))) for s, r, values in keys}


def test_survival_and_stale_siblings_by_subject_words() -> None:
    state = gold(
        ("Lionel Messi", "sport", ("soccer", "tennis")),
        ("Acme Corp", "chairperson", ("Ann Lee", "Bob Ray")),
        ("Paris", "country", ("France",)),
    )
    cells = [
        ("lionel_messi_sport", "tennis"),  # current value survives
        ("messi_lionel_plays", "soccer"),  # ... and the displaced one lingers in a sibling
        ("acme_corp_chair", "Bob Ray"),  # survives, no sibling
        ("paris_nation", "Germany"),  # wrong: does not survive
    ]
    audit = audit_state(cells, state).to_dict()
    assert audit["keys"] == 3 and audit["cells"] == 4 and audit["overwritten"] == 2
    assert audit["survives_pct"] == round(100 * 2 / 3, 1)
    assert audit["stale_sibling_pct"] == 50.0  # Messi's, not Acme's
    # a cell holding both the current and an old value is not counted as stale
    both = audit_state([("acme_corp", "Ann Lee then Bob Ray")], state).to_dict()
    assert both["stale_sibling_pct"] == 0.0


def test_the_template_oracle_state_passes_the_audit(sh6k, oracle_arm) -> None:  # noqa: F811
    bench, _ = sh6k
    from benchmarks.factconsolidation import gold_state

    cells = [(c.key, c.value or "") for c in oracle_arm.memory.frontier()]
    audit = audit_state(cells, gold_state(bench.data.facts)).to_dict()
    assert audit["keys"] == audit["cells"] == 294
    assert audit["survives_pct"] == 100.0
    # oracle keys are "subject | relation": another relation of the same subject may share a
    # value by chance, which the word rule counts; it must stay rare
    assert audit["stale_sibling_pct"] < 5
