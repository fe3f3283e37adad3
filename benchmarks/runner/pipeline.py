"""The stages of a run: ingest -> snapshot -> read -> answer (-> predictions.jsonl), then
score (-> scores.jsonl) and summarize (-> summary.json). Each stage reads what the previous one
wrote, so any stage can be rerun alone."""

from __future__ import annotations

import asyncio
import copy
import functools
import hashlib
import json
import statistics
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from tqdm import tqdm

from benchmarks.models.calls import recording
from benchmarks.models.usage import UsageMeter
from benchmarks.results.records import Prediction, ReadContext, Sample, Score
from benchmarks.runner.arm import Context, MemoryArm, Services
from benchmarks.runner.runs import CALLS_FILE, JsonLines, RunFolder
from benchmarks.runner.types import Benchmark, Episode, Question
from benchmarks.stats import binomial_ci
from pmem.protocols import Completion

if TYPE_CHECKING:
    from benchmarks.runner.stack import ModelStack

SNAPSHOT_DONE = ".complete"
INGEST_FILE = "ingest.json"  # what building the memory cost: wall time, calls and tokens by role
# how far an unfinished ingest got (units of the stream done, calls and time so far), rewritten
# after each unit by arms that report progress: what a killed run leaves for the tables
INGEST_PROGRESS_FILE = "ingest_progress.json"


def arm_class(factory: Callable[..., MemoryArm]) -> type[MemoryArm]:
    """The arm class behind a factory (Hydra builds arms as `functools.partial`s)."""
    target = getattr(factory, "func", factory)
    if not (isinstance(target, type) and issubclass(target, MemoryArm)):
        raise TypeError(f"{factory!r} builds no MemoryArm: an arm's _target_ is its class")
    return target


ROLES = ("writer", "embedder", "judge")


def metered_copy(services: Services) -> Services:
    """The same clients (pool, cache, endpoint) with fresh usage counters, so one episode's cost
    can be read off exactly while other episodes run; `merge_usage` adds it back to the run's."""
    out = Services()
    for role in ROLES:
        client = getattr(services, role)
        if client is not None and hasattr(client, "meter"):
            client = copy.copy(client)
            client.meter = UsageMeter()
            client.usage = client.meter.role(client.role)
        setattr(out, role, client)
    return out


def merge_usage(own: Services, services: Services) -> None:
    for role in ROLES:
        mine, shared = getattr(own, role), getattr(services, role)
        if mine is not shared and mine is not None:
            shared.usage.add(mine.usage)


def ingest_cost(services: Services, wall_s: float) -> dict[str, Any]:
    """What an ingest cost: wall time, and the model usage of the episode's own clients."""
    fields = ("calls", "cache_hits", "prompt_tokens", "completion_tokens", "retries", "errors")
    usage = {
        role: {f: getattr(client.usage, f) for f in fields}
        for role in ROLES
        if (client := getattr(services, role)) is not None and hasattr(client, "usage")
    }
    return {"wall_s": round(wall_s, 3), "usage": usage}


class ProgressRecord:
    """Writes how far an ingest has got after each unit (`MemoryArm.on_progress`), atomically,
    so a kill leaves the last whole record: units done of the stream, the usage so far, and per
    unit its wall seconds and the writer calls it paid and found in the response cache. A
    resumed run replays the units before the kill from the cache; such a unit keeps what the
    earlier attempt measured when it paid for it, so the record's per-unit figures stay the
    stream's measured cost across any number of stops."""

    def __init__(self, path: Path, services: Services) -> None:
        self.path, self.services = path, services
        self.started = self.last = time.perf_counter()
        self.seen = (0, 0)
        # what an earlier, stopped attempt measured: a unit it paid for keeps that measurement
        # when this attempt replays it from the cache
        self.earlier: list[dict[str, float]] = []
        if path.exists():
            try:
                self.earlier = list(json.loads(path.read_text()).get("units", []))
            except (ValueError, AttributeError):
                self.earlier = []
        self.units: list[dict[str, float]] = []

    def __call__(self, done: int, total: int) -> None:
        now = time.perf_counter()
        writer = getattr(self.services, "writer", None)
        usage = getattr(writer, "usage", None)
        paid, cached = (usage.calls, usage.cache_hits) if usage is not None else (0, 0)
        unit = {
            "s": round(now - self.last, 3),
            "paid": paid - self.seen[0],
            "cached": cached - self.seen[1],
        }
        before = self.earlier[len(self.units)] if len(self.units) < len(self.earlier) else None
        if before is not None and before.get("paid", 0) > unit["paid"]:
            unit = before  # replayed from the cache: the unit's cost is what it cost when paid
        self.units.append(unit)
        self.last, self.seen = now, (paid, cached)
        record = {
            "units_done": done,
            "units_total": total,
            **ingest_cost(self.services, now - self.started),
            "units": self.units,
        }
        self.path.parent.mkdir(parents=True, exist_ok=True)
        partial = self.path.with_suffix(".partial")
        partial.write_text(json.dumps(record, indent=1))
        partial.replace(self.path)


def questions_left(
    episodes: Sequence[Episode], done: set[str]
) -> list[tuple[Episode, list[Question]]]:
    out = []
    for ep in episodes:
        left = [q for q in ep.questions if q.id not in done]
        if left:
            out.append((ep, left))
    return out


async def answer_stage(
    run: RunFolder,
    bench: Benchmark,
    episodes: Sequence[Episode],
    arm_factory: Callable[..., MemoryArm],
    stack: ModelStack,
    *,
    episode_concurrency: int = 4,
    progress: bool = True,
    answer: bool = True,
) -> int:
    """Answer every question not yet in predictions.jsonl; returns how many were answered.

    ``answer=False`` (``run.answer=false``) records only what each arm reads (its context and
    the context's size in the reader's tokens), with no answer: a read-cost measurement such as
    §4.1.1's haystack-growth sweep pays for no answers. An arm whose read is a dialogue with
    the reader (iterative readout) records its first read."""
    done = {p.id for p in run.predictions.read()}
    todo = questions_left(episodes, done)
    total = sum(len(qs) for _, qs in todo)
    if not total:
        return 0
    needs = arm_class(arm_factory).needs
    services = Services(**{role: await stack.get(role) for role in needs})
    reader = await stack.get("reader")
    gate = asyncio.Semaphore(episode_concurrency)
    bars = dict(disable=not progress, dynamic_ncols=True)
    # a long ingest (thousands of writer calls) must not look like a hang at "answer 0/N"
    ingest_bar = tqdm(total=len(todo), desc="ingest", unit="ep", position=0, **bars)
    bar = tqdm(total=total, desc="answer", unit="q", position=1, **bars)
    ingest_calls = 0

    def tick() -> None:
        nonlocal ingest_calls
        ingest_calls += 1
        ingest_bar.set_postfix_str(f"{ingest_calls:,} model calls", refresh=False)
        ingest_bar.update(0)

    async def episode(ep: Episode, questions: list[Question]) -> None:
        async with gate:
            own = metered_copy(services)  # this episode's usage, exact under concurrency
            arm = arm_factory(services=own)
            if arm.wording is None:
                arm.wording = getattr(bench, "wording", None)
            try:
                snapshot = run.snapshots / snapshot_name(ep.id)
                if not ((snapshot / SNAPSHOT_DONE).exists() and arm.load(snapshot)):
                    started = time.perf_counter()
                    arm.on_progress = ProgressRecord(snapshot / INGEST_PROGRESS_FILE, own)
                    with recording(on_call=tick) as calls:
                        await arm.ingest(ep.events)
                    snapshot.mkdir(parents=True, exist_ok=True)
                    cost = ingest_cost(own, time.perf_counter() - started)
                    (snapshot / INGEST_FILE).write_text(json.dumps(cost, indent=1))
                    JsonLines(snapshot / CALLS_FILE).rewrite(
                        [{"n": i, **c} for i, c in enumerate(calls)]
                    )
                    if arm.save(snapshot):
                        (snapshot / SNAPSHOT_DONE).touch()
                ingest_bar.update()
                await asyncio.gather(*(answer_one(arm, ep, q) for q in questions))
            finally:
                await arm.aclose()
                merge_usage(own, services)

    async def answer_one(arm: MemoryArm, ep: Episode, q: Question) -> None:
        def ask(text: str) -> Awaitable[Completion]:
            return reader.complete(bench.answer_messages(q, text))

        with recording() as calls:  # this question's calls only: the reader's and any other
            if answer:
                context, result = await arm.respond(q, ask)
                prediction = result.text
            else:
                context, prediction = await arm.read(q), None
        tokens = await reader.count_tokens(context.text)
        # the sample first: a prediction marks the question done, so a kill between the two
        # re-answers it (from the cache) rather than leaving a prediction with no sample
        run.samples.append(sample(ep, q, context, tokens.n, prediction, calls))
        run.predictions.append(
            Prediction(
                id=q.id,
                episode=ep.id,
                question=q.text,
                golds=list(q.golds),
                meta=q.meta,
                prediction=prediction,
                context_chars=len(context.text),
                context_tokens=tokens.n,
                context_tokens_exact=tokens.exact,
                context_items=len(context.ids),
                context_meta=context.meta,  # what the arm reports (coverage, decisions...)
            )
        )
        bar.update()

    try:
        await asyncio.gather(*(episode(ep, qs) for ep, qs in todo))
    finally:
        ingest_bar.close()
        bar.close()
    return total


def sample(
    ep: Episode,
    q: Question,
    context: Context,
    tokens: int,
    prediction: str | None,
    calls: list[dict[str, Any]],
) -> Sample:
    """One line of the sample log (samples.jsonl): what the reader saw and said for a question.

    The arm's read (its context text, the ids of the memory entries it read, its size) and every
    model call the question caused, each with the messages as sent and the raw reply; the scores
    live in scores.jsonl under the same id (`benchmarks.results.load_runs` joins them)."""
    return Sample(
        id=q.id,
        episode=ep.id,
        question=q.text,
        golds=list(q.golds),
        prediction=prediction,
        context=ReadContext(
            text=context.text,
            ids=[str(i) for i in context.ids],
            chars=len(context.text),
            tokens=tokens,
            meta=context.meta,
        ),
        calls=calls,
    )


class Scorer(Protocol):
    """What the score stage calls (`benchmarks.scoring.scorers.Scorer`, not imported: the
    scorers build on the benchmarks, which build on the runner): the model roles a scorer
    needs, and its fields for one prediction's JSON record, given those roles' clients."""

    @property
    def needs(self) -> Sequence[str]: ...

    async def score(self, record: dict[str, Any], models: Mapping[str, Any]) -> dict[str, Any]: ...


async def score_stage(
    run: RunFolder, scorers: Mapping[str, Scorer], stack: ModelStack, *, progress: bool = True
) -> list[Score]:
    """Score every saved prediction with every scorer; rewrites scores.jsonl whole (judge calls
    come from the response cache, so a rescore re-pays nothing)."""
    predictions = unique_by_id(run.predictions.read())
    models = {role: await stack.get(role) for s in scorers.values() for role in s.needs}
    bar = tqdm(
        total=len(predictions), desc="score", unit="q", disable=not progress, dynamic_ncols=True
    )

    async def one(prediction: Prediction) -> Score:
        record = prediction.to_json()
        row = Score(id=prediction.id)
        for name, scorer in scorers.items():
            row.scorers[name] = await scorer.score(record, models)
        bar.update()
        return row

    try:
        rows = await asyncio.gather(*(one(p) for p in predictions))
    finally:
        bar.close()
    rows.sort(key=lambda r: r.id)
    run.scores.rewrite(rows)
    return rows


def unique_by_id(records: Sequence[Prediction]) -> list[Prediction]:
    """First record per id (a duplicate can only come from a hand-merged file)."""
    seen: dict[str, Prediction] = {}
    for r in records:
        seen.setdefault(r.id, r)
    return sorted(seen.values(), key=lambda r: r.id)


def summarize(
    predictions: Sequence[Mapping[str, Any]], scores: Sequence[Mapping[str, Any]], expected: int
) -> dict[str, Any]:
    """Accuracy per scorer with n and a 95% Wilson interval; read size per question."""
    out: dict[str, Any] = {
        "n": len(predictions),
        "expected": expected,
        "complete": len(predictions) == expected,
        "scores": {},
    }
    for name in sorted({k for row in scores for k in row if k != "id"}):
        outcomes = [bool(row[name]["correct"]) for row in scores if "correct" in row.get(name, {})]
        if outcomes:
            k = sum(outcomes)
            low, high = binomial_ci(k, len(outcomes))
            out["scores"][name] = {
                "accuracy": k / len(outcomes),
                "correct": k,
                "n": len(outcomes),
                "ci95": [low, high],
            }
    # Other yes/no outcomes (a stale answer, a flagged conflict...) as rates with an interval.
    flags: dict[str, list[bool]] = {}
    for row in scores:
        for name, fields in row.items():
            if isinstance(fields, dict):
                for field, value in fields.items():
                    if field != "correct" and isinstance(value, bool):
                        flags.setdefault(f"{name}.{field}", []).append(value)
    if flags:
        out["rates"] = {}
        for key, values in sorted(flags.items()):
            low, high = binomial_ci(sum(values), len(values))
            out["rates"][key] = {
                "rate": sum(values) / len(values),
                "count": sum(values),
                "n": len(values),
                "ci95": [low, high],
            }
    if predictions:
        out["read"] = {
            "mean_chars": statistics.fmean(p["context_chars"] for p in predictions),
            "mean_tokens": statistics.fmean(p["context_tokens"] for p in predictions),
            "tokens_exact": all(p["context_tokens_exact"] for p in predictions),
        }
        meta = mean_context_meta(predictions)
        if meta:
            out["read"]["meta"] = meta
    return out


def mean_context_meta(predictions: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """The mean of each numeric `context_meta` field over the predictions that report it
    (retrieval coverage, noop fallbacks...): the per-arm controls a table shows beside accuracy."""
    values: dict[str, list[float]] = {}
    for p in predictions:
        for key, value in (p.get("context_meta") or {}).items():
            if isinstance(value, int | float) and not isinstance(value, bool):
                values.setdefault(key, []).append(float(value))
    return {key: statistics.fmean(v) for key, v in sorted(values.items())}


@functools.cache
def snapshot_name(name: str) -> str:
    """An episode id as a snapshot folder name. An id that is already a plain name keeps it; any
    other gets its characters replaced and a hash of the id appended, so two ids never share a
    folder (``user/1`` and ``user_1`` would both read ``user_1``)."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in name)
    if safe == name and name and not name.startswith("."):
        return name
    return f"{safe.lstrip('.') or 'episode'}-{hashlib.sha256(name.encode()).hexdigest()[:12]}"
