"""Bad settings are refused before any work, each with one line naming the key, the value and
what is allowed: no traceback, no hang, nothing accepted that means something else."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.runner.settings import MODEL_RULES, RUN_RULES, SettingError, check_settings

BAD = [
    ("run.limit=abc", "run.limit='abc': must be a whole number >= 1"),
    ("run.limit=-2", "run.limit=-2: must be a whole number >= 1"),
    ("run.limit=0", "run.limit=0: must be a whole number >= 1"),
    ("run.episode_concurrency=0", "run.episode_concurrency=0: must be a whole number >= 1"),
    ("run.episode_concurrency=abc", "run.episode_concurrency='abc': must be a whole number"),
    ("run.rescore=maybe", "run.rescore='maybe': must be true or false"),
    ("run.answer=1", "run.answer=1: must be true or false"),
    ("run.progress=yes", "run.progress='yes': must be true or false"),
    ("llm.concurrency=0", "llm.concurrency=0: must be a whole number >= 1"),
    ("llm.max_retries=-1", "llm.max_retries=-1: must be a whole number >= 0"),
    ("llm.temperature=hot", "llm.temperature='hot': must be a number >= 0 and <= 2"),
    ("llm.timeout_s=0", "llm.timeout_s=0: must be a number >= 0.001 and <= 86400"),
    ("llm.max_tokens=2.5", "llm.max_tokens=2.5: must be a whole number >= 1"),
    ("run.root=''", "run.root='': must be a non-empty path or name"),
    ("benchmark.episodes=abc", "benchmark.episodes='abc': must be a whole number >= 1"),
    ("benchmark.seed=1.5", "benchmark.seed=1.5: must be a whole number"),
    # finite and in range: a value no client or arm can use is refused before it reaches one
    ("llm.timeout_s=1e309", "llm.timeout_s=inf: must be a number >= 0.001 and <= 86400"),
    ("llm.timeout_s=nan", "llm.timeout_s=nan: must be a number >= 0.001 and <= 86400"),
    ("llm.connect_timeout_s=1e12", "llm.connect_timeout_s=1000000000000.0: must be a number"),
    ("llm.backoff_max_s=-1", "llm.backoff_max_s=-1: must be a number >= 0 and <= 86400"),
    ("llm.temperature=5", "llm.temperature=5: must be a number >= 0 and <= 2, or null"),
    ("run.root=/proc/pmem-runs", "run.root=/proc/pmem-runs: cannot write in /proc"),
]

# settings of the benchmarks, through the experiments that use them
BENCHMARK_BAD = [
    ("experiment=table6", "benchmark.cases=abc", "benchmark.cases='abc': must be a whole number"),
    ("experiment=table6", "benchmark.cases=-5", "benchmark.cases=-5: must be a whole number >= 1"),
    ("experiment=table6", "benchmark.distractors=-1", "benchmark.distractors=-1: must be"),
    ("experiment=table6", "benchmark.L=3", "AlfworldRevision: L=3 is not supported"),
    ("experiment=table6", "+benchmark.colour=red", "AlfworldRevision: AlfworldRevision.__init__"),
    ("experiment=table7", "benchmark.limit=abc", "benchmark.limit='abc': must be a whole number"),
    ("experiment=table7", "benchmark.source=sh_7k", "FactConsolidation: unknown FactConsolidation"),
    ("experiment=table3", "benchmark.sessions=abc", "benchmark.sessions='abc': must be"),
    ("experiment=table6", "arm=raw_topk arm.k=abc", "arm.k='abc': must be a whole number >= 1"),
    ("experiment=table7", "arm=raw_facts_tags arm.tags=maybe", "arm.tags='maybe': must be true"),
]


@pytest.mark.parametrize(("experiment", "override", "message"), BENCHMARK_BAD)
def test_a_bad_benchmark_setting_is_one_line(
    experiment: str, override: str, message: str, tmp_path: Path
) -> None:
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmarks.runner",
            experiment,
            *override.split(),
            "llm=scripted",
            "embedder=scripted",
            "judge=scripted",
            f"run.root={tmp_path / 'runs'}",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert out.returncode == 2, out.stdout + out.stderr
    (line,) = out.stderr.strip().splitlines()
    assert line.startswith(f"pmem-bench: error: {message}"), line


@pytest.mark.parametrize(("override", "message"), BAD)
def test_a_bad_setting_is_one_line_naming_the_key(
    override: str, message: str, tmp_path: Path
) -> None:
    root = [] if override.startswith("run.root") else [f"run.root={tmp_path / 'runs'}"]
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmarks.runner",
            "experiment=smoke",
            "llm=scripted",
            "run.progress=false",
            *root,
            override,
        ],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert out.returncode == 2, out.stdout + out.stderr
    (line,) = out.stderr.strip().splitlines()
    assert line.startswith(f"pmem-bench: error: {message}"), line
    assert not (tmp_path / "runs" / "smoke").exists(), "refused before any run folder was made"


def test_good_values_pass_and_null_only_where_allowed() -> None:
    good = {
        "run": {"limit": None, "episode_concurrency": 2, "rescore": False, "root": "runs"},
        "llm": {"model": "m", "concurrency": 1, "max_retries": 0, "temperature": 0.7},
    }
    check_settings(good)
    with pytest.raises(SettingError, match=r"^run.episode_concurrency=None: must be set$"):
        check_settings({"run": {"episode_concurrency": None}})
    # a profile with no model (embedder=none) is not checked: it is never called
    check_settings({"embedder": {"model": None, "concurrency": 0}})
    assert set(RUN_RULES) >= {"limit", "episode_concurrency", "rescore"}
    assert set(MODEL_RULES) >= {"concurrency", "max_retries", "temperature"}


def pmem_bench(tmp_path: Path, *overrides: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "benchmarks.runner", "run.progress=false", *overrides],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )


def test_unusable_paths_and_data_are_one_line_naming_the_file(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.touch()
    shipped = Path(__file__).resolve().parents[1] / "benchmarks" / "data" / "memoryagentbench"
    cut = tmp_path / "cut.json.gz"
    cut.write_bytes((shipped / "Conflict_Resolution.json.gz").read_bytes()[:5000])
    cases = [
        (
            ["experiment=smoke", "llm=scripted", f"run.root={blocker}/runs"],
            f"run.root={blocker}/runs: {blocker} is a file, not a folder",
        ),
        (
            [
                "experiment=smoke",
                "llm=scripted",
                f"run.root={tmp_path}/runs",
                f"run.cache={blocker}/cache.sqlite",
            ],
            f"run.cache={blocker}/cache.sqlite: cannot open the response cache",
        ),
        (
            [
                "experiment=table7",
                "llm=scripted",
                "embedder=scripted",
                f"run.root={tmp_path}/r",
                f"benchmark.path={cut}",
            ],
            f"{cut}: not a readable FactConsolidation file",
        ),
    ]
    for overrides, message in cases:
        out = pmem_bench(tmp_path, *overrides)
        assert out.returncode == 2, out.stderr
        (line,) = out.stderr.strip().splitlines()
        assert line.startswith(f"pmem-bench: error: {message}"), line


@pytest.mark.skipif(
    importlib.util.find_spec("mem0") is not None, reason="the mem0 extra is installed"
)
def test_a_missing_peer_extra_is_one_line_with_the_install_command(tmp_path: Path) -> None:
    out = pmem_bench(
        tmp_path,
        "experiment=table7",
        "arm=mem0",
        "llm=scripted",
        "embedder=scripted",
        "run.limit=1",
        f"run.root={tmp_path}/runs",
    )
    assert out.returncode == 2
    (line,) = out.stderr.strip().splitlines()
    assert "make setup-peers PEERS=mem0" in line and "Traceback" not in out.stdout
    assert "rerun the same command to resume" not in out.stdout + out.stderr


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"\xff\xfe\x00garbage", "not UTF-8 text (byte 0)"),
        (b'{"case_id": 5, "rewrite": "x"}\n', "'case_id' and 'rewrite' are text"),
        (b'{"case_id": "a", "rewrite": "x"}\n{"case_id": "a", "rewrite": "y"}\n', "'a' again"),
    ],
)
def test_a_bad_rewrites_file_is_one_line_naming_it(
    tmp_path: Path, content: bytes, message: str
) -> None:
    rewrites = tmp_path / "rewrites.jsonl"
    rewrites.write_bytes(content)
    out = subprocess.run(
        [sys.executable, "-m", "benchmarks.runner", "experiment=table6_single", "llm=scripted",
         "embedder=scripted", "run.progress=false", f"run.root={tmp_path / 'runs'}",
         f"benchmark.rewrites={rewrites}"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    assert out.returncode == 2, out.stderr[-1500:]
    (line,) = out.stderr.strip().splitlines()
    assert line.startswith(f"pmem-bench: error: {rewrites}") and message in line, line
