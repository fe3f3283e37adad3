"""Every experiment in configs/experiment/ runs end to end for one question on the scripted
profile, as a user runs it (`pmem-bench experiment=<name>`, a subprocess): the arm, the benchmark
and the scorers are really built and run, against the scripted OpenAI-compatible server on
127.0.0.1. Composing is not enough: a target can import and still fail when it is built or run.

Also: the run identities (the folder hash of every experiment × arm) are the ones recorded before
the layout moved, so a move of code never orphans a run folder.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from benchmarks.runner.cli import CONFIG_DIR, choices
from benchmarks.runner.runs import config_hash

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "benchmarks" / "data" / "longmemeval" / "fixture.json"
SCRIPTED = ["llm=scripted", "embedder=scripted", "judge=scripted"]
IDENTITIES = json.loads((Path(__file__).parent / "data" / "run_identities.json").read_text())


def composed(overrides: list[str]) -> dict:
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        cfg = compose(config_name="config", overrides=overrides)
    return OmegaConf.to_container(cfg, resolve=True)  # type: ignore[return-value]


def overrides_for(experiment: str) -> list[str]:
    """The scripted profile, one question; LongMemEval experiments read the generated fixture
    (knowledge-update questions included) instead of the shipped single instance."""
    out = [f"experiment={experiment}", *SCRIPTED, "run.limit=1", "run.progress=false"]
    target = composed([f"experiment={experiment}"])["benchmark"]["_target_"]
    if target == "benchmarks.longmemeval.LongMemEval":
        out.append(f"benchmark.path={FIXTURE}")
    return out


@pytest.mark.parametrize("experiment", choices("experiment"))
def test_every_experiment_runs_one_question_end_to_end(experiment: str, tmp_path: Path) -> None:
    overrides = overrides_for(experiment)
    cfg = composed(overrides)
    out = subprocess.run(
        [sys.executable, "-m", "benchmarks.runner", *overrides, f"run.root={tmp_path / 'runs'}"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,  # relative paths in configs (class stores, rewrites) land here
    )
    assert out.returncode == 0, out.stderr[-3000:]
    (folder,) = [p for p in (tmp_path / "runs" / cfg["name"]).iterdir() if p.is_dir()]
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["config"]["arm"]["_target_"] == cfg["arm"]["_target_"]
    assert manifest["config"]["benchmark"]["_target_"] == cfg["benchmark"]["_target_"]
    predictions = (folder / "predictions.jsonl").read_text().splitlines()
    assert len(predictions) == 1, "one question, one prediction"
    summary = json.loads((folder / "summary.json").read_text())
    assert summary["complete"] and summary["n"] == 1
    if cfg["run"]["answer"]:
        (scored,) = [
            json.loads(line) for line in (folder / "scores.jsonl").read_text().splitlines()
        ]
        assert scored["id"] == json.loads(predictions[0])["id"]
        assert set(cfg["scorers"]) <= set(scored), "every configured scorer scored the answer"
        assert "1/1 questions answered" in out.stdout
    else:
        assert summary["read_only"] is True


@pytest.mark.parametrize("experiment", choices("experiment"))
def test_run_identities_survive_the_move(experiment: str) -> None:
    """The folder hash of the experiment with each arm is the pinned one: identities hash class
    names, not import paths, so rerunning a config after a refactor resumes its run folder."""
    recorded = {k: v for k, v in IDENTITIES.items() if k.split()[0] == f"experiment={experiment}"}
    assert recorded, f"no recorded identities for {experiment}"
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        now = {
            combination: config_hash(
                OmegaConf.to_container(
                    compose(config_name="config", overrides=combination.split()), resolve=True
                )
            )[:10]
            for combination in recorded
        }
    assert now == recorded
