"""The `vllm` profile against a real vLLM server (make test-vllm).

scripts/test_vllm.sh starts vLLM's CPU build with the cluster's own `vllm serve` lines
(slurm/vllm_servers.sh): the local chat model (Qwen2.5-Coder-1.5B-Instruct, converted from the
verified GGUF) and all-MiniLM-L6-v2 with `--runner pooling`, and exports PMEM_LLM_BASE_URL and
PMEM_EMBED_BASE_URL. Every test goes through the harness's own code with `llm=vllm
embedder=vllm`; the only overrides are what a different model needs (`vllm_overrides`: its
name, its embedding dimension, no Qwen3-Embedding query instruction) and the slices' sizes.

Without the two URLs every test here is skipped (and `make test` deselects the marker).
"""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx2 as httpx  # the HTTP library the openai SDK (3.x) brings
import numpy as np
import pytest
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from benchmarks.factconsolidation.gold import gold_state, question_infos
from benchmarks.factconsolidation.load import DATA_FILE, load
from benchmarks.models.cache import ResponseCache
from benchmarks.models.client import ModelConfigError, aclose_clients
from benchmarks.models.usage import UsageMeter
from benchmarks.runner.cli import CONFIG_DIR
from benchmarks.runner.stack import ModelStack

LLM_URL = os.environ.get("PMEM_LLM_BASE_URL", "")
EMBED_URL = os.environ.get("PMEM_EMBED_BASE_URL", "")

pytestmark = [
    pytest.mark.vllm,
    pytest.mark.skipif(
        not (LLM_URL and EMBED_URL),
        reason="needs vLLM servers: make test-vllm starts them (or export PMEM_LLM_BASE_URL "
        "and PMEM_EMBED_BASE_URL)",
    ),
]

EMBED_DIM = 384  # all-MiniLM-L6-v2
ROOT = Path(__file__).resolve().parents[1]


def served_model(base_url: str, env: str) -> str:
    """The model name to send: $env (scripts/test_vllm.sh sets it), else the server's only one."""
    if os.environ.get(env):
        return os.environ[env]
    (model,) = [m["id"] for m in httpx.get(f"{base_url}/models", timeout=10).json()["data"]]
    return model


@pytest.fixture(scope="module")
def models() -> dict[str, str]:
    return {
        "chat": served_model(LLM_URL, "PMEM_VLLM_CHAT_MODEL"),
        "embed": served_model(EMBED_URL, "PMEM_VLLM_EMBED_MODEL"),
    }


def vllm_overrides(models: dict[str, str]) -> list[str]:
    """`llm=vllm embedder=vllm` plus what this machine's models differ in from the paper's."""
    return [
        "llm=vllm",
        "embedder=vllm",
        f"llm.model={models['chat']}",
        f"embedder.model={models['embed']}",
        f"embedder.probe.dimension={EMBED_DIM}",
        # Qwen3-Embedding's retrieval instruction means nothing to MiniLM
        "embedder.query_prefix=''",
    ]


def bench(root: Path, *overrides: str, timeout: float = 900) -> subprocess.CompletedProcess:
    """`pmem-bench` as a user runs it: its own process, run folders under `root`."""
    command = [sys.executable, "-m", "benchmarks.runner.cli", *overrides]
    command += [f"run.root={root}", "run.progress=false"]
    return subprocess.run(
        command, capture_output=True, text=True, timeout=timeout, cwd=root.parent, check=False
    )


def summaries(root: Path, experiment: str) -> dict[str, dict[str, Any]]:
    """Each run folder's summary.json under `root/experiment`, by the run's arm name."""
    out = {}
    for folder in sorted((root / experiment).iterdir()):
        if (folder / "summary.json").exists():
            manifest = json.loads((folder / "manifest.json").read_text())
            out[manifest["config"]["arm"]["name"]] = {
                **json.loads((folder / "summary.json").read_text()),
                "config": manifest["config"],
                "folder": folder,
            }
    return out


def cached(root: Path, kind: str) -> list[tuple[dict[str, Any] | None, Any]]:
    """(request, response) of every `kind` row of the run's response cache."""
    with sqlite3.connect(root / "cache.sqlite") as db:
        rows = db.execute("SELECT request, response FROM responses WHERE kind = ?", (kind,))
        return [(json.loads(q) if q else None, json.loads(r)) for q, r in rows]


def schema_calls(root: Path, name: str) -> list[tuple[dict[str, Any], Any]]:
    """The chat calls sent with `response_format` json_schema `name`, and their replies."""
    out = []
    for request, response in cached(root, "chat"):
        fmt = (request or {}).get("response_format") or {}
        if fmt.get("type") == "json_schema" and fmt["json_schema"]["name"] == name:
            out.append((request, response))
    return out


# --- the start-up probe --------------------------------------------------------------------------


def stack_for(overrides: list[str], tmp_path: Path) -> ModelStack:
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        cfg = compose(config_name="config", overrides=overrides)
    resolved: dict[str, Any] = OmegaConf.to_container(cfg, resolve=True)  # type: ignore[assignment]
    return ModelStack(resolved, ResponseCache(tmp_path / "cache.sqlite"), UsageMeter(), tmp_path)


def test_startup_probe_lists_the_models_gets_json_schema_and_checks_the_dimension(
    tmp_path: Path, models: dict[str, str]
) -> None:
    async def probe() -> dict[str, Any]:
        stack = stack_for(vllm_overrides(models), tmp_path)
        try:
            reader = await stack.get("reader")  # /v1/models, then the json_schema probe
            embedder = await stack.get("embedder")  # /v1/models, then the dimension probe
            listed = await reader.probe()
            tokens = await reader.count_tokens("The cat sat on the mat.")
            vectors = await embedder.embed(["hello world"], kind="query")
            return {"listed": listed, "tokens": tokens, "dim": vectors.shape[1]}
        finally:
            await stack.close()
            await aclose_clients()

    got = asyncio.run(probe())
    assert models["chat"] in got["listed"]["served"]
    assert got["dim"] == EMBED_DIM
    # the json_schema probe went to the server as json_schema and came back as the schema
    ((request, reply),) = schema_calls(tmp_path, "probe")
    assert request["model"] == models["chat"]
    assert request["chat_template_kwargs"] == {"enable_thinking": False}  # the profile's body
    assert json.loads(reply["choices"][0]["message"]["content"]) == {"ok": True}
    # token counts come from the served model's own tokenizer, by vLLM's /tokenize shape
    assert got["tokens"].method == "tokenize:vllm" and got["tokens"].exact
    direct = httpx.post(
        LLM_URL.removesuffix("/v1") + "/tokenize",
        json={"model": models["chat"], "prompt": "The cat sat on the mat."},
        timeout=30,
    ).json()
    assert got["tokens"].n == direct["count"] == len(direct["tokens"])


def test_the_probe_refuses_the_clusters_dimension_on_this_embedder(
    tmp_path: Path, models: dict[str, str]
) -> None:
    """The dimension probe really compares: the paper's 2,560 is not MiniLM's 384."""

    async def probe() -> None:
        stack = stack_for([*vllm_overrides(models), "embedder.probe.dimension=2560"], tmp_path)
        try:
            await stack.get("embedder")
        finally:
            await stack.close()
            await aclose_clients()

    with pytest.raises(ModelConfigError, match=r"384-dimensional.*embedder\.probe\.dimension"):
        asyncio.run(probe())


def test_the_pooling_server_returns_unit_vectors_that_separate_meanings(
    models: dict[str, str],
) -> None:
    """Straight from vLLM (the client normalises again): sentence-transformers' mean pooling
    and Normalize, as `--runner pooling` read them from the model folder."""
    texts = ["The cat sat on the mat.", "A feline rested on the rug.", "Stock markets fell."]
    reply = httpx.post(
        f"{EMBED_URL}/embeddings",
        json={"model": models["embed"], "input": texts, "encoding_format": "float"},
        timeout=60,
    ).json()
    vectors = np.array([row["embedding"] for row in reply["data"]], dtype=np.float64)
    assert vectors.shape == (3, EMBED_DIM)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=2e-3)
    related, unrelated = vectors[0] @ vectors[1], vectors[0] @ vectors[2]
    assert related > unrelated + 0.3, (related, unrelated)


# --- the smoke experiment -------------------------------------------------------------------------


def test_smoke_experiment_on_the_vllm_profile(tmp_path: Path, models: dict[str, str]) -> None:
    root = tmp_path / "runs"
    out = bench(root, "experiment=smoke", "llm=vllm", f"llm.model={models['chat']}")
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    (summary,) = summaries(root, "smoke").values()
    assert summary["complete"] and summary["n"] == 6, summary
    # each question names one object's single move: the model must report the destination
    assert summary["scores"]["substring"]["accuracy"] >= 5 / 6, summary["scores"]
    assert summary["read"]["tokens_exact"]  # counted by vLLM's tokenizer, not chars/4
    assert {r["method"] for _, r in cached(root, "tokenize")} == {"tokenize:vllm"}
    reader = summary["usage"]["reader"]
    assert reader["calls"] >= 6 and reader["errors"] == 0 and reader["completion_tokens"] > 0


# --- one FactConsolidation write-path slice (Table 7's pmem_state) --------------------------------

SLICE_SOURCE = "sh_6k"
SLICE_QUESTIONS = 3
SLICE_FILLER = 4  # unrelated facts from the start of the stream, kept in serial order
# B.4's chunks are 1,000 characters; the slice's 10 lines (~530 characters) would be one. 300
# makes two, extracted concurrently, so the server batches them (decoding here is ~1 token/s a
# sequence: one 10-fact reply alone would take minutes)
SLICE_CHUNK = 300
# json_schema output is enforced by the server, so extraction should never fail to parse; one
# chunk may still run out of tokens (the reply is cut off at pmem.write.EXTRACT_MAX_TOKENS)
MAX_PARSE_FAILURES = 1


def write_slice(path: Path) -> tuple[int, list[str]]:
    """A FactConsolidation file in the official row format holding a slice of `SLICE_SOURCE`:
    the facts of the first `SLICE_QUESTIONS` single-hop questions whose key was overwritten
    (every value, so the write path has something to consolidate) plus some filler. Returns
    the number of fact lines and the questions' ids."""
    data = load(SLICE_SOURCE)
    state = gold_state(data.facts)
    chosen = [i for i in question_infos(data) if i.stale_scoreable][:SLICE_QUESTIONS]
    keys = {info.key for info in chosen}
    facts = [f for f in data.facts if f.key in keys or f.serial < SLICE_FILLER]
    assert all(state[k].overwritten for k in keys)
    facts.sort(key=lambda f: (f.serial, f.line_no))
    rows = json.loads(gzip.decompress(DATA_FILE.read_bytes()))
    (row,) = [r for r in rows if r["metadata"]["source"] == f"factconsolidation_{SLICE_SOURCE}"]
    header = row["context"].splitlines()[0]
    sliced = {
        "context": "\n".join([header, *(f.line for f in facts)]) + "\n",
        "questions": [info.text for info in chosen],
        "answers": [list(info.golds) for info in chosen],
        "metadata": {
            **row["metadata"],
            "qa_pair_ids": [info.id for info in chosen],
        },
    }
    path.write_text(json.dumps([sliced]))
    return len(facts), [info.id for info in chosen]


def test_factconsolidation_write_path_slice_extracts_with_json_schema_and_soft_identity(
    tmp_path: Path, models: dict[str, str]
) -> None:
    source = tmp_path / "slice.json"
    lines, ids = write_slice(source)
    root = tmp_path / "runs"
    out = bench(
        root,
        "experiment=table7",
        "arm=pmem_state",
        f"arm.chunk_size={SLICE_CHUNK}",
        f"benchmark.source={SLICE_SOURCE}",
        f"benchmark.path={source}",
        *vllm_overrides(models),
    )
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    (summary,) = summaries(root, "table7").values()
    assert summary["complete"] and summary["n"] == len(ids), summary
    assert summary["config"]["arm"]["soft_identity"] == 0.72  # the vllm embedder's threshold
    predictions = [
        json.loads(line)
        for line in (summary["folder"] / "predictions.jsonl").read_text().splitlines()
    ]
    assert sorted(p["id"] for p in predictions) == sorted(ids)
    stats = predictions[0]["context_meta"]
    writer, embedder = summary["usage"]["writer"], summary["usage"]["embedder"]
    # extraction: one json_schema "facts" call per chunk, parsed as the schema
    extractions = schema_calls(root, "facts")
    assert len(extractions) == stats["records"] >= 2, stats
    assert writer["parse_failures"] <= MAX_PARSE_FAILURES, writer
    assert stats["extraction_failures"] <= MAX_PARSE_FAILURES, stats
    for _, reply in extractions:
        facts = json.loads(reply["choices"][0]["message"]["content"])
        assert isinstance(facts, list) and all({"key", "value"} <= set(f) for f in facts)
    assert stats["facts"] >= lines // 2, (stats, lines)  # most lines became facts
    # soft identity: every cell's key was embedded (one query call per distinct candidate key)
    # before the cells themselves were embedded for the read
    assert stats["cells"] >= 1 and embedder["calls"] >= stats["cells"] + 1, (stats, embedder)
    assert embedder["errors"] == 0 and embedder["prompt_tokens"] > 0, embedder
    assert summary["read"]["tokens_exact"]


# --- one ALFWorld-Revision Table 6 slice ----------------------------------------------------------


def test_alfworld_table6_slice_with_the_commit_and_retrieval_arms(
    tmp_path: Path, models: dict[str, str]
) -> None:
    root = tmp_path / "runs"
    out = bench(
        root,
        "-m",
        "experiment=table6",
        "benchmark.L=1",
        "benchmark.cases=2",
        "arm=pmem_commit,raw_topk",
        *vllm_overrides(models),
    )
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    runs = summaries(root, "table6")
    assert set(runs) == {"pmem_commit", "raw_topk"}, runs.keys()
    for name, summary in runs.items():
        assert summary["complete"] and summary["n"] >= 2, (name, summary)
        assert "location" in summary["scores"], (name, summary["scores"])
        assert summary["read"]["tokens_exact"], name
    commit = runs["pmem_commit"]["usage"]["writer"]
    # one json_schema patch prediction per event, every one parsed
    assert commit["calls"] >= 2 and commit["parse_failures"] == 0, commit
    assert runs["raw_topk"]["usage"]["embedder"]["calls"] >= 1
