"""A LongMemEval run's verdicts in the official ``eval-results`` shape, and its official metrics.

So the official aggregation (``print_qa_metrics.py``, xiaowu0162/LongMemEval @
9e0b455f4ef0e2ab8f2e582289761153549043fc) can be run on our verdicts: ``eval-results.jsonl``
(one line per scored question, sorted by id: ``question_id``, ``hypothesis`` and
``autoeval_label: {model, label}``, as ``evaluate_qa.py`` writes) and ``eval-references.json``
(the questions the run asked, so a subset or the fixture checks without the released file).
`LongMemEval.on_scored` writes both after every scoring; ``export RUN_DIR`` does it for a folder.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.longmemeval.stats import OfficialMetrics, metrics_from_files
from benchmarks.runner.types import InputError

__all__ = [
    "EVAL_RESULTS",
    "REFERENCES",
    "ExportError",
    "Exported",
    "eval_results",
    "export_run",
    "judge_model",
    "judge_scorer",
    "references",
    "write_export",
]

EVAL_RESULTS = "eval-results.jsonl"
REFERENCES = "eval-references.json"
# The official judge scorer, under its import path and the one older runs' manifests record.
JUDGE_TARGETS = (
    "benchmarks.longmemeval.judge.LongMemEvalJudge",
    "benchmarks.judge.LongMemEvalJudge",
)


class ExportError(InputError, ValueError):
    """A run folder that cannot be exported: printed as one line."""


@dataclass(frozen=True, slots=True)
class Exported:
    """What one export wrote, and the official figures over it."""

    results: Path
    references: Path
    lines: int
    metrics: OfficialMetrics


def judge_scorer(config: Mapping[str, Any]) -> str | None:
    """The name of the run's official-judge scorer (``judge`` in every experiment), or None."""
    for name, node in (config.get("scorers") or {}).items():
        if isinstance(node, Mapping) and node.get("_target_") in JUDGE_TARGETS:
            return str(name)
    return None


def judge_model(config: Mapping[str, Any]) -> str | None:
    """The model that gave the verdicts (``autoeval_label.model``): the judge profile's."""
    model = (config.get("judge") or {}).get("model")
    return None if model is None else str(model)


def _meta(record: Mapping[str, Any]) -> Mapping[str, Any]:
    return record.get("meta") or {}


def _question_id(record: Mapping[str, Any]) -> str:
    return str(_meta(record).get("question_id") or record["id"])


def eval_results(
    predictions: Sequence[Mapping[str, Any]],
    scores: Sequence[Mapping[str, Any]],
    scorer: str,
    model: str,
) -> list[dict[str, Any]]:
    """One official eval-results entry per prediction the scorer judged, sorted by id."""
    verdicts = {
        str(row["id"]): row[scorer]
        for row in scores
        if isinstance(row.get(scorer), Mapping) and "correct" in row[scorer]
    }
    out = []
    for record in sorted(predictions, key=lambda r: str(r["id"])):
        verdict = verdicts.get(str(record["id"]))
        if verdict is None:
            continue
        out.append(
            {
                "question_id": _question_id(record),
                "hypothesis": record.get("prediction"),
                "autoeval_label": {"model": model, "label": bool(verdict["correct"])},
            }
        )
    return out


def references(predictions: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The reference entries print_qa_metrics.py and evaluate_qa.py read, for these questions."""
    out = []
    for record in sorted(predictions, key=lambda r: str(r["id"])):
        golds = list(record.get("golds") or [])
        out.append(
            {
                "question_id": _question_id(record),
                "question_type": _meta(record).get("question_type"),
                "question": record.get("question"),
                "answer": golds[0] if golds else None,
            }
        )
    return out


def write_export(
    folder: Path,
    predictions: Sequence[Mapping[str, Any]],
    scores: Sequence[Mapping[str, Any]],
    config: Mapping[str, Any],
    out: Path | None = None,
) -> Exported:
    """Write eval-results.jsonl and eval-references.json (into ``out``, else the run folder)
    and return the official figures over them. Raises ``ExportError`` when the run has no
    official judge scorer or no judge model."""
    scorer = judge_scorer(config)
    if scorer is None:
        names = ", ".join(config.get("scorers") or {}) or "none"
        raise ExportError(
            f"{folder}: no LongMemEvalJudge among the run's scorers ({names}); nothing to export"
        )
    model = judge_model(config)
    if model is None:
        raise ExportError(f"{folder}: the run's config names no judge model (judge.model)")
    results = eval_results(predictions, scores, scorer, model)
    refs = references(predictions)
    target = out or folder
    target.mkdir(parents=True, exist_ok=True)
    results_path, refs_path = target / EVAL_RESULTS, target / REFERENCES
    results_path.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in results), encoding="utf-8"
    )
    refs_path.write_text(json.dumps(refs, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return Exported(results_path, refs_path, len(results), metrics_from_files(results, refs))


def _records(folder: Path, name: str) -> list[dict[str, Any]]:
    """A run's ``<name>.jsonl`` (or the committed export's ``.jsonl.gz``); unreadable lines are
    skipped, as the runner sets them aside when it resumes."""
    plain, packed = folder / f"{name}.jsonl", folder / f"{name}.jsonl.gz"
    if plain.exists():
        text = plain.read_text(encoding="utf-8")
    elif packed.exists():
        text = gzip.decompress(packed.read_bytes()).decode("utf-8")
    else:
        raise ExportError(f"{folder}: no {name}.jsonl (is it a run folder?)")
    out = []
    for line in text.split("\n"):
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and "id" in record:
            out.append(record)
    return out


def export_run(folder: str | Path, out: Path | None = None) -> Exported:
    """Export an existing run folder (manifest.json, predictions, scores) in the official shape."""
    folder = Path(folder)
    manifest = folder / "manifest.json"
    if not manifest.exists():
        raise ExportError(f"{folder}: no manifest.json (is it a run folder?)")
    config = json.loads(manifest.read_text(encoding="utf-8")).get("config") or {}
    first: dict[str, dict[str, Any]] = {}
    for record in _records(folder, "predictions"):
        first.setdefault(str(record["id"]), record)  # as the runner does (unique_by_id)
    return write_export(folder, list(first.values()), _records(folder, "scores"), config, out)
