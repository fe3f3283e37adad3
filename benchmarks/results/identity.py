"""A run's identity: the part of a resolved config that decides its results, and its hash.

The runner names each run folder by this hash (`benchmarks.runner.runs.RunFolder`), and the
results side compares exported runs by it (`benchmarks.results.stages`: is a stage already
exported?), so both read one definition; it lives here because the results side imports nothing
of the runner.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

# How a model endpoint is called (configs/endpoint/default.yaml), never what it computes.
ENDPOINT_FIELDS = (
    "concurrency",
    "timeout_s",
    "connect_timeout_s",
    "max_retries",
    "backoff_s",
    "backoff_max_s",
)
# Keys that change how a run executes but not what it computes: never part of the run's identity
# (nor of the response cache's key).
OPERATIONAL_KEYS = frozenset({"base_url", "api_key", "server", "batch_size", *ENDPOINT_FIELDS})

# A run's identity must not move when code does. Run folders were first named while these
# components lived elsewhere (before the layout of docs/architecture.md); their targets are hashed
# under those first names, so every run made before the move resumes in its own folder. A new
# component needs no entry: its target is hashed as written.
HASHED_AS: dict[str, str] = {
    "baselines.pmem_arms.commit.OracleCommitArm": "baselines.pmem_arms.OracleCommitArm",
    "baselines.pmem_arms.commit.PatchCommitArm": "baselines.pmem_arms.PatchCommitArm",
    "baselines.pmem_arms.materialized.MaterializedStateArm": (
        "baselines.materialized.MaterializedStateArm"
    ),
    "baselines.pmem_arms.state.OracleStateArm": "baselines.fact_arms.OracleStateArm",
    "baselines.pmem_arms.state.StateArm": "baselines.fact_arms.StateArm",
    "baselines.pmem_arms.turns.JudgeGatedTurnArm": "baselines.turn_arms.JudgeGatedTurnArm",
    "baselines.pmem_arms.turns.PrunedTurnArm": "baselines.turn_arms.PrunedTurnArm",
    "baselines.pmem_arms.turns.TurnArm": "baselines.turn_arms.TurnArm",
    "baselines.reference.budget.BudgetedChunkArm": "baselines.budget.BudgetedChunkArm",
    "baselines.reference.budget.BudgetedLongContextArm": "baselines.budget.BudgetedLongContextArm",
    "baselines.reference.budget.BudgetedTurnArm": "baselines.budget.BudgetedTurnArm",
    "baselines.reference.chunks.ChunkArm": "baselines.chunks.ChunkArm",
    "baselines.reference.long_context.LongContextArm": "baselines.long_context.LongContextArm",
    "baselines.reference.no_memory.NoMemoryArm": "baselines.no_memory.NoMemoryArm",
    "baselines.reference.raw.OracleOrderArm": "baselines.raw.OracleOrderArm",
    "baselines.reference.raw.RawArm": "baselines.raw.RawArm",
    "baselines.reference.raw.RawReconArm": "baselines.raw.RawReconArm",
    "benchmarks.alfworld_revision.benchmark.AlfworldRevision": (
        "benchmarks.alfworld_benchmark.AlfworldRevision"
    ),
    "benchmarks.scoring.judge.LongMemEvalJudge": "benchmarks.judge.LongMemEvalJudge",
    "benchmarks.scoring.judge.QuestionClass": "benchmarks.judge.QuestionClass",
    "benchmarks.scoring.judge.StaleJudge": "benchmarks.judge.StaleJudge",
    "benchmarks.scoring.scorers.ConflictFlagged": "benchmarks.scorers.ConflictFlagged",
    "benchmarks.scoring.scorers.LocationMatch": "benchmarks.scorers.LocationMatch",
    "benchmarks.scoring.scorers.StaleRate": "benchmarks.scorers.StaleRate",
    "benchmarks.scoring.scorers.SubstringMatch": "benchmarks.scorers.SubstringMatch",
}


def semantic_config(cfg: dict[str, Any]) -> dict[str, Any]:
    """The part of a resolved config that decides the results."""

    def strip(node: Any) -> Any:
        if isinstance(node, dict):
            return {
                k: HASHED_AS.get(v, v) if k == "_target_" else strip(v)
                for k, v in node.items()
                if k not in OPERATIONAL_KEYS
            }
        if isinstance(node, list):
            return [strip(v) for v in node]
        return node

    out = {k: strip(v) for k, v in cfg.items() if k not in ("run", "hydra")}
    if not (cfg.get("run") or {}).get("answer", True):
        out["read_only"] = True  # its records hold no answers: never the folder of a full run
    return out


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def config_hash(cfg: dict[str, Any]) -> str:
    return sha256_text(json.dumps(semantic_config(cfg), sort_keys=True, default=str))
