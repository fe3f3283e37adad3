"""Chat and embedding clients for any OpenAI-compatible server (vLLM, llama.cpp, scripted).

The clients' one public address: the parts are `benchmarks.models.endpoint` (configuration,
errors, retry decisions), `.base` (`ModelClient`, the base to extend), `.chat` and `.embed`.
A wrong configuration fails at once (`ModelConfigError`, naming model and URL); a flaky server is
retried with backoff before `ModelUnavailableError`; a response received is never paid for again
(`ResponseCache`); every call is metered per role (`UsageMeter`). Design: docs/models.md.
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
