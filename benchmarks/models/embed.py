"""Embeddings: L2-normalised float32 vectors from an OpenAI-compatible /embeddings endpoint.

Each distinct text is embedded once (cached per text, its kind and prefix, and the settings
that change the vector) and the rest is requested in batches, concurrently. The request
machinery (pooling, retries, errors) is `benchmarks.models.base.ModelClient`'s.
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from benchmarks.models.base import MalformedResponse, ModelClient, valid_usage
from benchmarks.models.cache import ResponseCache, cache_key
from benchmarks.models.calls import record
from benchmarks.models.endpoint import Endpoint, ModelError
from benchmarks.models.usage import UsageMeter

__all__ = ["Embedder"]


def _valid_embeddings(data: Any) -> None:
    """Every embedding decodes to a finite, non-empty float vector: a reply of the right JSON
    but the wrong shape (strings in a list, broken base64) is retried like malformed JSON."""
    valid_usage(data)
    for item in data["data"]:
        vec = item["embedding"]
        if not isinstance(vec, list | str) or not isinstance(item.get("index", 0), int):
            raise MalformedResponse
        try:
            decoded = _as_vector(vec)
        except (ValueError, TypeError):  # binascii.Error is a ValueError
            raise MalformedResponse from None
        if decoded.ndim != 1 or decoded.size == 0 or not np.isfinite(decoded).all():
            raise MalformedResponse


def _as_vector(value: Any) -> np.ndarray:
    """An embedding as float32: a JSON list, or base64 float32 (encoding_format="base64")."""
    if isinstance(value, str):
        return np.frombuffer(base64.b64decode(value), dtype=np.float32).copy()
    return np.asarray(value, dtype=np.float32)


def _normalised(vec: np.ndarray) -> np.ndarray:
    norm = float(np.linalg.norm(vec))
    return vec / norm if norm > 0 else vec


def _pack(vec: np.ndarray) -> dict[str, Any]:
    return {"dtype": "float32", "b64": base64.b64encode(vec.astype(np.float32).tobytes()).decode()}


def _unpack(stored: Mapping[str, Any]) -> np.ndarray:
    return np.frombuffer(base64.b64decode(stored["b64"]), dtype=np.float32).copy()


class Embedder(ModelClient):
    """Embeddings, L2-normalised float32, cached per text, requested in batches."""

    def __init__(
        self,
        endpoint: Endpoint,
        role: str = "embedder",
        cache: ResponseCache | None = None,
        meter: UsageMeter | None = None,
        batch_size: int = 32,
        dimensions: int | None = None,
        query_prefix: str = "",
        passage_prefix: str = "",
        extra_body: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(endpoint, role, cache, meter)
        if batch_size < 1:
            raise ValueError("batch_size must be >= 1")
        self.batch_size = batch_size
        self.dimensions = dimensions
        self.prefixes = {"query": query_prefix, "passage": passage_prefix}
        self.extra_body = dict(extra_body or {})
        self._url = f"{endpoint.base_url}/embeddings"
        self._width: int | None = None  # the dimension of every vector this client has seen

    def cache_key_for(self, text: str, kind: str) -> str:
        return cache_key(
            {
                "kind": "embedding",
                "model": self.endpoint.model,
                "revision": self.endpoint.revision,
                "dimensions": self.dimensions,
                "input_kind": kind,
                "prefix": self.prefixes[kind],
                "extra_body": self.extra_body,
                "text": text,
            }
        )

    async def embed(self, texts: Sequence[str] | str, kind: str = "passage") -> np.ndarray:
        """An (n, d) float32 array of unit vectors, in the order of `texts`."""
        if kind not in self.prefixes:
            raise ValueError(f"kind must be 'query' or 'passage', not {kind!r}")
        items = [texts] if isinstance(texts, str) else list(texts)
        if not items:
            return np.zeros((0, self.dimensions or 0), dtype=np.float32)
        vectors: dict[str, np.ndarray] = {}
        keys: dict[str, str] = {}
        missing: list[str] = []
        for text in dict.fromkeys(items):  # each distinct text once, in first-seen order
            key = keys[text] = self.cache_key_for(text, kind)
            stored = self.cache.get(key)
            if stored is None:
                missing.append(text)
            else:
                vectors[text] = _unpack(stored)
                self._same_width(vectors[text].shape[0], "the response cache holds")
                self.usage.cache_hits += 1
        batches = [
            missing[i : i + self.batch_size] for i in range(0, len(missing), self.batch_size)
        ]
        results = await asyncio.gather(*(self._embed_batch(b, kind) for b in batches))
        for batch, vecs in zip(batches, results, strict=True):
            for text, vec in zip(batch, vecs, strict=True):
                vectors[text] = vec
                self.cache.put(keys[text], _pack(vec), kind="embedding", model=self.endpoint.model)
        record(  # what was embedded, not the vectors (they are in the response cache)
            {
                "role": self.role,
                "model": self.endpoint.model,
                "kind": kind,
                "texts": len(items),
                "cached": len(items) - len(missing),
                "first": items[0][:200],
            }
        )
        return np.stack([vectors[t] for t in items])

    async def _embed_batch(self, batch: list[str], kind: str) -> list[np.ndarray]:
        prefix = self.prefixes[kind]
        body: dict[str, Any] = dict(self.extra_body)
        body["model"] = self.endpoint.model
        body["input"] = [prefix + t for t in batch]
        if self.dimensions is not None:
            body["dimensions"] = self.dimensions
        data, latency = await self.request("POST", self._url, body, _valid_embeddings)
        items = sorted(data["data"], key=lambda item: item.get("index", 0))
        if len(items) != len(batch):
            raise ModelError(
                f"{self._url} returned {len(items)} embeddings for {len(batch)} inputs"
            )
        self.meter_call(data, latency)
        vecs = [_normalised(_as_vector(item["embedding"])) for item in items]
        dims = {v.shape[0] for v in vecs}
        if len(dims) != 1 or (self.dimensions is not None and dims != {self.dimensions}):
            raise ModelError(f"{self._url} returned embeddings of dimension {sorted(dims)}")
        self._same_width(dims.pop(), f"{self._url} returned")
        return vecs

    def _same_width(self, width: int, source: str) -> None:
        """Every vector of one client has one dimension: a server that changed its model, or a
        cache holding another model's vectors under this one's name, is stopped here (before
        anything of it is cached) instead of failing in an index far from the cause."""
        if self._width is None:
            self._width = width
        elif width != self._width:
            raise ModelError(
                f"{source} embeddings of dimension {width} for model {self.endpoint.model}, "
                f"whose earlier vectors have dimension {self._width}: the server changed "
                "models, or the response cache holds vectors of another model under this name "
                "(set the embedder profile's revision to the new model's)"
            )
