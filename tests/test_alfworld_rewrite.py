"""The single-revision rewrite step (B.2) against a scripted model: kept only if verified."""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path

from benchmarks.alfworld_revision import generate, single_revision
from benchmarks.models.cache import ResponseCache
from benchmarks.models.scripted import ScriptedServer
from benchmarks.models.usage import UsageMeter
from benchmarks.runner.stack import ModelStack

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
from rewrite_single_revision import rewrite_all


def model(messages: list[dict]) -> str:
    text = messages[-1]["content"]
    if text.startswith("Rewrite"):
        obj, a, b = re.search(r"Update: (\w+) has been moved from (.+) to (.+)\.", text).groups()
        if obj.startswith(("a", "b", "c")):  # a careless rewrite that loses the destination
            return f"Update: {obj} was taken from {a} and put somewhere else."
        return f"Sure!\nUpdate: {obj} was first taken from {a} to the sofa 9, then put into {b}."
    match = re.search(r"then put into (.+)\.", text)
    return match.group(1) if match else "sofa 9"


def test_rewrites_are_kept_only_when_the_verifier_recovers_the_destination(tmp_path) -> None:
    cases = generate(1, cases=12, seed=42)
    with ScriptedServer(model) as server:
        cfg = {"llm": {"model": "scripted", "base_url": server.base_url}}
        stack = ModelStack(cfg, ResponseCache(tmp_path / "cache.sqlite"), UsageMeter(), tmp_path)

        async def go():
            try:
                return await rewrite_all(stack, cases)
            finally:
                await stack.close()

        rows = asyncio.run(go())
    careless = {c.id for c in cases if c.object.startswith(("a", "b", "c"))}
    assert careless and len(careless) < len(cases)  # the fixture exercises both outcomes
    assert {r["case_id"] for r in rows if not r["kept"]} == careless
    kept = {r["case_id"]: r["rewrite"] for r in rows if r["kept"]}
    assert all(r.startswith("Update:") and "then put into" in r for r in kept.values())
    variant = single_revision(cases, kept)
    assert len(variant) == len(kept) == len(cases) - len(careless)
