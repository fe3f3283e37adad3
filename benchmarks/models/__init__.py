"""Model access: chat and embedding clients for OpenAI-compatible servers, cached, retried,
metered; the servers the harness starts (a scripted one here, the `local` profile's in
`benchmarks.models.local`).

Names load lazily, so `python -m benchmarks.models.scripted` and other server processes start
without importing the openai SDK and numpy. `_WHERE` says which module each name lives in
(`benchmarks.models.client` re-exports the clients' names from `endpoint`, `base`, `chat` and
`embed`).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from benchmarks.models.base import ModelClient, aclose_clients, run_sync
    from benchmarks.models.cache import ResponseCache, cache_key
    from benchmarks.models.chat import ChatModel, ChatResult, TokenCount
    from benchmarks.models.embed import Embedder
    from benchmarks.models.endpoint import (
        Endpoint,
        ModelConfigError,
        ModelError,
        ModelUnavailableError,
    )
    from benchmarks.models.scripted import ScriptedServer
    from benchmarks.models.server import (
        ManagedServer,
        ServerStartError,
        SubprocessServer,
        free_port,
        wait_healthy,
    )
    from benchmarks.models.structured import StructuredOutputError, parse_json
    from benchmarks.models.usage import RoleUsage, UsageMeter

_WHERE = {
    "ModelClient": "base",
    "aclose_clients": "base",
    "run_sync": "base",
    "ResponseCache": "cache",
    "cache_key": "cache",
    "ChatModel": "chat",
    "ChatResult": "chat",
    "TokenCount": "chat",
    "Embedder": "embed",
    "Endpoint": "endpoint",
    "ModelConfigError": "endpoint",
    "ModelError": "endpoint",
    "ModelUnavailableError": "endpoint",
    "ScriptedServer": "scripted",
    "ManagedServer": "server",
    "ServerStartError": "server",
    "SubprocessServer": "server",
    "free_port": "server",
    "wait_healthy": "server",
    "StructuredOutputError": "structured",
    "parse_json": "structured",
    "RoleUsage": "usage",
    "UsageMeter": "usage",
}

__all__ = [
    "ChatModel",
    "ChatResult",
    "Embedder",
    "Endpoint",
    "ManagedServer",
    "ModelClient",
    "ModelConfigError",
    "ModelError",
    "ModelUnavailableError",
    "ResponseCache",
    "RoleUsage",
    "ScriptedServer",
    "ServerStartError",
    "StructuredOutputError",
    "SubprocessServer",
    "TokenCount",
    "UsageMeter",
    "aclose_clients",
    "cache_key",
    "free_port",
    "parse_json",
    "run_sync",
    "wait_healthy",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'benchmarks.models' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"benchmarks.models.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_WHERE])
