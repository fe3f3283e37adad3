"""The request machinery every model client shares: pooled connections, retries, errors, metering.

`ModelClient` is the extension point: `ChatModel` and `Embedder` build on it, and so can code
that talks to another endpoint of an OpenAI-compatible server and wants the same guarantees
(the peer gateway forwards whole request bodies through it). A subclass gets
- `request()`: one JSON request through the shared pool and semaphore, transient failures
  (429 with its Retry-After, 5xx, timeouts, resets, malformed bodies) retried with backoff and
  jitter, configuration errors raised at once as `ModelConfigError` naming the model and URL;
- `meter_call()`: a successful answer's calls, tokens and latency booked in the role's meter;
- `probe()` and `aclose()`.

Connections: one `httpx.AsyncClient` and one semaphore per (event loop, base URL), created on
first use, so every role talking to one server shares its concurrency limit and its pooled
keep-alive connections. `aclose_clients()` (or `run_sync`) closes them.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import json
import time
import weakref
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar
from urllib.parse import urlsplit

import httpx

from benchmarks.models.cache import ResponseCache
from benchmarks.models.endpoint import (
    CONFIG_STATUSES,
    RETRY_AFTER_CAP_S,
    RETRY_STATUSES,
    UNREACHED_BACKOFF_S,
    UNREACHED_RETRIES,
    Endpoint,
    ModelConfigError,
    ModelError,
    ModelUnavailableError,
    backoff_delay,
    retry_after_s,
)
from benchmarks.models.usage import RoleUsage, UsageMeter

__all__ = ["MalformedResponse", "ModelClient", "aclose_clients", "run_sync"]

T = TypeVar("T")


# ---- connection pools ------------------------------------------------------------------------


class _Pool:
    """The shared client, semaphore and reachability of one base URL in one event loop."""

    __slots__ = ("client", "reached", "semaphore")

    def __init__(self, endpoint: Endpoint) -> None:
        size = endpoint.concurrency + 4  # headroom for probes, which skip the semaphore
        self.client = httpx.AsyncClient(
            limits=httpx.Limits(max_connections=size, max_keepalive_connections=size),
            timeout=httpx.Timeout(endpoint.timeout_s, connect=endpoint.connect_timeout_s),
            trust_env=not _is_loopback(endpoint.base_url),
        )
        self.semaphore = asyncio.Semaphore(endpoint.concurrency)
        self.reached = False


_POOLS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, _Pool]] = (
    weakref.WeakKeyDictionary()
)


def _pool_for(endpoint: Endpoint, loop: asyncio.AbstractEventLoop) -> _Pool:
    pools = _POOLS.get(loop)
    if pools is None:
        pools = _POOLS[loop] = {}
    pool = pools.get(endpoint.base_url)
    if pool is None or pool.client.is_closed:
        pool = pools[endpoint.base_url] = _Pool(endpoint)
    return pool


async def aclose_clients() -> None:
    """Close the pooled HTTP clients of the running event loop."""
    pools = _POOLS.pop(asyncio.get_running_loop(), {})
    for pool in pools.values():
        await pool.client.aclose()


def run_sync(coro: Awaitable[T]) -> T:
    """Run a coroutine to completion from synchronous code, closing the clients it opened."""

    async def main() -> T:
        try:
            return await coro
        finally:
            await aclose_clients()

    return asyncio.run(main())


def _is_loopback(url: str) -> bool:
    host = urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _unavailable(
    url: str,
    model: str,
    role: str,
    attempts: int,
    reason: str,
    exc: BaseException | None,
    pool: _Pool,
) -> str:
    """Why a call gave up, naming the URL; a server that never answered gets a hint."""
    detail = reason
    if exc is not None and str(exc):
        detail += f" ({type(exc).__name__}: {exc})"
    if reason.startswith("connect") and not pool.reached:
        return (
            f"cannot reach {url} for model {model!r} (role {role}): {detail}, "
            f"{attempts} attempt(s); is the server running and the base URL right?"
        )
    return (
        f"{url} failed after {attempts} attempt(s) for model {model!r} (role {role}); "
        f"last failure: {detail}"
    )


def _server_message(resp: httpx.Response) -> str:
    """The error text a server sent (OpenAI, vLLM and llama.cpp shapes), kept short."""
    try:
        data = resp.json()
    except ValueError:
        return resp.text[:300].strip()
    if isinstance(data, dict):
        err = data.get("error", data.get("detail", data.get("message")))
        if isinstance(err, dict):
            err = err.get("message", err)
        return str(err)[:300]
    return str(data)[:300]


class MalformedResponse(Exception):
    """A 2xx response whose body is not what the endpoint promises: a validator raises it
    (as it may raise ValueError, KeyError, IndexError or TypeError) and the call is retried."""


# ---- the shared request machinery ------------------------------------------------------------


class ModelClient:
    """What chat and embedding clients share: pooled requests, retries, errors, metering.

    The base to extend for another endpoint of an OpenAI-compatible server (see the module
    docstring): `request()` and `meter_call()` are the interface a subclass uses.
    """

    def __init__(
        self,
        endpoint: Endpoint,
        role: str,
        cache: ResponseCache | None,
        meter: UsageMeter | None,
    ) -> None:
        self.endpoint = endpoint
        self.role = role
        self.cache = cache if cache is not None else ResponseCache(None)
        self.meter = meter if meter is not None else UsageMeter()
        self.usage: RoleUsage = self.meter.role(role)
        self._headers = {"Content-Type": "application/json"}
        if endpoint.api_key:
            self._headers["Authorization"] = f"Bearer {endpoint.api_key}"
        self._timeout = httpx.Timeout(endpoint.timeout_s, connect=endpoint.connect_timeout_s)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pool: _Pool | None = None

    def _get_pool(self) -> _Pool:
        loop = asyncio.get_running_loop()
        if loop is not self._loop or self._pool is None or self._pool.client.is_closed:
            self._loop, self._pool = loop, _pool_for(self.endpoint, loop)
        return self._pool

    async def aclose(self) -> None:
        """Close the pooled connections to this client's server (shared with other roles on
        it; they reopen on next use)."""
        pools = _POOLS.get(asyncio.get_running_loop(), {})
        pool = pools.pop(self.endpoint.base_url, None)
        self._pool = None
        if pool is not None:
            await pool.client.aclose()

    async def request(
        self,
        method: str,
        url: str,
        body: Any,
        validate: Callable[[Any], None],
        *,
        max_retries: int | None = None,
        timeout: httpx.Timeout | None = None,
        limited: bool = True,
        expected: frozenset[int] = frozenset(),
    ) -> tuple[Any, float]:
        """(JSON body, latency of the successful attempt), retrying what is transient.

        `validate` checks a 2xx body (raising `MalformedResponse`, ValueError, KeyError,
        IndexError or TypeError if it is not what the endpoint promises: then it is retried).
        `limited=False` skips the server's semaphore (probes, token counts). A status in
        `expected` raises a plain `ModelConfigError` that is not counted as an error: the
        caller handles it (a server without /tokenize).
        """
        ep = self.endpoint
        pool = self._get_pool()
        content = None if body is None else json.dumps(body, ensure_ascii=False).encode("utf-8")
        retries = ep.max_retries if max_retries is None else max_retries
        limit = timeout or self._timeout
        attempt = 0
        while True:
            wait: float | None = None
            last_exc: BaseException | None = None
            said = ""
            try:
                async with pool.semaphore if limited else contextlib.nullcontext():
                    started = time.perf_counter()
                    resp = await pool.client.request(
                        method, url, content=content, headers=self._headers, timeout=limit
                    )
                latency = time.perf_counter() - started
            except httpx.ConnectTimeout as exc:
                reason, last_exc = "connect_timeout", exc
                if not pool.reached:  # nothing answers there: waiting again will not help
                    retries = min(retries, attempt)
            except httpx.TimeoutException:
                reason = "timeout"
            except httpx.UnsupportedProtocol as exc:
                raise ModelConfigError(f"bad base URL {ep.base_url!r}: {exc}") from exc
            except httpx.ConnectError as exc:
                reason = "connect"
                if not pool.reached:
                    retries = min(retries, UNREACHED_RETRIES)
                    wait = UNREACHED_BACKOFF_S
                last_exc = exc
            except httpx.TransportError as exc:  # reset, closed early, protocol garbage
                reason = "connection"
                last_exc = exc
            except httpx.InvalidURL as exc:
                raise ModelConfigError(f"bad base URL {ep.base_url!r}: {exc}") from exc
            else:
                pool.reached = True
                status = resp.status_code
                if 200 <= status < 300:
                    try:
                        data = json.loads(resp.content)
                        validate(data)
                    except (ValueError, KeyError, IndexError, TypeError, MalformedResponse):
                        reason = "malformed"
                    else:
                        return data, latency
                elif status in RETRY_STATUSES or status >= 500:
                    reason = f"http_{status}"
                    said = _server_message(resp)
                    if status == 429:
                        hinted = retry_after_s(resp.headers.get("retry-after"))
                        if hinted is not None:
                            wait = min(hinted, max(ep.backoff_max_s, RETRY_AFTER_CAP_S))
                elif status in expected:
                    raise ModelConfigError(f"HTTP {status} from {url}", status=status)
                else:
                    self.usage.errors += 1
                    raise await self._status_error(resp, url)
            if attempt >= retries:
                self.usage.errors += 1
                raise ModelUnavailableError(
                    _unavailable(url, ep.model, self.role, attempt + 1, reason, last_exc, pool)
                    + (f"; the server said: {said}" if said else "")
                )
            self.usage.count_retry(reason)
            if wait is None:
                wait = backoff_delay(attempt, ep.backoff_s, ep.backoff_max_s)
            await asyncio.sleep(wait)
            attempt += 1

    async def _status_error(self, resp: httpx.Response, url: str) -> ModelError:
        ep, status = self.endpoint, resp.status_code
        said = _server_message(resp)
        if status not in CONFIG_STATUSES:
            return ModelError(f"HTTP {status} from {url} for model {ep.model!r}: {said}")
        hint = ""
        if status == 404:
            served = await self._served_models()
            if served is not None and ep.model not in served:
                hint = f"; model {ep.model!r} is not served there (served: {', '.join(served)})"
            elif served is not None:
                hint = "; the model is served, so check the path (base URLs usually end in /v1)"
        elif status in (401, 403):
            hint = "; check the API key"
        return ModelConfigError(
            f"HTTP {status} from {url} for model {ep.model!r}: {said}{hint}", status=status
        )

    async def _served_models(self) -> list[str] | None:
        """Best effort: the model names the server lists, for a helpful error message."""
        try:
            resp = await self._get_pool().client.get(
                f"{self.endpoint.base_url}/models",
                headers=self._headers,
                timeout=self.endpoint.connect_timeout_s,
            )
            return [m["id"] for m in resp.json()["data"]]
        except Exception:
            return None

    async def probe(self) -> dict[str, Any]:
        """Check the server answers and serves our model: fail loudly and quickly if not.

        Returns {"base_url", "model", "served", "raw"}.
        """
        ep = self.endpoint
        timeout = httpx.Timeout(ep.connect_timeout_s)
        data, _ = await self.request(
            "GET",
            f"{ep.base_url}/models",
            None,
            _valid_models,
            max_retries=min(2, ep.max_retries),
            timeout=timeout,
            limited=False,
        )
        served = [m["id"] for m in data["data"]]
        if ep.model not in served:
            raise ModelConfigError(
                f"model {ep.model!r} is not served by {ep.base_url} "
                f"(served: {', '.join(served) or 'none'})",
                status=404,
            )
        return {"base_url": ep.base_url, "model": ep.model, "served": served, "raw": data}

    def meter_call(self, data: Mapping[str, Any], latency_s: float) -> None:
        """Book one answered call (its `usage` tokens and latency) in this role's meter."""
        usage = data.get("usage") or {}
        self.usage.calls += 1
        self.usage.prompt_tokens += int(usage.get("prompt_tokens") or 0)
        self.usage.completion_tokens += int(usage.get("completion_tokens") or 0)
        self.usage.latency_s += latency_s


def _valid_models(data: Any) -> None:
    if not all(isinstance(m["id"], str) for m in data["data"]):
        raise MalformedResponse
