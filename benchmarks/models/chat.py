"""Chat models: one role (writer, reader, judge...) of an OpenAI-compatible chat server.

`ChatModel.complete` sends a chat completion (optionally schema-constrained, parsed
fence-tolerantly), pays each distinct request once (the response cache, and identical requests
in flight share one call) and meters it per role; `count_tokens` counts with the served model's
tokenizer where the server has one, else a labelled chars/4 estimate. The request machinery
(pooling, retries, errors) is `benchmarks.models.base.ModelClient`'s.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from benchmarks.models.base import MalformedResponse, ModelClient, server_work, valid_usage
from benchmarks.models.cache import ResponseCache, cache_key
from benchmarks.models.calls import record
from benchmarks.models.endpoint import Endpoint, ModelConfigError
from benchmarks.models.structured import StructuredOutputError, parse_json
from benchmarks.models.usage import UsageMeter

__all__ = ["ChatModel", "ChatResult", "Message", "TokenCount", "chat_result"]

Message = Mapping[str, Any]


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


def _valid_chat(data: Any) -> None:
    """A chat reply: an object whose first choice holds a message object whose content is text
    (or null), with a usage of counts when it has one; anything else is malformed."""
    if not isinstance(data, Mapping):
        raise MalformedResponse
    valid_usage(data)
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
        raise MalformedResponse
    message = choices[0].get("message")
    if not isinstance(message, Mapping):
        raise MalformedResponse
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        raise MalformedResponse


def _valid_tokens(data: Any) -> None:
    if not isinstance(data["tokens"], list):
        raise MalformedResponse


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


class ChatModel(ModelClient):
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
            raw, latency = await self.request("POST", self._url, body, _valid_chat)
            self.meter_call(raw, latency)
            return self._result(body, raw, schema is not None, False, started)
        key = self.cache_key_for(body, draw)

        async def pay() -> Any:
            raw, latency = await self.request("POST", self._url, body, _valid_chat)
            self.meter_call(raw, latency)
            cache.put(key, raw, kind="chat", model=self.endpoint.model, request=body)
            return raw

        raw, cached = await self.stored_or_paid(key, pay)
        return self._result(body, raw, schema is not None, cached, started)

    def _result(
        self, body: Mapping[str, Any], raw: Any, structured: bool, cached: bool, started: float
    ) -> ChatResult:
        result = chat_result(
            raw, structured=structured, cached=cached, latency_s=time.perf_counter() - started
        )
        if result.parse_error is not None:
            self.usage.parse_failures += 1
        record(
            {
                "role": self.role,
                "model": self.endpoint.model,
                "messages": body.get("messages"),
                "schema": (body.get("response_format") or {}).get("json_schema", {}).get("name"),
                "reply": result.text,
                "parse_error": result.parse_error,
                "finish_reason": result.finish_reason,
                "prompt_tokens": result.prompt_tokens,
                "completion_tokens": result.completion_tokens,
                "cached": cached,
                # the server's own account of a paid call (a cached one cost it nothing)
                **({} if cached else server_work(raw)),
            }
        )
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
            data, _ = await self.request(
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
