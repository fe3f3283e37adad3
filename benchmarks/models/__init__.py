"""Model access: chat and embedding clients for OpenAI-compatible servers, cached, retried,
metered; the servers the harness starts (a scripted one here).

Names load lazily, so `python -m benchmarks.models.scripted` and other server processes start
without importing httpx and numpy.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from benchmarks.models.cache import ResponseCache, cache_key
    from benchmarks.models.client import (
        ChatModel,
        ChatResult,
        Embedder,
        Endpoint,
        ModelConfigError,
        ModelError,
        ModelUnavailableError,
        TokenCount,
        aclose_clients,
        run_sync,
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
    "ResponseCache": "cache",
    "cache_key": "cache",
    "ChatModel": "client",
    "ChatResult": "client",
    "Embedder": "client",
    "Endpoint": "client",
    "ModelConfigError": "client",
    "ModelError": "client",
    "ModelUnavailableError": "client",
    "TokenCount": "client",
    "aclose_clients": "client",
    "run_sync": "client",
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
