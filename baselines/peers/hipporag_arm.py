"""HippoRAG-v2 as a peer arm: graph RAG over an open knowledge graph (paper §4, B.1; peers.md).

The paper's graph-RAG corner: rich evidence organization (OpenIE triples, entity nodes,
synonymy edges, Personalized PageRank), conflicts resolved only at query time. The package
(`hipporag==2.0.0a4`) runs as published with its own prompts; it returns passages, so the arm's
memories are the ingested items, ranked by the package. `HippoRAGArm` lists the adaptations,
none of which changes its algorithm.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.machinery
import importlib.util
import sys
import threading
from collections.abc import Iterator, Sequence
from importlib import metadata
from types import ModuleType
from typing import Any, ClassVar

from baselines.peers.base import Item, PeerArm, PeerEndpoints, scoped_environ
from benchmarks.runner.arm import Services

SAVE_DIR = "hipporag"  # the package's save_dir, inside the arm's workdir

# Imported at the package's top level for paths this arm never takes; placeholders stand in for
# them during the import when they are not installed, and are removed from `sys.modules` right
# after, so nothing else sees them and a later real use fails as a plain ImportError.
_UNUSED_IMPORTS: dict[str, str] = {
    "vllm": "offline OpenIE on a local vLLM engine (llm/vllm_offline.py; openie_mode='offline')",
    "litellm": "LLMs on AWS Bedrock (llm/bedrock_llm.py; llm_name 'bedrock...')",
    "boto3": "Cohere embeddings on AWS Bedrock (embedding_model/Cohere.py)",
    "botocore": "Cohere embeddings on AWS Bedrock (embedding_model/Cohere.py)",
    "transformers": "local Hugging Face models (HippoRAG.py imports HfArgumentParser unused; "
    "the embedding modules import AutoModel, unused by the OpenAI one)",
    "gritlm": "the local GritLM embedding model (embedding_model/GritLM.py)",
}
_SUBMODULES = {"botocore": ("exceptions",)}  # `from botocore.exceptions import ClientError`
# Real dependencies imported first, so no placeholder is in sys.modules while they load.
_REAL_DEPS = ("numpy", "torch", "igraph", "pandas", "pyarrow", "openai", "httpx", "filelock")

_IMPORT_LOCK = threading.Lock()
_OPENAI_EMBEDDING_MODELS: set[str] = set()  # model names routed to the OpenAI-compatible class


class _Unavailable:
    """A name from a placeholder module: using it says which feature is not installed."""

    _origin: ClassVar[str] = ""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError(
            f"{self._origin} is a placeholder: the HippoRAG arm does not install it "
            f"(see baselines/peers/hipporag_arm.py)"
        )


def _placeholder(name: str, why: str) -> ModuleType:
    module = ModuleType(name, f"placeholder for {name}: hipporag imports it for {why}")
    module.__spec__ = importlib.machinery.ModuleSpec(name, None)

    def attribute(attr: str) -> type:
        if attr.startswith("__"):
            raise AttributeError(attr)
        return type(attr, (_Unavailable,), {"_origin": f"{name}.{attr}"})

    module.__getattr__ = attribute  # type: ignore[method-assign]  # PEP 562
    return module


@contextlib.contextmanager
def _import_shims() -> Iterator[None]:
    """Placeholders for `_UNUSED_IMPORTS` that are not installed, while hipporag is imported."""
    with _IMPORT_LOCK:
        if "hipporag" in sys.modules:
            yield
            return
        for dep in _REAL_DEPS:
            with contextlib.suppress(ImportError):
                importlib.import_module(dep)  # a missing one fails in hipporag's own import
        added: list[str] = []
        for name, why in _UNUSED_IMPORTS.items():
            if name in sys.modules or importlib.util.find_spec(name) is not None:
                continue
            sys.modules[name] = parent = _placeholder(name, why)
            added.append(name)
            for sub in _SUBMODULES.get(name, ()):
                child = _placeholder(f"{name}.{sub}", why)
                sys.modules[child.__name__] = child
                setattr(parent, sub, child)
                added.append(child.__name__)
        try:
            yield
        finally:
            for name in added:
                sys.modules.pop(name, None)


def _route_embeddings(model: str) -> None:
    """Make HippoRAG build its OpenAI-compatible embedding class for `model` (any name).

    The package chooses the class by substring ("text-embedding" -> OpenAI); the selector in
    hipporag.HippoRAG is wrapped once so names registered here get the OpenAI class and every
    other name is chosen by the package as usual.
    """
    with _IMPORT_LOCK:
        module = importlib.import_module("hipporag.HippoRAG")
        select = module._get_embedding_model_class
        if not getattr(select, "pmem_routed", False):
            from hipporag.embedding_model import OpenAIEmbeddingModel

            def routed(embedding_model_name: str = "nvidia/NV-Embed-v2") -> type:
                if embedding_model_name in _OPENAI_EMBEDDING_MODELS:
                    return OpenAIEmbeddingModel
                return select(embedding_model_name=embedding_model_name)

            routed.pmem_routed = True  # type: ignore[attr-defined]
            module._get_embedding_model_class = routed
        _OPENAI_EMBEDDING_MODELS.add(model)


# How long the package waits for one model reply. Its own client gives up after 5 minutes, and
# its OpenIE runs a thread pool per index() call (6 workers on 2 cores), so on a long ingest
# behind a one-slot local server a call can wait in the gateway's queue longer than its 6
# attempts (30 minutes): the package then logs a warning and indexes the passage with no
# entities or triples, a silently thinner graph. The gateway answers a retry from the call in
# flight (nothing is paid twice), but a package that stopped retrying is gone; so it waits this
# long instead. A stopped run does not wait: the gateway answers 503 to every call in flight.
PACKAGE_TIMEOUT_S = 4 * 3600.0


class HippoRAGArm(PeerArm):
    """HippoRAG-v2: items indexed as passages; a query returns the top-k passages (PPR order).

    Adaptations: an item's date is written into its passage (`[date] text`; HippoRAG has no
    time). An ingest indexes all its passages in one `index(docs)` call, in arrival order, since
    every call recomputes and re-adds the synonymy edges; identical passages collapse into one.
    The OpenAI-compatible embedding class (picked by the package only for names containing
    "text-embedding") is selected for the configured model name, so no alias is served.
    `OPENAI_API_KEY` is set, where unset, for construction only, then both clients are bound to
    `PeerEndpoints.api_key`. `_UNUSED_IMPORTS` get placeholders during the import only. After
    every `index()` the retrieval caches and entity-to-passage map (which would cover only the
    new passages) are cleared, so the next query rebuilds them as a reloaded instance does.

    Everything the package writes (embedding stores, the igraph pickle, OpenIE results, its
    SQLite LLM cache) lives under `workdir/hipporag`, so a snapshot is that folder, read back
    without re-indexing but only under the same LLM and embedding model names (they name its
    folders). The LLM cache answers repeated prompts without reaching the gateway.
    """

    module: ClassVar[str] = "hipporag"
    extra: ClassVar[str] = "hipporag"

    def __init__(
        self,
        services: Services | None = None,
        k: int = 5,
        chunk_size: int | None = None,
        workdir: str | None = None,
        date_prefix: bool = True,
    ) -> None:
        with _import_shims():
            super().__init__(services, k=k, chunk_size=chunk_size, workdir=workdir)
        self.date_prefix = date_prefix
        self._hippo: Any = None
        self.stats["package"] = f"hipporag=={metadata.version('hipporag')}"

    # -- the package, opened lazily over self.workdir ----------------------------------------

    def _open(self, endpoints: PeerEndpoints) -> Any:
        if self._hippo is not None:
            return self._hippo
        from hipporag import HippoRAG
        from hipporag.utils.config_utils import BaseConfig

        _route_embeddings(endpoints.embed_model)
        config = BaseConfig(
            save_dir=str(self.workdir / SAVE_DIR),
            llm_name=endpoints.llm_model,
            llm_base_url=endpoints.llm_base_url,
            embedding_model_name=endpoints.embed_model,
            embedding_base_url=endpoints.embed_base_url,
            openie_mode="online",
        )
        # The clients need a key to be built: one for the construction only, never overwriting
        # a key someone else set, and gone afterwards (the rest of the process keeps its own).
        with scoped_environ({"OPENAI_API_KEY": endpoints.api_key}, keep_set=True):
            hippo = HippoRAG(global_config=config)
        # Bind the endpoints' key explicitly (the environment's may belong to someone else).
        llm, embedder = hippo.llm_model, hippo.embedding_model
        llm.openai_client = llm.openai_client.with_options(
            api_key=endpoints.api_key, timeout=PACKAGE_TIMEOUT_S
        )
        embedder.client = embedder.client.with_options(api_key=endpoints.api_key)
        self._hippo = hippo
        return hippo

    def close(self) -> None:
        hippo, self._hippo = self._hippo, None
        if hippo is not None:
            for client in (hippo.llm_model.openai_client, hippo.embedding_model.client):
                with contextlib.suppress(Exception):
                    client.close()

    # -- ingest and search ---------------------------------------------------------------------

    def passage(self, item: Item) -> str:
        """An item as a passage: the date written into the text (HippoRAG has no time field)."""
        return f"[{item.at}] {item.text}" if self.date_prefix and item.at else item.text

    async def ingest_items(self, items: Sequence[Item], endpoints: PeerEndpoints) -> None:
        passages = [self.passage(item) for item in items]
        if passages:
            await self.blocking(self._index, passages, endpoints)

    def _index(self, passages: list[str], endpoints: PeerEndpoints) -> None:
        hippo = self._open(endpoints)
        hippo.index(passages)  # one call for the whole ingest (peers.md: synonymy per call)
        # index() leaves the retrieval caches stale; rebuild them from the files on next query.
        hippo.ready_to_retrieve = False
        hippo.ent_node_to_chunk_ids = None
        self.stats["index_calls"] = self.stats.get("index_calls", 0) + 1
        self.stats["passages_sent"] = self.stats.get("passages_sent", 0) + len(passages)
        self._count(hippo)

    def _count(self, hippo: Any) -> None:
        openie, _ = hippo.load_existing_openie([])
        self.stats.update(
            passages=len(hippo.chunk_embedding_store.get_all_ids()),
            entities=len(hippo.entity_embedding_store.get_all_ids()),
            triples=len(hippo.fact_embedding_store.get_all_ids()),
            # extraction errors are logged and swallowed by the package: count their trace
            passages_without_triples=sum(not doc["extracted_triples"] for doc in openie),
            graph_nodes=hippo.graph.vcount(),
            graph_edges=hippo.graph.ecount(),
        )

    async def search(self, query: str, endpoints: PeerEndpoints) -> list[str]:
        return await self.blocking(self._retrieve, query, endpoints)

    def _retrieve(self, query: str, endpoints: PeerEndpoints) -> list[str]:
        hippo = self._open(endpoints)
        if not hippo.chunk_embedding_store.get_all_ids():
            return []  # nothing indexed: the package cannot build its retrieval objects
        solution = hippo.retrieve([query], num_to_retrieve=self.k)[0]
        return [str(doc) for doc in solution.docs]
