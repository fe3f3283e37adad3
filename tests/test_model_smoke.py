"""The real-model smoke test: `pmem-bench experiment=smoke` on the local profile, from nothing
to scored answers (make test-model; CI runs it too)."""

from __future__ import annotations

import json

import pytest

from benchmarks.models.local import missing_local_requirements
from tests.test_runner import bench

pytestmark = [
    pytest.mark.model,
    pytest.mark.skipif(
        bool(missing_local_requirements()),
        reason="the local extra is not installed (make setup-local)",
    ),
]


def test_smoke_experiment_answers_easy_questions_with_the_local_model(tmp_path) -> None:
    root = tmp_path / "runs"
    out = bench(root, timeout=900)  # the local profile is the default: no overrides
    assert out.returncode == 0, out.stdout + out.stderr
    (folder,) = (root / "smoke").iterdir()
    summary = json.loads((folder / "summary.json").read_text())
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["config"]["llm"]["model"] == "qwen2.5-coder-1.5b-instruct"
    assert summary["complete"] and summary["n"] == 6
    # Each question names one object's single move; the model must report the destination.
    assert summary["scores"]["substring"]["accuracy"] >= 5 / 6, summary
    assert summary["read"]["tokens_exact"]  # counted by llama.cpp's own tokenizer
    assert (folder / "logs" / "llama-server.log").exists()
