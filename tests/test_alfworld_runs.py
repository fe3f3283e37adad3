"""ALFWorld-Revision through `pmem-bench` end to end (a subprocess, as a user runs it) against a
scripted writer, reader and embedder on 127.0.0.1: the Table 6, Table 8 and conflict experiments
with the template-oracle writer give the paper's deterministic outcomes; records carry the
arms' `context_meta`; a rerun reloads the commit store from its snapshot without a writer call."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchmarks.models.scripted import ScriptedServer
from tests.alfworld_agent import Agent

CASES = 4


@pytest.fixture
def agent() -> Iterator[tuple[ScriptedServer, Agent]]:
    script = Agent()
    with ScriptedServer(script, models=["scripted", "scripted-embed"]) as server:
        yield server, script


def bench(root: Path, server: ScriptedServer, *overrides: str) -> dict[str, Any]:
    cmd = [
        sys.executable,
        "-m",
        "benchmarks.runner.cli",
        f"run.root={root}",
        "run.progress=false",
        "llm=openai",
        "llm.model=scripted",
        f"llm.base_url={server.base_url}",
        "embedder=scripted",
        f"embedder.base_url={server.base_url}",
        f"benchmark.cases={CASES}",
        *overrides,
    ]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=root.parent)
    assert out.returncode == 0, out.stderr
    folder = Path(out.stdout.split("run folder: ", 1)[1].split()[0])
    return {
        "folder": folder,
        "summary": json.loads((folder / "summary.json").read_text()),
        "predictions": jsonl(folder / "predictions.jsonl"),
        "manifest": json.loads((folder / "manifest.json").read_text()),
    }


def jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line]


def accuracy(run: dict[str, Any], scorer: str) -> float:
    return run["summary"]["scores"][scorer]["accuracy"]


def test_table6_oracle_commit_and_raw_arms(tmp_path, agent) -> None:
    server, _ = agent
    root = tmp_path / "runs"
    commit = bench(root, server, "experiment=table6", "arm=pmem_commit_oracle", "benchmark.L=8")
    assert accuracy(commit, "location") == 1.0
    assert commit["folder"].parent.name == "table6"
    assert commit["folder"].name.startswith("pmem_commit_oracle__alfrev-L8__")
    assert commit["summary"]["read"]["mean_chars"] < 45  # the one-line cell (B.2: ~30)
    meta = commit["predictions"][0]["context_meta"]
    assert meta["writer"] == "template-oracle" and meta["events_written"] == 9
    dataset = commit["manifest"]["dataset"]
    assert dataset["record_source"] == "alfworld-valid_seen" and dataset["L"] == 8
    assert commit["manifest"]["prompts"]["answer"]

    raw = bench(root, server, "experiment=table6", "arm=raw_tags", "benchmark.L=8")
    assert raw["summary"]["read"]["mean_chars"] > 500
    coverage = [p["context_meta"]["coverage"] for p in raw["predictions"]]
    assert len(coverage) == CASES and all(0 <= c <= 1 for c in coverage)
    assert all(p["context_meta"]["shown"] == 10 for p in raw["predictions"])
    mean = raw["summary"]["read"]["meta"]  # numeric context_meta, averaged for the tables
    # predictions arrive in completion order, so the sum is float-order dependent
    assert mean["coverage"] == pytest.approx(sum(coverage) / CASES) and mean["k"] == 10


def test_table8_retention_recovers_and_crud_loses(tmp_path, agent) -> None:
    server, _ = agent
    root = tmp_path / "runs"
    disclose = "arm.disclose=[alternatives,history]"
    runs = {
        arm: bench(root, server, "experiment=table8", f"arm={arm}", "benchmark.d=32", disclose)
        for arm in ("pmem_commit_oracle", "crud_commit_oracle")
    }
    for run in runs.values():
        assert run["summary"]["n"] == 2 * CASES  # each case asked after and before the retraction
        assert accuracy(run, "committed") == 1.0
    assert accuracy(runs["pmem_commit_oracle"], "recovered") == 1.0
    assert accuracy(runs["crud_commit_oracle"], "recovered") == 0.0
    scores = jsonl(runs["crud_commit_oracle"]["folder"] / "scores.jsonl")
    assert {s["recovered"]["outcome"] for s in scores if s["recovered"]} == {"other"}  # lost
    # where it was lost: the write path kept no v1 to roll back to (stages.jsonl, summary.json)
    stages = runs["crud_commit_oracle"]["summary"]["failure_stages"]
    assert stages["answered"] == 2 * CASES and stages["wrong"] == CASES
    assert stages["by_stage"]["write"] == CASES
    failures = jsonl(runs["crud_commit_oracle"]["folder"] / "stages.jsonl")
    assert {f["stage"] for f in failures} == {"write"} and len(failures) == CASES
    assert all("nothing (empty)" in f["why"] for f in failures)
    assert runs["pmem_commit_oracle"]["summary"]["failure_stages"]["wrong"] == 0


def test_conflict_contest_then_resolve(tmp_path, agent) -> None:
    server, _ = agent
    root = tmp_path / "runs"
    pmem = bench(root, server, "experiment=conflict", "arm=pmem_commit_oracle")
    assert accuracy(pmem, "flagged") == 1.0 and accuracy(pmem, "settled") == 1.0
    crud = bench(root, server, "experiment=conflict", "arm=crud_commit_oracle")
    assert accuracy(crud, "flagged") == 0.0 and accuracy(crud, "settled") == 1.0


def test_a_rerun_reloads_the_commit_store_without_writer_calls(tmp_path, agent) -> None:
    server, script = agent
    root = tmp_path / "runs"
    # scene records: two valid_seen games open with the same stale record ("bowl was in desk
    # 1"), so their first patch call is one cached call and the counts below would be 19
    args = ("experiment=table6", "arm=pmem_commit", "benchmark.L=4", "benchmark.source=scenes")
    first = bench(root, server, *args)
    assert accuracy(first, "location") == 1.0
    # one key call (routing by the model's key) and one patch call per target-chain event
    assert script.calls["patch"] == script.calls["key"] == CASES * 5
    snapshots = sorted((first["folder"] / "snapshots").iterdir())
    assert len(snapshots) == CASES and all((s / "store.sqlite").exists() for s in snapshots)
    # what each ingest cost is kept beside its snapshot: 5 key + 5 patch calls per case, no
    # cache hits
    costs = [json.loads((s / "ingest.json").read_text()) for s in snapshots]
    assert all(c["wall_s"] > 0 for c in costs)
    assert sum(c["usage"]["writer"]["calls"] for c in costs) == CASES * 5 * 2
    assert all(c["usage"]["writer"]["prompt_tokens"] > 0 for c in costs)

    # Forget the answers and the response cache: only the snapshots remain.
    (first["folder"] / "predictions.jsonl").unlink()
    for cache in root.glob("cache.sqlite*"):
        cache.unlink()
    script.calls.clear()
    second = bench(root, server, *args)
    assert second["folder"] == first["folder"]
    assert script.calls["patch"] == script.calls["key"] == 0 and script.calls["answer"] == CASES
    assert accuracy(second, "location") == 1.0
