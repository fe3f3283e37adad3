"""A deterministic OpenAI-compatible server on 127.0.0.1, for protocol tests and dry runs.

It answers chat from scripted rules, embeddings from word hashes and `/tokenize`, injects seeded
faults on request and counts every request (`ScriptedServer`). Standard library only:

    with ScriptedServer([(r"capital of (\\w+)", r"The capital of \\1 is X.")]) as server:
        ...  # server.base_url == "http://127.0.0.1:PORT/v1"

    python -m benchmarks.models.scripted --port 8001 --rules rules.json
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import hashlib
import itertools
import json
import random
import signal
import socket
import socketserver
import sys
import threading
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from benchmarks.models.scripted_model import (
    Request,
    embed_text,
    message_text,
    token_id,
    unit_vector,
    whitespace_tokens,
)
from benchmarks.models.scripted_rules import compile_rules, first_reply
from benchmarks.models.server import LOOPBACK, ManagedServer, check_loopback

__all__ = [
    "FAULTS",
    "ScriptedServer",
    "embed_text",
    "main",
    "message_text",
    "token_id",
    "whitespace_tokens",
]

Messages = list[dict[str, Any]]
# [regex, reply] pairs and {rule: name, pattern: regex} entries (see scripted_rules), or a callable
Rules = Sequence[Any] | Callable[[Messages], str] | None

FAULTS = ("500", "429", "timeout", "malformed", "context")
# Endpoints that can be slowed down or faulted; GET /health and /v1/models never are, so
# start-up and probes stay quick and honest.
_MODEL_PATHS = ("/chat/completions", "/embeddings", "/tokenize")
_MALFORMED = b'{"id": "chatcmpl-broken", "object": "chat.completion", "choices": [{"message": {"c'


@dataclass(slots=True)
class Reply:
    """What to send back, and how long to wait before sending it."""

    status: int
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0


def _json_reply(status: int, payload: Any, **headers: str) -> Reply:
    return Reply(status, json.dumps(payload, ensure_ascii=False).encode("utf-8"), dict(headers))


def _error(status: int, message: str, kind: str, code: str | None = None) -> Reply:
    err: dict[str, Any] = {"message": message, "type": kind, "param": None, "code": code}
    return _json_reply(status, {"error": err})


class ScriptedServer(ManagedServer):
    """An OpenAI-compatible server with scripted replies and seeded fault injection.

    `http.server` in a background thread, so it starts in milliseconds.

    `rules`: (regex, reply) pairs searched (DOTALL) in the last user message, first match wins,
    the reply may use `\\1` groups, and named rules (`{"rule": name, "pattern": regex}`, the
    `module:name` functions of a benchmark's `scripted` module); or a callable(messages) -> str;
    otherwise `default`.
    `script`: a callable(body) -> str over the whole chat request (messages, response_format,
    model, ...), for clients whose expected reply depends on more than the last message (the
    peer systems' schema-constrained calls); it takes precedence over `rules`.
    `tokenize`: "llama.cpp" (also True), "vllm", or False for no /tokenize endpoint.
    `faults`: exact faults for given request numbers (1-based, counted over the model
    endpoints), e.g. {1: "429"}; otherwise `p_500`, `p_429`, `p_timeout`, `p_malformed` draw
    from `seed` and the request number, so a fault run is repeatable. The faults: HTTP 500 and
    429, a reply slower than the client's timeout (it sleeps `timeout_sleep_s`, then replies),
    a 200 with a broken JSON body, and llama.cpp's HTTP 400 for a prompt longer than its window
    (`context`, only on request).
    `prompt_cache`: report, as llama.cpp's one-slot server does, the prompt tokens shared with
    the previous chat request as reused (`usage.prompt_tokens_details.cached_tokens`,
    `timings.cache_n`) and server times of 1 ms per processed and 2 ms per decoded token.
    Every request is counted (total, per endpoint, faults injected, peak concurrency), so tests
    can assert "zero HTTP calls" or "the retries equal the faults".
    Like a real server, a reply longer than the request's `max_tokens` (in whitespace tokens)
    is cut, with finish_reason "length". A script that raises answers HTTP 500 with the error.
    """

    def __init__(
        self,
        rules: Rules = None,
        *,
        script: Callable[[dict[str, Any]], str] | None = None,
        default: str = "OK",
        models: Sequence[str] = ("scripted",),
        embedding_dim: int = 64,
        tokenize: bool | str = True,
        latency_s: float = 0.0,
        p_500: float = 0.0,
        p_429: float = 0.0,
        p_timeout: float = 0.0,
        p_malformed: float = 0.0,
        timeout_sleep_s: float = 5.0,
        retry_after_s: float | None = None,
        faults: Mapping[int, str] | None = None,
        seed: int = 0,
        api_key: str | None = None,
        host: str = LOOPBACK,
        port: int = 0,
        log_path: str | Path | None = None,
        allow_remote: bool = False,
        prompt_cache: bool = False,
    ) -> None:
        self.rules = rules
        self.prompt_cache = prompt_cache
        self._last_prompt: list[str] = []
        self.script = script
        self._compiled = [] if rules is None or callable(rules) else compile_rules(rules)
        self.default = default
        self.models = list(models)
        self.embedding_dim = embedding_dim
        self.tokenize_style = _tokenize_style(tokenize)
        self.latency_s = latency_s
        self.probabilities = {
            "500": p_500,
            "429": p_429,
            "timeout": p_timeout,
            "malformed": p_malformed,
        }
        if sum(self.probabilities.values()) > 1:
            raise ValueError("fault probabilities add up to more than 1")
        self.timeout_sleep_s = timeout_sleep_s
        self.retry_after_s = retry_after_s
        self.fault_plan = {int(k): _check_fault(v) for k, v in (faults or {}).items()}
        self.seed = seed
        self.api_key = api_key
        self.host = check_loopback(host, allow_remote, "scripted server")
        self.port = port
        self.log_path = Path(log_path) if log_path is not None else None
        self._lock = threading.Lock()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._log_file: Any = None
        self.reset_counts()

    # ---- counters -------------------------------------------------------------------------

    def reset_counts(self) -> None:
        with self._lock:
            self.total_requests = 0
            self.requests: collections.Counter[str] = collections.Counter()
            self.faults_injected: collections.Counter[str] = collections.Counter()
            self.model_requests = 0
            self.in_flight = 0
            self.max_in_flight = 0
            self.received: collections.deque[tuple[str, Any]] = collections.deque(maxlen=1000)

    def count(self, endpoint: str | None = None) -> int:
        """Requests received in all, or at one endpoint ("/chat/completions", "/embeddings")."""
        with self._lock:
            return self.total_requests if endpoint is None else self.requests[_route(endpoint)]

    def last_body(self, endpoint: str = "/chat/completions") -> Any:
        """The JSON body of the latest request at `endpoint` (to check what a client sent)."""
        want = _route(endpoint)
        with self._lock:
            for path, body in reversed(self.received):
                if path == want:
                    return body
        raise LookupError(f"no request at {endpoint}")

    # ---- lifetime --------------------------------------------------------------------------

    def start(self) -> str:
        if self._httpd is not None:
            return self.base_url
        if self.log_path is not None:
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            self._log_file = open(self.log_path, "a", encoding="utf-8")  # noqa: SIM115
        httpd = _HTTPServer((self.host, self.port), _Handler)
        httpd.scripted = self
        self._httpd = httpd
        port = httpd.server_address[1]
        self._thread = threading.Thread(
            target=httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"scripted-server-{port}",
            daemon=True,
        )
        self._thread.start()
        self._base_url = f"http://{self.host}:{port}/v1"
        return self._base_url

    def stop(self) -> None:
        httpd, self._httpd, self._base_url = self._httpd, None, None
        if httpd is None:
            return
        httpd.shutdown()
        httpd.server_close()
        httpd.close_connections()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
        if self._log_file is not None:
            self._log_file.close()
            self._log_file = None

    def serve_until_signal(self) -> None:
        """Block until SIGINT/SIGTERM (the `python -m` entry point)."""
        stop = threading.Event()
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda *_: stop.set())
        try:
            while not stop.wait(0.5):
                pass
        finally:
            self.stop()

    def log(self, line: str) -> None:
        if self._log_file is not None:
            with self._lock:
                self._log_file.write(line + "\n")
                self._log_file.flush()

    # ---- behaviour -------------------------------------------------------------------------

    def reply_for(self, messages: Messages, body: Mapping[str, Any] | None = None) -> str:
        """The scripted answer to a conversation (`body`: the whole request, for rules that
        read its response_format)."""
        if callable(self.rules):
            return str(self.rules(messages))
        request = Request(tuple(messages), body or {"messages": messages})
        reply = first_reply(self._compiled, request)
        return self.default if reply is None else reply

    def fault_for(self, n: int) -> str | None:
        """The fault injected into model request number `n` (1-based), if any."""
        if n in self.fault_plan:
            return self.fault_plan[n]
        if not any(self.probabilities.values()):
            return None
        draw = random.Random(f"{self.seed}:{n}").random()
        edge = 0.0
        for fault, p in self.probabilities.items():  # in FAULTS order; `context` only on request
            edge += p
            if draw < edge:
                return fault
        return None

    def respond(self, method: str, raw_path: str, raw: bytes, headers: Mapping[str, str]) -> Reply:
        """The reply to one HTTP request (pure apart from the counters)."""
        path = _route(urlsplit(raw_path).path)
        is_model = method == "POST" and path in _MODEL_PATHS
        if path == "/tokenize" and self.tokenize_style is None:
            is_model = False
        with self._lock:
            self.total_requests += 1
            self.requests[path] += 1
            if is_model:
                self.model_requests += 1
            n = self.model_requests
        if method == "GET" and path == "/health":
            return _json_reply(200, {"status": "ok"})
        if self.api_key is not None and headers.get("authorization") != f"Bearer {self.api_key}":
            return _error(
                401, "invalid or missing API key", "authentication_error", "invalid_api_key"
            )
        if method == "GET" and path == "/models":
            return _json_reply(200, self._models_body())
        if not is_model:
            return _error(404, f"no route {method} {raw_path}", "not_found_error", "not_found")
        try:
            body = json.loads(raw or b"null")
        except ValueError:
            return _error(400, "request body is not valid JSON", "invalid_request_error")
        if not isinstance(body, dict):
            return _error(400, "request body must be a JSON object", "invalid_request_error")
        with self._lock:
            self.received.append((path, body))
        model = body.get("model")
        if path != "/tokenize" and model is not None and model not in self.models:
            return _error(
                404,
                f"The model `{model}` does not exist. Served: {', '.join(self.models)}",
                "invalid_request_error",
                "model_not_found",
            )
        fault = self.fault_for(n)
        reply = self._fault_reply(fault) or self._handle(path, body)
        reply.delay_s += self.latency_s + (self.timeout_sleep_s if fault == "timeout" else 0.0)
        return reply

    def _fault_reply(self, fault: str | None) -> Reply | None:
        if fault is None:
            return None
        with self._lock:
            self.faults_injected[fault] += 1
        if fault == "500":
            return _error(500, "scripted internal error", "server_error")
        if fault == "429":
            reply = _error(429, "scripted rate limit", "rate_limit_error", "rate_limit_exceeded")
            if self.retry_after_s is not None:
                reply.headers["Retry-After"] = f"{self.retry_after_s:g}"
            return reply
        if fault == "malformed":
            return Reply(200, _MALFORMED)
        if fault == "context":  # llama.cpp's reply to a prompt longer than its window
            message = "request (4464 tokens) exceeds the available context size (4096 tokens)"
            return _error(400, f"{message}, try increasing it", "exceed_context_size_error")
        return None  # "timeout": the normal reply, sent `timeout_sleep_s` late

    def _handle(self, path: str, body: dict[str, Any]) -> Reply:
        if path == "/chat/completions":
            reply = self._chat(body)
        elif path == "/embeddings":
            reply = self._embeddings(body)
        else:
            reply = self._tokenize(body)
        return reply

    def _models_body(self) -> dict[str, Any]:
        data = [
            {"id": m, "object": "model", "created": 0, "owned_by": "scripted"} for m in self.models
        ]
        return {"object": "list", "data": data}

    def _chat(self, body: dict[str, Any]) -> Reply:
        messages = body.get("messages")
        if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
            return _error(400, "messages must be a list of objects", "invalid_request_error")
        text = str(self.script(body)) if self.script is not None else self.reply_for(messages, body)
        pieces = whitespace_tokens(text)
        finish = "stop"
        limit = body.get("max_tokens") or body.get("max_completion_tokens")
        if isinstance(limit, int) and limit > 0 and len(pieces) > limit:
            pieces, text, finish = pieces[:limit], " ".join(pieces[:limit]), "length"
        tokens = [t for m in messages for t in whitespace_tokens(message_text(m.get("content")))]
        prompt = len(tokens)
        digest = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:16]
        served = self._served(tokens, len(pieces)) if self.prompt_cache else {}
        return _json_reply(
            200,
            {
                **served,
                "id": f"chatcmpl-{digest}",
                "object": "chat.completion",
                "created": 0,
                "model": body.get("model") or self.models[0],
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": text},
                        "finish_reason": finish,
                    }
                ],
                "usage": {
                    "prompt_tokens": prompt,
                    "completion_tokens": len(pieces),
                    "total_tokens": prompt + len(pieces),
                    **served.pop("usage", {}),
                },
            },
        )

    def _served(self, tokens: list[str], decoded: int) -> dict[str, Any]:
        """llama.cpp's account of one reply under its prompt cache (`prompt_cache`)."""
        with self._lock:
            last, self._last_prompt = self._last_prompt, tokens
        shared = itertools.takewhile(lambda p: p[0] == p[1], zip(last, tokens, strict=False))
        reused = sum(1 for _ in shared)
        processed = len(tokens) - reused
        return {
            "usage": {"prompt_tokens_details": {"cached_tokens": reused}},
            "timings": {"cache_n": reused, "prompt_n": processed, "prompt_ms": float(processed),
                        "predicted_n": decoded, "predicted_ms": 2.0 * decoded},
        }  # fmt: skip

    def _embeddings(self, body: dict[str, Any]) -> Reply:
        inputs = body.get("input")
        if isinstance(inputs, str):
            inputs = [inputs]
        if not isinstance(inputs, list) or not all(isinstance(t, str) for t in inputs):
            return _error(
                400, "input must be a string or a list of strings", "invalid_request_error"
            )
        dim = body.get("dimensions") or self.embedding_dim
        if not isinstance(dim, int) or not 0 < dim <= self.embedding_dim:
            msg = f"dimensions must be between 1 and {self.embedding_dim}"
            return _error(400, msg, "invalid_request_error")
        data = []
        for i, text in enumerate(inputs):
            vec = embed_text(text, self.embedding_dim)
            data.append({"object": "embedding", "index": i, "embedding": unit_vector(vec[:dim])})
        n = sum(len(whitespace_tokens(t)) for t in inputs)
        return _json_reply(
            200,
            {
                "object": "list",
                "data": data,
                "model": body.get("model") or self.models[0],
                "usage": {"prompt_tokens": n, "total_tokens": n},
            },
        )

    def _tokenize(self, body: dict[str, Any]) -> Reply:
        if self.tokenize_style == "vllm":
            prompt = body.get("prompt")
            if not isinstance(prompt, str):
                return _error(400, "prompt: field required", "BadRequestError")
            tokens = [token_id(p) for p in whitespace_tokens(prompt)]
            return _json_reply(
                200, {"count": len(tokens), "max_model_len": 32_768, "tokens": tokens}
            )
        content = body.get("content")
        # llama.cpp answers an empty list, not an error, when "content" is missing.
        pieces = whitespace_tokens(content) if isinstance(content, str) else []
        return _json_reply(200, {"tokens": [token_id(p) for p in pieces]})

    def __repr__(self) -> str:
        return f"ScriptedServer({self._base_url or 'stopped'}, models={self.models})"


def _route(path: str) -> str:
    path = "/" + path.strip("/")
    return path[3:] if path.startswith("/v1/") else path


def _tokenize_style(value: bool | str) -> str | None:
    if value is False or value is None:
        return None
    if value is True or value in ("llama.cpp", "llama"):
        return "llama.cpp"
    if value == "vllm":
        return "vllm"
    raise ValueError(f"tokenize must be True, False, 'llama.cpp' or 'vllm', not {value!r}")


def _check_fault(name: str) -> str:
    if name not in FAULTS:
        raise ValueError(f"unknown fault {name!r}; known: {', '.join(FAULTS)}")
    return name


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 256  # 20+ clients connecting at once must not overflow the backlog
    scripted: ScriptedServer

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.connections: set[socket.socket] = set()
        self.connections_lock = threading.Lock()
        super().__init__(*args, **kwargs)

    def server_bind(self) -> None:
        # HTTPServer.server_bind does a reverse DNS lookup (getfqdn); loopback needs none.
        socketserver.TCPServer.server_bind(self)
        host, port = self.server_address[:2]
        self.server_name, self.server_port = str(host), int(port)

    def close_connections(self) -> None:
        """Drop kept-alive connections, so a stopped server is really gone for its clients."""
        with self.connections_lock:
            conns = list(self.connections)
        for conn in conns:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: clients reuse their pooled connections
    disable_nagle_algorithm = True
    server: _HTTPServer

    def setup(self) -> None:
        super().setup()
        with self.server.connections_lock:
            self.server.connections.add(self.connection)

    def finish(self) -> None:
        with self.server.connections_lock:
            self.server.connections.discard(self.connection)
        with contextlib.suppress(OSError):
            super().finish()

    def do_GET(self) -> None:
        self._serve("GET")

    def do_POST(self) -> None:
        self._serve("POST")

    def _serve(self, method: str) -> None:
        scripted = self.server.scripted
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        with scripted._lock:
            scripted.in_flight += 1
            scripted.max_in_flight = max(scripted.max_in_flight, scripted.in_flight)
        try:
            headers = {k.lower(): v for k, v in self.headers.items()}
            try:
                reply = scripted.respond(method, self.path, raw, headers)
            except Exception as exc:  # a broken script must show up in the client's error
                scripted.log(traceback.format_exc())
                reply = _error(500, f"scripted server error: {exc!r}", "server_error")
            if reply.delay_s > 0:
                time.sleep(reply.delay_s)
            self._send(reply)
        finally:
            with scripted._lock:
                scripted.in_flight -= 1

    def _send(self, reply: Reply) -> None:
        try:
            self.send_response(reply.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(reply.body)))
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(reply.body)
        except OSError:  # the client gave up (a timeout fault) or the server is stopping
            self.close_connection = True

    def log_message(self, format: str, *args: Any) -> None:
        self.server.scripted.log(f"{self.address_string()} {format % args}")


# ---- command line --------------------------------------------------------------------------


def _options_from_file(path: str) -> dict[str, Any]:
    """A rules file: a list of [regex, reply] pairs, or an object of ScriptedServer options."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if isinstance(data, list):
        return {"rules": [tuple(r) if isinstance(r, list) else r for r in data]}
    if not isinstance(data, dict):
        raise SystemExit(f"{path}: expected a list of rules or an object of options")
    if "rules" in data:
        data["rules"] = [tuple(r) if isinstance(r, list) else r for r in data["rules"]]
    return data


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m benchmarks.models.scripted",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--host", default=LOOPBACK)
    ap.add_argument("--port", type=int, default=0, help="0 picks a free port")
    ap.add_argument("--rules", help="JSON file: [[regex, reply], ...] or an object of options")
    ap.add_argument("--default", help="reply when no rule matches")
    ap.add_argument("--models", help="comma-separated model names served")
    ap.add_argument("--embedding-dim", type=int)
    ap.add_argument("--tokenize", choices=["llama.cpp", "vllm", "off"])
    ap.add_argument("--latency-s", type=float)
    ap.add_argument("--p-500", type=float)
    ap.add_argument("--p-429", type=float)
    ap.add_argument("--p-timeout", type=float)
    ap.add_argument("--p-malformed", type=float)
    ap.add_argument("--timeout-sleep-s", type=float)
    ap.add_argument("--seed", type=int)
    ap.add_argument("--log", help="access log file")
    args = ap.parse_args(argv)
    options = _options_from_file(args.rules) if args.rules else {}
    flags = {
        "default": args.default,
        "models": args.models.split(",") if args.models else None,
        "embedding_dim": args.embedding_dim,
        "tokenize": None
        if args.tokenize is None
        else (False if args.tokenize == "off" else args.tokenize),
        "latency_s": args.latency_s,
        "p_500": args.p_500,
        "p_429": args.p_429,
        "p_timeout": args.p_timeout,
        "p_malformed": args.p_malformed,
        "timeout_sleep_s": args.timeout_sleep_s,
        "seed": args.seed,
        "log_path": args.log,
    }
    options.update({k: v for k, v in flags.items() if v is not None})
    server = ScriptedServer(host=args.host, port=args.port, **options)
    url = server.start()
    print(f"scripted server: {url} (models: {', '.join(server.models)})", flush=True)
    server.serve_until_signal()
    return 0


if __name__ == "__main__":
    sys.exit(main())
