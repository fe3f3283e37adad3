"""A fixed-latency OpenAI-compatible server on asyncio, for measuring the client, not the server.

`scripts/bench_harness.py` runs it to measure the wall time and CPU our client adds on top of a
server's latency. Standard library only. It answers `GET /health`, `GET /v1/models`, and, after
`latency_s`, `POST /v1/chat/completions` and `POST /v1/embeddings`.

    python -m benchmarks.models.latency_server --port 8001 --latency-s 1.0
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys

from benchmarks.models.server import LOOPBACK, check_loopback

__all__ = ["main", "serve"]

_MODEL = "latency"


def _reply(status: int, body: dict[str, object]) -> bytes:
    payload = json.dumps(body, separators=(",", ":")).encode()
    reason = {200: "OK", 404: "Not Found"}.get(status, "Error")
    head = (
        f"HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(payload)}\r\nConnection: keep-alive\r\n\r\n"
    )
    return head.encode() + payload


def _chat(body: bytes) -> dict[str, object]:
    """A reply that echoes the request's length: every answer is non-empty and distinct prompts
    give distinct replies."""
    return {
        "id": "chatcmpl-latency",
        "object": "chat.completion",
        "model": _MODEL,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": f"answer to {len(body)} bytes"},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": len(body) // 4, "completion_tokens": 4, "total_tokens": 0},
    }


def _embeddings(body: bytes) -> dict[str, object]:
    try:
        inputs = json.loads(body).get("input") or [""]
    except ValueError:
        inputs = [""]
    if isinstance(inputs, str):
        inputs = [inputs]
    data = [{"index": i, "embedding": [1.0, 0.0, 0.0, 0.0]} for i in range(len(inputs))]
    return {"object": "list", "model": _MODEL, "data": data, "usage": {"prompt_tokens": 1}}


async def _answer(method: str, path: str, body: bytes, latency_s: float) -> bytes:
    if method == "GET" and path == "/health":
        return _reply(200, {"status": "ok"})
    if method == "GET" and path == "/v1/models":
        return _reply(200, {"object": "list", "data": [{"id": _MODEL, "object": "model"}]})
    if method == "POST" and path == "/v1/chat/completions":
        await asyncio.sleep(latency_s)
        return _reply(200, _chat(body))
    if method == "POST" and path == "/v1/embeddings":
        await asyncio.sleep(latency_s)
        return _reply(200, _embeddings(body))
    return _reply(404, {"error": {"message": f"no route {method} {path}"}})


async def _connection(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, latency_s: float
) -> None:
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            method, path, _ = lines[0].split(" ", 2)
            length = 0
            for line in lines[1:]:
                name, _, value = line.partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            body = await reader.readexactly(length) if length else b""
            writer.write(await _answer(method, path.split("?", 1)[0], body, latency_s))
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError, ValueError):
        pass  # the client closed the connection (or sent something this server does not speak)
    finally:
        writer.close()


async def serve(host: str, port: int, latency_s: float) -> None:
    """Serve until SIGTERM or SIGINT.

    The scripted server (`benchmarks.models.scripted`) answers from a thread per request
    (`http.server`), which is right for protocol and fault tests but cannot itself sustain
    hundreds of requests a second on two cores: a benchmark against it would measure the server.
    This one parses HTTP/1.1 by hand on one event loop (keep-alive connections, Content-Length
    bodies only: what HTTP clients send for JSON) and waits with `asyncio.sleep`, so a request in
    flight costs a timer, not a thread: at 256 requests in flight it answers well over a thousand
    requests a second on one core, so the client is what is measured.
    """
    server = await asyncio.start_server(
        lambda r, w: _connection(r, w, latency_s), host, port, backlog=4096
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    async with server:
        print(f"latency server on http://{host}:{port}/v1 ({latency_s * 1000:g} ms)", flush=True)
        await stop.wait()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--host", default=LOOPBACK)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--latency-s", type=float, default=0.05)
    args = ap.parse_args(argv)
    host = check_loopback(args.host, False, "latency server")
    asyncio.run(serve(host, args.port, args.latency_s))
    return 0


if __name__ == "__main__":
    sys.exit(main())
