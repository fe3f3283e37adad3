"""Every run under a root as pandas DataFrames: one row per run, or one row per question.

    from benchmarks.results import load_runs, load_summaries
    runs = load_summaries("runs")            # one row per finished run folder
    questions = load_runs("runs", "table6")  # one row per scored question, with what it read

A live runs root (runs/<experiment>/<run>/) and the committed export (results/runs/, the same
layout with its .jsonl files gzipped: `export_runs`) read alike. Nothing here calls a model or
changes a run, and a reader never exits the interpreter: it raises `NoRuns`.
"""

from __future__ import annotations

import glob
import gzip
import json
import logging
import shutil
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, TypeVar

import pandas as pd

from benchmarks.results.records import (
    SCHEMA_KEY,
    Failure,
    Manifest,
    Prediction,
    Record,
    Sample,
    SchemaError,
    Score,
    Summary,
    schema_of,
)

log = logging.getLogger(__name__)
R = TypeVar("R", bound=Record)

# The server of the scripted profile (configs/server/scripted.yaml): a run any of whose models it
# served is a dry run, never a paper figure.
SCRIPTED_SERVER = "benchmarks.models.scripted.ScriptedServer"
# The model roles that decide a run's numbers beside its arm; the writer is part of the row's name
# instead (`arm_key`), so one table can compare writers.
PROFILE_ROLES = ("llm", "embedder", "judge")
BENCH_META = ("_target_", "name")
# the records an export carries; `attempts`: what each attempt on the run's folder paid
EXPORTED = ("predictions", "scores", "samples", "stages", "judge_audit", "attempts")
CALLS_FILE = "calls.jsonl"  # in each snapshot folder (benchmarks.runner.runs.CALLS_FILE)
INGEST_CALLS = "ingest_calls"  # the export's one file of every snapshot's calls
# an unfinished ingest's progress, a finished ingest's record (wall time, calls and tokens by
# role) and a finished snapshot's mark, in each snapshot folder
# (benchmarks.runner.pipeline.INGEST_PROGRESS_FILE, INGEST_FILE and SNAPSHOT_DONE)
INGEST_PROGRESS = "ingest_progress.json"
INGEST_RECORD = "ingest.json"
SNAPSHOT_DONE = ".complete"
# A P-Mem state arm's snapshot: its store, its meta and its current cells as records
# (baselines.pmem_arms.state STORE_FILE, META_FILE and FRONTIER_FILE). The export keeps the meta
# and the cells, which is what Appendix F's write audit reads; the store stays behind.
PMEM_STORE = "store.sqlite"
PMEM_META = "state.json"
FRONTIER = "frontier"
# The writer models of the paper's labelled writer-scale rows (Appendix D's "35B extractor",
# Appendix F's writer scale), by exact model id, and the suffix their rows carry: a run with
# `writer=vllm35b` is reported as `<arm>_35b`.
WRITER_ROWS: dict[str, str] = {"Qwen/Qwen3.6-35B-A3B-FP8": "_35b"}
# The commit arm's patch writer. Its runs made before it routed by the model's own key (issue
# 14.2) have no `arm.routing` in their manifest: the generator's labels picked their cells, so
# they are rows of the oracle-routing variant (`LABEL_ROUTED`), never P-Mem's own commit row.
PATCH_COMMIT_ARM = "baselines.pmem_arms.commit.PatchCommitArm"
LABEL_ROUTED = "_label_routed"


class NoRuns(LookupError):
    """Nothing to load: no run folder, or none that the filter keeps."""


def arm_key(cfg: dict[str, Any]) -> str:
    """A run's row name: the arm's name, plus its writer when the run gives the write path a
    model of its own (`writer=<profile>`): `<arm>_35b` for the paper's 35B extractor (the rows
    of Appendix D), `<arm>@<model>` for any other writer, so the same arm with two writers is
    two rows and never one run hiding the other. A commit run from before routing by the
    model's key is a `<arm>_label_routed` row (`PATCH_COMMIT_ARM`)."""
    name = cfg["arm"]["name"]
    arm = cfg["arm"]
    if (
        arm.get("_target_") == PATCH_COMMIT_ARM
        and "routing" not in arm
        and not name.endswith(LABEL_ROUTED)
    ):
        name += LABEL_ROUTED
    writer = (cfg.get("writer") or {}).get("model")
    if not writer:
        return name
    return name + WRITER_ROWS.get(writer, f"@{writer}")


def is_scripted(cfg: dict[str, Any]) -> bool:
    """Whether the scripted dry-run server answered any of the run's models."""
    roles = (*PROFILE_ROLES, "writer")
    return any(
        ((cfg.get(role) or {}).get("server") or {}).get("_target_") == SCRIPTED_SERVER
        for role in roles
    )


def profile_of(cfg: dict[str, Any]) -> str:
    """The models (and revisions) behind a run's numbers, as one readable label: runs of one
    label are comparable; a table is built from one label only."""
    parts = []
    for role in PROFILE_ROLES:
        node = cfg.get(role) or {}
        model = node.get("model")
        if not model:
            continue
        revision = str(node.get("revision") or "")
        short = revision if len(revision) <= 24 else revision[:24] + "…"
        label = f"{model}@{short}" if short else str(model)
        parts.append(label if role == "llm" else f"{role} {label}")
    return ", ".join(parts) or "no model"


def case_count(cfg: dict[str, Any]) -> int | None:
    """How many cases the run was asked for (the benchmark's `cases` or `limit`, or `run.limit`):
    a 5-case check and a 140-case run of one arm are never one table's cells."""
    bench = cfg.get("benchmark") or {}
    for value in (bench.get("cases"), bench.get("limit"), (cfg.get("run") or {}).get("limit")):
        if value is not None:
            return int(value)
    return None


def run_folders(
    root: str | Path, experiment: str | None = None, run: str | None = None
) -> Iterator[tuple[str, Path]]:
    """(experiment, folder) of every finished run (one with a summary.json) under `root`, or
    of the one named `run`."""
    root = Path(root)
    parts = [glob.escape(p) if p else "*" for p in (experiment, run)]
    pattern = f"{parts[0]}/{parts[1]}/summary.json"
    for summary in sorted(root.glob(pattern)):
        yield summary.parent.parent.name, summary.parent


def jsonl_file(folder: Path, name: str) -> Path | None:
    """`<name>.jsonl` in a run folder, or else the export's `<name>.jsonl.gz`; None when there
    is neither."""
    plain, packed = folder / f"{name}.jsonl", folder / f"{name}.jsonl.gz"
    return plain if plain.exists() else packed if packed.exists() else None


def jsonl_text(folder: Path, name: str) -> str | None:
    """The text of `<name>.jsonl` in a run folder, or of the export's `<name>.jsonl.gz`; None
    when there is neither."""
    path = jsonl_file(folder, name)
    if path is None:
        return None
    if path.suffix == ".gz":
        return gzip.decompress(path.read_bytes()).decode("utf-8")
    return path.read_text(encoding="utf-8")


def frontier_cells(snapshot: Path) -> list[tuple[str, str]] | None:
    """A state snapshot's current cells as (key, value), in order of first arrival, from its
    frontier records (frontier.jsonl in a run folder, .jsonl.gz in the export); None when it
    has none. Every line is a cell: a damaged one raises rather than drop a cell."""
    text = jsonl_text(snapshot, FRONTIER)
    if text is None:
        return None
    records = map(json.loads, filter(str.strip, text.split("\n")))
    return [(r["key"], r["value"]) for r in records]


def frontiers(folder: Path) -> dict[str, list[tuple[str, str]]]:
    """Every snapshot's current cells by episode id (the snapshot's folder name)."""
    out = {}
    for snapshot in sorted(p for p in (folder / "snapshots").glob("*") if p.is_dir()):
        cells = frontier_cells(snapshot)
        if cells is not None:
            out[snapshot.name] = cells
    return out


def read_records(folder: Path, name: str) -> list[dict[str, Any]]:
    """A run's `<name>.jsonl` (or the export's `<name>.jsonl.gz`) as JSON; [] when it has none.
    Lines that are not records are skipped here (the runner sets them aside when it resumes); a
    record of a newer schema than this harness reads is refused (`SchemaError`, naming the
    file). `read_typed` gives the records as their types."""
    path = jsonl_file(folder, name)
    text = jsonl_text(folder, name)
    if path is None or text is None:
        return []
    out = []
    for line in text.split("\n"):  # not splitlines(): JSON lines end at \n only
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and "id" in record:
            schema_of(record, path)
            out.append(record)
    return out


def read_typed(folder: Path, name: str, kind: type[R]) -> list[R]:
    """A run's `<name>.jsonl` records (`read_records`) as `kind` (`Prediction`, `Score`,
    `Sample`)."""
    path = jsonl_file(folder, name)
    return [kind.from_json(r, path or folder / name) for r in read_records(folder, name)]


def read_json_record(path: Path, kind: type[R]) -> R:
    """A run's summary.json or manifest.json as its type (`Summary`, `Manifest`)."""
    data = json.loads(path.read_text())
    if not isinstance(data, dict):
        raise SchemaError(f"{path}: not a record (a JSON {type(data).__name__})")
    return kind.from_json(data, path)


def read_summary(folder: Path) -> Summary:
    return read_json_record(folder / "summary.json", Summary)


#: figures the runner writes after a benchmark's own, in this order (`summary_with`)
LATE_FIGURES = ("judge_audit", "failure_stages")


def summary_with(folder: Path, **figures: Any) -> str:
    """A run's summary.json text with `figures` set where the runner writes them: after the
    benchmark's own figures, `LATE_FIGURES` in their order; every other key, its order and the
    record's schema marker as they were. For figures derived from an exported run."""
    raw = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    summary = read_summary(folder)
    merged = {**summary.extra, **figures}
    late = {k: merged.pop(k) for k in LATE_FIGURES if k in merged}
    summary.extra = {**merged, **late}
    data = summary.to_json()
    if SCHEMA_KEY not in raw:  # a record from before versions: leave it as it was written
        data.pop(SCHEMA_KEY)
    return json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n"


def read_manifest(folder: Path) -> Manifest:
    return read_json_record(folder / "manifest.json", Manifest)


def _portable(value: Any) -> Any:
    """A benchmark setting as a table shows it: an absolute path (a folder of the machine the
    run was made on) by its file name, as `data` shows `benchmark.path`."""
    return Path(value).name if isinstance(value, str) and value.startswith("/") else value


def _run_columns(experiment: str, folder: Path, manifest: Manifest) -> dict[str, Any]:
    cfg = manifest.config
    return {
        "experiment": experiment,
        "run": folder.name,
        "arm": arm_key(cfg),
        "benchmark": cfg["benchmark"]["name"],
        **{k: _portable(v) for k, v in cfg["benchmark"].items() if k not in (*BENCH_META, "path")},
        # the data file a run read (`benchmark.path`, by its name: the path is this machine's;
        # None: the benchmark's default): runs on two files are two results, never one
        # superseding the other
        "data": Path(str(cfg["benchmark"]["path"])).name if cfg["benchmark"].get("path") else None,
        # the run's folder on this machine (what a report reads more from; never in a table)
        "folder": str(folder),
        "llm": cfg["llm"].get("model"),
        # a write path of its own (writer=<profile>); None: the llm profile also writes
        "writer": (cfg.get("writer") or {}).get("model"),
        "embedder": (cfg.get("embedder") or {}).get("model"),
        "profile": profile_of(cfg),
        "scripted": is_scripted(cfg),
        "cases": case_count(cfg),
    }


def summary_row(experiment: str, folder: Path) -> dict[str, Any]:
    """One run's row: its config, profile, size, scores (in %) and read size."""
    summary = read_summary(folder)
    manifest = read_manifest(folder)
    row = _run_columns(experiment, folder, manifest)
    row.update(
        {
            "n": summary.n,
            "expected": summary.expected,
            "complete": summary.complete,
            "started_at": manifest.started_at,
            "git_commit": manifest.git.get("commit") if manifest.git else None,
        }
    )
    # the judge's verdicts on planted answers (benchmarks/longmemeval/audit.py), when recorded
    if summary.extra.get("judge_audit") is not None:
        row["judge_audit"] = summary.extra["judge_audit"]
    # the wrong answers by the stage that lost them (benchmarks/runner/failures.py), when counted
    stages = summary.extra.get("failure_stages")
    if isinstance(stages, Mapping):
        row["stage.wrong"] = stages.get("wrong")
        for stage, count in (stages.get("by_stage") or {}).items():
            row[f"stage.{stage}"] = count
    read = summary.read or {}
    row["mean_chars"] = read.get("mean_chars")
    row["mean_tokens"] = read.get("mean_tokens")
    for key, value in (read.get("meta") or {}).items():
        row[f"meta.{key}"] = value
    for key, r in (summary.rates or {}).items():
        row[f"rate.{key}"] = 100 * r["rate"]
        row[f"rate.{key}.n"] = r["n"]
    for scorer, s in summary.scores.items():
        row[f"{scorer}.acc"] = 100 * s["accuracy"]
        row[f"{scorer}.lo"] = 100 * s["ci95"][0]
        row[f"{scorer}.hi"] = 100 * s["ci95"][1]
        row[f"{scorer}.n"] = s["n"]
        for metric, figure in s.items():
            if metric not in ("accuracy", "ci95", "n", "correct") and isinstance(figure, float):
                row[f"{scorer}.{metric}"] = 100 * figure
    return row


def load_summaries(
    root: str | Path = "runs", experiment: str | None = None, *, include_scripted: bool = False
) -> pd.DataFrame:
    """One row per finished run folder under `root` (of one experiment, or all).

    Scripted dry runs are left out unless `include_scripted`. Raises `NoRuns` when no row is
    left, saying what was there."""
    rows = [summary_row(exp, folder) for exp, folder in run_folders(root, experiment)]
    return _kept(rows, root, experiment, include_scripted)


def load_runs(
    root: str | Path = "runs",
    experiment: str | None = None,
    *,
    run: str | None = None,
    include_scripted: bool = False,
) -> pd.DataFrame:
    """One row per scored question of every finished run under `root` (per question read, for a
    run that only records reads: run.answer=false): the run's columns
    (experiment, run, arm, profile, benchmark settings), the question, golds and prediction,
    the read's size, one column per scorer field (``location.correct``, ``stale.stale``...),
    and, when the run kept a sample log, what the arm read (``context_text``,
    ``context_ids``) and every model call the question caused (``calls``). `run` names one run
    folder, to load its questions only."""
    rows = []
    for exp, folder in run_folders(root, experiment, run):
        columns = _run_columns(exp, folder, read_manifest(folder))
        predictions = {p.id: p for p in read_typed(folder, "predictions", Prediction)}
        # the last line per id wins
        samples = {s.id: s for s in read_typed(folder, "samples", Sample)}
        stages = {f.id: f for f in read_typed(folder, "stages", Failure)}
        scores = read_typed(folder, "scores", Score)
        if not scores and read_only(folder):  # run.answer=false: its questions are its reads
            scores = [Score(id=i) for i in predictions]
        for score in scores:
            pred = predictions.get(score.id) or Prediction(id=score.id, schema=0)
            row: dict[str, Any] = {
                **columns,
                "id": score.id,
                "episode": pred.episode,
                "question": pred.question,
                "golds": pred.golds,
                "prediction": pred.prediction,
                "context_chars": pred.context_chars,
                "context_tokens": pred.context_tokens,
                "context_meta": pred.context_meta,
                "question_meta": pred.meta,
            }
            for scorer, fields in score.scorers.items():
                if isinstance(fields, dict):
                    row.update({f"{scorer}.{k}": v for k, v in fields.items()})
            if stages:  # the benchmark attributes its failures: None for a right answer
                failure = stages.get(score.id)
                row["stage"] = failure.stage if failure else None
                row["stage_why"] = failure.why if failure else None
            sample = samples.get(score.id)
            if sample is not None:
                context: Mapping[str, Any] = sample.context or {}
                row["context_text"] = context.get("text")
                row["context_ids"] = context.get("ids")
                row["calls"] = sample.calls
            rows.append(row)
    return _kept(rows, root, experiment, include_scripted)


def read_only(folder: Path) -> bool:
    """Whether a run only recorded what its arm read (run.answer=false): nothing to score."""
    try:
        return bool(json.loads((folder / "summary.json").read_text()).get("read_only"))
    except (OSError, ValueError, AttributeError):
        return False


def ingest_calls(folder: Path) -> list[dict[str, Any]]:
    """The model calls a run's ingests made, each with its `snapshot` (episode): from the
    snapshots' calls.jsonl in a run folder, or the export's ingest_calls.jsonl.gz."""
    packed = folder / f"{INGEST_CALLS}.jsonl.gz"
    if packed.exists():
        lines = gzip.decompress(packed.read_bytes()).decode("utf-8").split("\n")
        return [json.loads(line) for line in lines if line.strip()]
    out = []
    for calls in sorted(folder.glob(f"snapshots/*/{CALLS_FILE}")):
        for line in calls.read_text(encoding="utf-8").split("\n"):
            if line.strip():
                out.append({"snapshot": calls.parent.name, **json.loads(line)})
    return out


def load_ingest(
    root: str | Path = "runs", experiment: str | None = None, *, include_scripted: bool = False
) -> pd.DataFrame:
    """One row per model call made while the runs' memories were built (the writer's chat calls
    with their messages and raw replies, the embedder's batches): the run's columns, the
    `snapshot` (episode) and the call's fields. Runs from before the sample log have none."""
    rows = []
    for exp, folder in run_folders(root, experiment):
        run = _run_columns(exp, folder, read_manifest(folder))
        rows += [{**run, **call} for call in ingest_calls(folder)]
    return _kept(rows, root, experiment, include_scripted)


def load_partial(root: str | Path = "runs", experiment: str | None = None) -> pd.DataFrame:
    """One row per unfinished run (no summary.json) that got somewhere: the run's columns, its
    `stage` and how far it got. "ingest": an ingest recorded its progress and has not finished
    (`benchmarks.runner.pipeline.INGEST_PROGRESS_FILE`, written by arms that ingest a long
    stream unit by unit): its units done of the stream, wall time and per-unit seconds and
    calls (``units``: paid and answered from the cache). "answer": every ingest finished and
    `answered` questions (of `expected`, the benchmark's limit when set) are answered. What a
    table shows for a run still going, or stopped; empty when there is none."""
    rows = []
    root = Path(root)
    pattern = f"{glob.escape(experiment) if experiment else '*'}/*/manifest.json"
    for manifest_path in sorted(root.glob(pattern)):
        folder = manifest_path.parent
        if (folder / "summary.json").exists():
            continue
        snapshots = [p for p in sorted(folder.glob("snapshots/*")) if p.is_dir()]
        running = [
            p / INGEST_PROGRESS
            for p in snapshots
            if (p / INGEST_PROGRESS).exists() and not (p / SNAPSHOT_DONE).exists()
        ]
        answered = len({r.get("id") for r in read_records(folder, "predictions")})
        if not running and not answered:
            continue
        manifest = read_json_record(manifest_path, Manifest)
        row = {
            **_run_columns(folder.parent.name, folder, manifest),
            "started_at": manifest.started_at,
            "episodes_done": sum((p / SNAPSHOT_DONE).exists() for p in snapshots),
            "stage": "ingest" if running else "answer",
            "answered": answered,
            "expected": manifest.config["benchmark"].get("limit"),
        }
        if running:
            record = json.loads(running[-1].read_text())
            row.update(
                snapshot=running[-1].parent.name,
                units_done=record["units_done"],
                units_total=record["units_total"],
                wall_s=record.get("wall_s"),
                units=record.get("units", []),
            )
        rows.append(row)
    return pd.DataFrame(rows)


def _kept(
    rows: list[dict[str, Any]], root: str | Path, experiment: str | None, include_scripted: bool
) -> pd.DataFrame:
    where = Path(root) / experiment if experiment else Path(root)
    if not rows:
        raise NoRuns(f"no finished runs under {where}")
    df = pd.DataFrame(rows)
    if not include_scripted:
        scripted = int(df["scripted"].sum())
        df = df[~df["scripted"]]
        if df.empty:
            raise NoRuns(
                f"no paper runs under {where}: only {scripted} row(s) of scripted dry runs, which "
                "never enter a paper table (--include-scripted on the command line, "
                "include_scripted=True in Python, loads them)"
            )
    return df.reset_index(drop=True)


def _pack(data: bytes, target: Path) -> None:
    """Write `data` gzipped; mtime=0: the same records give the same bytes, so a re-export
    changes nothing."""
    target.write_bytes(gzip.compress(data, compresslevel=9, mtime=0))


def _fresh(target: Path) -> Path:
    """An empty folder at `target`: a run's export replaces its earlier one whole, so no file
    of the earlier export (a partial run's progress record) outlives it."""
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    return target


def export_runs(
    root: str | Path, dest: str | Path, experiment: str, *, unfinished: bool = True
) -> list[Path]:
    """Copy an experiment's finished, non-scripted runs into `dest` (results/runs/) in the
    loader's layout: manifest.json and summary.json as they are, the records gzipped. What a
    clone needs to rebuild the tables and show per-sample drill-downs without the runs: the
    snapshots' stores stay behind; their ingest records come along, their calls in one
    ingest_calls.jsonl.gz, and a P-Mem state store's current cells and meta (frontier.jsonl.gz,
    state.json: what Appendix F's audit reads). An unfinished run with a recorded
    ingest progress (`load_partial`) is exported as its manifest and progress records, so a
    table built from the export shows how far it got; ``unfinished=False`` leaves such runs
    behind (a run stopped mid-way that should not have a row yet), and so a run that finished
    with questions unanswered (its summary says `complete: false`; rerunning it resumes).

    The export of a run replaces its earlier one whole (a partial run exported before it
    finished leaves no progress record behind); an unfinished run never replaces a finished
    run's export (the same config rerun here has not caught up with it yet)."""
    written = []
    for exp, folder in run_folders(root, experiment):
        if is_scripted(read_manifest(folder).config):
            continue
        # what the export needs of the summary, which it copies as it is: whether it is whole
        # (a summary that does not say is taken as whole)
        summary_file = folder / "summary.json"
        summary = json.loads(summary_file.read_text())
        schema_of(summary, summary_file)
        if not unfinished and not summary.get("complete", True):
            log.warning(
                "export: %s answered %s of its %s questions: left behind (finished only); "
                "rerun it to resume",
                folder,
                summary.get("n"),
                summary.get("expected"),
            )
            continue
        target = _fresh(Path(dest) / exp / folder.name)
        for name in ("manifest.json", "summary.json"):
            shutil.copyfile(folder / name, target / name)
        for name in EXPORTED:
            source = folder / f"{name}.jsonl"
            if source.exists():
                _pack(source.read_bytes(), target / f"{name}.jsonl.gz")
        # each history's ingest record (its usage and wall time: what a table's cost columns
        # read); the stores themselves stay behind
        for record in folder.glob(f"snapshots/*/{INGEST_RECORD}"):
            kept = target / "snapshots" / record.parent.name
            kept.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(record, kept / INGEST_RECORD)
        # a P-Mem store's current cells and its meta (what the write audit reads)
        for meta in folder.glob(f"snapshots/*/{PMEM_META}"):
            cells = meta.parent / f"{FRONTIER}.jsonl"
            if not cells.exists():
                if (meta.parent / PMEM_STORE).exists():
                    log.warning(
                        "export: %s has a store but no %s (a run from before it was written): "
                        "the write audit cannot be rebuilt from the export",
                        meta.parent,
                        cells.name,
                    )
                continue
            kept = target / "snapshots" / meta.parent.name
            kept.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(meta, kept / PMEM_META)
            _pack(cells.read_bytes(), kept / f"{FRONTIER}.jsonl.gz")
        calls = ingest_calls(folder)
        if calls:
            text = "".join(json.dumps(c, ensure_ascii=False, sort_keys=True) + "\n" for c in calls)
            _pack(text.encode("utf-8"), target / f"{INGEST_CALLS}.jsonl.gz")
        written.append(target)
    if not unfinished:
        return written
    for folder in map(Path, load_partial(root, experiment).get("folder", [])):
        if is_scripted(read_manifest(folder).config):
            continue
        target = Path(dest) / folder.parent.name / folder.name
        if (target / "summary.json").exists():
            log.warning(
                "export: %s is unfinished here; its finished export %s is kept", folder, target
            )
            continue
        _fresh(target)
        shutil.copyfile(folder / "manifest.json", target / "manifest.json")
        for snapshot in (p for p in folder.glob("snapshots/*") if p.is_dir()):
            kept = target / "snapshots" / snapshot.name
            for name in (INGEST_PROGRESS, INGEST_RECORD, SNAPSHOT_DONE):
                if (snapshot / name).exists():
                    kept.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(snapshot / name, kept / name)
        for name in ("predictions", "attempts"):
            source = folder / f"{name}.jsonl"
            if source.exists():
                _pack(source.read_bytes(), target / f"{name}.jsonl.gz")
        written.append(target)
    return written
