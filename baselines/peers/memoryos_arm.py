"""MemoryOS (`memoryos-pro==0.1.0`) as a peer arm (paper §4 "Baselines and protocol", B.1).

Each item is one `add_memory` QA pair; reads use MemoryOS's own retriever, never its answer
generation. The package runs as published plus the seven patches of `memoryos_patches`
(peers.md, "MemoryOS"); `MemoryOSArm` says how the stream maps onto it.
"""

from __future__ import annotations

import datetime as dt
import json
import sys
import threading
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import numpy as np

from baselines.peers.base import Item, PeerArm, PeerEndpoints
from baselines.peers.memoryos_patches import (
    LLM_ERROR,
    PROMPT_KINDS,
    TIME_FORMAT,
    RemoteEmbedding,
    StreamClock,
    clock_var,
    embedding_var,
    get_embedding,
    import_memoryos,
    usable_summaries,
)
from benchmarks.runner.arm import Context, Services

__all__ = ["MemoryOSArm", "RemoteEmbedding", "StreamClock", "import_memoryos", "usable_summaries"]

AGENT_RESPONSE = "Noted."  # the agent's turn of an observation (see `MemoryOSArm`)
USER_ID = "history"  # one user per arm (MemoryOS keeps users under data_storage_path/users/)
ASSISTANT_ID = "reader"
STATE_FILE = "arm_state.json"
RECENT_MARK = "[recent]"


# -- the arm ----------------------------------------------------------------------------------


def memoryos_time(at: str | None) -> str | None:
    """An ISO date as MemoryOS's timestamp format; None when there is none."""
    if not at:
        return None
    try:
        return dt.datetime.fromisoformat(at).strftime(TIME_FORMAT)
    except ValueError:
        return at  # MemoryOS only displays page timestamps: keep what the benchmark gave


class MemoryOSArm(PeerArm):
    """MemoryOS through `memoryos-pro`, patched as `memoryos_patches.import_memoryos` lists.

    MemoryOS keeps a short-term window of QA pairs; the oldest pair leaves it as a mid-term
    "page", grouped into topic sessions (LLM summary, keywords, embeddings), and hot sessions
    are mined into long-term knowledge. An observation has no dialogue, so each item is the user
    turn of one pair, `AGENT_RESPONSE` the agent's (MemoryOS drops pairs with an empty
    response), its date the timestamp.

    Reads: `Retriever.retrieve_context` (sessions by summary similarity plus keywords, their
    pages by similarity, long-term knowledge), ranked by MemoryOS's page score (cosine with the
    query), top k best first. `short_term=True` (the default) adds what `get_response` always
    shows: the short-term window (up to `short_term_capacity - 1` latest items, never searched),
    in arrival order, each marked "[recent]". Patches 3 and 4 wrap this arm's client.

    One operation runs at a time per arm (MemoryOS rewrites its JSON files on every change and
    bumps session heat on every search). State is MemoryOS's JSON files under `workdir` plus
    `arm_state.json` for `Updater.last_evicted_page_for_continuity`, which it keeps only in
    memory, so save -> load -> ingest continues the chain as an unbroken run would.
    """

    module: ClassVar[str] = "memoryos"
    extra: ClassVar[str] = "memoryos"
    incremental: ClassVar[bool] = True  # one item per call (base class: progress)

    def __init__(
        self,
        services: Services | None = None,
        k: int = 10,
        chunk_size: int | None = None,
        workdir: str | None = None,
        short_term: bool = True,
        short_term_capacity: int = 10,
        mid_term_capacity: int = 2000,
        long_term_knowledge_capacity: int = 100,
        mid_term_heat_threshold: float = 5.0,
        mid_term_similarity_threshold: float = 0.6,
        top_k_sessions: int = 5,
    ) -> None:
        import_memoryos()  # before the base's `require`: it needs the placeholder (patch 1)
        super().__init__(services, k=k, chunk_size=chunk_size, workdir=workdir)
        if short_term_capacity < 2:
            raise ValueError(f"arm.short_term_capacity must be >= 2, not {short_term_capacity}")
        self.short_term = short_term
        # MemoryOS's defaults (peers.md: short-term 10, mid-term 2000, top 5 sessions); its
        # retrieval queue (the pages retrieved) holds k.
        self.options: dict[str, Any] = {
            "short_term_capacity": short_term_capacity,
            "mid_term_capacity": mid_term_capacity,
            "long_term_knowledge_capacity": long_term_knowledge_capacity,
            "retrieval_queue_capacity": k,
            "mid_term_heat_threshold": mid_term_heat_threshold,
            "mid_term_similarity_threshold": mid_term_similarity_threshold,
        }
        self.top_k_sessions = top_k_sessions
        self._memo: Any = None
        self._embedding: RemoteEmbedding | None = None
        self._model = ""
        self._errors = 0
        self._lock = threading.Lock()  # the counters (MemoryOS calls the LLM from its pools)
        # one MemoryOS operation at a time: it rewrites its JSON files on every change, and the
        # harness may ask several questions of one arm at once
        self._op_lock = threading.Lock()
        self._clock = StreamClock()  # patch 6

    # -- opening MemoryOS ----------------------------------------------------------------------

    def _open(self, endpoints: PeerEndpoints) -> Any:
        if self._memo is not None:
            return self._memo
        self._embedding = RemoteEmbedding(
            endpoints.embed_base_url, endpoints.embed_model, endpoints.api_key
        )
        memo = self.package.Memoryos(
            user_id=USER_ID,
            openai_api_key=endpoints.api_key,
            data_storage_path=str(self.workdir),
            openai_base_url=endpoints.llm_base_url,
            assistant_id=ASSISTANT_ID,
            llm_model=endpoints.llm_model,
            **self.options,
        )
        self._model = endpoints.llm_model
        memo.client.chat_completion = self._chat_call(memo.client.chat_completion)  # patch 3
        state = self.workdir / STATE_FILE
        if state.exists():
            saved = json.loads(state.read_text())
            memo.updater.last_evicted_page_for_continuity = saved.get("last_evicted_page")
            self._clock.restore(saved.get("clock"))
        self._memo = memo
        return memo

    def _operation(self, fn: Callable[..., Any], endpoints: PeerEndpoints, *args: Any) -> Any:
        """Run `fn(memo, *args)` with this arm's embedding endpoint (patch 2) and stream clock
        (patch 6) current."""
        with self._op_lock:
            clock = clock_var.set(self._clock)  # before opening: MemoryOS may stamp on load
            try:
                memo = self._open(endpoints)
                embedding = self._embedding
                before = embedding.requests
                token = embedding_var.set(embedding)
                try:
                    return fn(memo, *args)
                finally:
                    embedding_var.reset(token)
                    with self._lock:
                        self._count("embed_requests", embedding.requests - before)
            finally:
                clock_var.reset(clock)

    def _chat_call(self, original: Callable[..., str]) -> Callable[..., str]:
        """Patches 3 and 4: send the configured model, count calls by prompt, catch failures."""
        prompts = sys.modules["memoryos.prompts"]
        kinds = {getattr(prompts, name): kind for name, kind in PROMPT_KINDS.items()}

        def chat_completion(
            model: str, messages: list[dict[str, Any]], temperature: float = 0.7,
            max_tokens: int = 2000,
        ) -> str:  # fmt: skip
            system = messages[0].get("content", "") if messages else ""
            kind = kinds.get(system, "other")
            reply = original(
                model=self._model, messages=messages, temperature=temperature,
                max_tokens=max_tokens,
            )  # fmt: skip
            with self._lock:
                self._count("llm_calls")
                self._count(f"llm_{kind}")
                if model != self._model:
                    self._count("model_rewrites")
                if reply == LLM_ERROR:
                    self._count("llm_errors")
                    self._errors += 1
            return reply

        return chat_completion

    def _count(self, name: str, n: int = 1) -> None:
        self.stats[name] = self.stats.get(name, 0) + n

    def _check(self, what: str) -> None:
        """Patch 4: fail loudly when an LLM call inside MemoryOS failed."""
        with self._lock:
            errors, self._errors = self._errors, 0
        if errors:
            raise RuntimeError(
                f"MemoryOS: {errors} LLM call(s) to {self._model!r} failed during {what} "
                "(MemoryOS swallows the error; see the 'memoryos' log for the exception)"
            )

    def close(self) -> None:
        with self._op_lock:
            memo, self._memo = self._memo, None
            if memo is None:
                return
            last = memo.updater.last_evicted_page_for_continuity
            state = {"last_evicted_page": last, "clock": self._clock.state()}
            (self.workdir / STATE_FILE).write_text(json.dumps(state, ensure_ascii=False))
            memo.client.shutdown()
            memo.client.client.close()
            if self._embedding is not None:
                self._embedding.close()
                self._embedding = None

    # -- ingest --------------------------------------------------------------------------------

    async def ingest_items(self, items: Sequence[Item], endpoints: PeerEndpoints) -> None:
        await self.blocking(self._operation, self._ingest, endpoints, items)

    def _ingest(self, memo: Any, items: Sequence[Item]) -> None:
        for item in items:  # in arrival order, one add_memory pair each
            self._clock.advance(item)
            at = memoryos_time(item.at)
            if at is not None:
                self.stats["dated"] = True
            memo.add_memory(user_input=item.text, agent_response=AGENT_RESPONSE, timestamp=at)
            self._check(f"add_memory of item {item.index}")
            if self._clock.unusable:
                self.stats["summaries_unusable"] = self._clock.unusable
            if self._clock.fallbacks:
                self.stats["summaries_fallback"] = self._clock.fallbacks
            with self._lock:
                self._count("added")
        self._sizes(memo)

    def _sizes(self, memo: Any) -> None:
        sessions = memo.mid_term_memory.sessions.values()
        pages = {p.get("page_id") for s in sessions for p in s.get("details", [])}
        self.stats.update(
            short_term=len(memo.short_term_memory.get_all()),
            mid_term_sessions=len(memo.mid_term_memory.sessions),
            mid_term_pages=len(pages),
            user_knowledge=len(memo.user_long_term_memory.get_user_knowledge()),
            assistant_knowledge=len(memo.assistant_long_term_memory.get_assistant_knowledge()),
        )

    # -- read ----------------------------------------------------------------------------------

    def _line(self, page: dict[str, Any], mark: str = "") -> str:
        text = page.get("user_input", "")
        if self.stats.get("dated") and page.get("timestamp"):
            text = f"[{page['timestamp']}] {text}"
        return f"{mark} {text}" if mark else text

    async def search(self, query: str, endpoints: PeerEndpoints) -> list[str]:
        return await self.blocking(self._operation, self._search, endpoints, query)

    def _search(self, memo: Any, query: str) -> list[str]:
        """MemoryOS's retrieved pages and knowledge, by cosine with the query, top k."""
        found = memo.retriever.retrieve_context(
            user_query=query, user_id=USER_ID, top_k_sessions=self.top_k_sessions
        )
        self._check("retrieval")
        with self._lock:
            self._count("searches")
        query_vec = get_embedding(query)  # cached: the retriever embedded it already
        scored: list[tuple[float, str]] = []
        for page in found["retrieved_pages"]:  # the score MemoryOS ranks pages by
            vec = np.asarray(page["page_embedding"], dtype=np.float32)
            scored.append((float(vec @ query_vec), self._line(page)))
        knowledge = found["retrieved_user_knowledge"] + found["retrieved_assistant_knowledge"]
        for entry in knowledge:
            vec = np.asarray(entry["knowledge_embedding"], dtype=np.float32)
            text = entry["knowledge"].removeprefix("- ").strip()
            scored.append((float(vec @ query_vec), text))
        lines: list[str] = []
        for _, text in sorted(scored, key=lambda s: s[0], reverse=True):
            if text not in lines:  # a page filed under two themes is retrieved twice
                lines.append(text)
        self._sizes(memo)
        return lines[: self.k]

    async def recent(self, endpoints: PeerEndpoints) -> list[str]:
        """The short-term window, oldest first (what `get_response` shows besides retrieval)."""
        return await self.blocking(self._operation, self._recent, endpoints)

    def _recent(self, memo: Any) -> list[str]:
        return [self._line(qa, RECENT_MARK) for qa in memo.short_term_memory.get_all()]

    async def read(self, question: Any) -> Context:
        endpoints = await self.endpoints()
        lines = (await self.search(question.text, endpoints))[: self.k]
        retrieved = len(lines)
        if self.short_term:
            lines += await self.recent(endpoints)
        lines = [" ".join(line.split()) for line in lines]
        ids = tuple(f"{self.extra}-{i}" for i in range(len(lines)))
        meta = {**self.stats, "shown": len(lines), "retrieved": retrieved}
        return Context("\n".join(lines), ids, meta)
