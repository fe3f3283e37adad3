"""The run's and the model profiles' settings, checked by type and range before any work.

Hydra composes whatever the command line says: `run.limit=abc` or `llm.concurrency=0` would
otherwise surface minutes later as a traceback, a hang (an episode gate of 0) or, worse, be
accepted (`run.rescore=maybe` is truthy). Each rule below names a key, the type it must have
and the range it must lie in; `check_settings` reports the first broken one in one line, naming
the key, the value and what is allowed. Choices among names (an arm's gate, a benchmark's L or
source) are checked by the constructors, whose refusals the runner prints as one line too.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

MODEL_GROUPS = ("llm", "embedder", "judge", "writer")


class SettingError(ValueError):
    """A setting of the wrong type or out of range; its message is the one line to print."""


@dataclass(frozen=True)
class Rule:
    kind: str  # "int", "number", "bool", "str"
    low: float | None = None  # inclusive
    nullable: bool = False
    why: str = ""
    high: float | None = None  # inclusive

    def problem(self, value: Any) -> str | None:
        if value is None:
            return None if self.nullable else "must be set"
        ok: Callable[[Any], bool] = {
            "int": lambda v: isinstance(v, int) and not isinstance(v, bool),
            "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
            "bool": lambda v: isinstance(v, bool),
            "str": lambda v: isinstance(v, str) and v != "",
        }[self.kind]
        if not ok(value):
            return f"must be {self.describe()}"
        if self.kind == "number" and not math.isfinite(value):
            return f"must be {self.describe()}, a finite one"
        if self.low is not None and value < self.low:
            return f"must be {self.describe()}"
        if self.high is not None and value > self.high:
            return f"must be {self.describe()}"
        return None

    def describe(self) -> str:
        kind = {
            "int": "a whole number",
            "number": "a number",
            "bool": "true or false",
            "str": "a non-empty path or name",
        }[self.kind]
        if self.low is not None:
            kind += f" >= {_bound(self.low)}"
        if self.high is not None:
            kind += f"{' and' if self.low is not None else ''} <= {_bound(self.high)}"
        if self.nullable:
            kind += ", or null"
        return kind + (f" ({self.why})" if self.why else "")


def _bound(value: float) -> float | int:
    return int(value) if float(value).is_integer() else value


DAY = 86_400.0  # seconds: no model call, connect or back-off waits longer

RUN_RULES: dict[str, Rule] = {
    "root": Rule("str"),
    "cache": Rule("str"),
    "limit": Rule("int", low=1, nullable=True, why="answer only the first N questions"),
    "episode_concurrency": Rule("int", low=1, why="episodes ingested and read at once"),
    "progress": Rule("bool"),
    "rescore": Rule("bool"),
    "answer": Rule("bool"),
    "dry_run": Rule("bool"),
}

MODEL_RULES: dict[str, Rule] = {
    "concurrency": Rule("int", low=1, why="requests in flight per endpoint"),
    "timeout_s": Rule("number", low=0.001, high=DAY, why="seconds"),
    "connect_timeout_s": Rule("number", low=0.001, high=DAY, why="seconds"),
    "max_retries": Rule("int", low=0),
    "backoff_s": Rule("number", low=0, high=DAY, why="seconds"),
    "backoff_max_s": Rule("number", low=0, high=DAY, why="seconds"),
    "temperature": Rule("number", low=0, high=2, nullable=True),
    "max_tokens": Rule("int", low=1, nullable=True),
    "batch_size": Rule("int", low=1, nullable=True),
}


#: the benchmarks' numeric and switch settings (names shared across benchmarks mean the same);
#: choices among names (L, d, source, probe, variant) are the constructors' to check
BENCHMARK_RULES: dict[str, Rule] = {
    "L": Rule("int", low=1),
    "d": Rule("int", low=0),
    "cases": Rule("int", low=1, why="cases per cell"),
    "distractors": Rule("int", low=0),
    "seed": Rule("int"),
    "limit": Rule("int", low=1, nullable=True),
    "sessions": Rule("int", low=1, nullable=True, why="haystack sessions kept"),
    "episodes": Rule("int", low=1),
    "objects": Rule("int", low=1),
    "pre_queries": Rule("bool"),
}


#: the arms' shared numeric and switch settings (an arm's own choices are its constructor's)
ARM_RULES: dict[str, Rule] = {
    "k": Rule("int", low=1, nullable=True, why="items read; null: all"),
    "lookup_k": Rule("int", low=1),
    "lookups": Rule("int", low=0),
    "chunk_size": Rule("int", low=1, nullable=True),
    "budget": Rule("int", low=1, why="tokens"),
    "max_chars": Rule("int", low=1),
    "soft_identity": Rule("number", low=0, high=1, nullable=True, why="a cosine"),
    "prune_pair": Rule("number", low=0, high=1, why="a cosine"),
    "tags": Rule("bool"),
    "retention": Rule("bool"),
}


def check_settings(cfg: Mapping[str, Any]) -> None:
    """Raise `SettingError` for the first setting of `cfg` (a resolved config) that breaks its
    rule; keys a profile does not have are not required here."""
    checks = [(f"run.{k}", (cfg.get("run") or {}), k, rule) for k, rule in RUN_RULES.items()]
    bench = cfg.get("benchmark") or {}
    checks += [(f"benchmark.{k}", bench, k, rule) for k, rule in BENCHMARK_RULES.items()]
    arm = cfg.get("arm") or {}
    checks += [(f"arm.{k}", arm, k, rule) for k, rule in ARM_RULES.items()]
    for group in MODEL_GROUPS:
        node = cfg.get(group)
        if isinstance(node, Mapping) and node.get("model") is not None:
            checks += [(f"{group}.{k}", node, k, rule) for k, rule in MODEL_RULES.items()]
    for name, node, key, rule in checks:
        if key not in node:
            continue
        problem = rule.problem(node[key])
        if problem:
            raise SettingError(f"{name}={node[key]!r}: {problem}")
