"""The single-revision rewrite step (B.2) against scripted models: the writer rewrites, the
reader verifies at temperature 0, a rewrite is kept only if verified, and the kept set and its
yield are written beside the kept rewrites."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

from benchmarks.alfworld_revision import generate, load_rewrite_rows, single_revision
from benchmarks.alfworld_revision.rewrite import main, rewrite_all
from benchmarks.models.cache import ResponseCache
from benchmarks.models.scripted import ScriptedServer
from benchmarks.models.usage import UsageMeter
from benchmarks.runner.stack import ModelStack

WRITER_MODEL = "Qwen/Qwen3.6-35B-A3B-FP8"  # what writer=vllm35b names


def careless(obj: str) -> bool:
    return obj.startswith(("a", "b", "c"))


def writer_reply(messages: list[dict]) -> str:
    """A rewriter that loses the destination for objects starting with a, b or c."""
    text = messages[-1]["content"]
    assert text.startswith("Rewrite"), "the writer is only asked to rewrite"
    obj, a, b = re.search(r"Update: (\w+) has been moved from (.+) to (.+)\.", text).groups()
    if careless(obj):
        return f"Update: {obj} was taken from {a} and put somewhere else."
    return f"Sure!\nUpdate: {obj} was first taken from {a} to the sofa 9, then put into {b}."


def verifier_reply(messages: list[dict]) -> str:
    text = messages[-1]["content"]
    assert text.startswith("Read the update below"), "the reader is only asked to verify"
    match = re.search(r"then put into (.+)\.", text)
    return match.group(1) if match else "sofa 9"


def strict_verifier_reply(messages: list[dict]) -> str:
    """A verifier that misreads the (good) rewrites of keychains and laptops."""
    text = messages[-1]["content"]
    if re.search(r"where is the (keychain|laptop) now", text):
        return "sofa 9"
    return verifier_reply(messages)


def both(messages: list[dict]) -> str:
    text = messages[-1]["content"]
    return writer_reply(messages) if text.startswith("Rewrite") else verifier_reply(messages)


class Recorder:
    """A scripted model that keeps every request body (to check roles and temperatures)."""

    def __init__(self, reply: Any) -> None:
        self.reply = reply
        self.bodies: list[dict[str, Any]] = []

    def __call__(self, body: dict[str, Any]) -> str:
        self.bodies.append(body)
        return self.reply(body["messages"])


def test_rewrites_are_kept_only_when_the_verifier_recovers_the_destination(tmp_path) -> None:
    cases = generate(1, cases=12, seed=42)
    with ScriptedServer(both) as server:
        cfg = {"llm": {"model": "scripted", "base_url": server.base_url}}
        stack = ModelStack(cfg, ResponseCache(tmp_path / "cache.sqlite"), UsageMeter(), tmp_path)

        async def go():
            try:
                return await rewrite_all(stack, cases)
            finally:
                await stack.close()

        rows = asyncio.run(go())
    dropped = {c.id for c in cases if careless(c.object)}
    assert dropped and len(dropped) < len(cases)  # the fixture exercises both outcomes
    assert {r["case_id"] for r in rows if not r["kept"]} == dropped
    kept = {r["case_id"]: r["rewrite"] for r in rows if r["kept"]}
    assert all(r.startswith("Update:") and "then put into" in r for r in kept.values())
    variant = single_revision(cases, kept)
    assert len(variant) == len(kept) == len(cases) - len(dropped)


def test_the_writer_rewrites_the_reader_verifies_and_the_yield_is_recorded(tmp_path) -> None:
    """End to end as the Makefile calls it (`--llm P --writer W`): two models, two roles."""
    writer, reader = Recorder(writer_reply), Recorder(strict_verifier_reply)
    out = tmp_path / "single.jsonl"
    with (
        ScriptedServer(script=writer, models=[WRITER_MODEL]) as w,
        ScriptedServer(script=reader, models=["scripted"]) as r,
    ):
        code = main(
            [
                *("--llm", "scripted", "--writer", "vllm35b", "--cases", "12"),
                *("--cache", str(tmp_path / "cache.sqlite"), "--out", str(out)),
                f"llm.base_url={r.base_url}",
                f"writer.base_url={w.base_url}",
            ]
        )
    assert code == 0
    assert len(writer.bodies) == 12 and all(b["model"] == WRITER_MODEL for b in writer.bodies)
    assert reader.bodies and all(b["temperature"] == 0.0 for b in reader.bodies)
    cases = generate(1, cases=12)
    misread = [c.id for c in cases if c.object in ("keychain", "laptop")]
    dropped = [c.id for c in cases if careless(c.object) or c.id in misread]
    assert misread and not set(misread) & {c.id for c in cases if careless(c.object)}
    kept_rows = [json.loads(line) for line in out.read_text().splitlines()]
    rejected = [json.loads(line) for line in out.with_suffix(".rejected.jsonl").open()]
    assert [row["case_id"] for row in rejected] == dropped  # the verifier's rejections dropped
    for row in rejected:
        if row["case_id"] in misread:  # a rewrite naming the destination, rejected all the same
            assert row["to"] in row["rewrite"] and row["verifier_answer"] == "sofa 9"
    summary = json.loads(out.with_name(out.name + ".summary.json").read_text())
    assert summary["attempted"] == 12 and summary["kept"] == len(kept_rows) == 12 - len(dropped)
    assert summary["yield"] == round(summary["kept"] / 12, 4)
    assert summary["kept_ids"] == [row["case_id"] for row in kept_rows]
    assert summary["rejected_ids"] == dropped
    assert summary["rewriter"]["model"] == WRITER_MODEL
    assert summary["rewriter"]["profile"] == "writer=vllm35b"
    assert summary["verifier"] == {
        "profile": "llm=scripted",
        "model": "scripted",
        "revision": "scripted-rules-2",
        "temperature": 0.0,
    }
    assert summary["same_model"] is False
    assert summary["record_source"] == "alfworld-valid_seen"
    assert all(row["source"] == f"model:{WRITER_MODEL}" for row in kept_rows)
    # the benchmark's loader reads the kept file as it is, and checks each row's update
    variant = single_revision(cases, load_rewrite_rows(out))
    assert [c.index for c in variant] == [c.index for c in cases if c.id not in dropped]


def test_a_bad_profile_is_one_line(tmp_path, capsys) -> None:
    code = main(["--llm", "nosuch", "--out", str(tmp_path / "x.jsonl")])
    assert code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nosuch" in err
    assert main(["--cases", "141", "--writer", "none", "--out", str(tmp_path / "y.jsonl")]) == 2
    assert "140 games" in capsys.readouterr().err
