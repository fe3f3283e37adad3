"""The seven patches that let `memoryos-pro==0.1.0` run as a peer arm (peers.md, "MemoryOS").

The package is used as published plus these patches, numbered as in `import_memoryos`, which
applies 1, 2, 5, 6 and 7; patches 3 (the configured model) and 4 (failed calls stop the run)
wrap one instance's client and live with the arm (`memoryos_arm.MemoryOSArm`).
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
    (the base then says how to install it).

    1. Import: `memoryos/utils.py` imports `sentence_transformers` at top level for
       `get_embedding` only; when it is absent a placeholder (whose `SentenceTransformer` raises
       if built) sits in `sys.modules` for the import only.
    2. Embeddings: `get_embedding` is replaced, in `memoryos.utils` and every module that
       imported it by name, by the `/embeddings` endpoint of `PeerEndpoints` (no `dimensions`),
       L2-normalised float32, cached per text. Each arm's endpoint is a context variable, and
       every memoryos `ThreadPoolExecutor` runs tasks in a copy of the submitter's context, so
       concurrent arms embed through their own endpoints.
    3. Model (arm): `llm_extract_keywords` and `batch_chat_completion` default to
       `gpt-4o-mini` and several call sites pass no `model=`; the instance's
       `chat_completion` is wrapped to send `endpoints.llm_model` (counted in
       `stats["model_rewrites"]`).
    4. Errors (arm): `chat_completion` swallows exceptions and returns `LLM_ERROR`, which
       MemoryOS would store; the arm counts them and raises after the operation.
    5. Logging: a module-level `print` in each memoryos module routes its prints to the
       `memoryos` logger (DEBUG; "Error..."/"Warning..." lines at WARNING).
    6. Clock and ids: `utils.get_timestamp` and `utils.generate_id` (wall clock, random ids)
       reach prompts and session heat, so a replayed ingest would send other requests. They are
       replaced by the arm's `StreamClock` (a context variable): the item's date, else
       `BASE_TIME` plus its index in seconds, and a counter for ids, both saved with the arm, so
       a killed ingest resumes from the response cache paying nothing twice.
    7. Summaries of the wrong shape: JSON of another shape (a list of strings, an object: seen
       with the local 1.5B model) crashes the updater; `gpt_generate_multi_summary` is wrapped
       so it takes MemoryOS's own one-session fallback (list objects kept, anything else
       dropped; `stats["summaries_unusable"]`). Every reply ending in the fallback is counted in
       `stats["summaries_fallback"]`, since MemoryOS only warns for the first.
    """
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
