"""The cluster path, checked without a cluster: the job scripts parse, pick the servers their
profile uses, compose every run of their Hydra multirun (run.dry_run=true), stop and requeue on
Slurm's SIGTERM, and the submitit launcher activates the environment in the job."""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
VENV = Path(sys.prefix)  # the environment running the tests: the jobs activate it


def job_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """A shell outside Slurm: no SLURM_* variables, no server choice of the caller's."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "PMEM_", "CHAT_"))}
    env.update(PMEM_VENV=str(VENV), TMPDIR=str(tmp_path), **extra)
    return env


def dry_run(tmp_path: Path, script: str, *args: str, **extra: str) -> subprocess.CompletedProcess:
    env = job_env(tmp_path, PMEM_DRY_RUN="1", PMEM_DRY_ROOT=str(tmp_path / "runs"), **extra)
    return subprocess.run(
        ["bash", script, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )


def manifests(root: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted(root.glob("*/*/manifest.json"))]


@pytest.mark.parametrize(
    "script",
    [
        "slurm/job.sh",
        "slurm/vllm_servers.sh",
        "slurm/multirun.sbatch",
        "slurm/reproduce.sbatch",
        "benchmarks/longmemeval/reproduce.sh",
        "benchmarks/longmemeval/local.sh",
    ],
)
def test_job_scripts_parse(script: str) -> None:
    subprocess.run(["bash", "-n", str(ROOT / script)], check=True)


@pytest.mark.parametrize(
    ("overrides", "servers"),
    [
        ("llm=vllm embedder=vllm", "chat,embed"),
        ("llm=vllm embedder=vllm judge=vllm", "chat,embed,judge"),
        ("llm=vllm embedder=local writer=vllm35b", "chat,judge"),
        ("llm=vllm embedder=vllm llm=scripted embedder=scripted", ""),  # the last value counts
    ],
)
def test_a_job_starts_the_servers_its_profile_uses(
    tmp_path: Path, overrides: str, servers: str
) -> None:
    out = subprocess.run(
        ["bash", "-c", f"source slurm/job.sh && pmem_job_servers {overrides}"],
        cwd=ROOT,
        env=job_env(tmp_path),
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == servers


def test_multirun_job_composes_every_run_of_its_sweep(tmp_path: Path) -> None:
    fixture = "benchmarks/data/longmemeval/fixture.json"
    out = dry_run(
        tmp_path,
        "slurm/multirun.sbatch",
        "experiment=table9",
        "judge=vllm",
        f"benchmark.path={fixture}",
        "arm=pmem_turns,pmem_turns_gate_oracle",
    )
    assert out.returncode == 0, out.stdout + out.stderr
    text = out.stdout
    # the three servers, as they would be started on the node
    assert "would start: vllm serve Qwen/Qwen3-4B-Instruct-2507" in text
    assert "--runner pooling --hf-overrides '{\"is_matryoshka\": true}'" in text
    assert "would start: vllm serve Qwen/Qwen3.6-35B-A3B-FP8" in text
    assert "#1 : llm=vllm embedder=vllm experiment=table9 judge=vllm" in text
    assert "2 run(s) composed" in text
    runs = manifests(tmp_path / "runs")
    assert sorted(m["config"]["arm"]["name"] for m in runs) == [
        "pmem_turns",
        "pmem_turns_gate_oracle",
    ]
    assert {m["config"]["llm"]["model"] for m in runs} == {"Qwen/Qwen3-4B-Instruct-2507"}
    assert not list((tmp_path / "runs").glob("*/*/summary.json"))  # composed, nothing ran


def test_reproduce_job_runs_the_make_target_sweep(tmp_path: Path) -> None:
    table = ROOT / "results" / "tables" / "conflict.md"
    before = table.stat().st_mtime if table.exists() else None
    out = dry_run(tmp_path, "slurm/reproduce.sbatch", "conflict", CASES="1")
    assert out.returncode == 0, out.stdout + out.stderr
    text = out.stdout
    assert "would start: vllm serve Qwen/Qwen3-4B-Instruct-2507" in text
    assert "Qwen3.6-35B" not in text  # nothing in this table is judged
    assert "Launching 5 jobs locally" in text and "5 run(s) composed" in text
    assert "dry run: no table built: conflict" in text
    runs = manifests(tmp_path / "runs")
    assert len(runs) == 5
    assert {m["config"]["benchmark"]["cases"] for m in runs} == {1}
    assert {m["config"]["embedder"]["model"] for m in runs} == {"Qwen/Qwen3-Embedding-4B"}
    assert (table.stat().st_mtime if table.exists() else None) == before


def test_a_run_that_does_not_compose_fails_the_dry_run(tmp_path: Path) -> None:
    out = dry_run(tmp_path, "slurm/multirun.sbatch", "experiment=smoke", "arm=long_contxt")
    assert out.returncode != 0
    assert "did you mean 'long_context'" in out.stdout


def test_sigterm_stops_the_sweep_and_requeues_the_job(tmp_path: Path) -> None:
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "scontrol").write_text(f'#!/bin/sh\necho "$@" > {tmp_path}/scontrol\n')
    (fake / "scontrol").chmod(0o755)
    sweep = (
        f'trap "echo stopped > {tmp_path}/stopped; exit 0" TERM; '
        f"echo started > {tmp_path}/started; while :; do sleep 0.1; done"
    )
    job = f"source slurm/job.sh && pmem_job_run bash -c '{sweep}'; echo not-reached"
    env = job_env(tmp_path, SLURM_JOB_ID="4242")
    env["PATH"] = f"{fake}:{env['PATH']}"
    proc = subprocess.Popen(
        ["bash", "-c", job], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    deadline = time.monotonic() + 60
    while not (tmp_path / "started").exists():
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.1)
    proc.send_signal(signal.SIGTERM)  # what --signal=B:TERM@300 sends the batch shell
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 0
    assert (tmp_path / "stopped").read_text().strip() == "stopped"  # the sweep got SIGTERM
    assert (tmp_path / "scontrol").read_text().strip() == "requeue 4242"
    assert b"not-reached" not in stdout
    assert b"requeueing job 4242" in stderr


def test_the_submitit_launcher_activates_the_environment_in_the_job(tmp_path: Path) -> None:
    out = subprocess.run(
        [
            str(VENV / "bin" / "pmem-bench"),
            "hydra/launcher=slurm",
            "experiment=smoke",
            f"run.root={tmp_path}/runs",
            "--cfg",
            "all",
            "--resolve",
            "--package",
            "hydra.launcher",
        ],
        cwd=ROOT,
        env={**os.environ, "PMEM_VENV": "/opt/envs/pmem"},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    launcher = yaml.safe_load(out.stdout)
    # what each job's batch script runs before pmem-bench
    assert launcher["setup"] == [
        'cd "$SLURM_SUBMIT_DIR"',
        "export PMEM_VENV=/opt/envs/pmem",
        "export CHAT_MAX_LEN=32768",
        "source slurm/job.sh",
        "pmem_job_serve_servers none none none none",  # the local profile: no vLLM server
        "pmem_job_cache",  # the job's response cache on node-local disk
        "trap 'pmem_job_cache_save; pmem_stop_vllm' EXIT",
    ]
    assert launcher["submitit_folder"] == f"{tmp_path}/runs/slurm/submitit/%j"
    assert launcher["gpus_per_node"] == 1 and launcher["max_num_timeout"] >= 1


def test_stop_vllm_kills_a_server_that_ignores_sigterm(tmp_path: Path) -> None:
    """pmem_stop_vllm sends SIGTERM, waits PMEM_VLLM_STOP_TIMEOUT seconds, then SIGKILLs: a
    server stuck in shutdown must not hold the job open. A well-behaved one exits at once."""
    script = (
        "source slurm/vllm_servers.sh; "
        "bash -c 'trap \"\" TERM; while :; do sleep 0.1; done' & stuck=$!; "
        "bash -c 'while :; do sleep 0.1; done' & polite=$!; "
        "sleep 0.5; PMEM_VLLM_PIDS=($stuck $polite); start=$SECONDS; pmem_stop_vllm; "
        "echo took=$((SECONDS - start)); "
        "kill -0 $stuck 2>/dev/null && echo stuck-alive || echo stuck-gone; "
        "kill -0 $polite 2>/dev/null && echo polite-alive || echo polite-gone"
    )
    env = job_env(tmp_path, PMEM_VLLM_STOP_TIMEOUT="2", PMEM_SERVE="")
    out = subprocess.run(
        ["bash", "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert "stuck-gone" in out.stdout and "polite-gone" in out.stdout, out.stdout + out.stderr
    assert "SIGKILL" in out.stderr
    took = int(out.stdout.split("took=")[1].split()[0])
    assert 2 <= took <= 10, out.stdout


def test_the_single_revision_job_starts_its_rewriter(tmp_path: Path) -> None:
    """table6-single's rewrite step writes with the 35B (the Makefile's REWRITE_WRITER_vllm):
    the job must serve it, beside the reader and the embedder."""
    offline = "benchmarks/data/alfworld/single_revision_offline.jsonl"
    out = dry_run(tmp_path, "slurm/reproduce.sbatch", "table6-single", CASES="1", REWRITES=offline)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "would start: vllm serve Qwen/Qwen3.6-35B-A3B-FP8" in out.stdout
    assert "would start: vllm serve Qwen/Qwen3-4B-Instruct-2507" in out.stdout
    assert "dry run: no rewrite step" in out.stdout and "3 run(s) composed" in out.stdout


def test_the_peer_rows_are_tables_of_the_job(tmp_path: Path) -> None:
    out = dry_run(tmp_path, "slurm/reproduce.sbatch", "nonsense", CASES="1")
    assert out.returncode == 2 and "unknown table 'nonsense'" in out.stderr
    script = (ROOT / "slurm" / "reproduce.sbatch").read_text()
    for table in ("table7-peers", "table8-peers", "conflict-peers"):
        assert f"|{table}" in script and f"make reproduce-{table}" not in script


# vLLM's documented `vllm serve` arguments that the servers use (docs.vllm.ai, "serve args" and
# the CLI reference; --language-model-only: the multimodal models page, for Qwen3.5/3.6's
# text-only mode; --generation-config: `auto`, `vllm` or a folder)
DOCUMENTED = {
    "--host", "--port", "--gpu-memory-utilization", "--max-model-len", "--max-num-seqs",
    "--generation-config", "--runner", "--hf-overrides", "--language-model-only",
}  # fmt: skip
NEED_GB = {"chat": 24, "embed": 12, "judge": 64}


def server_lines(tmp_path: Path, gpu_gb: int, serve: str) -> subprocess.CompletedProcess:
    env = job_env(tmp_path, PMEM_GPU_MEM_GB=str(gpu_gb), PMEM_SERVE=serve)
    return subprocess.run(
        ["bash", "-c", "source slurm/vllm_servers.sh && pmem_vllm_commands"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip


def flags(line: str) -> dict[str, str | None]:
    words = line.split()[3:]  # after `vllm serve MODEL`
    out: dict[str, str | None] = {}
    for i, word in enumerate(words):
        if word.startswith("--"):
            value = (
                words[i + 1] if i + 1 < len(words) and not words[i + 1].startswith("--") else None
            )
            out[word] = value
    return out


@pytest.mark.parametrize(
    ("gpu_gb", "serve", "fits"),
    [
        (141, "chat,embed,judge", True),  # an H200 holds the paper's three
        (80, "chat,embed,judge", False),  # an H100 does not: refused before anything starts
        (80, "chat,embed", True),
        (80, "judge", True),  # the 35B on a card of its own
    ],
)
def test_the_servers_are_sized_from_the_gpus_memory(
    tmp_path: Path, gpu_gb: int, serve: str, fits: bool
) -> None:
    out = server_lines(tmp_path, gpu_gb, serve)
    if not fits:
        assert out.returncode != 0 and out.stdout == ""
        assert f"this GPU has {gpu_gb} GB" in out.stderr and len(out.stderr.splitlines()) == 1
        return
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    names = serve.split(",")
    assert len(lines) == len(names)
    shares, ports = [], []
    for name, line in zip(names, lines, strict=True):
        f = flags(line)
        assert set(f) <= DOCUMENTED, set(f) - DOCUMENTED
        share = float(f["--gpu-memory-utilization"] or 0)
        assert share * gpu_gb >= NEED_GB[name] - 0.01 * gpu_gb  # its weights and KV cache
        assert f["--generation-config"] == "vllm"
        shares.append(share)
        ports.append(f["--port"])
        if name == "embed":
            assert f["--max-model-len"] == "32768"  # Qwen3-Embedding-4B's own window
        if name == "judge":
            assert "--language-model-only" in f and int(f["--max-model-len"] or 0) >= 32768
        if name == "chat":
            assert int(f["--max-num-seqs"] or 0) >= 256
    assert sum(shares) <= 0.92
    assert len(set(ports)) == len(ports)


def test_the_servers_start_one_after_another(tmp_path: Path) -> None:
    """Each server starts only once the one before answers /health (vLLM sizes its cache from
    the memory free when it starts). A stand-in `vllm` records when it starts and answers
    /health after a second."""
    fake = tmp_path / "bin" / "vllm"
    fake.parent.mkdir()
    fake.write_text(
        "#!/usr/bin/env bash\n"
        'port=$(echo "$@" | sed "s/.*--port \\([0-9]*\\).*/\\1/")\n'
        f'echo "start $2 $(date +%s.%N)" >> {tmp_path}/log\n'
        "sleep 1\n"
        f'echo "healthy $2 $(date +%s.%N)" >> {tmp_path}/log\n'
        f'exec {sys.executable} -m http.server "$port" --bind 127.0.0.1 '
        f"--directory {tmp_path}/www >/dev/null 2>&1\n"
    )
    fake.chmod(0o755)
    (tmp_path / "www").mkdir()
    (tmp_path / "www" / "health").write_text("ok")  # GET /health: 200
    env = job_env(
        tmp_path, PATH=f"{fake.parent}:{os.environ['PATH']}", PMEM_SERVE="chat,embed,judge",
        PMEM_GPU_MEM_GB="141", PMEM_VLLM_LOGS=str(tmp_path / "logs"),
    )  # fmt: skip
    script = "source slurm/vllm_servers.sh && pmem_start_vllm && echo $PMEM_JUDGE_BASE_URL"
    out = subprocess.run(
        ["bash", "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stdout + out.stderr
    events = [line.split() for line in (tmp_path / "log").read_text().splitlines()]
    starts = [(e[1], float(e[2])) for e in events if e[0] == "start"]
    healthy = {e[1]: float(e[2]) for e in events if e[0] == "healthy"}
    assert [m for m, _ in starts] == ["Qwen/Qwen3-4B-Instruct-2507", "Qwen/Qwen3-Embedding-4B",
                                      "Qwen/Qwen3.6-35B-A3B-FP8"]  # fmt: skip
    for (before, _), (_, started) in itertools.pairwise(starts):
        assert started >= healthy[before], "a server started before the previous one answered"
    port = out.stdout.strip().rsplit(":", 1)[1].split("/")[0]
    assert port.isdigit() and int(port) > 1024


@pytest.mark.parametrize(
    ("overrides", "window", "servers"),
    [
        ("experiment=table6 llm=vllm embedder=vllm", "32768", "chat embed none none"),
        ("experiment=table4 llm=vllm embedder=vllm judge=vllm", "131072", "chat embed judge none"),
        (
            "experiment=table7 llm=vllm embedder=vllm writer=vllm35b",
            "32768",
            "chat embed none judge",
        ),
    ],
)
def test_a_submitit_job_serves_what_its_experiment_uses(
    tmp_path: Path, overrides: str, window: str, servers: str
) -> None:
    """The launcher's setup starts only the profile's servers, the long-context tables with the
    131k chat window."""
    out = subprocess.run(
        [
            str(VENV / "bin" / "pmem-bench"), "hydra/launcher=slurm", *overrides.split(),
            f"run.root={tmp_path}/runs", "--cfg", "all", "--resolve", "--package", "hydra.launcher",
        ],
        cwd=ROOT, env=job_env(tmp_path), capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    setup = yaml.safe_load(out.stdout)["setup"]
    assert f"export CHAT_MAX_LEN={window}" in setup
    assert f"pmem_job_serve_servers {servers}" in setup


def test_the_vllm_profile_keeps_a_gpu_server_busy() -> None:
    """256 requests in flight per server at the vllm profile's defaults (episodes at once and
    the endpoint's limit); the Appendix E timing run keeps the paper's 20."""
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf

    from benchmarks.runner.cli import CONFIG_DIR

    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        vllm = OmegaConf.to_container(
            compose(config_name="config", overrides=["experiment=table6", "llm=vllm"]),
            resolve=True,
        )
        e = OmegaConf.to_container(
            compose(config_name="config", overrides=["experiment=table11", "llm=vllm"]),
            resolve=True,
        )
    assert vllm["run"]["episode_concurrency"] >= 256 and vllm["llm"]["concurrency"] >= 256
    assert e["run"]["episode_concurrency"] == 20
