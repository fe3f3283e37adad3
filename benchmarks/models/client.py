"""Chat and embedding clients for any OpenAI-compatible server (vLLM, llama.cpp, scripted).

Three promises the harness relies on:
- a wrong configuration fails at once and says what is wrong (`ModelConfigError`: the model and
  the URL, never retried), while a flaky server is retried with backoff and jitter (429 with its
  Retry-After, 5xx, timeouts, resets, malformed bodies) and only then `ModelUnavailableError`;
- a response already received is never paid for again (`ResponseCache`, semantic keys);
- every call is metered per role (`UsageMeter`).

This module is the clients' one public address; the parts live beside it:
`benchmarks.models.endpoint` (configuration, errors, retry decisions), `benchmarks.models.base`
(the shared request machinery, `ModelClient`, the base to extend), `benchmarks.models.chat`
(`ChatModel`) and `benchmarks.models.embed` (`Embedder`).

Connections: one `openai.AsyncOpenAI` client (the official SDK, on its aiohttp transport) and
one semaphore per (event loop, base URL), created on first use, so every role talking to one
server shares its concurrency limit and its pooled keep-alive connections. `aclose_clients()`
(or `run_sync`) closes them. docs/models.md has the design and the measured overhead.
"""

from __future__ import annotations

from benchmarks.models.base import ModelClient, aclose_clients, run_sync
from benchmarks.models.chat import ChatModel, ChatResult, Message, TokenCount, chat_result
from benchmarks.models.embed import Embedder
from benchmarks.models.endpoint import (
    Endpoint,
    ModelConfigError,
    ModelError,
    ModelUnavailableError,
    backoff_delay,
    retry_after_s,
)

__all__ = [
    "ChatModel",
    "ChatResult",
    "Embedder",
    "Endpoint",
    "Message",
    "ModelClient",
    "ModelConfigError",
    "ModelError",
    "ModelUnavailableError",
    "TokenCount",
    "aclose_clients",
    "backoff_delay",
    "chat_result",
    "retry_after_s",
    "run_sync",
]
