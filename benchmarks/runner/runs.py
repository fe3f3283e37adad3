"""Run folders: named by a hash of the semantic config, append-only records, a manifest.

Rerunning the same config lands in the same folder and resumes it: predictions are appended one
line per sample and flushed, so a kill at any point loses at most the samples in flight (and
their model calls are usually in the response cache already).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import platform
import subprocess
import sys
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path
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
PACKAGES = ("pmem", "httpx", "hydra-core", "omegaconf", "numpy", "tqdm")

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


class JsonLines:
    """An append-only JSON-lines file that survives a kill mid-write."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def read(self) -> list[dict[str, Any]]:
        """Every complete record; a torn last line (a kill mid-write) is cut off the file."""
        if not self.path.exists():
            return []
        raw = self.path.read_bytes()
        records, good = [], 0
        for line in raw.splitlines(keepends=True):
            if not line.endswith(b"\n"):
                break
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError:
                break
            good += len(line)
        if good != len(raw):
            with self.path.open("r+b") as f:
                f.truncate(good)
        return records

    def append(self, record: dict[str, Any]) -> None:
        line = json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n"
        with self.path.open("a", encoding="utf-8") as f:
            f.write(line)
            f.flush()

    def rewrite(self, records: list[dict[str, Any]]) -> None:
        tmp = self.path.with_suffix(".tmp")
        with tmp.open("w", encoding="utf-8") as f:
            for r in records:
                f.write(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n")
        os.replace(tmp, self.path)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.read())


class RunFolder:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.predictions = JsonLines(path / "predictions.jsonl")
        self.scores = JsonLines(path / "scores.jsonl")
        self.snapshots = path / "snapshots"
        self.logs = path / "logs"

    @classmethod
    def for_config(
        cls, root: str | Path, experiment: str, arm: str, benchmark: str, cfg: dict[str, Any]
    ) -> RunFolder:
        name = f"{arm}__{benchmark}__{config_hash(cfg)[:10]}"
        path = Path(root) / experiment / name
        path.mkdir(parents=True, exist_ok=True)
        folder = cls(path)
        folder.snapshots.mkdir(exist_ok=True)
        folder.logs.mkdir(exist_ok=True)
        return folder

    def write_json(self, name: str, payload: dict[str, Any]) -> None:
        tmp = self.path / f".{name}.tmp"
        tmp.write_text(json.dumps(payload, indent=2, ensure_ascii=False, default=str) + "\n")
        os.replace(tmp, self.path / name)

    def read_json(self, name: str) -> dict[str, Any] | None:
        path = self.path / name
        return json.loads(path.read_text()) if path.exists() else None


def manifest(
    cfg: dict[str, Any], dataset: dict[str, Any], prompts: dict[str, str]
) -> dict[str, Any]:
    """Everything needed to trust and reproduce a run's numbers."""
    return {
        "config": cfg,
        "config_sha256": config_hash(cfg),
        "git": _git_state(),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "packages": {p: _version(p) for p in PACKAGES},
        "dataset": dataset,
        "prompts": {name: sha256_text(text) for name, text in sorted(prompts.items())},
        "started_at": dt.datetime.now(dt.UTC).isoformat(),
    }


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def _git_state() -> dict[str, Any]:
    root = Path(__file__).resolve().parents[2]

    def git(*args: str) -> str | None:
        try:
            out = subprocess.run(
                ["git", *args], cwd=root, capture_output=True, text=True, timeout=10, check=True
            )
        except (OSError, subprocess.SubprocessError):
            return None
        return out.stdout.strip()

    status = git("status", "--porcelain", "--untracked-files=no")
    return {
        "commit": git("rev-parse", "HEAD"),
        "dirty": bool(status) if status is not None else None,
    }
