"""Whether a finished run still shows what the current code does: a table cites only such runs.

A run folder's manifest records what its numbers depend on beside the model: the data it read
(the benchmark's fingerprint), every prompt its answers and scores were made under (by hash),
and when it started. A run is *current* when

- the benchmark built from its config today has the same data (sha256);
- every prompt the benchmark, the arm and the scorers hold today hashes as recorded;
- its arm declares no `Change` (`benchmarks.runner.arm`) since the run first started.

`what_changed` lists what differs, one line each, so a refusal names it. What cannot be checked
here (a data file that is not on this machine, a peer's package that is not installed) is not a
refusal: `unchecked` says what was skipped.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hydra.utils import instantiate

from benchmarks.results.identity import sha256_text
from benchmarks.runner.arm import MemoryArm

__all__ = ["Currency", "currency", "what_changed"]

log = logging.getLogger(__name__)

REPO = Path(__file__).resolve().parents[2]
META_KEYS = ("name",)


@dataclass(frozen=True, slots=True)
class Currency:
    """What a run's manifest says against today's code: `changed` refuses it as a source."""

    changed: tuple[str, ...] = ()
    unchecked: tuple[str, ...] = ()

    @property
    def current(self) -> bool:
        return not self.changed


def relocated(value: Any) -> Any:
    """A path the run recorded (absolute, on the machine it ran on) as it lies in this checkout:
    the longest tail of it that exists under the repository; anything else unchanged."""
    if not isinstance(value, str) or not value.startswith("/") or Path(value).exists():
        return value
    parts = Path(value).parts[1:]
    for i in range(len(parts)):
        candidate = REPO.joinpath(*parts[i:])
        if candidate.exists():
            return str(candidate)
    return value


def _spec(node: dict[str, Any]) -> dict[str, Any]:
    return {k: relocated(v) for k, v in node.items() if k not in META_KEYS}


@functools.cache
def _benchmark_now(spec_json: str) -> tuple[dict[str, str], dict[str, Any]]:
    """The prompts and the data fingerprint of the benchmark a config builds today."""
    bench = instantiate(json.loads(spec_json))
    return dict(bench.prompts()), dict(bench.fingerprint())


@functools.cache
def _arm_class(target: str) -> type[MemoryArm]:
    cls = instantiate({"_target_": target, "_partial_": True}).func
    if not (isinstance(cls, type) and issubclass(cls, MemoryArm)):
        raise TypeError(f"{target} is no MemoryArm")
    return cls


def _when(text: str | None) -> dt.datetime | None:
    try:
        when = dt.datetime.fromisoformat(str(text))
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=dt.UTC)


def currency(manifest: dict[str, Any]) -> Currency:
    """A run's manifest (manifest.json as read) against today's code."""
    config = manifest.get("config") or {}
    arm = config.get("arm") or {}
    changed: list[str] = []
    unchecked: list[str] = []
    prompts_now: dict[str, str] = {}

    try:
        bench_prompts, data_now = _benchmark_now(
            json.dumps(_spec(config.get("benchmark") or {}), sort_keys=True)
        )
    except Exception as err:  # a data file not here, a source this checkout lacks
        unchecked.append(f"the benchmark ({_one_line(err)})")
    else:
        prompts_now.update(bench_prompts)
        data_then = manifest.get("dataset") or {}
        if data_then.get("sha256") and data_then.get("sha256") != data_now.get("sha256"):
            source = data_now.get("file") or data_now.get("source") or "its data"
            changed.append(
                f"data: {source} now has sha256 {str(data_now.get('sha256'))[:12]}, the run "
                f"read {str(data_then['sha256'])[:12]}"
            )

    target = str(arm.get("_target_") or "")
    try:
        cls = _arm_class(target)
    except Exception as err:  # a peer's package that is not installed here
        unchecked.append(f"the arm {target} ({_one_line(err)})")
        cls = None
    if cls is not None:
        prompts_now.update({f"arm.{k}": v for k, v in cls.prompts.items()})
        started = _when(manifest.get("first_started_at") or manifest.get("started_at"))
        for change in cls.changes:
            if change.configs and arm.get("name") not in change.configs:
                continue
            since = _when(change.since)
            if started is None or since is None or started < since:
                changed.append(
                    f"arm {arm.get('name')} ({cls.__name__}) changed on {change.since}: "
                    f"{change.what}"
                )

    for name, scorer in (config.get("scorers") or {}).items():
        try:
            held = getattr(instantiate(_spec(scorer)), "prompts", {}) or {}
        except Exception as err:
            unchecked.append(f"scorer {name} ({_one_line(err)})")
            continue
        prompts_now.update({f"scorer.{name}.{k}": v for k, v in held.items()})

    recorded = manifest.get("prompts")
    if recorded is None:
        unchecked.append("the prompts (the run recorded none)")
    else:
        for name in sorted(set(recorded) & set(prompts_now)):
            if recorded[name] != sha256_text(prompts_now[name]):
                changed.append(f"prompt {name} changed since the run")
        for name in sorted(set(recorded) - set(prompts_now)):
            if not any(u.startswith(("the benchmark", "the arm", "scorer")) for u in unchecked):
                changed.append(f"prompt {name} is no longer held by the code")
    return Currency(tuple(changed), tuple(unchecked))


def what_changed(folder: Path) -> list[str]:
    """What differs between a run folder's manifest and today's code ([] when current)."""
    try:
        manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []  # the loaders name a missing or damaged manifest
    return list(currency(manifest).changed)


def _one_line(err: BaseException) -> str:
    cause = err.__cause__ or err
    return f"{type(cause).__name__}: {str(cause).splitlines()[0] if str(cause) else ''}"[:200]
