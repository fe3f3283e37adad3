"""The soft-identity and merge thresholds' population from FactConsolidation: the fact keys a
committed state run really extracted (its ``ingest_calls.jsonl.gz``, one extraction reply per
chunk of the stream), each aligned to the template parse of its chunk (docs/calibration.md)."""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path

from benchmarks.calibration import thresholds as cal
from benchmarks.calibration.report import ROOT, CalibrationInputError, Harvest
from benchmarks.factconsolidation.benchmark import FactConsolidation
from benchmarks.factconsolidation.facts import TEMPLATES
from benchmarks.models.structured import StructuredOutputError, parse_json
from benchmarks.runner.chunking import chunks
from pmem.write import EXTRACT_PROMPT, SAME_PROMPT, fact_items

DEFAULT_RUN = "results/calibration/keys/pmem_state__factconsolidation_sh_6k__e64142bed4"


def prompt_head(template: str, slot: str) -> str:
    """The prompt as sent, up to the slot (the template's ``{{`` escapes resolved)."""
    slots = {"text": "", "a": "", "b": ""}
    return template.format(**{**slots, slot: "\0"}).split("\0")[0]


def harvest_keys(run: Path) -> Harvest:
    """The keys the run's write path extracted, chunk by chunk in stream order (the order it
    applies them), each aligned to its chunk's gold facts (`cal.align_extraction`)."""
    manifest_file, calls_file = run / "manifest.json", run / "ingest_calls.jsonl.gz"
    for need in (manifest_file, calls_file):
        if not need.exists():
            raise CalibrationInputError(f"--run {run}: no {need.name} (a state run's folder)")
    cfg = json.loads(manifest_file.read_text())["config"]
    raw = calls_file.read_bytes()
    rows = [json.loads(line) for line in gzip.decompress(raw).splitlines() if line.strip()]
    data = FactConsolidation(cfg["benchmark"]["source"], cfg["benchmark"].get("path")).data
    by_chunk, at = {}, 0
    for i, text in enumerate(chunks(data.facts)):
        n = text.count("\n") + 1
        by_chunk[text] = (i, data.facts[at : at + n])
        at += n
    vocab = {
        t.relation: cal.relation_vocabulary(t.relation, f"{t.prefix} {t.middle} {t.suffix}")
        for t in TEMPLATES
    }
    extract, same = prompt_head(EXTRACT_PROMPT, "text"), prompt_head(SAME_PROMPT, "a")
    replies: list[tuple[int, list[tuple[str, tuple[str, str] | None]]]] = []
    checks = []
    for row in rows:
        content = (row.get("messages") or [{}])[0].get("content", "")
        if content.startswith(extract):
            if content[len(extract) :] not in by_chunk:
                raise CalibrationInputError(f"{calls_file}: an extraction prompt of no chunk")
            index, facts = by_chunk[content[len(extract) :]]
            try:
                items = [(k, v) for k, v, _ in fact_items(parse_json(row["reply"]))[0]]
            except StructuredOutputError:
                items = []  # the write path counts an extraction failure: no keys
            golds = cal.align_extraction(items, facts, vocab)
            keyed = [
                (k, (g.subject, g.relation) if g else None)
                for (k, _), g in zip(items, golds, strict=True)
            ]
            replies.append((index, keyed))
        elif content.startswith(same):
            a, b = (line[3:] for line in content.splitlines()[1:3])
            checks.append((a, b, row["reply"].strip().lower().startswith("same")))
    replies.sort(key=lambda r: r[0])  # the write path applies chunks in stream order
    return Harvest(
        run=str(run.relative_to(ROOT)) if run.is_relative_to(ROOT) else str(run),
        source=cfg["benchmark"]["source"],
        model=cfg["llm"]["model"],
        file_sha256=hashlib.sha256(raw).hexdigest(),
        calls=len(replies),
        mentions=[m for _, keyed in replies for m in keyed],
        checks=checks,
    )
