"""An arm's behaviour on a small fixed slice of its benchmark, as a few hashes: its fingerprint.

A run's numbers depend on what its arm reads and asks, not only on its prompts' texts: a
changed read format (an arrival index listed, a cell rendered differently) changes the answers
with every prompt hash the same. The probe runs the arm as built from a run's config on the
first events and questions of the run's benchmark, with the scripted profile's models in
process (its reply rules, its hashed-word embeddings: no server, no model), and hashes what the
arm did in three parts: `reads` (the contexts it handed the reader), `writer` (every request it
sent its writer and judge) and `embedder` (every text it embedded). The same code gives the same
hashes on any machine; a part that differs names what changed (`benchmarks.runner.currency`).
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from hydra.utils import instantiate
from omegaconf import OmegaConf

from benchmarks.models.chat import ChatResult, TokenCount
from benchmarks.models.scripted_model import Request, embed_text, whitespace_tokens
from benchmarks.models.scripted_rules import compile_rules, first_reply
from benchmarks.runner.arm import MemoryArm, Services

__all__ = ["EVENTS", "PARTS", "QUESTIONS", "differing", "probe"]

SCRIPTED = Path(__file__).resolve().parents[1] / "configs" / "server" / "scripted.yaml"
EVENTS = 60  # the first events of the benchmark's first episode
QUESTIONS = 2  # and its first questions
PARTS = ("reads", "writer", "embedder")
DIMENSIONS = 64


@functools.cache
def _rules() -> tuple[list[Any], str]:
    spec = OmegaConf.to_container(OmegaConf.load(SCRIPTED), resolve=True)
    assert isinstance(spec, dict)
    return compile_rules(spec.get("rules") or []), str(spec.get("default", ""))


def _digest(items: Sequence[Any]) -> str:
    """A hash of a multiset of records (order-free: concurrent calls may come in any order)."""
    lines = sorted(json.dumps(i, sort_keys=True, ensure_ascii=False, default=str) for i in items)
    return hashlib.sha256("\n".join(lines).encode("utf-8")).hexdigest()[:16]


class ProbeChat:
    """The scripted profile's chat model in process, recording every request."""

    def __init__(self, log: list[Any]) -> None:
        self.log = log

    async def complete(
        self,
        messages: Sequence[Mapping[str, Any]] | str,
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
        schema: Mapping[str, Any] | None = None,
        schema_name: str = "answer",
    ) -> ChatResult:
        if isinstance(messages, str):
            messages = [{"role": "user", "content": messages}]
        body: dict[str, Any] = {"messages": list(messages), "max_tokens": max_tokens}
        if schema is not None:
            body["response_format"] = {"json_schema": {"name": schema_name, "schema": schema}}
        self.log.append(body)
        rules, default = _rules()
        text = first_reply(rules, Request(tuple(messages), body))
        text = default if text is None else text
        parsed, error = None, None
        if schema is not None:
            try:
                parsed = json.loads(text)
            except ValueError as err:
                error = str(err)
        return ChatResult(text=text, parsed=parsed, parse_error=error)

    async def count_tokens(self, text: str) -> TokenCount:
        return TokenCount(len(whitespace_tokens(text)), True, "scripted")


class ProbeEmbedder:
    """The scripted profile's embedder in process, recording every text it embeds."""

    def __init__(self, log: list[Any]) -> None:
        self.log = log

    async def embed(self, texts: Sequence[str] | str, kind: str = "passage") -> np.ndarray:
        batch = [texts] if isinstance(texts, str) else list(texts)
        self.log.extend({"kind": kind, "text": t} for t in batch)
        return np.asarray([embed_text(t, DIMENSIONS) for t in batch], dtype=np.float32)


async def _run(arm_spec: Mapping[str, Any], bench: Any, episode: Any) -> dict[str, str]:
    writer_log: list[Any] = []
    embedder_log: list[Any] = []
    reads: list[Any] = []
    chat = ProbeChat(writer_log)
    reader = ProbeChat([])  # the shared reader is the benchmark's, not the arm's
    services = Services(writer=chat, embedder=ProbeEmbedder(embedder_log), judge=chat)
    arm: MemoryArm = instantiate(dict(arm_spec), services=services)
    arm.wording = getattr(bench, "wording", None)
    try:
        await arm.ingest(list(episode.events)[:EVENTS])
        for question in list(episode.questions)[:QUESTIONS]:

            async def ask(context: str, q: Any = question) -> ChatResult:
                return await reader.complete(bench.answer_messages(q, context))

            context, _ = await arm.respond(question, ask)
            reads.append({"text": context.text, "ids": list(context.ids)})
    finally:
        await arm.aclose()
    return {
        "reads": _digest(reads),
        "writer": _digest(writer_log),
        "embedder": _digest(embedder_log),
    }


def probe(arm_spec: Mapping[str, Any], bench: Any, episode: Any = None) -> dict[str, str]:
    """The arm's fingerprint on `bench` (a built benchmark; `episode`: its first, when the
    caller has its episodes already): a hash per part (`PARTS`)."""
    spec = {k: v for k, v in arm_spec.items() if k != "name"}
    return asyncio.run(_run(spec, bench, bench.episodes()[0] if episode is None else episode))


def differing(before: Mapping[str, str], now: Mapping[str, str]) -> list[str]:
    """The parts of two fingerprints that differ, in words."""
    words = {"reads": "its reads", "writer": "its writer's requests",
             "embedder": "the texts it embeds"}  # fmt: skip
    return [words[p] for p in PARTS if p in before and before.get(p) != now.get(p)]
