"""What every peer memory system's arm shares (paper §4 "Baselines and protocol", B.1, B.4).

An arm adapts one package (installed as an extra, telemetry off) to `MemoryArm`: `ingest` feeds
the episode's items in arrival order, `read` lists the package's top-k memories one per line
for the shared reader. The packages call OpenAI-compatible servers themselves, so they get base
URLs: `PeerArm.endpoints` is where every call must go; subclasses never read the profile's URLs.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, ClassVar

from baselines.base import Item, items_of
from baselines.peers.gateway import Gateway
from benchmarks.runner.arm import Context, MemoryArm, Services
from benchmarks.runner.types import Event, InputError
from benchmarks.scoring.scorers import names_subject

__all__ = [
    "Item",
    "PeerArm",
    "PeerEndpoints",
    "PeerNotInstalled",
    "items_of",
    "names_subject",
    "require",
    "scoped_environ",
]

PEER_DIR = "peer"  # the package's own files, inside an arm's snapshot folder
STATS_FILE = "peer_stats.json"
#: at most this many store facts recorded per read (the most recent): a bound on the records
INTROSPECT_LIMIT = 200


class PeerNotInstalled(InputError, ImportError):
    """A peer package is missing; the message names the command that installs it."""


#: peers whose published pins cannot be resolved: the extra carries the dependencies that work
#: and the package goes in with --no-deps (the Makefile's NODEPS_* say the same; a test checks)
NO_DEPS = {"memoryos": "memoryos-pro==0.1.0", "hipporag": "hipporag==2.0.0a4"}


def install_command(extra: str) -> str:
    """How to install one peer extra, with the --no-deps step pip extras cannot express."""
    pip = f"pip install -c constraints.txt -e '.[{extra}]'"
    if extra in NO_DEPS:
        pip += f" && pip install --no-deps {NO_DEPS[extra]}"
    return f"make setup-peers PEERS={extra}   (or: {pip})"


def require(module: str, extra: str) -> ModuleType:
    """Import a peer package, or fail naming the extra and the command that installs it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        if exc.name is not None and exc.name != module and not module.startswith(exc.name):
            raise  # the package is there but broken: show the real error
        raise PeerNotInstalled(
            f"the {extra} arm needs the package {module!r}, which is not installed; "
            f"install it with: {install_command(extra)}"
        ) from exc


@dataclass(frozen=True, slots=True)
class PeerEndpoints:
    """Where a peer package must send its calls, and what it must ask for."""

    llm_base_url: str
    llm_model: str
    embed_base_url: str
    embed_model: str
    embedding_dim: int
    api_key: str = "EMPTY"  # OpenAI clients refuse an empty key; local servers ignore it


@contextmanager
def scoped_environ(values: Mapping[str, str], *, keep_set: bool = False) -> Iterator[None]:
    """Set environment variables for the block only, then put back what was there.

    Peer packages read some settings from the environment when they are imported or build
    their clients (Mem0's home folder, HippoRAG's OpenAI key); left set, those would reach
    everything else in the process. `keep_set`: leave a variable that is already set alone.
    """
    saved = {name: os.environ.get(name) for name in values}
    for name, value in values.items():
        if not (keep_set and saved[name] is not None):
            os.environ[name] = value
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def quiet_telemetry() -> None:
    """Every telemetry switch the peers read (peers.md); set before any of them is imported.

    Only switches that stop reporting home: the process stays free to use the model hub.
    ``HF_HUB_OFFLINE`` / ``TRANSFORMERS_OFFLINE`` are deliberately not set here. huggingface_hub
    reads them once, when it is first imported, so setting them for a peer would refuse every
    later hub download in the same process (a LongMemEval file, the FactConsolidation parquet).
    No peer arm needs the hub: their models are reached through the gateway, and MemoryOS's
    SentenceTransformer is replaced (`memoryos_patches`).
    """
    os.environ.setdefault("MEM0_TELEMETRY", "False")
    os.environ.setdefault("GRAPHITI_TELEMETRY_ENABLED", "false")
    os.environ.setdefault("POSTHOG_DISABLED", "1")
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")


class PeerCallFailed(RuntimeError):
    """A peer package's model call failed; its store may lack what the call would have added."""


class PeerArm(MemoryArm):
    """Base of the peer arms: endpoints, a private working folder, snapshots, rendering.

    Subclasses set `module` and `extra`, and implement `ingest_items` and `search` (both may
    block: they run in a worker thread unless the package is async); those that can list their
    store for `introspect` implement `store_facts` and set `lists_store`.

    Ingest units: with `chunk_size` (FactConsolidation, B.4: "the same chunks") the episode's
    lines are packed into line-aligned chunks of at most that many characters; otherwise each
    event is one item (an ALFWorld sentence, a LongMemEval session) with its date.

    `introspect=True` (the ALFWorld-Revision probes): each read also lists the package's own
    store (Graphiti's edges with their validity, Mem0's memories with their history) in the
    context's meta under ``introspection``, never in the reader's text; when the question's
    meta names its ``object`` (never a gold), only facts naming it are kept. The table builders
    decide "v1 in store" and "both reports valid" from that list (docs/peers.md).
    """

    needs: ClassVar[tuple[str, ...]] = ("writer", "embedder")
    probed: ClassVar[bool] = False  # its behaviour is its package's (the manifest's version)
    module: ClassVar[str] = ""  # the import name of the package
    extra: ClassVar[str] = ""  # the pip extra that installs it
    lists_store: ClassVar[bool] = False  # implements `store_facts` (introspection)
    #: the package takes items one at a time, its state carried between calls, so the ingest
    #: can be fed unit by unit and report progress (a killed run says how far it got); False
    #: for packages that index a whole batch at once (HippoRAG)
    incremental: ClassVar[bool] = False

    def __init__(
        self,
        services: Services | None = None,
        k: int = 10,
        chunk_size: int | None = None,
        workdir: str | None = None,
        introspect: bool = False,
    ) -> None:
        super().__init__(services)
        if introspect and not self.lists_store:
            raise ValueError(f"arm.introspect: the {self.extra} arm cannot list its store")
        if k < 1:
            raise ValueError(f"arm.k must be >= 1, not {k}")
        if chunk_size is not None and chunk_size < 1:
            raise ValueError(f"arm.chunk_size must be >= 1 (or null), not {chunk_size}")
        quiet_telemetry()
        self.package = require(self.module, self.extra)
        self.k = k
        self.chunk_size = chunk_size
        self.introspect = introspect
        self._own_workdir = workdir is None
        self.workdir = Path(workdir or tempfile.mkdtemp(prefix=f"pmem-{self.extra}-"))
        self.workdir.mkdir(parents=True, exist_ok=True)
        self._endpoints: PeerEndpoints | None = None
        self.gateway: Gateway | None = None
        self._reading: asyncio.Lock | None = None
        self.stats: dict[str, Any] = {}

    # -- endpoints -----------------------------------------------------------------------------

    async def endpoints(self) -> PeerEndpoints:
        """Where the package sends its calls: this arm's gateway (see `gateway.py`), which
        forwards chat to the writer and embeddings to the embedder, metered and cached; the
        embedding width is measured once."""
        if self._endpoints is None:
            writer, embedder = self.services.writer, self.services.embedder
            if writer is None or embedder is None:
                raise ValueError(f"the {self.extra} arm needs a writer and an embedder profile")
            dim = int((await embedder.embed(["dimension probe"], kind="passage")).shape[1])
            self.gateway = Gateway(writer, embedder)
            url = self.gateway.start()
            self._endpoints = PeerEndpoints(
                llm_base_url=url,
                llm_model=writer.endpoint.model,
                embed_base_url=url,
                embed_model=embedder.endpoint.model,
                embedding_dim=dim,
                api_key=writer.endpoint.api_key or "EMPTY",
            )
        return self._endpoints

    # -- the interface -------------------------------------------------------------------------

    async def ingest(self, events: Sequence[Event]) -> None:
        items = items_of(events, self.chunk_size)
        endpoints = await self.endpoints()
        if self.incremental:  # the same calls in the same order, with progress after each unit
            for done, item in enumerate(items, 1):
                await self.ingest_items([item], endpoints)
                self.check_calls()
                self.report_progress(done, len(items))
        else:
            await self.ingest_items(items, endpoints)
            self.check_calls()
            self.report_progress(len(items), len(items))
        self.stats.setdefault("items", len(items))

    async def ingest_items(self, items: Sequence[Item], endpoints: PeerEndpoints) -> None:
        raise NotImplementedError

    def check_calls(self) -> None:
        """Stop if the package got an error answer from its gateway (`Gateway.note_failure`):
        a package that logs it and carries on (Mem0 does) would leave a store missing what the
        call would have added, and the run would score it as if nothing had failed."""
        failures = self.gateway.failures if self.gateway is not None else []
        if failures:
            raise PeerCallFailed(
                f"the {self.extra} package got {len(failures)} error answer(s) from the model "
                f"(first: {failures[0]}) and may have carried on without them; stopping rather "
                "than score an incomplete store (fix the cause and rerun: paid calls are cached)"
            )

    async def search(self, query: str, endpoints: PeerEndpoints) -> list[str]:
        """The package's top-k memories for a query, best first, as text lines."""
        raise NotImplementedError

    async def read(self, question: Any) -> Context:
        # The runner asks an episode's questions concurrently; the packages' stores (local
        # qdrant, Kuzu, JSON files) are single-user, so one search at a time per arm.
        if self._reading is None:
            self._reading = asyncio.Lock()
        async with self._reading:
            endpoints = await self.endpoints()
            lines = await self.search(question.text, endpoints)
            # measured after the search, on the same store, under the same lock
            store = await self.introspection(question, endpoints) if self.introspect else None
            self.check_calls()
        lines = [" ".join(line.split()) for line in lines[: self.k]]
        ids = tuple(f"{self.extra}-{i}" for i in range(len(lines)))
        meta: dict[str, Any] = {**self.stats, "shown": len(lines)}
        if store is not None:
            meta["introspection"] = store  # measurement only: never in the reader's text
        return Context("\n".join(lines), ids, meta)

    async def store_facts(self, endpoints: PeerEndpoints) -> list[dict[str, Any]]:
        """Every fact the package's store holds, current or not, oldest first, each as
        ``{"text", "valid", "former": [texts it held before], ...}`` plus what the package
        keeps about it (names, validity times, events)."""
        raise NotImplementedError

    async def introspection(self, question: Any, endpoints: PeerEndpoints) -> dict[str, Any]:
        """The store's facts about the question's subject (all facts when its meta names
        none), the most recent `INTROSPECT_LIMIT` of them, for the table builders."""
        facts = await self.store_facts(endpoints)
        subject = (getattr(question, "meta", None) or {}).get("object")
        if subject:
            facts = [f for f in facts if _about(f, str(subject))]
        kept = facts[-INTROSPECT_LIMIT:]
        return {
            "store": self.extra,
            "subject": subject,
            "facts": kept,
            "matched": len(facts),
            "left_out": len(facts) - len(kept),
        }

    @staticmethod
    async def blocking(fn: Any, *args: Any, **kwargs: Any) -> Any:
        """Run a synchronous package call off the event loop."""
        return await asyncio.to_thread(fn, *args, **kwargs)

    # -- snapshots: the package's files, copied whole ------------------------------------------

    def close(self) -> None:
        """Release the package's handles (databases) so its files can be copied; subclasses open
        the package lazily, so the next call reopens it over `self.workdir`."""

    def save(self, directory: Path) -> bool:
        self.close()
        target = directory / PEER_DIR
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(self.workdir, target)
        (directory / STATS_FILE).write_text(json.dumps(self.stats, ensure_ascii=False))
        return True

    def load(self, directory: Path) -> bool:
        source, stats = directory / PEER_DIR, directory / STATS_FILE
        if not (source.is_dir() and stats.exists()):
            return False
        self.close()
        shutil.rmtree(self.workdir, ignore_errors=True)
        shutil.copytree(source, self.workdir)
        self.stats = json.loads(stats.read_text())
        return True

    async def aclose(self) -> None:
        # the gateway first: stopping it fails the package's call in flight at once, so a run
        # stopped mid-call (SIGTERM, Ctrl-C) need not wait minutes for close() to get its turn
        try:
            if self.gateway is not None:
                await asyncio.to_thread(self.gateway.stop)
                self.gateway, self._endpoints = None, None
        finally:
            self.close()

    def __del__(self) -> None:
        # at interpreter exit the server thread may already be frozen: stopping would hang
        if getattr(self, "gateway", None) is not None and not sys.is_finalizing():
            self.gateway.stop()
        if getattr(self, "_own_workdir", False):
            shutil.rmtree(getattr(self, "workdir", ""), ignore_errors=True)


def _about(fact: dict[str, Any], subject: str) -> bool:
    """Whether a store fact names the subject: in its text, a text it held before, or (graph
    stores) one of the entities it joins."""
    texts = [fact.get("text") or "", *(fact.get("former") or []), *(fact.get("entities") or [])]
    return any(names_subject(str(t), subject) for t in texts)
