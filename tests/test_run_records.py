"""Run records under damage and contention: a bad line never deletes a good one (it is set aside
with its line number and only its question is answered again), and one runner per run folder
(a second stops at once, naming the first)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.runner.runs import JsonLines, RunFolder

BAD_LINES = {
    "garbage": b"{not json at all\n",
    "nul": b"\x00\x00\xff\xfe\x00\n",
    "empty object": b"{}\n",
    "array": b"[1, 2]\n",
}


def write_records(path: Path, ids: list[str]) -> list[bytes]:
    lines = [json.dumps({"id": i, "answer": f"a{i}"}).encode() + b"\n" for i in ids]
    path.write_bytes(b"".join(lines))
    return lines


def test_a_bad_line_in_the_middle_is_set_aside_and_the_rest_kept(tmp_path: Path) -> None:
    path = tmp_path / "predictions.jsonl"
    for name, bad in BAD_LINES.items():
        lines = write_records(path, [str(i) for i in range(40)])
        path.write_bytes(b"".join(lines[:20]) + bad + b"".join(lines[20:]))
        records = JsonLines(path, required=("id",)).read()
        assert [r["id"] for r in records] == [str(i) for i in range(40)], name
        assert path.read_bytes() == b"".join(lines), f"{name}: the bad line is out of the file"
        side = [
            json.loads(x)
            for x in path.with_name(path.name + ".rejected").read_text().split("\n")
            if x
        ]
        assert side[-1]["line"] == 21, name
        assert side[-1]["problem"].startswith(("not JSON", "not a record")), name
    assert len(side) == len(BAD_LINES)


def test_a_torn_last_line_is_set_aside_not_silently_cut(tmp_path: Path) -> None:
    path = tmp_path / "scores.jsonl"
    lines = write_records(path, ["a", "b"])
    path.write_bytes(b"".join(lines) + b'{"id": "c", "ans')
    assert [r["id"] for r in JsonLines(path, required=("id",)).read()] == ["a", "b"]
    (side,) = path.with_name("scores.jsonl.rejected").read_text().splitlines()
    assert json.loads(side)["line"] == 3 and '"id": "c"' in json.loads(side)["text"]
    JsonLines(path).append({"id": "c"})  # appends land on a clean line again
    assert [r["id"] for r in JsonLines(path).read()] == ["a", "b", "c"]


@settings(max_examples=60, deadline=None)
@given(
    ids=st.lists(st.text(min_size=1, max_size=8), max_size=30),
    bad=st.lists(st.tuples(st.integers(0, 30), st.sampled_from(sorted(BAD_LINES))), max_size=6),
)
def test_reading_loses_no_good_record_whatever_lines_are_damaged(
    tmp_path_factory, ids: list[str], bad: list[tuple[int, str]]
) -> None:
    path = tmp_path_factory.mktemp("jl") / "records.jsonl"
    lines = write_records(path, ids)
    mixed = list(lines)
    for at, name in sorted(bad, reverse=True):
        mixed.insert(min(at, len(mixed)), BAD_LINES[name])
    path.write_bytes(b"".join(mixed))
    records = JsonLines(path, required=("id",)).read()
    assert [r["id"] for r in records] == ids
    again = JsonLines(
        path, required=("id",)
    ).read()  # a second read finds nothing more to set aside
    assert again == records
    rejected = path.with_name(path.name + ".rejected")
    assert (len(rejected.read_text().splitlines()) if rejected.exists() else 0) == len(bad)


# -- through pmem-bench, as a user runs it --------------------------------------------------------


def bench(root: Path, *overrides: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmarks.runner",
            "experiment=smoke",
            "llm=scripted",
            f"run.root={root}",
            "run.progress=false",
            *overrides,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=root.parent,
    )


def run_dir(root: Path) -> Path:
    (folder,) = (root / "smoke").iterdir()
    return folder


def test_a_resumed_run_re_answers_only_the_damaged_line(tmp_path: Path) -> None:
    root = tmp_path / "runs"
    assert bench(root).returncode == 0
    predictions = run_dir(root) / "predictions.jsonl"
    lines = predictions.read_bytes().splitlines(keepends=True)
    damaged = json.loads(lines[2])["id"]
    predictions.write_bytes(b"".join(lines[:2]) + b"\x00garbage\n" + b"".join(lines[3:]))

    out = bench(root)
    assert out.returncode == 0, out.stderr
    assert "6/6 questions answered" in out.stdout
    assert "reader: 1 call (1 cached)" in out.stdout, "only the damaged question is asked again"
    ids = [json.loads(x)["id"] for x in predictions.read_text().splitlines()]
    assert sorted(ids) == sorted(json.loads(x)["id"] for x in lines) and ids[-1] == damaged
    side = (run_dir(root) / "predictions.jsonl.rejected").read_text().splitlines()
    assert [json.loads(x)["line"] for x in side] == [3]
    assert "line 3" in out.stdout + out.stderr + (run_dir(root) / "run.log").read_text()


def test_rescoring_a_damaged_file_keeps_every_good_prediction(tmp_path: Path) -> None:
    root = tmp_path / "runs"
    assert bench(root).returncode == 0
    predictions = run_dir(root) / "predictions.jsonl"
    lines = predictions.read_bytes().splitlines(keepends=True)
    predictions.write_bytes(b"".join(lines[:3]) + b"{}\n" + b"".join(lines[4:]))

    out = bench(root, "run.rescore=true")
    assert out.returncode == 0, out.stderr
    summary = json.loads((run_dir(root) / "summary.json").read_text())
    assert (summary["n"], summary["complete"]) == (5, False), "5 good records kept, 1 missing"
    assert "5/6 questions answered" in out.stdout and "rerun to resume" in out.stdout
    assert bench(root).returncode == 0  # a plain rerun answers the one that was lost
    assert json.loads((run_dir(root) / "summary.json").read_text())["n"] == 6


def test_a_second_runner_on_a_held_folder_stops_at_once_naming_the_first(tmp_path: Path) -> None:
    root = tmp_path / "runs"
    assert bench(root).returncode == 0
    folder = run_dir(root)
    before = (folder / "predictions.jsonl").read_bytes()
    with RunFolder(folder).lock():  # this test process is "the first runner"
        out = bench(root)
    assert out.returncode == 2
    (line,) = out.stderr.strip().splitlines()
    assert f"pid {os.getpid()} on {socket.gethostname()}" in line and str(folder) in line
    assert (folder / "predictions.jsonl").read_bytes() == before, "the second runner wrote nothing"
    assert bench(root).returncode == 0, "the lock is gone with its holder"


# -- provenance: the data a folder was made from, and one snapshot folder per episode ------------

FIXTURE = (
    Path(__file__).resolve().parents[1] / "benchmarks" / "data" / "longmemeval" / "fixture.json"
)


def lme(root: Path, data: Path, *overrides: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmarks.runner",
            "benchmark=longmemeval",
            f"benchmark.path={data}",
            "arm=long_context",
            "llm=scripted",
            f"run.root={root}",
            "run.progress=false",
            *overrides,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=root.parent,
    )


def answered_once(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A copy of the fixture, a run root, and the run folder of one finished question."""
    data = tmp_path / "longmemeval_s.json"
    data.write_bytes(FIXTURE.read_bytes())
    root = tmp_path / "runs"
    assert lme(root, data, "run.limit=1").returncode == 0
    (folder,) = (root / "adhoc").iterdir()
    return data, root, folder


def test_a_data_file_edited_in_place_is_refused_not_mixed_in(tmp_path: Path) -> None:
    data, root, folder = answered_once(tmp_path)
    manifest = (folder / "manifest.json").read_text()
    rows = json.loads(data.read_text())
    rows[0]["answer"] = "an edited gold"
    data.write_text(json.dumps(rows))

    out = lme(root, data, "run.limit=1")
    assert out.returncode == 2
    (line,) = out.stderr.strip().splitlines()
    assert str(folder) in line and "sha256" in line and "changed" in line
    assert (folder / "manifest.json").read_text() == manifest, "the manifest still tells the truth"


def test_episode_ids_that_read_alike_get_their_own_snapshots(tmp_path: Path) -> None:
    rows = json.loads(FIXTURE.read_text())[:2]
    rows[0]["question_id"], rows[1]["question_id"] = "user/1", "user_1"
    data = tmp_path / "longmemeval_s.json"
    data.write_text(json.dumps(rows))
    root = tmp_path / "runs"
    out = lme(root, data)
    assert out.returncode == 0, out.stderr
    (folder,) = (root / "adhoc").iterdir()
    snapshots = sorted(p.name for p in (folder / "snapshots").iterdir())
    assert len(snapshots) == 2 and "user_1" in snapshots
    events = {
        name: json.loads((folder / "snapshots" / name / "events.json").read_text())
        for name in snapshots
    }
    first, second = (events[n] for n in snapshots)
    assert [e["text"] for e in first] != [e["text"] for e in second], "each read its own history"


def test_snapshot_names_never_collide() -> None:
    from benchmarks.runner.pipeline import snapshot_name

    ids = ["user/1", "user_1", "user 1", "user:1", ".", "..", "a.b", "ü", "u", ""]
    names = [snapshot_name(i) for i in ids]
    assert len(set(names)) == len(ids)
    # plain ids keep their names, so existing snapshots are still found
    assert snapshot_name("user_1") == "user_1" and snapshot_name("fx_ku_1") == "fx_ku_1"
    assert all(n and not n.startswith(".") and "/" not in n for n in names)


def test_a_key_on_the_command_line_never_reaches_a_file(tmp_path: Path) -> None:
    root = tmp_path / "runs"
    secret = "sk-test-0123456789abcdef"
    out = bench(root, f"+llm.api_key={secret}")
    assert out.returncode == 0, out.stderr
    manifest = json.loads((run_dir(root) / "manifest.json").read_text())
    assert manifest["config"]["llm"]["api_key"] == "<redacted>"
    # the CPU it ran on: a CPU-served model's greedy replies depend on its vector instructions
    flags = Path("/proc/cpuinfo").read_text().split() if Path("/proc/cpuinfo").exists() else []
    assert manifest["machine"]["cores"] == os.cpu_count()
    assert ("avx2" in manifest["machine"].get("cpu_flags", [])) == ("avx2" in flags)
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert written and not [p for p in written if secret.encode() in p.read_bytes()]


def test_a_run_stopped_by_a_failing_model_records_what_it_paid(tmp_path: Path) -> None:
    from benchmarks.models.scripted import ScriptedServer

    root = tmp_path / "runs"
    with ScriptedServer(p_500=1.0, models=["scripted"]) as server:
        out = bench(
            root,
            "llm=openai",
            "llm.model=scripted",
            f"llm.base_url={server.base_url}",
            "llm.max_retries=2",
            "llm.backoff_s=0.01",
        )
    assert out.returncode == 2
    (line,) = out.stderr.strip().splitlines()
    assert "500" in line
    stopped = json.loads((run_dir(root) / "stopped.json").read_text())
    assert "ModelUnavailableError" in stopped["stopped"] or "ModelError" in stopped["stopped"]
    reader = stopped["usage"]["reader"]
    assert reader["retries"] >= 2 and reader["errors"] >= 1


def test_a_resumed_run_reports_what_its_earlier_attempts_paid(tmp_path: Path) -> None:
    """A resumed run's meter counts its last attempt only ("0 calls" after hours of ingest
    paid by the attempts before); every attempt, stopped or completed, is kept in
    attempts.jsonl and the summary and cost line say what the earlier ones paid."""
    from benchmarks.models.scripted import ScriptedServer

    root = tmp_path / "runs"
    common = ("llm=openai", "llm.model=scripted", "llm.max_retries=1", "llm.backoff_s=0.01")
    for _ in range(2):
        with ScriptedServer(p_500=1.0, models=["scripted"]) as server:
            assert bench(root, *common, f"llm.base_url={server.base_url}").returncode == 2
    with ScriptedServer(models=["scripted"]) as server:
        out = bench(root, *common, f"llm.base_url={server.base_url}")
    assert out.returncode == 0, out.stderr
    log = run_dir(root) / "attempts.jsonl"
    attempts = [json.loads(line) for line in log.read_text().splitlines()]
    assert [a["outcome"] for a in attempts] == ["stopped", "stopped", "completed"]
    # each attempt names its machine (a resumed run may span machine kinds)
    assert all(a["machine"]["cores"] == os.cpu_count() and "cpu" in a["machine"] for a in attempts)
    summary = json.loads((run_dir(root) / "summary.json").read_text())
    earlier = summary["earlier_attempts"]
    assert (earlier["n"], earlier["stopped"]) == (2, 2)
    errors = earlier["usage"]["reader"]["errors"]
    assert errors == sum(a["usage"]["reader"]["errors"] for a in attempts[:2]) and errors >= 2
    assert earlier["wall_s"] > 0
    paid = summary["usage"]["reader"]["calls"]  # this attempt's, as before
    assert paid > 0 and attempts[2]["usage"]["reader"]["calls"] == paid
    assert "before this attempt, 2 attempt(s) (2 stopped) paid: reader: " in out.stdout

    # a rerun of the finished run (answers from the folder, nothing paid) still says what the
    # attempt that completed it paid
    with ScriptedServer(models=["scripted"]) as server:
        again = bench(root, *common, f"llm.base_url={server.base_url}")
    summary = json.loads((run_dir(root) / "summary.json").read_text())
    assert summary["earlier_attempts"]["usage"]["reader"]["calls"] == paid
    assert "before this attempt, 3 attempt(s) (2 stopped) paid: reader: " in again.stdout


def test_a_run_answered_under_other_prompts_is_refused_not_mixed_in(tmp_path: Path) -> None:
    """The folder's name hashes the config, not the prompt texts: a prompt edited in the code
    would resume the folder and mix answers. The manifest records each prompt's sha256; here it
    says the reader's prompt was another one, as after a code change."""
    data, root, folder = answered_once(tmp_path)
    predictions = (folder / "predictions.jsonl").read_text()
    recorded = json.loads((folder / "manifest.json").read_text())
    answer_prompts = [name for name in recorded["prompts"] if not name.startswith("scorer.")]
    assert answer_prompts, recorded["prompts"]
    edited = dict(recorded, prompts={**recorded["prompts"], answer_prompts[0]: "0" * 64})
    (folder / "manifest.json").write_text(json.dumps(edited))

    out = lme(root, data, "run.limit=1")
    assert out.returncode == 2
    (line,) = out.stderr.strip().splitlines()
    assert str(folder) in line and answer_prompts[0] in line and "prompts" in line
    assert (folder / "predictions.jsonl").read_text() == predictions  # nothing lost or added
    assert json.loads((folder / "manifest.json").read_text()) == edited  # the record is kept


def test_a_changed_judge_prompt_does_not_stop_a_rescore(tmp_path: Path) -> None:
    """Scores are rewritten whole on every score stage, so a scorer's prompt mixes nothing."""
    data, root, folder = answered_once(tmp_path)
    recorded = json.loads((folder / "manifest.json").read_text())
    recorded["prompts"]["scorer.judge.template"] = "0" * 64
    (folder / "manifest.json").write_text(json.dumps(recorded))
    out = lme(root, data, "run.limit=1", "run.rescore=true")
    assert out.returncode == 0, out.stderr


def test_a_resumed_ingest_keeps_the_cost_its_units_had_when_paid(tmp_path: Path) -> None:
    """The progress record of a stopped ingest says what each unit cost; the rerun replays the
    units before the stop from the cache (paid 0) and must not overwrite those figures."""
    from benchmarks.models.chat import ChatModel
    from benchmarks.models.endpoint import Endpoint
    from benchmarks.runner.arm import Services
    from benchmarks.runner.pipeline import ProgressRecord

    path = tmp_path / "ingest_progress.json"

    def attempt(units: list[tuple[int, int]], total: int = 4) -> dict:
        writer = ChatModel(Endpoint("http://127.0.0.1:9/v1", "m"), "writer")  # never called
        record = ProgressRecord(path, Services(writer=writer))
        for done, (paid, cached) in enumerate(units, 1):
            writer.usage.calls += paid
            writer.usage.cache_hits += cached
            record(done, total)
        return json.loads(path.read_text())

    first = attempt([(5, 0), (6, 0)])  # stopped after unit 2
    assert first["units_done"] == 2 and [u["paid"] for u in first["units"]] == [5, 6]
    again = attempt([(0, 5), (0, 6), (7, 0), (4, 0)])  # 1-2 replayed, 3-4 paid
    assert again["units_done"] == 4 and again["usage"]["writer"]["calls"] == 11
    assert [(u["paid"], u["cached"]) for u in again["units"]] == [(5, 0), (6, 0), (7, 0), (4, 0)]
