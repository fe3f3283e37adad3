"""The model stack of one run: servers started on demand, one client per role, one cache, one
meter. A role's model is started and probed the first time a stage asks for it, so a rescore
with a substring scorer starts nothing and a judge-only rescore starts only the judge."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

from hydra.utils import instantiate

from benchmarks.models.cache import ResponseCache
from benchmarks.models.client import ChatModel, Embedder, Endpoint, ModelConfigError
from benchmarks.models.usage import UsageMeter
from benchmarks.results.identity import ENDPOINT_FIELDS

# Which profile group serves which role: the reader and the writer share the chat model (and so
# its concurrency limit), as in the paper (one frozen 4B model at temperature 0, Appendix B).
ROLE_GROUP = {"reader": "llm", "writer": "llm", "judge": "judge", "embedder": "embedder"}


def role_group(cfg: dict[str, Any], role: str) -> str:
    """The profile group serving a role: `writer=<profile>` gives the writer a model of its own
    (Appendix D/F's 35B write path under the 4B reader); by default the reader's serves it."""
    if role == "writer" and cfg.get("writer"):
        return "writer"
    return ROLE_GROUP[role]


def url_source(spec: dict[str, Any]) -> tuple[str, str | None]:
    """Where a role's server comes from, first match wins: `base_url`, then the environment
    variable `base_url_env` names, then a `server` the harness starts itself. Returns
    ("base_url", url), ("env", variable), ("server", None) or ("unset", None); the one rule
    both `ModelStack._base_url` and `window_hint` follow."""
    if spec.get("base_url"):
        return "base_url", spec["base_url"]
    env = spec.get("base_url_env")
    if env and os.environ.get(env):
        return "env", env
    if spec.get("server"):
        return "server", None
    return "unset", None


def window_hint(group: str, spec: dict[str, Any]) -> str:
    """What widens a role's context window, for the error a too-long prompt gets: the config key
    of a server the harness starts itself, else where the URL of the user's server came from."""
    source, value = url_source(spec)
    if source == "server":
        ctx = spec["server"].get("ctx")
        if isinstance(ctx, int):
            return f"give it a larger one ({group}.server.ctx={2 * ctx}, for example)"
        return f"give it a larger one (the window setting under {group}.server)"
    where = f"${value}" if source == "env" else f"{group}.base_url"
    return (
        f"start the server at {where} with a larger one (--max-model-len for vLLM, "
        "-c for llama-server)"
    )


class ConfigError(ValueError):
    """A configuration that cannot work, named by its config key."""


class ModelStack:
    def __init__(
        self, cfg: dict[str, Any], cache: ResponseCache, meter: UsageMeter, log_dir: Path
    ) -> None:
        self.cfg = cfg
        self.cache = cache
        self.meter = meter
        self.log_dir = log_dir
        self._servers: dict[str, Any] = {}  # server config (as JSON) -> started server
        self._clients: dict[str, Any] = {}
        self._lock = asyncio.Lock()

    def has(self, role: str) -> bool:
        group = self.cfg.get(role_group(self.cfg, role)) or {}
        return bool(group) and group.get("model") is not None

    async def get(self, role: str) -> Any:
        async with self._lock:
            if role not in self._clients:
                self._clients[role] = await self._build(role)
            return self._clients[role]

    async def _build(self, role: str) -> Any:
        group = role_group(self.cfg, role)
        spec = self.cfg.get(group)
        if not spec or spec.get("model") is None:
            raise ConfigError(
                f"{group}: this profile has no model for the {role} role "
                f"(choose one, e.g. {group}=local)"
            )
        endpoint = Endpoint(
            base_url=self._base_url(group, spec),
            model=spec["model"],
            api_key=os.environ.get(spec["api_key_env"]) if spec.get("api_key_env") else None,
            revision=spec.get("revision"),
            window_hint=window_hint(group, spec),
            **{k: spec[k] for k in ENDPOINT_FIELDS if spec.get(k) is not None},
        )
        if group == "embedder":
            client: Any = Embedder(
                endpoint,
                role=role,
                cache=self.cache,
                meter=self.meter,
                batch_size=spec.get("batch_size", 32),
                dimensions=spec.get("dimensions"),
                query_prefix=spec.get("query_prefix", ""),
                passage_prefix=spec.get("passage_prefix", ""),
            )
        else:
            client = ChatModel(
                endpoint,
                role=role,
                cache=self.cache,
                meter=self.meter,
                temperature=spec.get("temperature", 0.0),
                max_tokens=spec.get("max_tokens", 512),
                extra_body=spec.get("extra_body"),
            )
        await client.probe()  # fail loudly now, not 2,000 calls in
        await check_capabilities(group, spec, client)
        return client

    def _base_url(self, group: str, spec: dict[str, Any]) -> str:
        source, value = url_source(spec)
        if source == "base_url":
            return str(value)
        if source == "env":
            return os.environ[str(value)]
        if source == "server":
            key = json.dumps(spec["server"], sort_keys=True)
            if key not in self._servers:
                options = dict(spec["server"])
                name = options.pop("name", group)
                started = instantiate(options, log_path=str(self.log_dir / f"{name}.log"))
                started.start()
                self._servers[key] = started
            return self._servers[key].base_url
        env = spec.get("base_url_env")
        hint = f"export {env}=http://HOST:PORT/v1 or " if env else ""
        raise ConfigError(f"{group}.base_url is not set: {hint}pass {group}.base_url=...")

    async def close(self) -> None:
        for client in self._clients.values():
            close = getattr(client, "aclose", None)
            if close is not None:
                await close()
        self.stop_servers()

    def stop_servers(self) -> None:
        for server in self._servers.values():
            server.stop()
        self._servers.clear()


PROBE_SCHEMA = {
    "type": "object",
    "properties": {"ok": {"type": "boolean"}},
    "required": ["ok"],
    "additionalProperties": False,
}


async def check_capabilities(group: str, spec: dict[str, Any], client: Any) -> None:
    """What a profile promises (`probe:` in its config) is checked once at start: structured
    output for chat models, the embedding dimension for embedders. Cached like any call."""
    probe = spec.get("probe") or {}
    if probe.get("structured"):
        result = await client.complete(
            'Reply with the JSON object {"ok": true}.',
            schema=PROBE_SCHEMA,
            schema_name="probe",
            max_tokens=16,
        )
        if not (isinstance(result.parsed, dict) and result.parsed.get("ok") is True):
            raise ModelConfigError(
                f"{group}: {spec['model']} at {client.endpoint.base_url} did not honour a "
                f"json_schema response_format (reply: {result.text[:80]!r}); structured output "
                "is required for the write path"
            )
    expected = probe.get("dimension")
    if expected:
        (vector,) = await client.embed(["dimension probe"], kind="query")
        if len(vector) != int(expected):
            raise ModelConfigError(
                f"{group}: {spec['model']} returns {len(vector)}-dimensional embeddings, but the "
                f"profile expects {expected} ({group}.probe.dimension)"
            )
