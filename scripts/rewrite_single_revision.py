"""The single-revision variant's LLM step (Appendix B.2): rewrite each L=1 case's templated
update into a two-step move, keep a rewrite only if a temperature-0 verifier recovers the
destination from it. Every call goes through the response cache, so a rerun re-pays nothing.

    python scripts/rewrite_single_revision.py --cases 20 --out results/alfworld/single_local.jsonl
    python scripts/rewrite_single_revision.py --llm vllm --cases 140 --out ...   # the paper's

The output feeds `benchmark.rewrites=` of experiment=table6_single. The paper uses a stronger
model than the 4B agent for the rewrite; with --llm local the rewriter is the same small model.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from benchmarks.alfworld_revision import REWRITE_PROMPT, VERIFY_PROMPT, generate, verifier_accepts
from benchmarks.models.cache import ResponseCache
from benchmarks.models.usage import UsageMeter
from benchmarks.runner.cli import CONFIG_DIR
from benchmarks.runner.stack import ModelStack


def first_update_line(text: str) -> str | None:
    for line in text.splitlines():
        line = line.strip().strip('"')
        if line.startswith("Update:"):
            return line
    return None


async def rewrite_all(stack: ModelStack, cases: list[Any]) -> list[dict[str, Any]]:
    writer = await stack.get("writer")
    rows = []
    for case in cases:
        (update,) = [e for e in case.events if e["chain"] == 0 and e["kind"] == "update"]
        reply = await writer.complete(REWRITE_PROMPT.format(update=update["text"]), max_tokens=80)
        rewrite = first_update_line(reply.text)
        answer = None
        if rewrite is not None:
            check = await writer.complete(
                VERIFY_PROMPT.format(rewrite=rewrite, obj=case.object), max_tokens=16
            )
            answer = check.text.strip()
        rows.append(
            {
                "case_id": case.id,
                "object": case.object,
                "from": update["from"],
                "to": update["to"],
                "original": update["text"],
                "rewrite": rewrite,
                "verifier_answer": answer,
                "kept": bool(
                    rewrite
                    and answer
                    and verifier_accepts(answer, update["to"])
                    and update["to"] in rewrite
                ),
                "source": f"model:{writer.endpoint.model}",
            }
        )
    return rows


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cases", type=int, default=140)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--llm", default="local", help="chat profile (configs/llm/)")
    p.add_argument("--cache", default="runs/cache.sqlite")
    p.add_argument("--out", type=Path, required=True, help="kept rewrites, JSONL")
    args = p.parse_args()
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        cfg = compose(config_name="config", overrides=[f"llm={args.llm}"])
    resolved = OmegaConf.to_container(cfg, resolve=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    logs = args.out.parent / "logs"
    logs.mkdir(exist_ok=True)
    meter = UsageMeter()
    stack = ModelStack(resolved, ResponseCache(args.cache), meter, logs)

    async def go() -> list[dict[str, Any]]:
        try:
            return await rewrite_all(stack, generate(1, cases=args.cases, seed=args.seed))
        finally:
            await stack.close()

    rows = asyncio.run(go())
    kept = [r for r in rows if r["kept"]]
    args.out.write_text(
        "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in kept)
    )
    rejected = args.out.with_suffix(".rejected.jsonl")
    rejected.write_text(
        "".join(
            json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows if not r["kept"]
        )
    )
    print(f"kept {len(kept)} of {len(rows)} rewrites -> {args.out} (rejected: {rejected})")
    print(f"cost: {meter.summary_line()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
