"""A loopback OpenAI-compatible front through which the peer packages reach the models.

The peers call OpenAI-compatible servers with their own clients; each arm gets a `127.0.0.1`
URL whose chat and embedding requests are forwarded, body unchanged, through the harness's
`ModelClient` (pooled, retried on 429/5xx/timeouts), cached in the run's response cache and
metered under the writer's and embedder's roles (the paper reports Graphiti's ingest cost).
Upstream configuration errors reach the package as the same HTTP status and message. Cache keys
are the request body plus the endpoint's revision, so a sampling package gets its first draw.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import logging
import threading
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from benchmarks.models.cache import cache_key
from benchmarks.models.client import (
    ChatModel,
    Embedder,
    ModelClient,
    ModelConfigError,
    ModelError,
)
from benchmarks.models.server import LOOPBACK

log = logging.getLogger(__name__)

#: the paths forwarded, and which upstream serves each
ROUTES = {"/v1/chat/completions": "chat", "/v1/embeddings": "embeddings"}
UPSTREAM_PATHS = {"chat": "chat/completions", "embeddings": "embeddings"}


class _Forwarder(ModelClient):
    """One upstream endpoint, sharing the original client's cache, meter and role."""

    def __init__(self, client: ChatModel | Embedder, kind: str) -> None:
        super().__init__(client.endpoint, client.role, client.cache, client.meter)
        self.kind = kind

    async def forward(self, body: dict[str, Any]) -> dict[str, Any]:
        key = cache_key({"gateway": self.kind, "revision": self.endpoint.revision, "body": body})
        url = f"{self.endpoint.base_url}/{UPSTREAM_PATHS[self.kind]}"

        async def pay() -> dict[str, Any]:
            data, latency = await self.request("POST", url, body, _json_object)
            self.meter_call(data, latency)
            if self.cache.enabled:
                model = str(body.get("model"))
                self.cache.put(key, data, kind=f"gateway-{self.kind}", model=model, request=body)
            return data

        if not self.cache.enabled:
            return await pay()
        # a package that gave up waiting (HippoRAG's 5-minute read timeout, behind a one-slot
        # local server) retries the same body while the first is still queued upstream: it
        # waits for that one instead of paying again
        data, _ = await self.stored_or_paid(key, pay)
        return data

    async def models(self) -> dict[str, Any]:
        data, _ = await self.request(
            "GET", f"{self.endpoint.base_url}/models", None, _json_object, limited=False
        )
        return data


def _json_object(data: Any) -> None:
    if not isinstance(data, Mapping):
        raise TypeError("not a JSON object")


class GatewayStopped(Exception):
    """The gateway stopped while a request was in flight: the run is stopping."""


class Gateway:
    """Serve `/v1/chat/completions` (to the writer) and `/v1/embeddings` (to the embedder) on
    127.0.0.1 until `stop()`; `base_url` is what a peer package is given.

    `stop()` cancels the requests in flight, which the package then sees fail at once (HTTP 503,
    `x-should-retry: false`): a run stopped by SIGTERM or Ctrl-C does not wait minutes for the
    package's current model call, which the harness would discard anyway.
    """

    def __init__(self, writer: ChatModel, embedder: Embedder) -> None:
        self.upstream = {
            "chat": _Forwarder(writer, "chat"),
            "embeddings": _Forwarder(embedder, "embeddings"),
        }
        self.requests = {"chat": 0, "embeddings": 0}
        self.gone = 0  # replies whose package had stopped waiting (note_gone)
        self.failures: list[str] = []  # error answers given to the package (note_failure)
        self._loop = asyncio.new_event_loop()
        self._loop_thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._httpd: ThreadingHTTPServer | None = None
        self._stopping = threading.Lock()
        self._http_thread: threading.Thread | None = None
        self._inflight: set[concurrent.futures.Future[Any]] = set()
        self._inflight_lock = threading.Lock()

    @property
    def base_url(self) -> str:
        if self._httpd is None:
            raise RuntimeError("the gateway is not started")
        return f"http://{LOOPBACK}:{self._httpd.server_address[1]}/v1"

    def note_gone(self, path: str) -> None:
        """A package closed its connection before its reply was ready (its own read timeout,
        behind a slow local server). It retries: the retry waits for the call in flight or is
        answered from the response cache, so nothing is paid twice; one line says so."""
        self.gone += 1
        reuse = "is answered from the response cache" if self.cache_enabled else "pays again"
        log.info(
            "gateway: the peer package stopped waiting for its %s reply (its own timeout); "
            "its retry %s (%d so far)",
            path,
            reuse,
            self.gone,
        )

    def note_failure(self, path: str, status: int, message: str) -> None:
        """The package got an error answer instead of a reply. Some packages log it and carry
        on without the reply (Mem0: "no memories to extract"), so the arm checks this list and
        stops the run rather than keep a store silently missing what the call would have added
        (`PeerArm.check_calls`)."""
        self.failures.append(f"{path}: HTTP {status}: {message}")

    @property
    def cache_enabled(self) -> bool:
        return self.upstream["chat"].cache.enabled

    def start(self) -> str:
        if self._httpd is None:
            self._loop_thread.start()
            self._httpd = ThreadingHTTPServer((LOOPBACK, 0), _handler_for(self))
            self._httpd.daemon_threads = True
            self._http_thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
            self._http_thread.start()
        return self.base_url

    def stop(self) -> None:
        """Idempotent, and safe from two threads at once (an explicit close and a finalizer)."""
        with self._stopping:
            httpd, self._httpd = self._httpd, None
            if httpd is not None:
                httpd.shutdown()
                httpd.server_close()
            with self._inflight_lock:
                inflight, self._inflight = list(self._inflight), set()
            for future in inflight:
                future.cancel()  # thread-safe: cancels the forwarding task on the loop
            if self._loop.is_running():
                for fwd in self.upstream.values():
                    with contextlib.suppress(Exception):
                        asyncio.run_coroutine_threadsafe(fwd.aclose(), self._loop).result(5)
                self._loop.call_soon_threadsafe(self._loop.stop)
                self._loop_thread.join(5)

    def __enter__(self) -> Gateway:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def call(self, kind: str, body: dict[str, Any] | None) -> dict[str, Any]:
        """Forward one request (from a server thread) and wait for the answer."""
        fwd = self.upstream[kind]
        coro = fwd.models() if body is None else fwd.forward(body)
        with self._inflight_lock:
            if self._httpd is None:
                coro.close()
                raise GatewayStopped
            future = asyncio.run_coroutine_threadsafe(coro, self._loop)
            self._inflight.add(future)
        try:
            return future.result()
        except concurrent.futures.CancelledError:
            raise GatewayStopped from None
        finally:
            with self._inflight_lock:
                self._inflight.discard(future)


def _handler_for(gateway: Gateway) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet: the meter counts
            pass

        def do_GET(self) -> None:
            if self.path.rstrip("/") != "/v1/models":
                return self._send(404, _error(f"no route {self.path}"))
            self._answer(lambda: gateway.call("chat", None))

        def do_POST(self) -> None:
            kind = ROUTES.get(self.path.split("?")[0].rstrip("/"))
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            if kind is None:
                return self._send(404, _error(f"the gateway forwards only {', '.join(ROUTES)}"))
            try:
                body = json.loads(raw)
            except ValueError:
                return self._fail(400, "request body is not JSON")
            if not isinstance(body, dict):
                return self._fail(400, "request body is not a JSON object")
            gateway.requests[kind] += 1
            self._answer(lambda: gateway.call(kind, body))

        def _answer(self, call: Any) -> None:
            try:
                data = call()
            except ModelConfigError as exc:
                return self._fail(exc.status or 400, str(exc))
            except ModelError as exc:
                return self._fail(502, str(exc))
            except GatewayStopped:
                message = "the gateway stopped: the run is stopping"
                return self._send(503, _error(message), retry=False)
            except Exception as exc:  # a fault of the harness, not of the request or upstream
                # named to the package at once (no retry: it would meet the same fault), so the
                # run stops on this message, not on the SDK's "Connection error." after its
                # retries; the traceback goes to the run's log
                log.exception("gateway: %s failed inside the harness", self.path)
                message = f"the gateway failed inside the harness: {type(exc).__name__}: {exc}"
                return self._fail(500, message, retry=False)
            self._send(200, data)

        def _fail(self, status: int, message: str, *, retry: bool = True) -> None:
            gateway.note_failure(self.path, status, message)
            self._send(status, _error(message), retry=retry)

        def _send(self, status: int, payload: Any, *, retry: bool = True) -> None:
            out = json.dumps(payload, ensure_ascii=False).encode("utf-8")
            self.send_response(status)
            if not retry:  # the openai SDK's own header: do not try this again
                self.send_header("x-should-retry", "false")
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(out)))
            try:
                self.end_headers()
                self.wfile.write(out)
            except (BrokenPipeError, ConnectionResetError):
                # the package stopped waiting (its own timeout) and will retry: note_gone says
                # in one line what the retry costs (nothing, with the response cache on)
                self.close_connection = True
                gateway.note_gone(self.path)

    return Handler


def _error(message: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "gateway_error"}}
