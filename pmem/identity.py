"""Soft key identity (§3.3): a key the writer names is routed to the registered key it means.

Keys are language-inferred, so one attribute surfaces under many names ("5K PB", "personal best
over 5 km"). A candidate key is embedded, its nearest registered key shortlisted when the cosine
reaches the threshold, and a one-word same/different call, shown the two key names only, merges
them on "same"; otherwise the candidate becomes a key of its own. Both write paths use it: the
extraction path (`pmem.write.WritePath`, every extracted fact's key) and the patch-prediction
path's routing (`baselines.pmem_arms.commit`, the key its writer names for an observation), so a
misspelt or paraphrased key reaches the existing cell instead of forking a stale duplicate.

The threshold belongs to the embedder (its cosines have their own scale); `SOFT_IDENTITY` is the
paper's, for the paper's embedder. Each candidate is decided once and remembered, like any write.
"""

from __future__ import annotations

import operator
from array import array
from collections.abc import Sequence
from typing import Any

from pmem.protocols import Embedder, KeyIndex, Writer

__all__ = ["SAME_PROMPT", "SOFT_IDENTITY", "FlatKeyIndex", "SoftIdentity", "same_attribute"]

# §3.3: a candidate key whose nearest registered key reaches this cosine is shortlisted for the
# same/different check. The threshold belongs to the embedder; this is the paper's (its embedder).
SOFT_IDENTITY = 0.72

# §3.3: the check is shown the two attribute names only; with values it collapses (2 of 135 pairs).
SAME_PROMPT = """\
Do these two keys name the same attribute of the same subject?
A: {a}
B: {b}
Answer with one word: same or different."""


async def same_attribute(writer: Writer, a: str, b: str) -> bool:
    """§3.3's one-word confirmation: do keys `a` and `b` name one attribute? Shown the two names
    only. Every merge rule that confirms a pair asks it this way (soft identity's shortlist here,
    Appendix D's two-threshold canonicalisation in the materialized arm), so one request body,
    and one cached reply, serves them all."""
    reply = await writer.complete(SAME_PROMPT.format(a=a, b=b), max_tokens=4)
    return reply.text.strip().lower().startswith("same")


class FlatKeyIndex:
    """The default `KeyIndex`: an exact scan over the registered keys, standard library only.

    It decides as a numpy float32 matrix does against a float64 query: each vector is stored
    as float32 (``array("f")``, like ``np.asarray(vector, dtype=np.float32)``), scored by its
    inner product with the query in float64, and the first highest score wins (``np.argmax``,
    a NaN included). A BLAS kernel may sum in another order, and numpy scores a float32 query
    in float32, so two keys within rounding of a tie, or a score within rounding of the
    threshold, are the only places a numpy index can decide otherwise. One scan costs keys x
    dimensions multiplications in Python: a large store is better served by a numpy or faiss
    index passed to `WritePath`.
    """

    def __init__(self) -> None:
        self.keys: list[str] = []
        self._rows: list[array[float]] = []

    def __len__(self) -> int:
        return len(self.keys)

    def add(self, key: str, vector: Sequence[float]) -> None:
        row = array("f", vector)
        self._check_dimensions(len(row))
        self.keys.append(key)
        self._rows.append(row)

    def nearest(self, vector: Sequence[float]) -> tuple[str, float] | None:
        if not self._rows:
            return None
        query = [float(x) for x in vector]
        self._check_dimensions(len(query))
        best, best_score = 0, 0.0
        for i, row in enumerate(self._rows):
            score = sum(map(operator.mul, row, query))
            if score != score:  # NaN: np.argmax takes the first one
                return self.keys[i], score
            if i == 0 or score > best_score:
                best, best_score = i, score
        return self.keys[best], best_score

    def _check_dimensions(self, n: int) -> None:
        if self._rows and n != len(self._rows[0]):
            raise ValueError(f"a vector of {n} dimensions; the index holds {len(self._rows[0])}")


class SoftIdentity:
    """The registered keys of one store and the routing of candidates onto them (§3.3).

    `identify(key)` routes a candidate and registers it when it names no registered key (a
    write); `find(key)` routes without registering (a read: a question's key). `writer` answers
    the same/different check; None skips it (the embedding match alone, as Appendix B.5's
    commit-timing arm does). `index`: an empty `KeyIndex` (None: a `FlatKeyIndex`).
    `state()` / `restore()` carry the decisions and the registered vectors through a snapshot.
    """

    def __init__(
        self,
        embedder: Embedder,
        writer: Writer | None = None,
        *,
        threshold: float = SOFT_IDENTITY,
        index: KeyIndex | None = None,
    ) -> None:
        self.embedder = embedder
        self.writer = writer
        self.threshold = threshold
        self.index: KeyIndex = FlatKeyIndex() if index is None else index
        self.gated = 0  # candidates whose nearest registered key reached the threshold
        self.merged = 0  # ... and were judged "same"
        self._alias: dict[str, str] = {}  # candidate key -> the registered key it was routed to
        self._vectors: dict[str, list[float]] = {}  # registered key -> its vector

    @property
    def keys(self) -> list[str]:
        """The registered keys, in the order they were registered."""
        return list(self._vectors)

    async def identify(self, key: str) -> str:
        """The registered key `key` names; a new registered key when it names none."""
        if key in self._alias:
            return self._alias[key]
        routed, vector = await self._route(key)
        if routed is None:
            routed = key
            self.index.add(key, vector)
            self._vectors[key] = [float(x) for x in vector]
        self._alias[key] = routed
        return routed

    async def find(self, key: str) -> str | None:
        """The registered key `key` names, or None; registers nothing (a read)."""
        if key in self._alias:
            return self._alias[key]
        routed, _ = await self._route(key)
        return routed

    async def _route(self, key: str) -> tuple[str | None, Sequence[float]]:
        (vector,) = await self.embedder.embed([key.replace("_", " ")], kind="query")
        hit = self.index.nearest(vector)
        if hit is None or not hit[1] >= self.threshold:
            return None, vector
        nearest = hit[0]
        self.gated += 1
        if (
            nearest != key
            and self.writer is not None
            and not await same_attribute(self.writer, key, nearest)
        ):
            return None, vector
        self.merged += 1
        return nearest, vector

    def state(self) -> dict[str, Any]:
        """What a snapshot keeps: every decision, and each registered key with its vector."""
        return {
            "alias": dict(self._alias),
            "vectors": dict(self._vectors),
            "gated": self.gated,
            "merged": self.merged,
        }

    def restore(self, state: dict[str, Any]) -> None:
        """Back to `state()` (into a fresh instance: its index must be empty)."""
        for key, vector in state["vectors"].items():
            self.index.add(key, vector)
            self._vectors[key] = list(vector)
        self._alias = dict(state["alias"])
        self.gated, self.merged = int(state["gated"]), int(state["merged"])
