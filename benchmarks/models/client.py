"""Chat and embedding clients for any OpenAI-compatible server (vLLM, llama.cpp, scripted).

Three promises the harness relies on:
- a wrong configuration fails at once and says what is wrong (`ModelConfigError`: the model and
  the URL, never retried), while a flaky server is retried with backoff and jitter (429 with its
  Retry-After, 5xx, timeouts, resets, malformed bodies) and only then `ModelUnavailableError`;
- a response already received is never paid for again (`ResponseCache`, semantic keys);
- every call is metered per role (`UsageMeter`).

Connections: one `httpx.AsyncClient` and one semaphore per (event loop, base URL), created on
first use, so every role talking to one server shares its concurrency limit and its pooled
keep-alive connections. `aclose_clients()` (or `run_sync`) closes them.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import email.utils
import ipaddress
import json
import random
import time
import weakref
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import urlsplit

import httpx
import numpy as np

from benchmarks.models.cache import ResponseCache, cache_key
from benchmarks.models.structured import StructuredOutputError, parse_json
from benchmarks.models.usage import RoleUsage, UsageMeter

__all__ = [
    "ChatModel",
    "ChatResult",
    "Embedder",
    "Endpoint",
    "ModelConfigError",
    "ModelError",
    "ModelUnavailableError",
    "TokenCount",
    "aclose_clients",
    "backoff_delay",
    "run_sync",
]

T = TypeVar("T")
Message = Mapping[str, Any]

# Statuses that mean "you asked wrongly": retrying cannot help.
CONFIG_STATUSES = frozenset({400, 401, 403, 404, 405, 413, 422})
RETRY_STATUSES = frozenset({408, 409, 425, 429})  # plus every 5xx
# An endpoint that has never answered gets this many quick retries on a refused connection:
# nothing listening is a configuration problem, not a transient one.
UNREACHED_RETRIES = 2
# A 429's Retry-After is obeyed even beyond backoff_max_s, up to this (a server asking for an
# hour is treated as asking for a minute, then asked again).
RETRY_AFTER_CAP_S = 60.0
UNREACHED_BACKOFF_S = 0.25


class ModelError(RuntimeError):
    """Base of every model-access error."""


class ModelConfigError(ModelError):
    """Wrong configuration (URL, model name, key, request): fix the config; never retried."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class ModelUnavailableError(ModelError):
    """The server could not be reached or kept failing after all retries."""


@dataclass(frozen=True, slots=True)
class Endpoint:
    """Where a model is served and how to talk to it.

    Only `model` and `revision` are semantic (they enter cache keys); the rest is operational
    and can change between runs without invalidating cached responses. Clients of one
    `base_url` share a connection pool and a semaphore, sized by the first one to connect.
    """

    base_url: str
    model: str
    api_key: str | None = field(default=None, repr=False)
    revision: str | None = None
    concurrency: int = 20
    timeout_s: float = 120.0
    connect_timeout_s: float = 5.0
    max_retries: int = 6
    backoff_s: float = 0.5
    backoff_max_s: float = 30.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "base_url", self.base_url.rstrip("/"))
        if self.concurrency < 1:
            raise ValueError(f"concurrency must be >= 1, not {self.concurrency}")
        if self.max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, not {self.max_retries}")

    @property
    def root_url(self) -> str:
        """The server root (base URL without "/v1"): where /tokenize and /health live."""
        url = self.base_url
        return url[: -len("/v1")] if url.endswith("/v1") else url


@dataclass(slots=True)
class ChatResult:
    """One completion. `parsed` is set when a schema was asked for and the text parsed."""

    text: str
    parsed: Any = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached: bool = False
    latency_s: float = 0.0
    parse_error: str | None = None
    finish_reason: str | None = None


@dataclass(frozen=True, slots=True)
class TokenCount:
    """A token count; `exact` is False for the labelled approximation (`method` says which)."""

    n: int
    exact: bool
    method: str


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


def backoff_delay(attempt: int, base_s: float, max_s: float) -> float:
    """Exponential backoff with jitter (half fixed, half random), so clients don't stampede."""
    delay = min(max_s, base_s * (2**attempt))
    return delay * (0.5 + 0.5 * random.random())


def retry_after_s(value: str | None) -> float | None:
    """Seconds from a Retry-After header (seconds, fractional accepted, or an HTTP date)."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


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


class _Malformed(Exception):
    """A 2xx response whose body is not what the endpoint promises."""


# ---- the shared request machinery ------------------------------------------------------------


class _ModelClient:
    """What chat and embedding clients share: pooled requests, retries, errors, metering."""

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

    async def _request(
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

        A status in `expected` raises a plain `ModelConfigError` that is not counted as an
        error: the caller handles it (a server without /tokenize).
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
                    except (ValueError, KeyError, IndexError, TypeError, _Malformed):
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
        data, _ = await self._request(
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

    def _meter_call(self, data: Mapping[str, Any], latency_s: float) -> None:
        usage = data.get("usage") or {}
        self.usage.calls += 1
        self.usage.prompt_tokens += int(usage.get("prompt_tokens") or 0)
        self.usage.completion_tokens += int(usage.get("completion_tokens") or 0)
        self.usage.latency_s += latency_s


def _valid_models(data: Any) -> None:
    if not all(isinstance(m["id"], str) for m in data["data"]):
        raise _Malformed


def _valid_chat(data: Any) -> None:
    message = data["choices"][0]["message"]
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        raise _Malformed


def _valid_embeddings(data: Any) -> None:
    for item in data["data"]:
        vec = item["embedding"]
        if not isinstance(vec, list | str) or not isinstance(item.get("index", 0), int):
            raise _Malformed


def _valid_tokens(data: Any) -> None:
    if not isinstance(data["tokens"], list):
        raise _Malformed


# ---- chat --------------------------------------------------------------------------------------


def _user(text: str) -> list[dict[str, Any]]:
    return [{"role": "user", "content": text}]


def chat_result(
    raw: Mapping[str, Any], *, structured: bool, cached: bool, latency_s: float
) -> ChatResult:
    """A `ChatResult` from a raw response: the same raw JSON always gives the same result."""
    choice = raw["choices"][0]
    text = choice["message"].get("content") or ""
    usage = raw.get("usage") or {}
    result = ChatResult(
        text=text,
        prompt_tokens=int(usage.get("prompt_tokens") or 0),
        completion_tokens=int(usage.get("completion_tokens") or 0),
        cached=cached,
        latency_s=latency_s,
        finish_reason=choice.get("finish_reason"),
    )
    if structured:
        try:
            result.parsed = parse_json(text)
        except StructuredOutputError as exc:
            result.parse_error = str(exc)
    return result


class ChatModel(_ModelClient):
    """A chat model in one role (writer, reader, judge…), cached, retried and metered."""

    def __init__(
        self,
        endpoint: Endpoint,
        role: str = "reader",
        cache: ResponseCache | None = None,
        meter: UsageMeter | None = None,
        temperature: float = 0.0,
        max_tokens: int = 512,
        extra_body: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(endpoint, role, cache, meter)
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.extra_body = dict(extra_body or {})
        self._url = f"{endpoint.base_url}/chat/completions"
        self._tokenize_method: str | None = None

    def request_body(
        self,
        messages: Sequence[Message] | str,
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
        schema: Mapping[str, Any] | None = None,
        schema_name: str = "answer",
    ) -> dict[str, Any]:
        """The JSON sent to /chat/completions (everything in it is semantic)."""
        body: dict[str, Any] = dict(self.extra_body)
        body["model"] = self.endpoint.model
        body["messages"] = (
            _user(messages) if isinstance(messages, str) else [dict(m) for m in messages]
        )
        body["temperature"] = self.temperature if temperature is None else temperature
        body["max_tokens"] = self.max_tokens if max_tokens is None else max_tokens
        if schema is not None:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": schema_name, "schema": schema, "strict": True},
            }
        return body

    def cache_key_for(self, body: Mapping[str, Any], draw: int = 0) -> str:
        return cache_key(
            {"kind": "chat", "revision": self.endpoint.revision, "draw": draw, "body": body}
        )

    async def complete(
        self,
        messages: Sequence[Message] | str,
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
        schema: Mapping[str, Any] | None = None,
        schema_name: str = "answer",
        draw: int = 0,
    ) -> ChatResult:
        """One completion; `draw` distinguishes repeated samples of the same request.

        With `schema`, the server is asked for json_schema output and the text is parsed
        fence-tolerantly; a failed parse leaves `parsed=None`, sets `parse_error` and is counted.
        """
        started = time.perf_counter()
        body = self.request_body(
            messages,
            max_tokens=max_tokens,
            temperature=temperature,
            schema=schema,
            schema_name=schema_name,
        )
        cache = self.cache
        if not cache.enabled:
            raw, latency = await self._request("POST", self._url, body, _valid_chat)
            self._meter_call(raw, latency)
            return self._result(raw, schema is not None, False, started)
        key = self.cache_key_for(body, draw)
        raw = cache.get(key)
        if raw is None:
            raw = await self._shared_call(cache, key, body)
        if raw is not None:
            self.usage.cache_hits += 1
            return self._result(raw, schema is not None, True, started)
        raw = await self._call_and_store(cache, key, body)
        return self._result(raw, schema is not None, False, started)

    async def _shared_call(self, cache: ResponseCache, key: str, body: Any) -> Any | None:
        """Wait for an identical request already in flight, so it is paid only once."""
        pending = cache.inflight.get(key)
        if pending is None:
            return None
        return await asyncio.shield(pending)  # None if it failed: then we try ourselves

    async def _call_and_store(self, cache: ResponseCache, key: str, body: Any) -> Any:
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        cache.inflight[key] = future
        raw = None
        try:
            raw, latency = await self._request("POST", self._url, body, _valid_chat)
            self._meter_call(raw, latency)
            cache.put(key, raw, kind="chat", model=self.endpoint.model, request=body)
            return raw
        finally:
            cache.inflight.pop(key, None)
            future.set_result(raw)

    def _result(self, raw: Any, structured: bool, cached: bool, started: float) -> ChatResult:
        result = chat_result(
            raw, structured=structured, cached=cached, latency_s=time.perf_counter() - started
        )
        if result.parse_error is not None:
            self.usage.parse_failures += 1
        return result

    # ---- tokens ----------------------------------------------------------------------------

    async def count_tokens(self, text: str) -> TokenCount:
        """Tokens of `text` by the served model's tokenizer, else a labelled chars/4 estimate.

        Tries llama.cpp's /tokenize shape first (vLLM rejects it with 400, while llama.cpp
        would answer vLLM's shape with an empty list), then vLLM's, and remembers what worked.
        """
        key = cache_key(
            {
                "kind": "tokenize",
                "model": self.endpoint.model,
                "revision": self.endpoint.revision,
                "text": text,
            }
        )
        stored = self.cache.get(key)
        if stored is not None:  # a resumed run re-pays no tokenize call either
            return TokenCount(stored["n"], stored["exact"], stored["method"])
        count = await self._count_tokens(text)
        if count.exact:
            self.cache.put(
                key,
                {"n": count.n, "exact": True, "method": count.method},
                kind="tokenize",
                model=self.endpoint.model,
            )
        return count

    async def _count_tokens(self, text: str) -> TokenCount:
        method = self._tokenize_method
        if method in (None, "llama.cpp"):
            n = await self._tokenize({"content": text}, lambda d: len(d["tokens"]))
            if n is not None:
                self._tokenize_method = "llama.cpp"
                return TokenCount(n, True, "tokenize:llama.cpp")
            if method is None and self._tokenize_method != "chars/4":
                method = "vllm"
        if method == "vllm":
            body = {"model": self.endpoint.model, "prompt": text}
            n = await self._tokenize(body, lambda d: int(d.get("count", len(d["tokens"]))))
            if n is not None:
                self._tokenize_method = "vllm"
                return TokenCount(n, True, "tokenize:vllm")
        self._tokenize_method = "chars/4"
        return TokenCount((len(text) + 3) // 4, False, "chars/4")

    async def _tokenize(self, body: dict[str, Any], count: Callable[[Any], int]) -> int | None:
        """A count, or None when this shape is not understood; 404/405 means no endpoint."""
        try:
            data, _ = await self._request(
                "POST",
                f"{self.endpoint.root_url}/tokenize",
                body,
                _valid_tokens,
                expected=_TOKENIZE_UNSUPPORTED,
                # counting needs no generation slot: never queue it behind the chat calls
                # (an arm that reads before it counts would otherwise hold every prediction
                # until the last answer)
                limited=False,
            )
        except ModelConfigError as exc:
            if exc.status in (404, 405):
                self._tokenize_method = "chars/4"
            return None
        return count(data)


# An absent tokenizer is a capability, not a failure; 400/422 means "not this request shape".
_TOKENIZE_UNSUPPORTED = frozenset({400, 404, 405, 422})


# ---- embeddings --------------------------------------------------------------------------------


def _as_vector(value: Any) -> np.ndarray:
    """An embedding as float32: a JSON list, or base64 float32 (encoding_format="base64")."""
    if isinstance(value, str):
        return np.frombuffer(base64.b64decode(value), dtype=np.float32).copy()
    return np.asarray(value, dtype=np.float32)


def _normalised(vec: np.ndarray) -> np.ndarray:
    norm = float(np.linalg.norm(vec))
    return vec / norm if norm > 0 else vec


def _pack(vec: np.ndarray) -> dict[str, Any]:
    return {"dtype": "float32", "b64": base64.b64encode(vec.astype(np.float32).tobytes()).decode()}


def _unpack(stored: Mapping[str, Any]) -> np.ndarray:
    return np.frombuffer(base64.b64decode(stored["b64"]), dtype=np.float32).copy()


class Embedder(_ModelClient):
    """Embeddings, L2-normalised float32, cached per text, requested in batches."""

    def __init__(
        self,
        endpoint: Endpoint,
        role: str = "embedder",
        cache: ResponseCache | None = None,
        meter: UsageMeter | None = None,
        batch_size: int = 32,
        dimensions: int | None = None,
        query_prefix: str = "",
        passage_prefix: str = "",
        extra_body: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(endpoint, role, cache, meter)
        if batch_size < 1:
            raise ValueError("batch_size must be >= 1")
        self.batch_size = batch_size
        self.dimensions = dimensions
        self.prefixes = {"query": query_prefix, "passage": passage_prefix}
        self.extra_body = dict(extra_body or {})
        self._url = f"{endpoint.base_url}/embeddings"

    def cache_key_for(self, text: str, kind: str) -> str:
        return cache_key(
            {
                "kind": "embedding",
                "model": self.endpoint.model,
                "revision": self.endpoint.revision,
                "dimensions": self.dimensions,
                "input_kind": kind,
                "prefix": self.prefixes[kind],
                "extra_body": self.extra_body,
                "text": text,
            }
        )

    async def embed(self, texts: Sequence[str] | str, kind: str = "passage") -> np.ndarray:
        """An (n, d) float32 array of unit vectors, in the order of `texts`."""
        if kind not in self.prefixes:
            raise ValueError(f"kind must be 'query' or 'passage', not {kind!r}")
        items = [texts] if isinstance(texts, str) else list(texts)
        if not items:
            return np.zeros((0, self.dimensions or 0), dtype=np.float32)
        vectors: dict[str, np.ndarray] = {}
        keys: dict[str, str] = {}
        missing: list[str] = []
        for text in dict.fromkeys(items):  # each distinct text once, in first-seen order
            key = keys[text] = self.cache_key_for(text, kind)
            stored = self.cache.get(key)
            if stored is None:
                missing.append(text)
            else:
                vectors[text] = _unpack(stored)
                self.usage.cache_hits += 1
        batches = [
            missing[i : i + self.batch_size] for i in range(0, len(missing), self.batch_size)
        ]
        results = await asyncio.gather(*(self._embed_batch(b, kind) for b in batches))
        for batch, vecs in zip(batches, results, strict=True):
            for text, vec in zip(batch, vecs, strict=True):
                vectors[text] = vec
                self.cache.put(keys[text], _pack(vec), kind="embedding", model=self.endpoint.model)
        out = np.stack([vectors[t] for t in items])
        return out

    async def _embed_batch(self, batch: list[str], kind: str) -> list[np.ndarray]:
        prefix = self.prefixes[kind]
        body: dict[str, Any] = dict(self.extra_body)
        body["model"] = self.endpoint.model
        body["input"] = [prefix + t for t in batch]
        if self.dimensions is not None:
            body["dimensions"] = self.dimensions
        data, latency = await self._request("POST", self._url, body, _valid_embeddings)
        items = sorted(data["data"], key=lambda item: item.get("index", 0))
        if len(items) != len(batch):
            raise ModelError(
                f"{self._url} returned {len(items)} embeddings for {len(batch)} inputs"
            )
        self._meter_call(data, latency)
        vecs = [_normalised(_as_vector(item["embedding"])) for item in items]
        dims = {v.shape[0] for v in vecs}
        if len(dims) != 1 or (self.dimensions is not None and dims != {self.dimensions}):
            raise ModelError(f"{self._url} returned embeddings of dimension {sorted(dims)}")
        return vecs
