"""The one embedding index every retrieving arm uses: exact cosine top-k over unit vectors.

The paper's raw path "embeds the pool, takes the cosine top-10" (Appendix B.2). The Embedder
returns L2-normalised vectors, so inner product is cosine and faiss's exact `IndexFlatIP` gives
the paper's ranking with no approximation. Vectors come through the response cache, so every
arm that embeds the same pool line pays for it once, and a rerun pays nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np


def _faiss() -> Any:
    # faiss logs which CPU build it loads, with a ModuleNotFoundError for each one it skips:
    # noise in a run log, not a problem.
    logging.getLogger("faiss.loader").setLevel(logging.WARNING)
    try:
        import faiss
    except ImportError as err:  # pragma: no cover - a missing dependency, named plainly
        raise ImportError(
            "the retrieving arms need faiss: pip install faiss-cpu (in the project's venv)"
        ) from err
    return faiss


class EmbeddingIndex:
    """Exact inner-product search over a fixed set of unit vectors (one per pool line)."""

    def __init__(self, vectors: np.ndarray) -> None:
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        if vectors.ndim != 2:
            raise ValueError(f"vectors must be a 2-d array, not shape {vectors.shape}")
        self.vectors = vectors
        self._index = None
        if len(vectors):
            self._index = _faiss().IndexFlatIP(vectors.shape[1])
            self._index.add(vectors)

    def __len__(self) -> int:
        return len(self.vectors)

    @classmethod
    async def build(cls, embedder: Any, texts: Sequence[str]) -> EmbeddingIndex:
        """Embed `texts` as passages (cached per text) and index them in order."""
        if embedder is None:
            raise ValueError("this arm retrieves by similarity and needs an embedder profile")
        if not texts:
            return cls(np.zeros((0, 1), dtype=np.float32))
        return cls(await embedder.embed(list(texts), kind="passage"))

    def search(self, query: np.ndarray, k: int) -> list[tuple[int, float]]:
        """(position, cosine) pairs, most similar first; fewer than `k` if the pool is small."""
        if self._index is None or k <= 0:
            return []
        q = np.ascontiguousarray(np.asarray(query, dtype=np.float32).reshape(1, -1))
        scores, ids = self._index.search(q, min(k, len(self)))
        return [(int(i), float(s)) for i, s in zip(ids[0], scores[0], strict=True) if i >= 0]

    async def query(self, embedder: Any, text: str, k: int) -> list[tuple[int, float]]:
        """Top-k for a question, embedded as a query (the embedder's query prefix applies)."""
        if self._index is None:
            return []
        return self.search((await embedder.embed([text], kind="query"))[0], k)

    def save(self, path: Path) -> None:
        np.save(path, self.vectors, allow_pickle=False)

    @classmethod
    def load(cls, path: Path) -> EmbeddingIndex:
        return cls(np.load(path, allow_pickle=False))
