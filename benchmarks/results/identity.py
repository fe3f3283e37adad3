"""A run's identity: the part of a resolved config that decides its results, and its hash.

The runner names each run folder by this hash (`benchmarks.runner.runs.RunFolder`), and the
results side compares exported runs by it (`benchmarks.results.stages`: is a stage already
exported?), so both read one definition; it lives here because the results side imports nothing
of the runner.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

# How a model endpoint is called (configs/endpoint/default.yaml), never what it computes.
ENDPOINT_FIELDS = (
    "concurrency",
    "timeout_s",
    "connect_timeout_s",
    "max_retries",
    "backoff_s",
    "backoff_max_s",
)
# Keys that change how a run executes but not what it computes: never part of the run's identity
# (nor of the response cache's key).
OPERATIONAL_KEYS = frozenset(
    {
        "base_url",
        "api_key",
        "server",
        "vllm_server",
        "vllm_max_len",
        "episodes_in_flight",
        "batch_size",
        *ENDPOINT_FIELDS,
    }
)


def component_name(target: str) -> str:
    """A component's name in a run's identity: its class name, not its import path, so moving a
    module keeps every run folder's name."""
    return target.rsplit(".", 1)[-1]


def semantic_config(cfg: dict[str, Any]) -> dict[str, Any]:
    """The part of a resolved config that decides the results."""

    def strip(node: Any) -> Any:
        if isinstance(node, dict):
            return {
                k: component_name(v) if k == "_target_" and isinstance(v, str) else strip(v)
                for k, v in node.items()
                if k not in OPERATIONAL_KEYS
            }
        if isinstance(node, list):
            return [strip(v) for v in node]
        return node

    out = {k: strip(v) for k, v in cfg.items() if k not in ("run", "hydra")}
    if not (cfg.get("run") or {}).get("answer", True):
        out["read_only"] = True  # its records hold no answers: never the folder of a full run
    return out


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def config_hash(cfg: dict[str, Any]) -> str:
    return sha256_text(json.dumps(semantic_config(cfg), sort_keys=True, default=str))
