"""The request machinery every model client shares: the openai SDK transport, retries, metering.

`ModelClient` is the base of `ChatModel`, `Embedder` and the peer gateway, and the one to extend
for another endpoint of an OpenAI-compatible server. One `openai.AsyncOpenAI` client and
semaphore per (event loop, base URL), on aiohttp where installed, is shared by every role that
talks to that server; `aclose_clients()` (or `run_sync`) closes them. Retries are ours, not the
SDK's; their decisions are `benchmarks.models.endpoint`'s.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import ipaddress
import json
import re
import time
import weakref
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar
from urllib.parse import urlsplit

import httpx2
import openai

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

try:  # the SDK's aiohttp transport (openai[aiohttp]); without it the SDK uses httpx
    import aiohttp
except ImportError:  # pragma: no cover - the harness extra installs it
    aiohttp = None  # type: ignore[assignment]

# aiohttp's errors for a URL it cannot use (a non-HTTP scheme, no host); older releases lack some
_AIOHTTP_BAD_URL: tuple[type[BaseException], ...] = (
    tuple(
        getattr(aiohttp.client_exceptions, name)
        for name in ("InvalidURL", "InvalidUrlClientError", "NonHttpUrlClientError")
        if hasattr(aiohttp.client_exceptions, name)
    )
    if aiohttp is not None
    else ()
)

__all__ = [
    "MalformedResponse",
    "ModelClient",
    "aclose_clients",
    "failure_reason",
    "run_sync",
    "valid_usage",
]

T = TypeVar("T")
_JSON_HEADERS = {"Content-Type": "application/json"}
# A server's reply to a prompt longer than its window (llama.cpp: "exceeds the available context
# size"; vLLM and OpenAI: "maximum context length")
_CONTEXT_OVERFLOW = re.compile(r"context (size|length|window)", re.IGNORECASE)
# The SDK needs a key; OpenAI-compatible servers started without one ignore it (vLLM's convention).
NO_KEY = "EMPTY"


# ---- connection pools ------------------------------------------------------------------------


def transport_name() -> str:
    """Which HTTP layer the SDK uses here: "aiohttp" (preferred) or "httpx"."""
    return "aiohttp" if aiohttp is not None else "httpx"


def _sdk_client(endpoint: Endpoint) -> openai.AsyncOpenAI:
    """The SDK client of one (event loop, base URL): its pool, timeouts, headers, typed errors.

    Its HTTP layer is aiohttp where installed (`openai[aiohttp]`, in the `harness` extra), else
    httpx. The reason is measured, not taste: httpx's connection pool rescans every connection
    for every request on each state change, so its CPU per call grows with the number in flight
    (10 ms a call at 256 in flight against 2.6 ms with aiohttp; `scripts/bench_harness.py`,
    docs/models.md).

    Retries are ours, not the SDK's (`max_retries=0`): the harness needs each retry counted by
    reason in the run's meter, a backoff the endpoint configures, a quick failure when a server
    has never answered (a wrong port is a configuration error, not a transient one), and retries
    of a 200 whose body is malformed; the SDK's built-in loop exposes none of these.
    """
    size = endpoint.concurrency + 4  # headroom for probes, which skip the semaphore
    http_options: dict[str, Any] = {
        "limits": httpx2.Limits(max_connections=size, max_keepalive_connections=size),
        "timeout": httpx2.Timeout(endpoint.timeout_s, connect=endpoint.connect_timeout_s),
        "trust_env": not _is_loopback(endpoint.base_url),
    }
    if aiohttp is not None:
        http: httpx2.AsyncClient = openai.DefaultAioHttpClient(**http_options)
    else:  # pragma: no cover - the harness extra installs aiohttp
        http = openai.DefaultAsyncHttpxClient(**http_options)
    return openai.AsyncOpenAI(
        base_url=endpoint.base_url,
        api_key=endpoint.api_key or NO_KEY,
        max_retries=0,  # ours (see the docstring)
        timeout=http_options["timeout"],
        http_client=http,
    )


class _Pool:
    """The shared SDK client, semaphore and reachability of one base URL in one event loop."""

    __slots__ = ("client", "reached", "semaphore")

    def __init__(self, endpoint: Endpoint) -> None:
        self.client = _sdk_client(endpoint)
        self.semaphore = asyncio.Semaphore(endpoint.concurrency)
        self.reached = False


_POOLS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, _Pool]] = (
    weakref.WeakKeyDictionary()
)
# Per loop, a suspended async generator whose `finally` closes that loop's pools: asyncio.run()
# finalises every live async generator before it closes the loop, so pools opened under a bare
# asyncio.run() (not run_sync) are closed too, instead of aiohttp warning "Unclosed client
# session" when they are collected.
_CLOSERS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = weakref.WeakKeyDictionary()


async def _close_at_shutdown(pools: dict[str, _Pool]) -> Any:
    try:
        yield
    finally:
        await _close_pools(pools)


async def _close_pools(pools: dict[str, _Pool]) -> None:
    while pools:
        _, pool = pools.popitem()
        await pool.client.close()


def _pool_for(endpoint: Endpoint, loop: asyncio.AbstractEventLoop) -> _Pool:
    pools = _POOLS.get(loop)
    if pools is None:
        pools = _POOLS[loop] = {}
        closer = _CLOSERS[loop] = _close_at_shutdown(pools)
        loop.create_task(closer.__anext__())  # start it: the loop now finalises it at shutdown
    pool = pools.get(endpoint.base_url)
    if pool is None or pool.client.is_closed():
        pool = pools[endpoint.base_url] = _Pool(endpoint)
    return pool


async def aclose_clients() -> None:
    """Close the pooled HTTP clients of the running event loop."""
    await _close_pools(_POOLS.pop(asyncio.get_running_loop(), {}))


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


# ---- what went wrong -------------------------------------------------------------------------


def _chain(exc: BaseException) -> list[BaseException]:
    """`exc` and its causes, innermost first (the SDK wraps the transport's error, which the
    aiohttp adapter has already mapped once, coarsely: the original says most)."""
    seen: list[BaseException] = []
    cur: BaseException | None = exc
    while cur is not None and cur not in seen:
        seen.append(cur)
        cur = cur.__cause__ or cur.__context__
    return seen[::-1]


def failure_reason(exc: BaseException) -> str:
    """What a transport failure was: "connect_timeout", "timeout", "connect" (refused, no route,
    unknown host), "bad_url", or "connection" (reset, closed early, protocol garbage).

    The HTTP libraries' own errors decide, innermost first; the standard library's (which they
    wrap) only when no library error is in the chain."""
    chain = _chain(exc)
    for err in chain:
        reason = _library_reason(err)
        if reason is not None:
            return reason
    for err in chain:
        if isinstance(err, TimeoutError):
            return "timeout"
        if isinstance(err, ConnectionRefusedError):
            return "connect"
    return "timeout" if isinstance(exc, openai.APITimeoutError) else "connection"


def _library_reason(err: BaseException) -> str | None:
    if aiohttp is not None and isinstance(err, aiohttp.ClientError):
        if isinstance(err, aiohttp.ConnectionTimeoutError):
            return "connect_timeout"
        if isinstance(err, aiohttp.ServerTimeoutError):
            return "timeout"
        if isinstance(err, _AIOHTTP_BAD_URL):
            return "bad_url"
        if isinstance(err, aiohttp.ClientConnectorError):
            return "connect"
        return "connection"
    if isinstance(err, httpx2.TransportError):
        if isinstance(err, httpx2.ConnectTimeout):
            return "connect_timeout"
        if isinstance(err, httpx2.TimeoutException):
            return "timeout"
        if isinstance(err, httpx2.UnsupportedProtocol):
            return "bad_url"
        if isinstance(err, httpx2.ConnectError):
            return "connect"
        return "connection"
    if isinstance(err, httpx2.InvalidURL):
        return "bad_url"
    return None


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
    cause = _chain(exc)[0] if exc is not None else None
    if cause is not None and str(cause):
        detail += f" ({type(cause).__name__}: {cause})"
    if reason.startswith("connect") and not pool.reached:
        return (
            f"cannot reach {url} for model {model!r} (role {role}): {detail}, "
            f"{attempts} attempt(s); is the server running and the base URL right?"
        )
    return (
        f"{url} failed after {attempts} attempt(s) for model {model!r} (role {role}); "
        f"last failure: {detail}"
    )


def _server_message(resp: httpx2.Response) -> str:
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


USAGE_FIELDS = ("prompt_tokens", "completion_tokens", "total_tokens")


def valid_usage(data: Mapping[str, Any]) -> None:
    """A reply's `usage`, when it has one, is an object whose token counts are non-negative
    integers: anything else (`"usage": "lots"`) is malformed, so it is retried and never
    cached, rather than failing the metering of every rerun that reads it back."""
    usage = data.get("usage") if isinstance(data, Mapping) else None
    if usage is None:
        return
    if not isinstance(usage, Mapping):
        raise MalformedResponse
    for name in USAGE_FIELDS:
        value = usage.get(name)
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or value < 0
        ):
            raise MalformedResponse


def server_work(data: Any) -> dict[str, Any]:
    """What a server says it did for one reply, where it says it: prompt tokens reused from its
    prompt cache (`usage.prompt_tokens_details.cached_tokens`, OpenAI's field, which llama.cpp
    and vLLM fill; else llama.cpp's `timings.cache_n`) and its prompt-processing and decoding
    time in ms (llama.cpp's `timings`). Keys it does not report are left out; a field of the
    wrong type counts as not reported (this is a measurement, never a reason to retry)."""

    def number(value: Any) -> float | None:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0
        return float(value) if ok and value == value and value != float("inf") else None

    out: dict[str, Any] = {}
    if not isinstance(data, Mapping):
        return out
    usage, timings = data.get("usage"), data.get("timings")
    usage = usage if isinstance(usage, Mapping) else {}
    timings = timings if isinstance(timings, Mapping) else {}
    details = usage.get("prompt_tokens_details")
    reused = number(details.get("cached_tokens")) if isinstance(details, Mapping) else None
    reused = reused if reused is not None else number(timings.get("cache_n"))
    if reused is not None:
        out["reused_tokens"] = int(reused)
    for name, field_name in (("prompt_ms", "prompt_ms"), ("decode_ms", "predicted_ms")):
        if (value := number(timings.get(field_name))) is not None:
            out[name] = round(value, 3)
    return out


# ---- the shared request machinery ------------------------------------------------------------


class ModelClient:
    """What chat and embedding clients share: pooled requests, retries, errors, metering.

    The base to extend for another endpoint of an OpenAI-compatible server that wants the same
    guarantees (the peer gateway forwards whole request bodies through it). A subclass gets
    - `request()`: one JSON request through the shared client and semaphore, transient failures
      (429 with its Retry-After, 5xx, timeouts, resets, malformed bodies) retried with backoff
      and jitter, configuration errors raised at once as `ModelConfigError` naming the model
      and URL (the classification of the SDK's errors is `failure_reason`);
    - `meter_call()`: a successful answer's calls, tokens and latency booked in the role's meter;
    - `probe()` and `aclose()`.
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
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pool: _Pool | None = None

    def _get_pool(self) -> _Pool:
        loop = asyncio.get_running_loop()
        if loop is not self._loop or self._pool is None or self._pool.client.is_closed():
            self._loop, self._pool = loop, _pool_for(self.endpoint, loop)
        return self._pool

    async def aclose(self) -> None:
        """Close the pooled connections to this client's server (shared with other roles on
        it; they reopen on next use)."""
        pools = _POOLS.get(asyncio.get_running_loop(), {})
        pool = pools.pop(self.endpoint.base_url, None)
        self._pool = None
        if pool is not None:
            await pool.client.close()

    async def request(
        self,
        method: str,
        url: str,
        body: Any,
        validate: Callable[[Any], None],
        *,
        max_retries: int | None = None,
        timeout: float | None = None,
        limited: bool = True,
        expected: frozenset[int] = frozenset(),
    ) -> tuple[Any, float]:
        """(JSON body, latency of the successful attempt), retrying what is transient.

        The request goes through the SDK's documented raw form (`client.post(path,
        cast_to=httpx.Response, body=...)`): the body is exactly ours (it is the cache key) and
        the reply is the server's JSON as sent, which the response cache stores.

        `url` is absolute (the SDK client's base URL is this endpoint's). `validate` checks a
        2xx body (raising `MalformedResponse`, ValueError, KeyError, IndexError or TypeError if
        it is not what the endpoint promises: then it is retried). `timeout` (seconds) replaces
        the endpoint's for this request. `limited=False` skips the server's semaphore (probes,
        token counts). A status in `expected` raises a plain `ModelConfigError` that is not
        counted as an error: the caller handles it (a server without /tokenize).
        """
        ep = self.endpoint
        pool = self._get_pool()
        retries = ep.max_retries if max_retries is None else max_retries
        options: dict[str, Any] = {} if timeout is None else {"timeout": timeout}
        if method != "GET":
            body = json.dumps(body, ensure_ascii=False).encode("utf-8")
        attempt = 0
        while True:
            wait: float | None = None
            last_exc: BaseException | None = None
            said = ""
            try:
                async with pool.semaphore if limited else contextlib.nullcontext():
                    started = time.perf_counter()
                    resp = await self._send(pool.client, method, url, body, options)
                latency = time.perf_counter() - started
            except openai.APIStatusError as exc:
                pool.reached = True
                resp, status = exc.response, exc.status_code
                if status in RETRY_STATUSES or status >= 500:
                    reason = f"http_{status}"
                    said = _server_message(resp)
                    if status == 429:
                        hinted = retry_after_s(resp.headers.get("retry-after"))
                        if hinted is not None:
                            wait = min(hinted, max(ep.backoff_max_s, RETRY_AFTER_CAP_S))
                elif status in expected:
                    raise ModelConfigError(f"HTTP {status} from {url}", status=status) from None
                else:
                    self.usage.errors += 1
                    raise await self._status_error(resp, url) from None
            except (openai.APIConnectionError, httpx2.TransportError) as exc:
                reason, last_exc = failure_reason(exc), exc
                if reason == "bad_url":
                    raise ModelConfigError(f"bad base URL {ep.base_url!r}: {exc}") from exc
                if reason == "connect_timeout" and not pool.reached:
                    retries = min(retries, attempt)  # nothing answers there: waiting won't help
                elif reason == "connect" and not pool.reached:
                    retries = min(retries, UNREACHED_RETRIES)
                    wait = UNREACHED_BACKOFF_S
            else:
                pool.reached = True
                try:
                    data = json.loads(resp.content)
                    validate(data)
                except (ValueError, KeyError, IndexError, TypeError, MalformedResponse):
                    reason = "malformed"
                else:
                    return data, latency
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

    @staticmethod
    async def _send(
        client: openai.AsyncOpenAI, method: str, url: str, body: Any, options: Any
    ) -> httpx2.Response:
        """One attempt through the SDK's raw request form: the reply is the server's, unparsed."""
        if method == "GET":
            return await client.get(url, cast_to=httpx2.Response, options=options)
        # the body goes as JSON bytes, serialised once per call: as `body=` the SDK would
        # deep-copy and re-serialise it on every attempt (measured: docs/models.md)
        return await client.post(
            url,
            cast_to=httpx2.Response,
            content=body,
            options={**options, "headers": _JSON_HEADERS},
        )

    async def _status_error(self, resp: httpx2.Response, url: str) -> ModelError:
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
        elif status == 400 and _CONTEXT_OVERFLOW.search(said):
            hint = (
                f"; the {self.role}'s prompt is longer than the server's context window: "
                f"{ep.window_hint}"
            )
        return ModelConfigError(
            f"HTTP {status} from {url} for model {ep.model!r}: {said}{hint}", status=status
        )

    async def _served_models(self) -> list[str] | None:
        """Best effort: the model names the server lists, for a helpful error message."""
        try:
            resp = await self._get_pool().client.get(
                f"{self.endpoint.base_url}/models",
                cast_to=httpx2.Response,
                options={"timeout": self.endpoint.connect_timeout_s},
            )
            return [m["id"] for m in resp.json()["data"]]
        except Exception:
            return None

    async def probe(self) -> dict[str, Any]:
        """Check the server answers and serves our model: fail loudly and quickly if not.

        Returns {"base_url", "model", "served", "raw"}.
        """
        ep = self.endpoint
        data, _ = await self.request(
            "GET",
            f"{ep.base_url}/models",
            None,
            _valid_models,
            max_retries=min(2, ep.max_retries),
            timeout=ep.connect_timeout_s,
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
        """Book one answered call (its `usage` tokens, latency and what the server says it
        did, `server_work`) in this role's meter."""
        usage = data.get("usage") or {}
        self.usage.calls += 1
        self.usage.prompt_tokens += int(usage.get("prompt_tokens") or 0)
        self.usage.completion_tokens += int(usage.get("completion_tokens") or 0)
        self.usage.latency_s += latency_s
        work = server_work(data)
        self.usage.prompt_reused += work.get("reused_tokens") or 0
        self.usage.server_prompt_s += (work.get("prompt_ms") or 0.0) / 1000
        self.usage.server_decode_s += (work.get("decode_ms") or 0.0) / 1000

    # ---- identical requests in flight are paid once ---------------------------------------

    async def wait_in_flight(self, key: str) -> Any | None:
        """The reply of an identical request already in flight (`cache.inflight`), once it
        lands; None when there is none, or it failed (then the caller pays itself). The request
        may be in flight on another event loop (another peer gateway's): its future is a
        thread-safe one, awaited here through a wrapper of this loop, and shielded so that a
        waiter cancelled here never cancels the call it waits for."""
        pending = self.cache.inflight.get(key)
        if pending is None:
            return None
        return await asyncio.shield(asyncio.wrap_future(pending))

    async def stored_or_paid(self, key: str, pay: Callable[[], Awaitable[Any]]) -> tuple[Any, bool]:
        """(reply, cached): the cache's reply for `key`, else that of an identical request in
        flight, else `pay()`'s, paid once (`pay_once`). A reply not paid here counts as a cache
        hit. The path every cached chat call takes (the harness's and the peer gateway's), so
        none pays a retry twice."""
        raw = self.cache.get(key)
        if raw is None:
            raw = await self.wait_in_flight(key)
        if raw is not None:
            self.usage.cache_hits += 1
            return raw, True
        return await self.pay_once(key, pay), False

    async def pay_once(self, key: str, pay: Callable[[], Awaitable[Any]]) -> Any:
        """`pay()` for `key`, while identical requests that arrive meanwhile wait for its reply
        (`wait_in_flight`) instead of paying again: a client that times out and retries, or
        two callers asking the same thing at once."""
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        future.set_running_or_notify_cancel()  # running: no waiter can cancel it
        self.cache.inflight[key] = future
        raw = None
        try:
            raw = await pay()
            return raw
        finally:
            self.cache.inflight.pop(key, None)
            future.set_result(raw)


def _valid_models(data: Any) -> None:
    if not all(isinstance(m["id"], str) for m in data["data"]):
        raise MalformedResponse
