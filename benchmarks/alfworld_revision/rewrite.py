"""The single-revision variant's LLM rewrites of L=1 updates, kept only if verified (App. B.2).

    python -m benchmarks.alfworld_revision.rewrite --writer local --out single.jsonl
    python -m benchmarks.alfworld_revision.rewrite --llm vllm --writer vllm35b --out ...

The writer profile rewrites (``--writer none``: the reader's); the reader's profile (``--llm``)
verifies at temperature 0. Trailing ``key=value`` arguments are Hydra overrides of those profiles
(e.g. ``writer.base_url=http://HOST:PORT/v1``). Calls go through the response cache.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from benchmarks.alfworld_revision import (
    DEFAULT_SEED,
    REWRITE_PROMPT,
    SOURCES,
    VERIFY_PROMPT,
    Case,
    generate,
    verifier_accepts,
)
from benchmarks.models.cache import ResponseCache
from benchmarks.models.usage import UsageMeter
from benchmarks.runner.stack import ModelStack, role_group

CONFIGS = Path(__file__).resolve().parents[1] / "configs"  # the harness's configs/ (a link)
VERIFIER_TEMPERATURE = 0.0  # B.2: "a temperature-0 verifier"


def first_update_line(text: str) -> str | None:
    for line in text.splitlines():
        line = line.strip().strip('"')
        if line.startswith("Update:"):
            return line
    return None


def _kept(rewrite: str | None, answer: str | None, destination: str) -> bool:
    """The verifier's answer names the destination, and the rewrite states it verbatim."""
    return bool(
        rewrite and answer and verifier_accepts(answer, destination) and destination in rewrite
    )


async def rewrite_all(stack: ModelStack, cases: Sequence[Case]) -> list[dict[str, Any]]:
    """One row per case: the writer's rewrite, the reader's temperature-0 answer, kept or not.

    The rewriter is the writer profile (``configs/writer/``: ``vllm35b`` is the paper's stronger
    Qwen3.6-35B-A3B-FP8; ``local`` is the same Qwen2.5-Coder-1.5B as the local reader, so on the
    local profile the rewriter is *not* stronger than the reader). The verifier is the reader's
    profile, the agent model the arms are read with, so the rewriter never grades its own text.
    """
    writer = await stack.get("writer")
    verifier = await stack.get("reader")
    rows = []
    for case in cases:
        (update,) = [e for e in case.events if e["chain"] == 0 and e["kind"] == "update"]
        reply = await writer.complete(REWRITE_PROMPT.format(update=update["text"]), max_tokens=80)
        rewrite = first_update_line(reply.text)
        answer = None
        if rewrite is not None:
            check = await verifier.complete(
                VERIFY_PROMPT.format(rewrite=rewrite, obj=case.object),
                max_tokens=16,
                temperature=VERIFIER_TEMPERATURE,
            )
            answer = check.text.strip()
        rows.append(
            {
                "case_id": case.id,
                "game": case.record.get("game"),
                "record_source": case.record_source,
                "object": case.object,
                "from": update["from"],
                "to": update["to"],
                "original": update["text"],
                "rewrite": rewrite,
                "verifier_answer": answer,
                "kept": _kept(rewrite, answer, update["to"]),
                "source": f"model:{writer.endpoint.model}",
                "verifier": f"model:{verifier.endpoint.model}",
            }
        )
    return rows


def summarize(
    rows: Sequence[dict[str, Any]], roles: dict[str, dict[str, Any]], settings: dict[str, Any]
) -> dict[str, Any]:
    """The kept set and its yield (B.2 keeps a rewrite only if the verifier recovers the
    destination, so the variant's n is the kept count), with who rewrote and who verified."""
    kept = [r["case_id"] for r in rows if r["kept"]]
    return {
        "attempted": len(rows),
        "kept": len(kept),
        "yield": round(len(kept) / len(rows), 4) if rows else None,
        "kept_ids": kept,
        "rejected_ids": [r["case_id"] for r in rows if not r["kept"]],
        "no_update_line": sum(r["rewrite"] is None for r in rows),
        "rewriter": roles["writer"],
        "verifier": {**roles["reader"], "temperature": VERIFIER_TEMPERATURE},
        "same_model": roles["writer"]["model"] == roles["reader"]["model"],
        "prompts_sha256": {
            "rewrite": hashlib.sha256(REWRITE_PROMPT.encode()).hexdigest(),
            "verify": hashlib.sha256(VERIFY_PROMPT.encode()).hexdigest(),
        },
        **settings,
    }


def _jsonl(rows: Sequence[dict[str, Any]]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows)


def write_outputs(out: Path, rows: Sequence[dict[str, Any]], summary: dict[str, Any]) -> Path:
    """The kept rows at `out`, the rejected beside it, the summary at ``<out>.summary.json``.

    `out` holds the rows `benchmark.rewrites=` of experiment=table6_single reads; the rejected
    ones go to ``.rejected.jsonl``; the summary has attempted, kept, yield = kept / attempted,
    the kept and rejected case ids and the rewriter's and the verifier's models.
    """
    out.parent.mkdir(parents=True, exist_ok=True)
    kept = _jsonl([r for r in rows if r["kept"]])
    out.write_text(kept, encoding="utf-8")
    out.with_suffix(".rejected.jsonl").write_text(
        _jsonl([r for r in rows if not r["kept"]]), encoding="utf-8"
    )
    path = out.with_name(out.name + ".summary.json")
    digest = hashlib.sha256(kept.encode()).hexdigest()
    summary = {**summary, "kept_file": out.name, "kept_sha256": digest}
    path.write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return path


def _role(cfg: dict[str, Any], role: str, profile: str) -> dict[str, Any]:
    group = role_group(cfg, role)
    spec = cfg.get(group) or {}
    return {
        "profile": f"{group}={profile}",
        "model": spec.get("model"),
        "revision": spec.get("revision"),
        "temperature": spec.get("temperature", 0.0),
    }


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--cases", type=int, default=140, help="first N cases (default 140)")
    p.add_argument("--seed", type=int, default=DEFAULT_SEED)
    p.add_argument("--source", choices=SOURCES, help="record source (default: valid_seen)")
    p.add_argument("--llm", default="local", help="reader profile (configs/llm/): the verifier")
    p.add_argument(
        "--writer",
        default="local",
        help="rewriter profile (configs/writer/: vllm35b on the cluster; local = the same small "
        "model as the local reader); 'none' = the --llm profile rewrites too",
    )
    p.add_argument("--cache", default="runs/cache.sqlite")
    p.add_argument("--out", type=Path, required=True, help="kept rewrites, JSONL")
    p.add_argument("overrides", nargs="*", help="Hydra overrides, e.g. writer.base_url=URL")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    writer = None if args.writer in ("none", "null", "") else args.writer
    overrides = [f"llm={args.llm}", *([f"writer={writer}"] if writer else []), *args.overrides]
    try:
        with initialize_config_dir(config_dir=str(CONFIGS), version_base="1.3"):
            cfg = compose(config_name="config", overrides=overrides)
        cases = generate(1, cases=args.cases, seed=args.seed, source=args.source)
    except Exception as err:  # a bad profile name or override, or a bad --cases
        print(f"alfworld_revision.rewrite: error: {err}".splitlines()[0], file=sys.stderr)
        return 2
    resolved = OmegaConf.to_container(cfg, resolve=True)
    assert isinstance(resolved, dict)
    logs = args.out.parent / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    meter = UsageMeter()
    stack = ModelStack(resolved, ResponseCache(args.cache), meter, logs)

    async def go() -> list[dict[str, Any]]:
        try:
            return await rewrite_all(stack, cases)
        finally:
            await stack.close()

    rows = asyncio.run(go())
    roles = {
        "writer": _role(resolved, "writer", writer or args.llm),
        "reader": _role(resolved, "reader", args.llm),
    }
    settings = {
        "cases": args.cases,
        "seed": args.seed,
        "record_source": cases[0].record_source if cases else None,
    }
    summary = write_outputs(args.out, rows, summarize(rows, roles, settings))
    kept = sum(r["kept"] for r in rows)
    print(f"kept {kept} of {len(rows)} rewrites -> {args.out} (summary: {summary})")
    print(f"cost: {meter.summary_line()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
