"""Write a Slurm sweep file (one pmem-bench override line per array task) and print the sbatch
command; `--dry-run` also prints every task's server and pmem-bench commands and checks that
every line composes, without a cluster.

    python scripts/slurm_sweep.py smoke experiment=smoke arm=long_context --dry-run
    python scripts/slurm_sweep.py t6 experiment=table6 arm=pmem_commit,raw_topk CASES=140

Comma-separated values expand to every combination, as in Hydra's multirun syntax.
"""

from __future__ import annotations

import argparse
import itertools
import shlex
import subprocess
import sys
from pathlib import Path

from hydra import compose, initialize_config_dir

from benchmarks.runner.cli import CONFIG_DIR, check_overrides

ROOT = Path(__file__).resolve().parents[1]
PROFILE = {"vllm": ["llm=vllm", "embedder=vllm", "judge=vllm"], "none": []}


def expand(overrides: list[str]) -> list[list[str]]:
    axes = []
    for item in overrides:
        key, sep, values = item.partition("=")
        if not sep:
            raise SystemExit(f"slurm_sweep: {item!r} is not KEY=VALUE")
        axes.append([f"{key}={v}" for v in values.split(",")])
    return [list(combo) for combo in itertools.product(*axes)]


def vllm_commands(serve: str) -> list[str]:
    script = f"source {ROOT / 'slurm/vllm_servers.sh'} && pmem_vllm_commands"
    out = subprocess.run(
        ["bash", "-c", script],
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": "/usr/bin:/bin", "PMEM_SERVE": serve},
    )
    return out.stdout.splitlines()


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("name", help="sweep name: slurm/sweeps/NAME.txt")
    p.add_argument("overrides", nargs="+", help="KEY=VALUE[,VALUE...] pmem-bench overrides")
    p.add_argument("--profile", choices=sorted(PROFILE), default="vllm")
    p.add_argument("--serve", default="chat,embed,judge", help="vLLM servers each task starts")
    p.add_argument("--dry-run", action="store_true", help="print everything, write nothing")
    args = p.parse_args()

    lines = [PROFILE[args.profile] + combo for combo in expand(args.overrides)]
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        for line in lines:
            check_overrides(line)
            compose(config_name="config", overrides=line)  # fails here, not on the cluster
    sweep = ROOT / "slurm" / "sweeps" / f"{args.name}.txt"
    sbatch = f"sbatch --array=0-{len(lines) - 1} slurm/sweep.sbatch {sweep.relative_to(ROOT)}"
    if args.dry_run:
        servers = vllm_commands(args.serve)
        for i, line in enumerate(lines):
            print(f"# task {i}")
            for command in servers:
                print(f"  {command} &")
            print(f"  pmem-bench {shlex.join(line)} run.progress=false")
        print(f"# {len(lines)} task(s) compose; would write {sweep.relative_to(ROOT)} and run:")
        print(sbatch)
        return 0
    sweep.parent.mkdir(parents=True, exist_ok=True)
    sweep.write_text("".join(shlex.join(line) + "\n" for line in lines))
    print(f"wrote {sweep.relative_to(ROOT)} ({len(lines)} tasks); submit with:\n{sbatch}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
