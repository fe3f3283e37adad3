"""Appendix F's write-path audit rule (benchmarks/factconsolidation/write_audit.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd

from benchmarks.factconsolidation import KeyHistory
from benchmarks.factconsolidation.write_audit import audit_state, write
from benchmarks.reports.tables import check
from benchmarks.results import export_runs
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


def test_appendix_f_rebuilds_from_the_export(oracle_arm, tmp_path: Path) -> None:  # noqa: F811
    """The state arm's snapshot records its current cells (frontier.jsonl); the export keeps
    them and the meta, not the store: the audit built from results/runs is the one built from
    the run folder, byte for byte, and `--check` says so."""
    runs, export, results = tmp_path / "runs", tmp_path / "export", tmp_path / "results"
    folder = runs / "table7" / "pmem_state_oracle__factconsolidation_sh_6k__0123456789"
    snapshot = folder / "snapshots" / "00000000"
    snapshot.mkdir(parents=True)
    assert oracle_arm.save(snapshot)  # the arm's own snapshot: a real P-Mem store and its meta
    config = {
        "arm": {
            "_target_": "baselines.pmem_arms.state.OracleStateArm",
            "name": "pmem_state_oracle",
        },
        "benchmark": {"name": "factconsolidation_sh_6k", "source": "sh_6k"},
        "llm": {"model": "m", "revision": "r1"},
    }
    (folder / "manifest.json").write_text(json.dumps({"config": config}))
    (folder / "summary.json").write_text(json.dumps({"n": 0, "scores": {}}))
    live = write(runs, "table7", results / "tables")

    (exported,) = export_runs(runs, export, "table7")
    kept = exported / "snapshots" / "00000000"
    assert not (kept / "store.sqlite").exists()
    assert (kept / "frontier.jsonl.gz").exists() and (kept / "state.json").exists()
    assert write(export, "table7", tmp_path / "rebuilt") == live
    for name in ("appendix_f.md", "appendix_f.csv"):
        rebuilt = (tmp_path / "rebuilt" / name).read_bytes()
        assert rebuilt == (results / "tables" / name).read_bytes()
    (row,) = pd.read_csv(tmp_path / "rebuilt" / "appendix_f.csv").to_dict("records")
    assert (row["keys"], row["cells"], row["survives_pct"]) == (294, 294, 100.0)  # the oracle's
    ok, why = check("appendix_f", export, results)
    assert ok, why
    assert why.endswith(f"the 1 run(s) under {export / 'table7'}")

    # a run from before the frontier records: the audit opens its store, with the same figures
    (snapshot / "frontier.jsonl").unlink()
    assert write(runs, "table7", tmp_path / "from_store") == live

    # a hand edit is caught, as for every other table
    md = results / "tables" / "appendix_f.md"
    md.write_text(md.read_text().replace("294", "295", 1))
    ok, why = check("appendix_f", export, results)
    assert not ok and "is not what" in why


def test_the_command_says_when_there_is_nothing_to_audit(tmp_path: Path) -> None:
    """`python -m benchmarks.factconsolidation.write_audit` on a root with no state run: one
    line naming the folder, exit 2, nothing written."""
    out = tmp_path / "tables"
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.factconsolidation.write_audit", "--runs", str(tmp_path),
         "--out", str(out)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2, done
    assert done.stderr.startswith(f"write_audit: no finished runs under {tmp_path / 'table7'}")
    assert len(done.stderr.strip().splitlines()) == 1 and not out.exists()
