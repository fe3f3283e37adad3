"""Graphiti/Zep as a baseline arm (paper §4 "Baselines and protocol", Appendix F).

Zep's bitemporal knowledge graph commits on arrival: each item is an episode whose entities and
fact edges the package's own prompts extract and deduplicate; a contradicted edge is
invalidated (`invalid_at`/`expired_at`), never deleted. We drive the real `graphiti-core`
(`pip install 'graphiti-core[kuzu]==0.31.2' httpx`) over an embedded Kuzu database in the arm's
folder, so a snapshot is a copy of that folder. Settings follow docs/notes/peers.md.
"""

from __future__ import annotations

import asyncio
import collections
import datetime as dt
import logging
import os
import time
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from baselines.peers.base import PeerArm, PeerEndpoints
from benchmarks.runner.arm import Services

if TYPE_CHECKING:
    from graphiti_core import Graphiti
    from graphiti_core.driver.kuzu_driver import KuzuDriver

    from baselines.peers.base import Item

DB_FILE = "graph.kuzu"  # Kuzu's database file (plus a write-ahead log beside it), in workdir
SOURCES = ("message", "text")  # Graphiti's EpisodeType for our items (json is not ours)
STRUCTURED_OUTPUTS = ("json_schema", "json_object")
# The time given to undated items (FactConsolidation chunks): a fixed origin, one second apart.
BASE_TIME = dt.datetime(2000, 1, 1, tzinfo=dt.UTC)
MAX_TOKENS = 2048  # per Graphiti LLM call (peers.md)

log = logging.getLogger(__name__)


def utc_date(item: Item) -> dt.datetime | None:
    """The item's date as an aware UTC datetime (a date with no zone taken as UTC), or None."""
    when = item.date()
    if when is None:
        return None
    return when.replace(tzinfo=dt.UTC) if when.tzinfo is None else when.astimezone(dt.UTC)


def reference_time(item: Item, previous: dt.datetime | None) -> dt.datetime:
    """The episode's reference time: the item's date (else BASE_TIME + its index in seconds),
    moved to one second after the previous episode when it would not follow it, so arrival order
    is also time order (Graphiti invalidates an edge only for a strictly later fact)."""
    when = utc_date(item) or BASE_TIME + dt.timedelta(seconds=item.index)
    if previous is not None and when <= previous:
        when = previous + dt.timedelta(seconds=1)
    return when


class GraphitiArm(PeerArm):
    """Graphiti (Zep's temporal knowledge graph) over an embedded Kuzu database.

    `source`: how items are labelled for Graphiti's extraction prompt: "text" (plain text, the
    default: FactConsolidation chunks and ALFWorld sentences are not dialogue) or "message"
    ("speaker: utterance" turns, e.g. LongMemEval sessions). `current_only`: drop invalidated or
    expired edges at search time. `dates`: prefix each fact with its valid-from date when the
    items carried dates. `structured_output`: how Graphiti asks the server for JSON ("json_schema",
    constrained decoding of its pydantic schemas; "json_object" puts the schema in the prompt).
    `group_id`: the graph partition all of this arm's episodes go to (one database per arm).
    `skip_failed`: an item whose ingestion raises (after Graphiti's own retries) is counted in
    `stats["failed_items"]` and skipped; HTTP 4xx refusals (configuration errors) always raise.
    `introspect`: record every edge of the graph, valid or not, in each read's meta (base class).

    Write: one item at a time, in arrival order (Graphiti requires sequential episodes), with a
    reference time that strictly increases: Graphiti arbitrates contradictions by timestamp and
    equal times never invalidate (the protocol is last-write-wins by arrival). Read: Graphiti's
    default `search` (BM25 + cosine with reciprocal-rank fusion, no LLM); `current_only` filters
    invalidated edges in the query, since plain search returns them too (peers.md).
    Introspection reads every edge of the partition from Kuzu itself; an edge is valid when
    neither `invalid_at` nor `expired_at` is set (`store_facts`).

    Settings (peers.md): `OpenAIGenericClient` (chat completions, not the Responses API); the
    embedder is told the real width (otherwise vectors are cut to 1024); an explicit
    cross-encoder the default search never consults (the package's OpenAI reranker biases OpenAI
    token ids, which mean other things to Qwen's tokenizer); telemetry off; two workarounds for
    Kuzu bugs in 0.31.2 (see `_open`).
    """

    module: ClassVar[str] = "graphiti_core"
    extra: ClassVar[str] = "graphiti"
    incremental: ClassVar[bool] = True  # one item per call (base class: progress)
    lists_store: ClassVar[bool] = True

    def __init__(
        self,
        services: Services | None = None,
        k: int = 10,
        chunk_size: int | None = None,
        workdir: str | None = None,
        source: str = "text",
        current_only: bool = True,
        dates: bool = True,
        structured_output: str = "json_schema",
        max_tokens: int = MAX_TOKENS,
        group_id: str = "pmem",
        skip_failed: bool = True,
        introspect: bool = False,
    ) -> None:
        if source not in SOURCES:
            raise ValueError(f"arm.source={source!r}; choose one of {', '.join(SOURCES)}")
        if structured_output not in STRUCTURED_OUTPUTS:
            raise ValueError(
                f"arm.structured_output={structured_output!r}; "
                f"choose one of {', '.join(STRUCTURED_OUTPUTS)}"
            )
        if max_tokens < 1:
            raise ValueError(f"arm.max_tokens must be >= 1, not {max_tokens}")
        # Graphiti reads this at call time; force it off even if the environment says otherwise.
        os.environ["GRAPHITI_TELEMETRY_ENABLED"] = "false"
        super().__init__(
            services, k=k, chunk_size=chunk_size, workdir=workdir, introspect=introspect
        )
        self.source = source
        self.current_only = current_only
        self.dates = dates
        self.structured_output = structured_output
        self.max_tokens = max_tokens
        self.group_id = group_id
        self.skip_failed = skip_failed
        self._graphiti: Graphiti | None = None
        self._driver: KuzuDriver | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._calls: collections.Counter[str] = collections.Counter()

    # -- the package, opened lazily over workdir -----------------------------------------------

    async def _open(self, endpoints: PeerEndpoints) -> Graphiti:
        loop = asyncio.get_running_loop()
        if self._graphiti is not None and self._loop is loop:
            return self._graphiti
        self.close()  # a client made on another event loop cannot be used on this one
        from graphiti_core import Graphiti
        from graphiti_core.driver.kuzu_driver import KuzuDriver
        from graphiti_core.embedder.openai import OpenAIEmbedderConfig
        from graphiti_core.llm_client.config import LLMConfig

        path = self.workdir / DB_FILE
        fresh = not path.exists()
        with warnings.catch_warnings():  # "Kuzu backend is deprecated": known (peers.md)
            warnings.simplefilter("ignore", DeprecationWarning)
            driver = KuzuDriver(db=str(path))
        # Kuzu bug 1 (0.31.2, peers.md): add_episode(group_id=...) reads driver._database, which
        # KuzuDriver never sets (AttributeError). Any name works: one Kuzu file is one database.
        driver._database = "kuzu"
        if fresh:
            # Kuzu bug 2: Graphiti.build_indices_and_constraints() is a no-op for Kuzu, so the
            # full-text indexes search needs are never made; build them once per new database.
            await driver.graph_ops.build_indices_and_constraints(driver)
        llm = _counting_llm_client(self._calls)(
            LLMConfig(
                api_key=endpoints.api_key,
                model=endpoints.llm_model,
                small_model=endpoints.llm_model,  # one model for every Graphiti call (§4)
                base_url=endpoints.llm_base_url,
                temperature=0,
            ),
            max_tokens=self.max_tokens,
            structured_output_mode=self.structured_output,
        )
        embedder = _counting_embedder(self._calls)(
            OpenAIEmbedderConfig(
                api_key=endpoints.api_key,
                base_url=endpoints.embed_base_url,
                embedding_model=endpoints.embed_model,
                embedding_dim=endpoints.embedding_dim,
            )
        )
        self._graphiti = Graphiti(
            graph_driver=driver,
            llm_client=llm,
            embedder=embedder,
            cross_encoder=_passthrough_reranker()(),
        )
        self._driver, self._loop = driver, loop
        return self._graphiti

    def close(self) -> None:
        """Close the Kuzu database (it holds a file lock, and its log must be checkpointed before
        the folder is copied); `_open` reopens it on the next call."""
        driver, self._driver, self._graphiti, self._loop = self._driver, None, None, None
        if driver is not None:
            driver.client.close()  # KuzuDriver.close() is a no-op that leaves this to the GC
            driver.db.close()

    # -- write -------------------------------------------------------------------------------

    async def ingest_items(self, items: Sequence[Item], endpoints: PeerEndpoints) -> None:
        from graphiti_core.nodes import EpisodeType

        graphiti = await self._open(endpoints)
        source = EpisodeType(self.source)
        last = self.stats.get("last_reference_time")
        previous = dt.datetime.fromisoformat(last) if last else None
        seconds: list[float] = []
        calls_before = collections.Counter(self._calls)
        for item in items:
            when = reference_time(item, previous)
            start = time.perf_counter()
            try:
                await graphiti.add_episode(
                    name=f"item-{item.index}",
                    episode_body=item.text,
                    source=source,
                    source_description="memory stream",
                    reference_time=when,
                    group_id=self.group_id,
                )
            except Exception as exc:
                if not self.skip_failed or _configuration_error(exc):
                    raise
                # One bad extraction (a reply that misses Graphiti's schema after its own
                # retries) loses that item, as it would in Graphiti's queue; it is counted.
                failed = self.stats.setdefault("failed_items", {})
                failed[type(exc).__name__] = failed.get(type(exc).__name__, 0) + 1
                log.warning("graphiti: item %d not ingested: %r", item.index, exc)
            seconds.append(time.perf_counter() - start)
            previous = when
            if item.date() is not None:
                self.stats["dated_items"] = self.stats.get("dated_items", 0) + 1
        if previous is not None:
            self.stats["last_reference_time"] = previous.isoformat()
        self.stats["ingest_s"] = round(self.stats.get("ingest_s", 0.0) + sum(seconds), 3)
        self.stats["ingest_s_max"] = round(max([self.stats.get("ingest_s_max", 0.0), *seconds]), 3)
        # the package's own calls while ingesting (retries inside a call are not counted)
        calls = collections.Counter(self.stats.get("ingest_calls", {}))
        calls.update(self._calls - calls_before)
        self.stats["ingest_calls"] = dict(sorted(calls.items()))
        self.stats.update(await self.graph_counts())

    async def graph_counts(self) -> dict[str, int]:
        """Episodes, entity nodes, fact edges and invalidated edges in this arm's partition."""
        if self._driver is None:
            raise RuntimeError("the graph is not open")
        queries = {
            "episodes": "MATCH (x:Episodic) WHERE x.group_id = $g RETURN count(x) AS n",
            "entity_nodes": "MATCH (x:Entity) WHERE x.group_id = $g RETURN count(x) AS n",
            "edges": "MATCH (x:RelatesToNode_) WHERE x.group_id = $g RETURN count(x) AS n",
            "invalidated_edges": (
                "MATCH (x:RelatesToNode_) WHERE x.group_id = $g "
                "AND (x.expired_at IS NOT NULL OR x.invalid_at IS NOT NULL) RETURN count(x) AS n"
            ),
        }
        counts = {}
        for name, query in queries.items():
            rows, _, _ = await self._driver.execute_query(query, g=self.group_id)
            counts[name] = int(rows[0]["n"]) if rows else 0
        return counts

    async def store_facts(self, endpoints: PeerEndpoints) -> list[dict[str, Any]]:
        """Every fact edge of this arm's partition, invalidated and expired ones included, oldest
        first, straight from Kuzu (Graphiti keeps an invalidated edge and sets `invalid_at` /
        `expired_at`; nothing is deleted): its fact, the two entities it joins, its validity
        times, and `valid` (neither time set)."""
        await self._open(endpoints)
        assert self._driver is not None
        rows, _, _ = await self._driver.execute_query(EDGES_QUERY, g=self.group_id)
        facts = []
        for row in rows:
            times = {name: _iso(row[name]) for name in ("valid_at", "invalid_at", "expired_at")}
            facts.append(
                {
                    "text": " ".join(str(row["fact"] or "").split()),
                    "valid": times["invalid_at"] is None and times["expired_at"] is None,
                    "former": [],  # an edge's fact is never rewritten; a change is a new edge
                    "entities": [str(row["source"]), str(row["target"])],
                    "relation": row["name"],
                    "created_at": _iso(row["created_at"]),
                    **times,
                }
            )
        return facts

    # -- read --------------------------------------------------------------------------------

    async def search(self, query: str, endpoints: PeerEndpoints) -> list[str]:
        from graphiti_core.search.search_filters import (
            ComparisonOperator,
            DateFilter,
            SearchFilters,
        )

        graphiti = await self._open(endpoints)
        if self.current_only:
            unset = [[DateFilter(comparison_operator=ComparisonOperator.is_null)]]
            search_filter = SearchFilters(expired_at=unset, invalid_at=unset)
        else:
            search_filter = SearchFilters()
        edges = await graphiti.search(
            query, group_ids=[self.group_id], num_results=self.k, search_filter=search_filter
        )
        if self.current_only:  # the filter is in the query; this guards against a backend gap
            edges = [e for e in edges if e.expired_at is None and e.invalid_at is None]
        dated = self.dates and self.stats.get("dated_items", 0) > 0
        return [render(edge, dated) for edge in edges[: self.k]]


# Kuzu models an edge (n:Entity)-[:RELATES_TO]->(m:Entity) as a node between two RELATES_TO
# relations (graphiti_core.driver.kuzu_driver); oldest first, then by uuid for a stable order.
EDGES_QUERY = (
    "MATCH (n:Entity)-[:RELATES_TO]->(e:RelatesToNode_)-[:RELATES_TO]->(m:Entity) "
    "WHERE e.group_id = $g "
    "RETURN n.name AS source, m.name AS target, e.name AS name, e.fact AS fact, "
    "e.created_at AS created_at, e.valid_at AS valid_at, e.invalid_at AS invalid_at, "
    "e.expired_at AS expired_at ORDER BY e.created_at, e.uuid"
)


def _iso(value: Any) -> str | None:
    """A Kuzu timestamp (a datetime, or None) as ISO 8601 text, for the JSON records."""
    if value is None:
        return None
    return value.isoformat() if hasattr(value, "isoformat") else str(value)


def _configuration_error(exc: BaseException) -> bool:
    """A refusal no other item would escape (unknown model, bad request, no access): not skipped."""
    status = getattr(exc, "status_code", None)
    return isinstance(status, int) and 400 <= status < 500 and status != 429


def render(edge: Any, dated: bool) -> str:
    """One retrieved edge as a line: its fact, with its validity dates when the items had dates;
    an invalidated edge (shown only without `current_only`) says when it stopped holding."""
    fact = " ".join(str(edge.fact).split())
    if not dated:
        return fact
    spans = []
    if edge.valid_at is not None:
        spans.append(f"from {edge.valid_at.date().isoformat()}")
    if edge.invalid_at is not None:
        spans.append(f"until {edge.invalid_at.date().isoformat()}")
    return f"[{' '.join(spans)}] {fact}" if spans else fact


# -- small subclasses of the package's clients (made on first use: the package is optional) --


def _counting_llm_client(calls: collections.Counter[str]) -> type:
    """OpenAIGenericClient that counts its calls per response schema in `calls`."""
    from graphiti_core.llm_client.openai_generic_client import OpenAIGenericClient

    class CountingLLMClient(OpenAIGenericClient):
        async def generate_response(
            self, messages: Any, response_model: Any = None, *args: Any, **kw: Any
        ) -> dict[str, Any]:
            name = getattr(response_model, "__name__", None) or kw.get("prompt_name") or "text"
            calls[f"llm:{name}"] += 1
            return await super().generate_response(messages, response_model, *args, **kw)

    return CountingLLMClient


def _counting_embedder(calls: collections.Counter[str]) -> type:
    """OpenAIEmbedder that counts its requests in `calls`."""
    from graphiti_core.embedder.openai import OpenAIEmbedder

    class CountingEmbedder(OpenAIEmbedder):
        async def create(self, input_data: Any) -> list[float]:
            calls["embed"] += 1
            return await super().create(input_data)

        async def create_batch(self, input_data_list: list[str]) -> list[list[float]]:
            calls["embed"] += 1
            return await super().create_batch(input_data_list)

    return CountingEmbedder


def _passthrough_reranker() -> type:
    """A cross-encoder that keeps the order it is given and calls no model. Graphiti's default
    search never consults it; it is passed so that Graphiti does not build its OpenAI reranker
    (which would need api.openai.com and biases OpenAI token ids: peers.md)."""
    from graphiti_core.cross_encoder.client import CrossEncoderClient

    class PassthroughReranker(CrossEncoderClient):
        async def rank(self, query: str, passages: list[str]) -> list[tuple[str, float]]:
            n = len(passages)
            return [(p, 1.0 - i / (n + 1)) for i, p in enumerate(passages)]

    return PassthroughReranker
