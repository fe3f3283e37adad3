"""What the library's LLM write paths need from their caller, as structural protocols.

`pmem.write` (extraction, soft identity, annotation) and `pmem.revise` (Revise patch prediction)
never import a model client: they call whatever object has these methods. The harness's
`benchmarks.models.client.ChatModel` and `Embedder` satisfy `Writer` and `Embedder` as they are;
a test can pass a scripted class of a few lines. `KeyIndex` is soft identity's nearest-key search
(§3.3): `pmem.write.FlatKeyIndex` is the plain-Python default, and a caller with numpy or faiss
can pass a faster one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

Message = Mapping[str, Any]


class Completion(Protocol):
    """One chat reply: its text, and the parsed JSON when a schema was asked for (None when the
    reply did not parse). The harness's `ChatResult` also says why (`parse_error`)."""

    @property
    def text(self) -> str: ...

    @property
    def parsed(self) -> Any: ...


class Writer(Protocol):
    """The writer model: one completion of a prompt (a string, or a list of chat messages).

    `schema` asks for json_schema-constrained output named `schema_name`; `max_tokens` is the
    reply's budget; `temperature` None leaves the model profile's."""

    async def complete(
        self,
        messages: Sequence[Message] | str,
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
        schema: Mapping[str, Any] | None = None,
        schema_name: str = "answer",
    ) -> Completion: ...


class Embedder(Protocol):
    """The embedder: one vector per text, in order. `kind` is ``"query"`` or ``"passage"`` (an
    embedder may prefix them differently); soft identity embeds key names as queries."""

    async def embed(
        self, texts: Sequence[str], kind: str = "passage"
    ) -> Sequence[Sequence[float]]: ...


class KeyIndex(Protocol):
    """The registered keys of soft identity with one vector each (§3.3).

    `nearest` is the registered key of highest inner product with `vector` and that score (the
    first one added wins a tie), or None while the index is empty."""

    def add(self, key: str, vector: Sequence[float]) -> None: ...

    def nearest(self, vector: Sequence[float]) -> tuple[str, float] | None: ...
