"""The Mem0 arm: the CRUD corner of the design space, run through mem0ai 1.0.1 itself.

Paper §4 ("per-fact add/update/delete, so displaced values are overwritten"), B.1 (Mem0's LLM
deciding add/update/delete per fact, top-12 retrieval) and B.4 (the same chunks, a domain
fact-extraction prompt, add/update/delete unmodified). Mem0 is not reimplemented: every item
goes through `Memory.add(..., infer=True)` and the question through `Memory.search(limit=k)`;
its files (qdrant on disk, the SQLite history) live in the arm's folder, so snapshots copy them.
"""

from __future__ import annotations

import importlib
import json
import os
import shutil
import sys
import tempfile
import threading
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from baselines.peers.base import Item, PeerArm, PeerEndpoints, scoped_environ
from benchmarks.runner.arm import Services

USER_ID = "pmem"  # every arm has its own store, so one Mem0 user per arm is enough
COLLECTION = "mem0"
EVENTS = ("ADD", "UPDATE", "DELETE", "NONE")  # Mem0's update-step decisions
ALL_MEMORIES = 10**9  # get_all's limit when counting what is stored (its default is 100)

# Ours (the paper does not print its prompt, B.4): the same contract as Mem0's default prompt,
# which it replaces as the system message (the user message stays "Input:\nuser: <item>").
FACTCONSOLIDATION_PROMPT = """\
You extract facts for a knowledge base. The input is a numbered list of facts; a fact with a \
larger serial number was stated later and replaces an earlier one about the same thing.

Extract every fact stated in the input as one short, self-contained sentence:
- Keep the fact's serial number at the start, as written ("12. ...").
- Keep names, titles and values exactly as written. Do not paraphrase, translate or correct a \
fact, even if it looks false: the facts may be counterfactual.
- One fact per sentence, in input order. Do not merge facts or add facts that are not stated.

Return JSON only, in this form: {"facts": ["<fact>", ...]}. If the input states no fact, \
return {"facts": []}.

Example
Input:
user: 0. The capital of Veloria is Dunmere.
1. Anna Berg works in the field of chemistry.
Output: {"facts": ["0. The capital of Veloria is Dunmere.", "1. Anna Berg works in the field \
of chemistry."]}
"""

FACT_PROMPTS: dict[str, str] = {"factconsolidation": FACTCONSOLIDATION_PROMPT}

_GLOBALS = threading.Lock()  # guards the process-wide state mem0 keeps: env at import, mem0_dir


def _event_order(entry: tuple[str, int]) -> tuple[int, str]:
    return (EVENTS.index(entry[0]) if entry[0] in EVENTS else len(EVENTS), entry[0])


def _no_telemetry(*args: Any, **kwargs: Any) -> None:
    """Stands in for mem0's `capture_event`: with telemetry off mem0 still builds a PostHog
    client (a sender thread and an exit hook) on every call."""


def import_mem0(home: Path) -> None:
    """Import mem0 once per process with MEM0_DIR=`home` and telemetry off, then restore env.

    A missing package is left to the base class, which names the install command.
    """
    with _GLOBALS:
        if "mem0.memory.main" not in sys.modules:
            try:
                with scoped_environ({"MEM0_DIR": str(home), "MEM0_TELEMETRY": "False"}):
                    importlib.import_module("mem0")
            except ImportError:
                return
        # Also when someone else imported mem0 first: never let it post events.
        sys.modules["mem0.memory.telemetry"].MEM0_TELEMETRY = False
        sys.modules["mem0.memory.main"].capture_event = _no_telemetry


class Mem0Arm(PeerArm):
    """Mem0's own add (extract, then ADD/UPDATE/DELETE/NONE) per item; its top-k search.

    What is ours, not Mem0's: `fact_prompt` None keeps Mem0's extraction prompt;
    "factconsolidation" passes ours as `custom_fact_extraction_prompt` (the paper does not print
    its own), keeping each fact's serial number, by which the FactConsolidation reader resolves
    conflicts; the update prompt is never changed. Each item is one user message, its date (if
    any) opening the text and kept in the metadata. `introspect` lists every memory Mem0 has
    held, deleted ones included, with the texts its history kept (`store_facts`).

    How mem0 1.0.1 reads its environment (checked in its source; peers.md): `MEM0_DIR` and
    `MEM0_TELEMETRY` are read once, at import, which also writes `config.json` into `MEM0_DIR`
    (`import_mem0` sets them around the first import only). Every `Memory()` opens a second
    local qdrant store under the module global `mem0.memory.main.mem0_dir`; qdrant locks its
    folder, so that global points at this arm's folder while its `Memory` is built (under a
    lock). `OPENROUTER_API_KEY` would send mem0's LLM calls to OpenRouter whatever the config
    says: the arm refuses to start when it is set.
    """

    module: ClassVar[str] = "mem0"
    extra: ClassVar[str] = "mem0"
    incremental: ClassVar[bool] = True  # one item per call (base class: progress)
    lists_store: ClassVar[bool] = True
    prompts: ClassVar[dict[str, str]] = {f"fact_{n}": p for n, p in FACT_PROMPTS.items()}

    def __init__(
        self,
        services: Services | None = None,
        k: int = 12,
        chunk_size: int | None = None,
        workdir: str | None = None,
        fact_prompt: str | None = None,
        introspect: bool = False,
    ) -> None:
        if fact_prompt is not None and fact_prompt not in FACT_PROMPTS:
            choices = ", ".join(FACT_PROMPTS)
            raise ValueError(f"arm.fact_prompt={fact_prompt!r}; choose null or one of {choices}")
        # MEM0_DIR must name a folder before the first import, which the base class performs.
        own = workdir is None
        folder = Path(workdir or tempfile.mkdtemp(prefix="pmem-mem0-"))
        folder.mkdir(parents=True, exist_ok=True)
        import_mem0(folder)
        try:
            super().__init__(
                services, k=k, chunk_size=chunk_size, workdir=str(folder), introspect=introspect
            )
        except BaseException:
            if own:
                shutil.rmtree(folder, ignore_errors=True)
            raise
        self._own_workdir = own
        self.fact_prompt = fact_prompt
        self._client: Any = None
        self._stats_lock = threading.Lock()

    # -- the package, opened lazily over the working folder -------------------------------------

    def config(self, endpoints: PeerEndpoints) -> dict[str, Any]:
        """Mem0's config (peers.md): every model call to the endpoints, every file in workdir."""
        return {
            "llm": {
                "provider": "openai",
                "config": {
                    "model": endpoints.llm_model,
                    "openai_base_url": endpoints.llm_base_url,
                    "api_key": endpoints.api_key,
                    "temperature": 0.0,
                    "response_callback": self._count_reply,
                },
            },
            "embedder": {
                "provider": "openai",
                "config": {
                    "model": endpoints.embed_model,
                    "openai_base_url": endpoints.embed_base_url,
                    "api_key": endpoints.api_key,
                    "embedding_dims": endpoints.embedding_dim,
                },
            },
            "vector_store": {
                "provider": "qdrant",
                "config": {
                    "collection_name": COLLECTION,
                    "path": str(self.workdir / "qdrant"),
                    "on_disk": True,  # False would delete the folder on open
                    "embedding_model_dims": endpoints.embedding_dim,
                },
            },
            "history_db_path": str(self.workdir / "history.db"),
            "custom_fact_extraction_prompt": (
                FACT_PROMPTS[self.fact_prompt] if self.fact_prompt is not None else None
            ),
            "version": "v1.1",
        }

    def memory(self, endpoints: PeerEndpoints) -> Any:
        """The `mem0.Memory` over this arm's folder (blocking; call it in a worker thread)."""
        if self._client is None:
            if os.environ.get("OPENROUTER_API_KEY"):
                raise RuntimeError(
                    "OPENROUTER_API_KEY is set: mem0 1.0.1 would send its LLM calls to "
                    "OpenRouter instead of the configured endpoint; unset it to run this arm"
                )
            import_mem0(self.workdir)
            main = sys.modules["mem0.memory.main"]
            with _GLOBALS:  # the telemetry store's folder comes from a module global
                saved, main.mem0_dir = main.mem0_dir, str(self.workdir)
                try:
                    self._client = main.Memory.from_config(self.config(endpoints))
                finally:
                    main.mem0_dir = saved
        return self._client

    def close(self) -> None:
        client, self._client = self._client, None
        if client is None:
            return
        for store in (client.vector_store, getattr(client, "_telemetry_vector_store", None)):
            if store is not None:
                store.client.close()  # releases qdrant's folder lock
        client.db.close()
        for model in (client.llm, client.embedding_model):
            model.client.close()

    # -- counters ------------------------------------------------------------------------------

    def _count_reply(self, llm: Any, response: Any, params: dict[str, Any]) -> None:
        """Mem0's response callback: what each LLM call proposed, NONE included (add() only
        reports the changes it applied)."""
        from mem0.memory.utils import remove_code_blocks

        messages = params.get("messages") or [{}]
        kind = "extract" if messages[0].get("role") == "system" else "update"
        try:
            reply = json.loads(remove_code_blocks(response.choices[0].message.content or ""))
        except (ValueError, AttributeError, IndexError, TypeError):
            reply = None
        with self._stats_lock:
            calls = self.stats.setdefault("llm_calls", {})
            calls[kind] = calls.get(kind, 0) + 1
            if not isinstance(reply, dict):
                self.stats["unparsed_replies"] = self.stats.get("unparsed_replies", 0) + 1
            elif kind == "extract":
                self.stats["facts"] = self.stats.get("facts", 0) + len(reply.get("facts") or [])
            else:
                proposed = self.stats.setdefault("proposed", {})
                for entry in reply.get("memory") or []:
                    event = str(entry.get("event")) if isinstance(entry, dict) else "?"
                    proposed[event] = proposed.get(event, 0) + 1

    # -- the interface -------------------------------------------------------------------------

    async def ingest_items(self, items: Sequence[Item], endpoints: PeerEndpoints) -> None:
        events: Counter[str] = Counter(self.stats.get("events", {}))
        for item in items:  # one add per item, in arrival order; each add is sequential inside
            results = await self.blocking(self._add, item, endpoints)
            events.update(str(r.get("event")) for r in results)  # the changes add() applied
            self.stats["events"] = dict(sorted(events.items(), key=_event_order))
        self.stats["memories"] = await self.blocking(self._count, endpoints)

    def _add(self, item: Item, endpoints: PeerEndpoints) -> list[dict[str, Any]]:
        text = item.text if item.at is None else f"Date: {item.at}\n{item.text}"
        metadata: dict[str, Any] = {"item": item.index}
        if item.at is not None:
            metadata["at"] = item.at
        out = self.memory(endpoints).add(
            [{"role": "user", "content": text}], user_id=USER_ID, metadata=metadata, infer=True
        )
        return list(out["results"])

    def _count(self, endpoints: PeerEndpoints) -> int:
        out = self.memory(endpoints).get_all(user_id=USER_ID, limit=ALL_MEMORIES)
        return len(out["results"])

    async def search(self, query: str, endpoints: PeerEndpoints) -> list[str]:
        return await self.blocking(self._search, query, endpoints)

    def _search(self, query: str, endpoints: PeerEndpoints) -> list[str]:
        out = self.memory(endpoints).search(query, user_id=USER_ID, limit=self.k)
        return [str(r["memory"]) for r in out["results"]]

    def history(self, memory_id: str, endpoints: PeerEndpoints) -> list[dict[str, Any]]:
        """Mem0's event trail for one memory (blocking): what UPDATE and DELETE displaced."""
        return list(self.memory(endpoints).history(memory_id))

    def memories(self, endpoints: PeerEndpoints) -> list[dict[str, Any]]:
        """Everything stored, with ids (blocking)."""
        return list(self.memory(endpoints).get_all(user_id=USER_ID, limit=ALL_MEMORIES)["results"])

    async def store_facts(self, endpoints: PeerEndpoints) -> list[dict[str, Any]]:
        return await self.blocking(self._store_facts, endpoints)

    def _store_facts(self, endpoints: PeerEndpoints) -> list[dict[str, Any]]:
        """Every memory Mem0 has held, in the order it was first written: a current one
        (`get_all`) is valid; one that a DELETE removed is listed from its history, not valid.
        `former` holds every other text its history kept (what UPDATE overwrote, what DELETE
        removed), `events` its ADD/UPDATE/DELETE trail. The trail is read from Mem0's history
        table in insertion order: `Memory.history()` sorts by `created_at`, which its DELETE
        rows lack (NULL sorts first), so it would list a deletion before the memory's ADD."""
        client = self.memory(endpoints)
        current = {str(m["id"]): str(m["memory"]) for m in self.memories(endpoints)}
        with client.db._lock:
            rows = client.db.connection.execute(
                "SELECT memory_id, event, old_memory, new_memory FROM history ORDER BY rowid"
            ).fetchall()
        trails: dict[str, list[tuple[str, str | None, str | None]]] = {}
        for memory_id, event, old, new in rows:
            trails.setdefault(str(memory_id), []).append((str(event), old, new))
        for memory_id in current:
            trails.setdefault(memory_id, [])
        facts = []
        for memory_id, trail in trails.items():
            texts = [t for _, old, new in trail for t in (old, new) if t]
            text = current.get(memory_id) or (texts[-1] if texts else "")
            facts.append(
                {
                    "text": text,
                    "valid": memory_id in current,
                    "former": [t for t in dict.fromkeys(texts) if t != text],
                    "id": memory_id,
                    "events": [event for event, _, _ in trail],
                }
            )
        return facts
