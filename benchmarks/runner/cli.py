"""`pmem-bench`: compose an arm, a benchmark, model profiles and scorers (Hydra), then run.

    pmem-bench experiment=smoke                    # the local profile: a real small model
    pmem-bench experiment=smoke llm=scripted       # a dry run against a scripted server
    pmem-bench experiment=smoke run.rescore=true   # score saved predictions again
    pmem-bench experiment=smoke --cfg job          # print the composed config

Rerunning a config resumes its run folder (runs/<experiment>/<arm>__<benchmark>__<hash>/).
"""

from __future__ import annotations

import asyncio
import difflib
import logging
import os
import signal
import sqlite3
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import hydra
from hydra.errors import InstantiationException
from hydra.utils import instantiate
from omegaconf import DictConfig, OmegaConf

from benchmarks.models.endpoint import ModelError, ModelUnavailableError
from benchmarks.models.local.base import LocalModelError
from benchmarks.models.server import ServerStartError
from benchmarks.models.usage import UsageMeter
from benchmarks.results.loader import is_scripted
from benchmarks.results.records import Manifest, SchemaError, Score, Summary
from benchmarks.runner.failures import record_failures
from benchmarks.runner.pipeline import answer_stage, arm_class, score_stage, summarize, unique_by_id
from benchmarks.runner.probe import differing, probe
from benchmarks.runner.runs import (
    JUDGE_AUDIT_FILE,
    RedactingFilter,
    RunFolder,
    RunFolderInUse,
    machine,
    manifest,
    redact_text,
)
from benchmarks.runner.settings import SettingError, check_settings
from benchmarks.runner.stack import ConfigError
from benchmarks.runner.types import Episode, InputError
from pmem import StoreError

# configs/ at the top of a checkout; in an installed harness the same files ride in the package
# (benchmarks/configs links to them, and the wheel carries them), so this holds wherever
# pmem-bench is started.
CONFIG_DIR = Path(__file__).resolve().parents[1] / "configs"
log = logging.getLogger("pmem.bench")
GROUPS = ("arm", "benchmark", "llm", "embedder", "judge", "writer", "experiment")
META_KEYS = ("name",)  # config keys that describe a component rather than construct it


class UsageError(ValueError):
    """A command line or config that cannot run; printed without a traceback."""


#: errors a user causes and can fix: printed as one line, exit 2 (PMEM_DEBUG=1: the traceback)
USER_ERRORS: tuple[type[BaseException], ...] = (
    UsageError,
    SettingError,
    ConfigError,
    ModelError,
    RunFolderInUse,
    InputError,
    LocalModelError,
    ServerStartError,
    StoreError,
    SchemaError,
    OSError,
)


def choices(group: str, extra: Sequence[Path] = ()) -> list[str]:
    """The options of a config group: the project's, and those of the extra config folders."""
    return sorted({p.stem for d in (CONFIG_DIR, *extra) for p in (d / group).glob("*.yaml")})


def searchpath(argv: list[str]) -> list[Path]:
    """The local folders a `hydra.searchpath=[file://...]` override adds (a user's own configs:
    a benchmark or an arm of their own)."""
    for arg in argv:
        key, sep, value = arg.lstrip("+").partition("=")
        if sep and key == "hydra.searchpath":
            items = value.strip("[]").split(",")
            return [Path(i.strip().strip("'\"")[len("file://") :]) for i in items if "file://" in i]
    return []


def check_question_ids(benchmark: str, episodes: Sequence[Episode]) -> None:
    """A question id is the resume key: two questions with one id would leave a run forever
    one answer short. Refused at load, naming the first id asked twice."""
    seen: set[str] = set()
    for episode in episodes:
        for question in episode.questions:
            if question.id in seen:
                raise InputError(
                    f"benchmark {benchmark}: question id {question.id!r} appears twice (episode "
                    f"{episode.id!r} among others); every question needs an id of its own"
                )
            seen.add(question.id)


def check_overrides(argv: list[str]) -> None:
    """Name an unknown arm, benchmark or profile before Hydra does, with a did-you-mean."""
    extra = searchpath(argv)
    for arg in argv:
        group, sep, value = arg.lstrip("+~").partition("=")
        if not sep or group not in GROUPS or value in ("null", ""):
            continue
        valid = choices(group, extra)
        for item in value.split(","):  # `-m arm=a,b` sweeps name several
            if item not in valid:
                hint = difflib.get_close_matches(item, valid, n=1)
                raise UsageError(
                    f"unknown {group} {item!r}"
                    + (f" (did you mean {hint[0]!r}?)" if hint else "")
                    + f"; valid {group} choices: {', '.join(valid)}"
                )


def plain(node: DictConfig) -> dict[str, Any]:
    """A config node as plain data, its interpolations resolved: what a run hashes, checks and
    writes into its manifest. Its keys are strings (the YAML's and the command line's)."""
    data = OmegaConf.to_container(node, resolve=True)
    assert isinstance(data, dict)
    return {str(key): value for key, value in data.items()}


def build(node: DictConfig, **kwargs: Any) -> Any:
    """The component a config node describes. A constructor that refuses its settings (L=3, an
    unknown source, a wrong-typed or unknown parameter) is a `UsageError` naming the component,
    not Hydra's wrapped traceback."""
    spec = plain(node)
    for key in META_KEYS:
        spec.pop(key, None)
    try:
        return instantiate(spec, **kwargs)
    except InstantiationException as err:
        cause = err.__cause__
        if not isinstance(cause, ValueError | TypeError | InputError):
            raise
        component = str(spec.get("_target_", "?")).rsplit(".", 1)[-1]
        raise UsageError(f"{component}: {one_line(cause)}") from err


def execute(cfg: DictConfig) -> dict[str, Any]:
    """Run (or resume, or rescore) one composed config; returns the summary."""
    from benchmarks.models.cache import CacheOnNetworkFilesystem, ResponseCache
    from benchmarks.runner.stack import ModelStack

    for noisy in ("httpx", "httpx2"):  # one line per request drowns the bars
        logging.getLogger(noisy).setLevel(logging.WARNING)
    for handler in logging.getLogger().handlers:  # the console's (Hydra's): no secret either
        handler.addFilter(RedactingFilter())
    resolved = plain(cfg)
    if is_scripted(resolved):
        resolved = keep_dry_run_stores_in_run_root(cfg)
    check_settings(resolved)  # types and ranges, before anything is built or started
    bench = build(cfg.benchmark)
    arm_factory = build(cfg.arm, _partial_=True)
    scorers = {name: build(node) for name, node in cfg.scorers.items()}
    episodes = bench.episodes()
    check_question_ids(cfg.benchmark.name, episodes)
    first = episodes[0] if episodes else None  # the probe's slice: the same with run.limit
    if cfg.run.limit is not None:
        episodes = _limit(episodes, int(cfg.run.limit))
    expected = sum(len(e.questions) for e in episodes)
    run = RunFolder.for_config(cfg.run.root, cfg.name, cfg.arm.name, cfg.benchmark.name, resolved)
    with run.lock():  # one runner per folder: a second stops here, naming the first
        prompts = {
            **bench.prompts(),
            **{f"arm.{k}": v for k, v in _arm_prompts(arm_factory).items()},
        }
        for name, scorer in scorers.items():  # judges' prompts are part of the metric
            prompts.update(
                {f"scorer.{name}.{k}": v for k, v in getattr(scorer, "prompts", {}).items()}
            )
        previous = run.read_record("manifest.json", Manifest)
        fingerprint = bench.fingerprint()
        behaviour = fingerprint_of(cfg, bench, first, arm_factory)
        info = manifest(resolved, fingerprint, prompts, behaviour)
        if previous is not None:
            check_same_data(run.path, previous.dataset or {}, fingerprint)
            check_same_prompts(run.path, previous.prompts, info.prompts or {})
            check_same_behaviour(run.path, previous.probe, behaviour)
            info.first_started_at = previous.first_started_at or previous.started_at
        run.write_record("manifest.json", info)
        log_file = _log_to(run.path / "run.log")
        print(f"run folder: {run.path}  ({expected} questions in {len(episodes)} episodes)")
        log.info(
            "start: %s x %s, %d questions, config %s",
            cfg.arm.name,
            cfg.benchmark.name,
            expected,
            (info.config_sha256 or "")[:10],
        )
        if cfg.run.dry_run:
            print(OmegaConf.to_yaml(cfg))
            logging.getLogger().removeHandler(log_file)
            return {"dry_run": True, "run": str(run.path)}

        read_only = not cfg.run.get("answer", True)
        try:
            cache = ResponseCache(cfg.run.cache)
        except (OSError, sqlite3.Error, CacheOnNetworkFilesystem) as err:
            raise UsageError(
                f"run.cache={cfg.run.cache}: cannot open the response cache: {err}"
            ) from None
        meter = UsageMeter()
        stack = ModelStack(resolved, cache, meter, run.logs)
        started = time.perf_counter()

        audit: dict[str, Any] = {}  # the judge's audit, when the benchmark has one

        async def stages() -> list[Score]:
            try:
                if not cfg.run.rescore:
                    await answer_stage(
                        run,
                        bench,
                        episodes,
                        arm_factory,
                        stack,
                        episode_concurrency=cfg.run.episode_concurrency,
                        progress=cfg.run.progress,
                        answer=not read_only,
                    )
                if read_only:
                    return []  # nothing to score: the records hold reads, not answers
                rows = await score_stage(run, scorers, stack, progress=cfg.run.progress)
                auditor = getattr(bench, "audit_judge", None)  # planted answers for the judge
                if auditor is not None and any("judge" in s.needs for s in scorers.values()):
                    records = [p.to_json() for p in unique_by_id(run.predictions.read())]
                    found, cases = await auditor(records, await stack.get("judge"))
                    audit.update(summary=found, cases=cases)
                return rows
            finally:
                await stack.close()

        try:
            rows = asyncio.run(stages())
        except BaseException as err:
            # resuming helps after an interruption or an unreachable model, not after an error
            # the user must fix first
            resumable = not isinstance(err, USER_ERRORS) or isinstance(err, ModelUnavailableError)
            log.error("stopped: %r%s", err, " (rerun the same command to resume)" * resumable)
            # what the stopped attempt cost is paid for all the same: record it
            wall = time.perf_counter() - started
            by = {"signal": "SIGTERM"} if _TERMINATED else {}
            stop = attempt_record("stopped", wall, meter, stopped=repr(err), **by)
            run.attempts.append(stop)
            run.write_json("stopped.json", stop)
            raise
        finally:
            stack.stop_servers()
            logging.getLogger().removeHandler(log_file)
        wall = time.perf_counter() - started
        # the records as JSON, the form the scorers and a benchmark's own hook read
        predictions = [p.to_json() for p in unique_by_id(run.predictions.read())]
        scores = [s.row() for s in rows]
        stats = summarize(predictions, scores, expected)
        on_scored = getattr(bench, "on_scored", None)  # a benchmark's own figures and files
        figures: dict[str, Any] = {}
        if on_scored is not None and not read_only:
            figures = on_scored(run.path, predictions, scores, resolved)
        if audit:
            run.write_lines(JUDGE_AUDIT_FILE, audit["cases"])
            figures = {**figures, "judge_audit": audit["summary"]}
        stage_rule = getattr(bench, "failure_stage", None)  # where wrong answers were lost
        if stage_rule is not None and not read_only:
            figures = {**figures, "failure_stages": record_failures(run, stage_rule)}
        earlier_attempts = run.attempts.read()
        earlier = UsageMeter()
        for attempt in earlier_attempts:
            earlier.merge(attempt.get("usage") or {})
        earlier_wall = sum(float(a.get("wall_s") or 0) for a in earlier_attempts)
        stopped = sum(a.get("outcome") == "stopped" for a in earlier_attempts)
        summary = Summary(
            n=stats["n"],
            expected=stats["expected"],
            complete=stats["complete"],
            scores=stats["scores"],
            rates=stats.get("rates"),
            read=stats.get("read"),
            extra=figures,
            run=str(run.path),
            usage=meter.to_dict(),  # this attempt's
            wall_s=round(wall, 2),
            # what the attempts on this folder before this one paid (attempts.jsonl)
            earlier_attempts={
                "n": len(earlier_attempts),
                "stopped": stopped,
                "usage": earlier.to_dict(),
                "wall_s": round(earlier_wall, 2),
            },
            rescore=bool(cfg.run.rescore),
            read_only=read_only,
        )
        run.write_record("summary.json", summary)
        run.attempts.append(attempt_record("completed", wall, meter))
        cost = f"cost: {meter.summary_line()} | wall {wall:,.1f} s"
        if earlier_attempts:
            cost += (
                f"\nbefore this attempt, {len(earlier_attempts)} attempt(s) ({stopped} stopped) "
                f"paid: {earlier.paid_line()} | wall {earlier_wall:,.1f} s (attempts.jsonl)"
            )
        written = summary.to_json()
        print(report(written))
        print(cost)
        with (run.path / "run.log").open("a") as f:
            f.write(report(written) + "\n" + cost + "\n")
        return written


RESULTS = "results/"  # the committed results: a dry run never writes there


def keep_dry_run_stores_in_run_root(cfg: DictConfig) -> dict[str, Any]:
    """A shared store under results/ (LongMemEval's question classes, which the class scorer
    writes and the class-oracle gate reads) is for model judgements every run reads; for a
    scripted dry run every such path in the arm and the scorers points under
    `<run.root>/dry-run/` instead, so a dry run never writes into results/ and its gate reads
    what its own scorer stored. The config (and so the run's hash and manifest) says where they
    went. Returns the resolved config after the change."""
    dry = Path(str(cfg.run.root)) / "dry-run"

    def move(node: Any, where: str) -> None:
        for key in list(node.keys()) if isinstance(node, DictConfig) else ():
            value = node.get(key)
            if isinstance(value, DictConfig):
                move(value, f"{where}.{key!s}")
            elif isinstance(value, str) and value.startswith(RESULTS):
                moved = str(dry / value.removeprefix(RESULTS))
                log.info("%s.%s: a scripted run uses %s, not %s", where, key, moved, value)
                node[key] = moved

    move(cfg.arm, "arm")
    move(cfg.scorers, "scorers")
    return plain(cfg)


def check_same_data(folder: Path, before: dict[str, Any], now: dict[str, Any]) -> None:
    """A run folder resumes only on the data it was made from: a data file edited in place would
    otherwise mix old questions and golds with new ones under a manifest claiming the new file."""
    if before.get("sha256") == now.get("sha256"):
        return
    source = now.get("file") or now.get("source") or "the benchmark's data"
    raise UsageError(
        f"run folder {folder} was made from data with sha256 {before.get('sha256')}, but "
        f"{source} now has sha256 {now.get('sha256')}: its questions or golds changed. Restore "
        "the data the run was made from, or move the run folder aside to start a new run"
    )


def check_same_prompts(folder: Path, before: dict[str, str] | None, now: dict[str, str]) -> None:
    """A run folder resumes only under the prompts its answers were made with. The folder's name
    hashes the config, not the code's prompt texts, so an edited arm or benchmark prompt would
    otherwise resume the old folder and mix answers made under two prompts. Scorers' prompts may
    differ: the score stage rewrites every score, so nothing mixes. A manifest from before
    prompts were recorded has nothing to compare."""
    if before is None:
        return
    names = {n for n in {*before, *now} if not n.startswith("scorer.")}
    changed = sorted(n for n in names if before.get(n) != now.get(n))
    if not changed:
        return
    raise UsageError(
        f"run folder {folder} was answered under other prompts ({', '.join(changed)} changed "
        "since): its answers would mix two prompts. Restore the code the run was made with, or "
        "move the run folder aside to start a new run"
    )


def fingerprint_of(cfg: DictConfig, bench: Any, first: Any, factory: Any) -> dict[str, str] | None:
    """The arm's fingerprint for the manifest (`benchmarks.runner.probe`); None for an arm that
    cannot run in process (a peer) or a benchmark with no episode. A probe that fails is said
    once and leaves the run without one: the run itself is not the probe's."""
    if first is None or not arm_class(factory).probed:
        return None
    try:
        return probe(plain(cfg.arm), bench, first)
    except Exception as err:  # an arm that needs what the scripted models cannot give
        log.warning("no fingerprint for arm %s: %s", cfg.arm.name, one_line(err))
        return None


def check_same_behaviour(
    folder: Path, before: dict[str, str] | None, now: dict[str, str] | None
) -> None:
    """A run folder resumes only with an arm that behaves as the one it was made with (its
    fingerprint, `benchmarks.runner.probe`): a changed read would mix two arms' answers under
    one run. A manifest from before fingerprints has nothing to compare."""
    if not before or not now:
        return
    if changed := differing(before, now):
        raise UsageError(
            f"run folder {folder} was made by an arm that behaved otherwise ({', '.join(changed)} "
            "on its probe changed since): its answers would mix two arms. Restore the code the "
            "run was made with, or move the run folder aside to start a new run"
        )


def attempt_record(outcome: str, wall: float, meter: UsageMeter, **extra: str) -> dict[str, Any]:
    """One line of a run folder's attempts.jsonl: how the attempt ended, what it paid, and the
    machine it ran on (a run resumed elsewhere, from a cache dump, spans machine kinds whose
    replies can differ; the manifest names only the first)."""
    return {
        "outcome": outcome,
        **extra,
        "at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "machine": machine(),
        "wall_s": round(wall, 2),
        "usage": meter.to_dict(),
        "cost": meter.summary_line(),
    }


def report(summary: dict[str, Any]) -> str:
    done = "read (read only: no answers, no scores)" if summary.get("read_only") else "answered"
    lines = [
        f"{summary['n']}/{summary['expected']} questions {done}"
        + ("" if summary["complete"] else "  (incomplete: rerun to resume)")
    ]
    for name, s in summary["scores"].items():
        low, high = s["ci95"]
        lines.append(
            f"  {name:<12} {s['correct']}/{s['n']} = {100 * s['accuracy']:.1f}%"
            f"  [95% CI {100 * low:.1f}–{100 * high:.1f}]"
        )
    for name, r in summary.get("rates", {}).items():
        if name.startswith("stale."):
            low, high = r["ci95"]
            lines.append(
                f"  {name:<12} {r['count']}/{r['n']} = {100 * r['rate']:.1f}%"
                f"  [95% CI {100 * low:.1f}–{100 * high:.1f}]"
            )
    if "read" in summary:
        r = summary["read"]
        kind = "tokens" if r["tokens_exact"] else "tokens (approx.)"
        lines.append(f"  read size    {r['mean_chars']:,.0f} chars, {r['mean_tokens']:,.0f} {kind}")
    # A role whose replies mostly did not parse (a writer's JSON, a judge's verdict) has turned
    # its arm into a fallback path; the scores above then measure that, so say it beside them.
    # Replies are HTTP calls plus those served from the cache (parse failures count both).
    for role, usage in (summary.get("usage") or {}).items():
        replies = int(usage.get("calls") or 0) + int(usage.get("cache_hits") or 0)
        failed = int(usage.get("parse_failures") or 0)
        if replies and 2 * failed > replies:
            lines.append(
                f"  warning: {failed} of {replies} {role} replies failed to parse (the scripted "
                "profile, or a model ignoring the schema?) — scores reflect unparsed output"
            )
    return "\n".join(lines)


def _log_to(path: Path) -> logging.Handler:
    """One log per run, appended across resumes, beside the run's records."""
    handler = logging.FileHandler(path)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(RedactingFilter())
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(min(root.level, logging.INFO))
    return handler


def _limit(episodes: list[Any], n: int) -> list[Any]:
    out, left = [], n
    for ep in episodes:
        if left <= 0:
            break
        qs = ep.questions[:left]
        left -= len(qs)
        out.append(type(ep)(ep.id, ep.events, tuple(qs)))
    return out


def _arm_prompts(factory: Any) -> dict[str, str]:
    return dict(arm_class(factory).prompts)


@hydra.main(config_path=str(CONFIG_DIR), config_name="config", version_base="1.3")
def _hydra_entry(cfg: DictConfig) -> None:
    try:
        execute(cfg)
    except UnicodeDecodeError as err:  # a data file a reader did not check: still one line
        if os.environ.get("PMEM_DEBUG") or os.environ.get("HYDRA_FULL_ERROR"):
            raise
        print(
            f"pmem-bench: error: a data file is not UTF-8 text ({err.reason} at byte {err.start})",
            file=sys.stderr,
        )
        sys.exit(2)
    except USER_ERRORS as err:
        if os.environ.get("PMEM_DEBUG") or os.environ.get("HYDRA_FULL_ERROR"):
            raise
        print(f"pmem-bench: error: {one_line(err)}", file=sys.stderr)
        sys.exit(2)


def one_line(err: BaseException) -> str:
    """The message of an error a user can act on, on one line (an OSError names its file)."""
    if isinstance(err, OSError) and err.filename is not None:
        return redact_text(f"{err.filename}: {err.strerror or err}")
    text = str(err.args[0]) if isinstance(err, KeyError) and err.args else str(err)
    return redact_text(" ".join(text.split()))


#: the SIGTERMs this process received (`_terminate`), for the stop's record and last line
_TERMINATED: list[int] = []


def _terminate(signum: int, frame: Any) -> None:
    """Slurm's pre-emption and `kill` send SIGTERM: unwind like Ctrl-C, so servers are stopped
    and files closed; the requeued job resumes from predictions.jsonl. Inside `asyncio.run`
    that is asyncio's own Ctrl-C handling (its SIGINT handler cancels the main task, whose
    `finally` blocks then run on the loop, and raises KeyboardInterrupt once it is done): a
    KeyboardInterrupt raised here, at whatever line the signal lands, could leave a coroutine
    to be closed outside its loop (seen: a traceback from `stack.close()`)."""
    _TERMINATED.append(signum)
    on_sigint = signal.getsignal(signal.SIGINT)
    if callable(on_sigint) and on_sigint is not signal.default_int_handler:
        on_sigint(signal.SIGINT, frame)
        return
    raise KeyboardInterrupt(f"signal {signum}")


def check_root(argv: list[str]) -> None:
    """`run.root` must be a folder we can write: Hydra makes its own folder under it before any
    of our code runs, and would fail there with a traceback."""
    given = [a.split("=", 1)[1] for a in argv if a.lstrip("+").startswith("run.root=")]
    root = Path(given[-1] if given else "runs")
    existing = next((p for p in (root, *root.parents) if p.exists()), Path("."))
    if existing.exists() and not existing.is_dir():
        raise UsageError(f"run.root={root}: {existing} is a file, not a folder")
    try:  # try, don't ask: os.access says yes to root under /proc, a read-only mount...
        with tempfile.TemporaryFile(dir=existing):
            pass
    except OSError as err:
        raise UsageError(
            f"run.root={root}: cannot write in {existing} ({err.strerror or err})"
        ) from None


def main() -> None:
    try:
        check_overrides(sys.argv[1:])
        check_root(sys.argv[1:])
    except UsageError as err:
        print(f"pmem-bench: error: {err}", file=sys.stderr)
        sys.exit(2)
    signal.signal(signal.SIGTERM, _terminate)
    signal.signal(signal.SIGINT, signal.default_int_handler)  # even when started in background
    try:
        _hydra_entry()
    except KeyboardInterrupt:
        # Ctrl-C or SIGTERM: the run folder has said what it kept (run.log, stopped.json); the
        # user needs one line, not the traceback of wherever the signal landed
        if os.environ.get("PMEM_DEBUG") or os.environ.get("HYDRA_FULL_ERROR"):
            raise
        line, code = stopped_by()
        print(f"pmem-bench: {line}", file=sys.stderr)
        sys.exit(code)


def stopped_by() -> tuple[str, int]:
    """The line a stopped `pmem-bench` ends with, and its exit status (128 + the signal)."""
    what, code = ("SIGTERM", 143) if _TERMINATED else ("Ctrl-C", 130)
    line = (
        f"stopped by {what}; every answer and memory snapshot made so far is kept: rerun the "
        "same command to resume (paid model calls come from the response cache)"
    )
    return line, code


if __name__ == "__main__":
    main()
