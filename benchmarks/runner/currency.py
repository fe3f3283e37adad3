"""Whether a finished run still shows what the current code does: a table cites only such runs.

    python -m benchmarks.runner.currency results/runs            # each run: current or why not
    python -m benchmarks.runner.currency results/runs --vouch WHY

A run folder's manifest records what its numbers depend on beside the model: the data it read
(the benchmark's fingerprint), every prompt its answers and scores were made under (by hash),
its arm's fingerprint, and when it started. A run is *current* when

- the benchmark built from its config today has the same data (sha256);
- every prompt the benchmark, the arm and the scorers hold today hashes as recorded;
- its arm declares no `Change` (`benchmarks.runner.arm`) since the run first started;
- its arm's fingerprint (`benchmarks.runner.probe`: what it reads, asks and embeds on a small
  fixed slice of the benchmark, with the scripted models in process) is the one the run
  recorded, or, for a run made before runs recorded one, the one vouched for it in the runs
  root's `vouched.json` (`--vouch`).

`what_changed` lists what differs, one line each, so a refusal names it. What cannot be checked
here (a data file that is not on this machine, a peer's package that is not installed) is not a
refusal: `unchecked` says what was skipped.
"""

from __future__ import annotations

import argparse
import datetime as dt
import functools
import json
import logging
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hydra.utils import instantiate

from benchmarks.results.identity import sha256_text
from benchmarks.runner.arm import MemoryArm
from benchmarks.runner.probe import differing, probe

__all__ = ["VOUCHED", "Currency", "currency", "vouch", "vouched_for", "what_changed"]

log = logging.getLogger(__name__)

REPO = Path(__file__).resolve().parents[2]
META_KEYS = ("name",)
#: in a runs root: fingerprints recorded for runs made before runs recorded their own, by
#: `<experiment>/<run>`, each with the commit and the reason it was vouched for (`vouch`)
VOUCHED = "vouched.json"


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
def _bench(spec_json: str) -> Any:
    """The benchmark a config builds today (built once per process)."""
    return instantiate(json.loads(spec_json))


@functools.cache
def _benchmark_now(spec_json: str) -> tuple[dict[str, str], dict[str, Any]]:
    """The prompts and the data fingerprint of the benchmark a config builds today."""
    bench = _bench(spec_json)
    return dict(bench.prompts()), dict(bench.fingerprint())


@functools.cache
def _probe_now(arm_json: str, bench_json: str) -> dict[str, str]:
    """Today's fingerprint of an arm config on a benchmark config (`probe`)."""
    return probe(json.loads(arm_json), _bench(bench_json))


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


def currency(manifest: dict[str, Any], vouched: dict[str, Any] | None = None) -> Currency:
    """A run's manifest (manifest.json as read) against today's code. The arm's fingerprint is
    compared with the one the run recorded, else with `vouched` (its entry in the runs root's
    `VOUCHED` file, for a run made before runs recorded one)."""
    config = manifest.get("config") or {}
    arm = config.get("arm") or {}
    changed: list[str] = []
    unchecked: list[str] = []
    prompts_now: dict[str, str] = {}
    bench_json = json.dumps(_spec(config.get("benchmark") or {}), sort_keys=True)

    try:
        bench_prompts, data_now = _benchmark_now(bench_json)
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
        changed += _behaviour(manifest, vouched, cls, arm, bench_json, unchecked)

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


def _behaviour(
    manifest: dict[str, Any],
    vouched: dict[str, Any] | None,
    cls: type[MemoryArm],
    arm: dict[str, Any],
    bench_json: str,
    unchecked: list[str],
) -> list[str]:
    """The arm's fingerprint today against the run's (or the one vouched for it)."""
    if not cls.probed:
        return []  # a peer: its package's version is in the manifest
    expected, source = manifest.get("probe"), "when the run was made"
    if not expected and vouched:
        expected, source = vouched.get("probe"), f"when it was vouched for ({vouched.get('at')})"
    if not expected:
        unchecked.append("the arm's behaviour (no fingerprint recorded or vouched for)")
        return []
    try:
        now = _probe_now(json.dumps(arm, sort_keys=True), bench_json)
    except Exception as err:
        unchecked.append(f"the arm's behaviour ({_one_line(err)})")
        return []
    if parts := differing(expected, now):
        return [f"arm {arm.get('name')}: {', '.join(parts)} on its probe differ from {source}"]
    return []


def vouched_for(folder: Path) -> dict[str, Any] | None:
    """A run folder's entry in its runs root's `VOUCHED` file, if any."""
    path = folder.parents[1] / VOUCHED
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    entry = (
        entries.get(f"{folder.parent.name}/{folder.name}") if isinstance(entries, dict) else None
    )
    return entry if isinstance(entry, dict) else None


def what_changed(folder: Path) -> list[str]:
    """What differs between a run folder's manifest and today's code ([] when current)."""
    try:
        manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []  # the loaders name a missing or damaged manifest
    return list(currency(manifest, vouched_for(folder)).changed)


def vouch(runs: Path, why: str, commit: str) -> list[str]:
    """Record today's fingerprint for each finished run under `runs` that has none (made before
    runs recorded one) and is otherwise current, in `runs/VOUCHED`: the claim, made once and
    kept in git, that today's code still behaves as the run's did. The runs it vouched for."""
    path = runs / VOUCHED
    entries = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    entries = {k: v for k, v in entries.items() if (runs / k / "summary.json").exists()}
    done = []
    for summary in sorted(runs.glob("*/*/summary.json")):
        folder = summary.parent
        name = f"{folder.parent.name}/{folder.name}"
        manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
        arm = (manifest.get("config") or {}).get("arm") or {}
        if manifest.get("probe") or name in entries or currency(manifest).changed:
            continue
        try:
            cls = _arm_class(str(arm.get("_target_")))
            if not cls.probed:
                continue
            bench = json.dumps(_spec(manifest["config"].get("benchmark") or {}), sort_keys=True)
            fingerprint = _probe_now(json.dumps(arm, sort_keys=True), bench)
        except Exception as err:
            log.warning("%s: not vouched for: %s", name, _one_line(err))
            continue
        entries[name] = {"probe": fingerprint, "at": commit, "why": why}
        done.append(name)
    path.write_text(json.dumps(dict(sorted(entries.items())), indent=1) + "\n", encoding="utf-8")
    return done


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m benchmarks.runner.currency", description=__doc__.splitlines()[0]
    )
    p.add_argument("runs", type=Path, help="a runs root, e.g. results/runs")
    p.add_argument("--vouch", metavar="WHY", help="record today's fingerprint for each current "
                   "run that has none, saying why the code still behaves as it did")  # fmt: skip
    args = p.parse_args(argv)
    if args.vouch:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], capture_output=True, text=True, cwd=REPO
        ).stdout.strip()
        done = vouch(args.runs, args.vouch, commit[:12] or "unknown")
        print(f"vouched for {len(done)} run(s) in {args.runs / VOUCHED}")
        return 0
    refused = 0
    for summary in sorted(args.runs.glob("*/*/summary.json")):
        folder = summary.parent
        manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
        found = currency(manifest, vouched_for(folder))
        refused += not found.current
        state = "refused: " + "; ".join(found.changed) if found.changed else "current"
        note = f" (not checked: {'; '.join(found.unchecked)})" if found.unchecked else ""
        print(f"{folder.parent.name}/{folder.name}: {state}{note}")
    return 1 if refused else 0


def _one_line(err: BaseException) -> str:
    cause = err.__cause__ or err
    return f"{type(cause).__name__}: {str(cause).splitlines()[0] if str(cause) else ''}"[:200]


if __name__ == "__main__":
    raise SystemExit(main())
