"""What the harness asks of a model role's client, as structural protocols.

An arm gets its writer, embedder and judge (`benchmarks.runner.arm.Services`) as whatever
object has these methods: the clients of this package (`ChatModel`, `Embedder`) as they are, or
a test's scripted class of a few lines. They are the harness's side of the library's own
protocols (`pmem.protocols.Writer` and `Embedder`), which this package may not import: a
`ChatClient` is a `pmem.protocols.Writer` that also counts tokens (a reader's budget), and an
`EmbeddingClient` returns numpy's (n, d) array, which the arms' vector indexes use as it is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # annotations only: importing the protocols loads neither the SDK nor numpy
    import numpy as np

    from benchmarks.models.chat import ChatModel, ChatResult, Message, TokenCount
    from benchmarks.models.embed import Embedder


class ChatClient(Protocol):
    """A chat model's client: one completion of a prompt (a string, or chat messages), and a
    text's size in the model's tokens. `schema` asks for json_schema-constrained output named
    `schema_name`; `temperature` None leaves the model profile's."""

    async def complete(
        self,
        messages: Sequence[Message] | str,
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
        schema: Mapping[str, Any] | None = None,
        schema_name: str = "answer",
    ) -> ChatResult: ...

    async def count_tokens(self, text: str) -> TokenCount: ...


class EmbeddingClient(Protocol):
    """An embedding model's client: an (n, d) array of unit vectors, one row per text, in order.
    `kind` is ``"query"`` or ``"passage"`` (a model may prefix them differently)."""

    async def embed(self, texts: Sequence[str] | str, kind: str = "passage") -> np.ndarray: ...


if TYPE_CHECKING:
    # the package's own clients are what the protocols describe (checked by mypy, never run)
    def _conforms(chat: ChatModel, embedder: Embedder) -> tuple[ChatClient, EmbeddingClient]:
        return chat, embedder
