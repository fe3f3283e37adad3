"""MemoryOS (`memoryos-pro==0.1.0`) as a peer arm (paper §4 "Baselines and protocol", B.1).

MemoryOS keeps a short-term window of QA pairs; when it is full the oldest pair becomes a
mid-term "page", grouped into topic sessions by an LLM summary, keywords and embeddings, and hot
sessions are mined into long-term user/assistant knowledge. An observation stream has no
dialogue, so every item is one `add_memory` pair: the item's text as the user turn, a fixed
acknowledgement as the agent's (`AGENT_RESPONSE`; MemoryOS drops pairs with an empty response
when they leave short-term memory), with the item's date as its timestamp.

Reading uses MemoryOS's own retriever (`Retriever.retrieve_context`: mid-term sessions by summary
similarity plus keywords, their pages by similarity, and long-term knowledge), never its
answer generation: the shared reader answers from the memories, as for every arm. The retrieved
pages and knowledge entries are ranked by MemoryOS's page score (cosine with the query) and the
top k are listed best first. `short_term=True` (the default) adds what `Memoryos.get_response`
always shows next to them: the short-term window (up to `short_term_capacity - 1` most recent
items, which the retriever never searches), in arrival order, each marked "[recent]".

The package is used as published, with these patches, all applied here and nowhere else
(peers.md, "MemoryOS"):

1. Import: `memoryos/utils.py` imports `sentence_transformers` at module top although only
   `get_embedding` uses it. When that package is absent, a placeholder module is put in
   `sys.modules` for the import only (its `SentenceTransformer` raises if ever built) and removed
   again, so no other package sees it.
2. Embeddings: `memoryos.utils.get_embedding` (a SentenceTransformer from a model hub, cached) is
   replaced, in `memoryos.utils` and in every memoryos module that imported it by name
   (`mid_term`, `long_term`; `updater` looks it up in `utils` at call time), by a call to the
   OpenAI-compatible `/embeddings` endpoint of `PeerEndpoints` (model `embed_model`, no
   `dimensions`), L2-normalised float32 and cached per text like the original. That function is
   module-global while each arm has its own endpoint (its gateway), so the arm's endpoint is a
   context variable set for each of its operations, and the `ThreadPoolExecutor` of every
   memoryos module (retrieval, updater, profile analysis and the client's pool) is replaced by
   one that runs each task in a copy of the submitter's context: concurrent arms in one process
   embed through their own endpoints.
3. Model: `memoryos.utils.llm_extract_keywords` defaults to `model="gpt-4o-mini"` and
   `mid_term.MidTermMemory.add_session`, `insert_pages_into_session`, `search_sessions` and
   `updater.Updater._process_page_embedding_and_keywords` call it without `model=`
   (`OpenAIClient.batch_chat_completion` has the same default). Rather than editing those call
   sites, this instance's `OpenAIClient.chat_completion` is wrapped so every call sends
   `endpoints.llm_model` (the `llm_model` MemoryOS is built with, which it calls its "unified
   model for all LLM operations"); rewrites are counted in `stats["model_rewrites"]`.
4. Errors: `OpenAIClient.chat_completion` swallows every exception and returns the string
   `LLM_ERROR`, which MemoryOS then stores as a summary or keyword. The wrapper counts those and
   the arm raises after the `add_memory`/retrieval in which one happened, so a failing endpoint
   stops the run instead of filling memory with error text.
5. Logging: MemoryOS `print`s several lines per call; a module-level `print` in each memoryos
   module routes them to the `memoryos` logger (DEBUG; its "Error..."/"Warning..." lines, e.g.
   an unparsable multi-summary JSON, at WARNING).
6. Clock and ids: MemoryOS stamps pages, sessions and visits with the wall clock
   (`utils.get_timestamp`) and names them with random ids (`utils.generate_id`). The stamps
   reach its prompts (the continuity check shows page times) and its session heat decays with
   them, so an ingest replayed after a kill would send other requests than the first attempt
   and re-pay them, or take other branches. Both are replaced, in every memoryos module that
   imported them by name, by the arm's stream clock (`StreamClock`, a context variable like
   patch 2's): the time of the item being added (its date, else `BASE_TIME` plus its index in
   seconds, always after the previous item's) and a counter for ids, both saved with the arm.
   The same stream then gives the same requests, and a killed ingest resumes from the
   response cache paying nothing twice.
7. Summaries of the wrong shape: MemoryOS parses the multi-topic summary as JSON and falls back
   to one general session when the reply is not JSON, but a reply that is JSON of another shape
   (a list of strings, an object: seen with the local 1.5B model) crashes its updater
   (`'str' object has no attribute 'get'`). `gpt_generate_multi_summary` is wrapped so such a
   reply takes MemoryOS's own fallback too (the list's objects are kept as they are, anything
   else dropped; none left: the fallback), counted in `stats["summaries_unusable"]`. A reply
   MemoryOS could already take is passed through unchanged.

One MemoryOS operation runs at a time per arm (it rewrites its JSON files on every change and
bumps session heat on every search).

Persisted state is MemoryOS's own JSON files under `workdir`, plus `arm_state.json` for the one
thing it keeps only in memory (`Updater.last_evicted_page_for_continuity`, the previous page of
the continuity check), so save -> load -> ingest continues the chain as an unbroken run would.
"""

from __future__ import annotations

import contextvars
import datetime as dt
import importlib
import importlib.machinery
import importlib.util
import json
import logging
import sys
import threading
import types
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, ClassVar

import numpy as np

from baselines.peers.base import Item, PeerArm, PeerEndpoints
from benchmarks.runner.arm import Context, Services

log = logging.getLogger("memoryos")

AGENT_RESPONSE = "Noted."  # the agent's turn of an observation (see the module docstring)
USER_ID = "history"  # one user per arm (MemoryOS keeps users under data_storage_path/users/)
ASSISTANT_ID = "reader"
LLM_ERROR = "Error: Could not get response from LLM."  # memoryos.utils.OpenAIClient's sentinel
TIME_FORMAT = "%Y-%m-%d %H:%M:%S"  # memoryos.utils.get_timestamp's format
STATE_FILE = "arm_state.json"
EMBED_CACHE_MAX = 10_000  # like memoryos.utils._embedding_cache
RECENT_MARK = "[recent]"
PATCHED = "_pmem_memoryos_arm_patched"  # set on the memoryos package once it is patched

# Which MemoryOS prompt a chat call is, by its system prompt's name in memoryos.prompts.
PROMPT_KINDS = {
    "EXTRACT_KEYWORDS_SYSTEM_PROMPT": "keywords",
    "CONTINUITY_CHECK_SYSTEM_PROMPT": "continuity",
    "META_INFO_SYSTEM_PROMPT": "meta_info",
    "MULTI_SUMMARY_SYSTEM_PROMPT": "multi_summary",
    "PERSONALITY_ANALYSIS_SYSTEM_PROMPT": "profile",
    "KNOWLEDGE_EXTRACTION_SYSTEM_PROMPT": "knowledge",
    "GENERATE_SYSTEM_RESPONSE_SYSTEM_PROMPT": "response",
}


# -- patch 1: import without sentence_transformers ---------------------------------------------


class _NoSentenceTransformer:
    """What `memoryos.utils` imports in place of sentence_transformers.SentenceTransformer."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError(
            "MemoryOS tried to load a SentenceTransformer; the MemoryOS arm replaces "
            "memoryos.utils.get_embedding with the configured embedding endpoint"
        )


def _quiet(module: types.ModuleType) -> None:
    """Patch 5: a module-level `print` that logs (module globals shadow the builtin)."""

    def _print(*args: Any, **_: Any) -> None:
        text = " ".join(str(a) for a in args)
        level = logging.WARNING if text.startswith(("Error", "Warning")) else logging.DEBUG
        log.log(level, "%s", text)

    module.print = _print  # type: ignore[attr-defined]


def memoryos_modules() -> list[types.ModuleType]:
    return [m for n, m in list(sys.modules.items()) if n.startswith("memoryos.") and m]


def import_memoryos() -> types.ModuleType | None:
    """Import memoryos and patch it once (patches 1, 2, 5, 6 and 7); None when it is not installed
    (the base then says how to install it)."""
    module = sys.modules.get("memoryos")
    if module is None:
        if importlib.util.find_spec("memoryos") is None:
            return None
        placeholder = None
        if importlib.util.find_spec("sentence_transformers") is None:
            placeholder = types.ModuleType("sentence_transformers")
            placeholder.__spec__ = importlib.machinery.ModuleSpec("sentence_transformers", None)
            placeholder.SentenceTransformer = _NoSentenceTransformer  # type: ignore[attr-defined]
            sys.modules["sentence_transformers"] = placeholder
        try:
            module = importlib.import_module("memoryos")
        finally:
            if placeholder is not None and sys.modules.get("sentence_transformers") is placeholder:
                del sys.modules["sentence_transformers"]
    if not getattr(module, PATCHED, False):
        summaries = _summaries_wrapper(sys.modules["memoryos.utils"].gpt_generate_multi_summary)
        replacements = {
            "get_embedding": get_embedding,  # patch 2
            "ThreadPoolExecutor": ContextExecutor,  # patch 2
            "get_timestamp": get_timestamp,  # patch 6
            "generate_id": generate_id,  # patch 6
            "gpt_generate_multi_summary": summaries,  # patch 7
        }
        for sub in memoryos_modules():
            _quiet(sub)  # patch 5
            for name, replacement in replacements.items():
                if hasattr(sub, name):
                    setattr(sub, name, replacement)
        setattr(module, PATCHED, True)
    return module


# -- patch 2: embeddings from the configured endpoint ------------------------------------------


class RemoteEmbedding:
    """`get_embedding(text)` over an OpenAI-compatible `/embeddings` endpoint, cached per text.

    MemoryOS's retriever embeds the query in two threads at once (mid-term pages and long-term
    knowledge); the second waits for the first's request instead of sending its own, so a run
    pays the same requests whatever the threads' timing (a resumed run matches an unbroken one).
    """

    def __init__(self, base_url: str, model: str, api_key: str) -> None:
        from openai import OpenAI

        self.model = model
        self._client = OpenAI(base_url=base_url, api_key=api_key)
        self._cache: dict[str, np.ndarray] = {}
        self._pending: dict[str, Future[np.ndarray]] = {}
        self._lock = threading.Lock()
        self.requests = 0

    def __call__(self, text: str, model_name: str = "", use_cache: bool = True) -> np.ndarray:
        # model_name names MemoryOS's SentenceTransformer; the endpoint's model is used instead
        if not use_cache:
            return self._request(text)
        with self._lock:
            hit = self._cache.get(text)
            if hit is not None:
                return hit
            pending = self._pending.get(text)
            if pending is None:
                mine: Future[np.ndarray] = Future()
                self._pending[text] = mine
        if pending is not None:
            return pending.result()  # raises what the request raised
        try:
            vec = self._request(text)
        except BaseException as exc:
            mine.set_exception(exc)
            raise
        else:
            mine.set_result(vec)
            with self._lock:
                if len(self._cache) >= EMBED_CACHE_MAX:
                    for old in list(self._cache)[:1000]:
                        del self._cache[old]
                self._cache[text] = vec
            return vec
        finally:
            with self._lock:
                self._pending.pop(text, None)

    def _request(self, text: str) -> np.ndarray:
        reply = self._client.embeddings.create(
            model=self.model, input=[text], encoding_format="float"
        )
        vec = np.asarray(reply.data[0].embedding, dtype=np.float32)
        norm = float(np.linalg.norm(vec))
        with self._lock:
            self.requests += 1
        return vec / norm if norm > 0 else vec  # unit length, like all-MiniLM-L6-v2's output

    def close(self) -> None:
        self._client.close()


# -- patch 7: a multi-topic summary of the wrong shape takes MemoryOS's own fallback -----------


def usable_summaries(summaries: Any) -> list[Any]:
    """The topic items of a parsed multi-summary that MemoryOS's updater can take: the objects
    of a list, as they are (MemoryOS supplies its own defaults for missing fields). Anything
    else is dropped; [] sends the batch to MemoryOS's fallback, as an unparsable reply does."""
    if not isinstance(summaries, list):
        return []
    return [item for item in summaries if isinstance(item, dict)]


def _summaries_wrapper(original: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
    def gpt_generate_multi_summary(text: str, client: Any, model: str = "") -> dict[str, Any]:
        result = original(text, client, model=model)
        kept = usable_summaries(result.get("summaries"))
        if kept != result.get("summaries"):
            log.warning("memoryos: multi-summary of the wrong shape, %d topic(s) kept", len(kept))
            clock = _clock.get()
            if clock is not None:
                clock.unusable += 1
        return {**result, "summaries": kept}

    return gpt_generate_multi_summary


# -- patch 6: the stream's clock and ids -------------------------------------------------------

BASE_TIME = dt.datetime(2000, 1, 1)  # an undated item's time: this plus its index in seconds


class StreamClock:
    """An arm's clock for MemoryOS (patch 6): stream time, not wall time, and counted ids."""

    def __init__(self, now: dt.datetime = BASE_TIME, ids: int = 0) -> None:
        self.now, self.ids = now, ids
        self.unusable = 0  # patch 7's count, read into the arm's stats
        self._lock = threading.Lock()  # MemoryOS names pages from its thread pools

    def advance(self, item: Item) -> None:
        """To the item's time: its date, else BASE_TIME + its index in seconds; one second
        after the current time when that would not follow it (arrival order is time order)."""
        when = _parse_date(item.at) or BASE_TIME + dt.timedelta(seconds=item.index)
        self.now = when if when > self.now else self.now + dt.timedelta(seconds=1)

    def timestamp(self) -> str:
        return self.now.strftime(TIME_FORMAT)

    def next_id(self, prefix: str) -> str:
        with self._lock:
            self.ids += 1
            return f"{prefix}_{self.ids:08x}"

    def state(self) -> dict[str, Any]:
        return {"now": self.now.isoformat(), "ids": self.ids, "unusable": self.unusable}

    def restore(self, state: dict[str, Any] | None) -> None:
        """Continue from a saved `state()` (in place: a running operation holds this clock)."""
        if state:
            self.now, self.ids = dt.datetime.fromisoformat(state["now"]), int(state["ids"])
            self.unusable = int(state.get("unusable", 0))


def _parse_date(at: str | None) -> dt.datetime | None:
    if not at:
        return None
    try:
        when = dt.datetime.fromisoformat(at.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return when.replace(tzinfo=None)


#: the clock of the arm whose operation is running (carried into memoryos's pools like
#: `_current`)
_clock: contextvars.ContextVar[StreamClock | None] = contextvars.ContextVar(
    "memoryos_clock", default=None
)


def _running_clock() -> StreamClock:
    clock = _clock.get()
    if clock is None:
        raise RuntimeError("MemoryOS read the clock outside an operation of a MemoryOS arm")
    return clock


def get_timestamp() -> str:
    """What MemoryOS calls in place of `memoryos.utils.get_timestamp`: the stream's time."""
    return _running_clock().timestamp()


def generate_id(prefix: str = "id") -> str:
    """What MemoryOS calls in place of `memoryos.utils.generate_id`: a counted id."""
    return _running_clock().next_id(prefix)


#: the embedding function of the arm whose operation is running (set in its worker thread;
#: memoryos's own thread pools carry it over, see `ContextExecutor`)
_current: contextvars.ContextVar[RemoteEmbedding | None] = contextvars.ContextVar(
    "memoryos_embedding", default=None
)


def get_embedding(text: str, model_name: str = "", use_cache: bool = True) -> np.ndarray:
    """What MemoryOS calls in place of `memoryos.utils.get_embedding` (same signature)."""
    embedding = _current.get()
    if embedding is None:
        raise RuntimeError("MemoryOS embedded a text outside an operation of a MemoryOS arm")
    return embedding(text, model_name, use_cache)


class ContextExecutor(ThreadPoolExecutor):
    """A thread pool whose tasks run in a copy of the submitter's context (patch 2)."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        return super().submit(contextvars.copy_context().run, fn, *args, **kwargs)


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
    """MemoryOS through `memoryos-pro` (see the module docstring for the patches)."""

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
            clock = _clock.set(self._clock)  # before opening: MemoryOS may stamp on load
            try:
                memo = self._open(endpoints)
                embedding = self._embedding
                before = embedding.requests
                token = _current.set(embedding)
                try:
                    return fn(memo, *args)
                finally:
                    _current.reset(token)
                    with self._lock:
                        self._count("embed_requests", embedding.requests - before)
            finally:
                _clock.reset(clock)

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
