"""A table cites only runs that still show what the code does (`benchmarks.runner.currency`):
a run made on other data, under another prompt, or before its arm declared a change is refused,
with a line naming what changed; `check-tables` says so for a committed table."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hydra.utils import instantiate

from baselines.reference.raw import RawArm
from benchmarks.reports.frame import StaleRuns, collect
from benchmarks.reports.tables import check
from benchmarks.runner.cli import UsageError, check_same_behaviour
from benchmarks.runner.currency import VOUCHED, currency, vouch, vouched_for, what_changed
from benchmarks.runner.probe import PARTS, probe

SCRIPTED = ["llm=scripted", "embedder=scripted", "run.progress=false"]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One finished scripted run of Table 7's raw-facts arm, made by today's code."""
    root = tmp_path_factory.mktemp("currency") / "runs"
    out = subprocess.run(
        [sys.executable, "-m", "benchmarks.runner", "experiment=table7", "arm=raw_facts",
         "run.limit=2", f"run.root={root}", *SCRIPTED],
        capture_output=True, text=True, timeout=300, cwd=root.parent,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    (folder,) = (root / "table7").iterdir()
    return folder


def edited(run: Path, tmp_path: Path, edit) -> Path:
    """A copy of the run whose manifest `edit` changed."""
    copy = tmp_path / "runs" / "table7" / run.name
    shutil.copytree(run, copy)
    manifest = json.loads((copy / "manifest.json").read_text())
    edit(manifest)
    (copy / "manifest.json").write_text(json.dumps(manifest))
    return copy


def test_a_run_of_todays_code_is_current(run: Path) -> None:
    manifest = json.loads((run / "manifest.json").read_text())
    found = currency(manifest)
    assert found.current and not found.unchecked, found
    assert what_changed(run) == []


def test_a_changed_prompt_is_named(run: Path, tmp_path: Path) -> None:
    def edit(m: dict) -> None:
        m["prompts"]["query"] = "0" * 64

    assert what_changed(edited(run, tmp_path, edit)) == ["prompt query changed since the run"]


def test_changed_data_is_named(run: Path, tmp_path: Path) -> None:
    def edit(m: dict) -> None:
        m["dataset"]["sha256"] = "f" * 64

    (line,) = what_changed(edited(run, tmp_path, edit))
    assert line.startswith("data: benchmarks/data/memoryagentbench/Conflict_Resolution.json.gz")
    assert "the run read ffffffffffff" in line


def test_a_run_before_its_arms_declared_change_is_refused(run: Path, tmp_path: Path) -> None:
    (change,) = RawArm.changes

    def edit(m: dict) -> None:
        m["started_at"] = "2026-12-01T23:53:00+00:00"

    (line,) = what_changed(edited(run, tmp_path, edit))
    assert line == f"arm raw_facts (RawFactsArm) changed on {change.since}: {change.what}"

    def other_arm(m: dict) -> None:  # the change names the configs it touches
        edit(m)
        m["config"]["arm"]["name"] = "raw_topk"

    other = tmp_path / "other"
    other.mkdir()
    assert what_changed(edited(run, other, other_arm)) == []


def test_a_resumed_run_counts_from_its_first_attempt(run: Path, tmp_path: Path) -> None:
    def edit(m: dict) -> None:
        m["first_started_at"] = "2026-12-01T00:00:00+00:00"

    assert len(what_changed(edited(run, tmp_path, edit))) == 1


def test_a_table_leaves_a_refused_run_out_and_says_why(run: Path, tmp_path: Path, capsys) -> None:
    def edit(m: dict) -> None:
        m["prompts"]["system"] = "1" * 64

    copy = edited(run, tmp_path, edit)
    with pytest.raises(StaleRuns, match="prompt system changed since the run"):
        collect(copy.parents[1], "table7", include_scripted=True)
    assert "refused (the code changed since)" in capsys.readouterr().err


def test_check_tables_names_the_refused_run(run: Path, tmp_path: Path) -> None:
    def edit(m: dict) -> None:
        m["prompts"]["query"] = "2" * 64

    copy = edited(run, tmp_path, edit)
    out = tmp_path / "results"
    (out / "tables").mkdir(parents=True)
    (out / "tables" / "table7.md").write_text("# Table 7\n")
    ok, why = check("table7", copy.parents[1], out)
    assert not ok
    assert why.startswith(f"refused {copy.name} (prompt query changed since the run); ")


def test_a_run_records_its_arms_fingerprint_and_today_matches_it(run: Path) -> None:
    manifest = json.loads((run / "manifest.json").read_text())
    assert set(manifest["probe"]) == set(PARTS)
    spec = {k: v for k, v in manifest["config"]["benchmark"].items() if k != "name"}
    assert probe(manifest["config"]["arm"], instantiate(spec)) == manifest["probe"]


def test_an_arm_that_reads_otherwise_is_refused(run: Path, tmp_path: Path) -> None:
    """The same prompts, another read: the arm lists its facts in arrival order now."""

    def edit(m: dict) -> None:
        m["config"]["arm"]["order"] = "stream"

    (line,) = what_changed(edited(run, tmp_path, edit))
    assert line == "arm raw_facts: its reads on its probe differ from when the run was made"


def test_a_run_without_a_fingerprint_is_checked_against_the_vouched_one(
    run: Path, tmp_path: Path
) -> None:
    def edit(m: dict) -> None:
        m.pop("probe")

    copy = edited(run, tmp_path, edit)
    assert what_changed(copy) == []  # nothing to compare: not refused, said as unchecked
    manifest = json.loads((copy / "manifest.json").read_text())
    assert any("no fingerprint" in u for u in currency(manifest).unchecked)
    assert vouch(copy.parents[1], "a test", "abc") == [f"table7/{copy.name}"]
    entry = vouched_for(copy)
    assert entry is not None and entry["at"] == "abc" and entry["why"] == "a test"
    entry["probe"]["writer"] = "0" * 16  # vouched for another behaviour than today's
    entries = {f"table7/{copy.name}": entry}
    (copy.parents[1] / VOUCHED).write_text(json.dumps(entries))
    (line,) = what_changed(copy)
    assert line.endswith(
        "its writer's requests on its probe differ from when it was vouched for (abc)"
    )


def test_a_run_resumes_only_with_an_arm_that_behaves_as_before(tmp_path: Path) -> None:
    before = {"reads": "a", "writer": "b", "embedder": "c"}
    check_same_behaviour(tmp_path, before, dict(before))
    check_same_behaviour(tmp_path, None, before)  # a manifest from before fingerprints
    with pytest.raises(UsageError, match="its reads on its probe changed since"):
        check_same_behaviour(tmp_path, before, {**before, "reads": "z"})
