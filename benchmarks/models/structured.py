"""Getting a JSON value out of a model's reply.

Servers that enforce `response_format` return bare JSON, but small models without a schema wrap
it in code fences, put prose around it, or think aloud first (Qwen3's `<think>` block). The
parser accepts all of those so that the caller's fallback rule (the paper's annotator falls back
to noop) only fires when there really is no JSON in the reply.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["StructuredOutputError", "parse_json"]

# Only a *leading* reasoning block is removed: "<think>" inside a JSON string is content.
_THINK = re.compile(r"\A\s*<think>.*?</think>", re.DOTALL | re.IGNORECASE)
# A fence opens with ``` plus an optional language tag on the same line.
_FENCE = re.compile(r"```[ \t]*[A-Za-z0-9_+-]*[ \t]*\r?\n?(.*?)```", re.DOTALL)
_FENCE_GREEDY = re.compile(r"```[ \t]*[A-Za-z0-9_+-]*[ \t]*\r?\n?(.*)```", re.DOTALL)
_DECODER = json.JSONDecoder()
# Bounds the scan for an embedded object so a long reply full of stray brackets stays cheap.
_MAX_CANDIDATES = 256


class StructuredOutputError(ValueError):
    """The reply holds no parseable JSON; the message carries a short excerpt to debug prompts."""


def parse_json(text: str) -> Any:
    """The JSON value in `text`: bare, fenced, or the first object/array embedded in prose.

    Raises `StructuredOutputError` (with an excerpt of the reply) when nothing parses.
    """
    if not isinstance(text, str):
        raise StructuredOutputError(f"expected text, got {type(text).__name__}")
    stripped = _THINK.sub("", text, count=1).strip()
    for candidate in _candidates(stripped):
        try:
            return json.loads(candidate)
        except ValueError:
            continue
    found = _embedded(stripped)
    if found is not _NOTHING:
        return found
    raise StructuredOutputError(f"no JSON value in reply: {excerpt(text)!r}")


def excerpt(text: str, limit: int = 120) -> str:
    """Head and tail of a long reply: where fences and prose usually go wrong."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    head = limit * 2 // 3
    return f"{flat[:head]} … {flat[-(limit - head) :]}"


def _candidates(text: str) -> list[str]:
    """Whole-text and fenced readings, in the order a model most likely meant them."""
    out = [text]
    out.extend(m.group(1).strip() for m in _FENCE.finditer(text))
    greedy = _FENCE_GREEDY.search(text)
    if greedy:
        out.append(greedy.group(1).strip())
    return out


_NOTHING = object()


def _embedded(text: str) -> Any:
    """The first object or array that decodes completely at some `{` or `[` in the text."""
    tried = 0
    for match in re.finditer(r"[{\[]", text):
        tried += 1
        if tried > _MAX_CANDIDATES:
            break
        try:
            value, _end = _DECODER.raw_decode(text, match.start())
        except ValueError:
            continue
        return value
    return _NOTHING
