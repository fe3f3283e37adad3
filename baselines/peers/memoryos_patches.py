"""The patches that let `memoryos-pro==0.1.0` run as a peer arm (`memoryos_arm.MemoryOSArm`).

The package is used as published, with these patches, all applied here (by `import_memoryos`)
and nowhere else (peers.md, "MemoryOS"); patches 3 and 4 wrap one instance's client and live
with the arm:

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
   MemoryOS could already take is passed through unchanged. Every summary that ends in the
   fallback (no topic left: unparsable, empty or of the wrong shape) is counted in
   `stats["summaries_fallback"]`, since MemoryOS itself only prints a warning for the first.
"""

from __future__ import annotations

import contextvars
import datetime as dt
import importlib
import importlib.machinery
import importlib.util
import logging
import sys
import threading
import types
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numpy as np

from baselines.peers.base import Item

log = logging.getLogger("memoryos")

LLM_ERROR = "Error: Could not get response from LLM."  # memoryos.utils.OpenAIClient's sentinel
TIME_FORMAT = "%Y-%m-%d %H:%M:%S"  # memoryos.utils.get_timestamp's format
EMBED_CACHE_MAX = 10_000  # like memoryos.utils._embedding_cache
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
        clock = clock_var.get()
        if kept != result.get("summaries"):
            log.warning("memoryos: multi-summary of the wrong shape, %d topic(s) kept", len(kept))
            if clock is not None:
                clock.unusable += 1
        if not kept and clock is not None:  # unparsable ones arrive here as [] from MemoryOS
            clock.fallbacks += 1
        return {**result, "summaries": kept}

    return gpt_generate_multi_summary


# -- patch 6: the stream's clock and ids -------------------------------------------------------

BASE_TIME = dt.datetime(2000, 1, 1)  # an undated item's time: this plus its index in seconds


class StreamClock:
    """An arm's clock for MemoryOS (patch 6): stream time, not wall time, and counted ids."""

    def __init__(self, now: dt.datetime = BASE_TIME, ids: int = 0) -> None:
        self.now, self.ids = now, ids
        self.unusable = 0  # patch 7's counts, read into the arm's stats
        self.fallbacks = 0
        self._lock = threading.Lock()  # MemoryOS names pages from its thread pools

    def advance(self, item: Item) -> None:
        """To the item's time: its date, else BASE_TIME + its index in seconds; one second
        after the current time when that would not follow it (arrival order is time order)."""
        when = item.date()  # MemoryOS's clock is naive: the date's own wall time, zone dropped
        when = when.replace(tzinfo=None) if when else BASE_TIME + dt.timedelta(seconds=item.index)
        self.now = when if when > self.now else self.now + dt.timedelta(seconds=1)

    def timestamp(self) -> str:
        return self.now.strftime(TIME_FORMAT)

    def next_id(self, prefix: str) -> str:
        with self._lock:
            self.ids += 1
            return f"{prefix}_{self.ids:08x}"

    def state(self) -> dict[str, Any]:
        return {
            "now": self.now.isoformat(),
            "ids": self.ids,
            "unusable": self.unusable,
            "fallbacks": self.fallbacks,
        }

    def restore(self, state: dict[str, Any] | None) -> None:
        """Continue from a saved `state()` (in place: a running operation holds this clock)."""
        if state:
            self.now, self.ids = dt.datetime.fromisoformat(state["now"]), int(state["ids"])
            self.unusable = int(state.get("unusable", 0))
            self.fallbacks = int(state.get("fallbacks", 0))


#: the clock of the arm whose operation is running (carried into memoryos's pools like
#: `embedding_var`)
clock_var: contextvars.ContextVar[StreamClock | None] = contextvars.ContextVar(
    "memoryos_clock", default=None
)


def _running_clock() -> StreamClock:
    clock = clock_var.get()
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
embedding_var: contextvars.ContextVar[RemoteEmbedding | None] = contextvars.ContextVar(
    "memoryos_embedding", default=None
)


def get_embedding(text: str, model_name: str = "", use_cache: bool = True) -> np.ndarray:
    """What MemoryOS calls in place of `memoryos.utils.get_embedding` (same signature)."""
    embedding = embedding_var.get()
    if embedding is None:
        raise RuntimeError("MemoryOS embedded a text outside an operation of a MemoryOS arm")
    return embedding(text, model_name, use_cache)


class ContextExecutor(ThreadPoolExecutor):
    """A thread pool whose tasks run in a copy of the submitter's context (patch 2)."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        return super().submit(contextvars.copy_context().run, fn, *args, **kwargs)
