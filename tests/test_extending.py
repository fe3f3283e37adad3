"""docs/extending.md stays true: its worked arm, benchmark and model profile are taken from the
guide's marked blocks, written outside the project and run through the real harness (the
`pmem-bench` command, a subprocess) against OpenAI-compatible servers on 127.0.0.1; every other
command it gives names a make target, a module, a console script or a config that exists.

The guide places its files in the project (`baselines/keyword_recency.py`,
`configs/arm/keyword_recency.yaml`, ...); here each module goes into a folder of its own on
PYTHONPATH under its name without the project's package (`keyword_recency`, `paint`) and the
configs into a folder on `hydra.searchpath`, as the guide's "Outside the repository" says, so
no project file is touched.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml

from benchmarks.models.scripted import ScriptedServer
from benchmarks.runner.arm import MemoryArm
from benchmarks.runner.cli import GROUPS, choices

ROOT = Path(__file__).resolve().parents[1]
GUIDE = (ROOT / "docs" / "extending.md").read_text(encoding="utf-8")
FILE = re.compile(r"<!-- file: (\S+) -->\n```\w*\n(.*?)\n```", re.S)
RUN = re.compile(r"<!-- run: ([\w-]+) -->\n```bash\n(.*?)\n```", re.S)
BASH = re.compile(r"```bash\n(.*?)\n```", re.S)
PACKAGES = ("baselines", "benchmarks")
#: what an arm may not read: gold answers, labels, the benchmark's templates
FORBIDDEN = {"golds", "meta", "wording"}

FILES = dict(FILE.findall(GUIDE))
RUNS = dict(RUN.findall(GUIDE))


def module_of(path: str) -> str:
    return path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")


#: each module the guide adds -> its name outside the project
MODULES = {
    module_of(p): module_of(p).split(".", 1)[1]
    for p in FILES
    if p.endswith(".py") and p.split("/")[0] in PACKAGES
}


def relocate(text: str) -> str:
    for inside, outside in sorted(MODULES.items(), key=lambda kv: -len(kv[0])):
        text = re.sub(rf"\b{re.escape(inside)}\b", outside, text)
    return text


def command(line: str, *, root: Path, configs: Path) -> list[str]:
    """A guide's `pmem-bench` or `python -m` line as an argv: this interpreter, the run root and
    the config folder here, no progress bars; a reports command's --out moved under `root`."""
    argv = shlex.split(line.split("#")[0])
    if argv[0] == "pmem-bench":
        return [
            sys.executable, "-m", "benchmarks.runner", *argv[1:], "run.progress=false",
            f"run.root={root / 'runs'}", f"hydra.searchpath=[file://{configs}]",
        ]  # fmt: skip
    assert argv[:2] == ["python", "-m"], line
    argv = [sys.executable, *argv[1:], "--runs", str(root / "runs")]
    if "--out" in argv:
        argv[argv.index("--out") + 1] = str(root / "out")
    return argv


@pytest.fixture(scope="module")
def plugged(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The guide's files written outside the project: (root, configs, environment)."""
    root = tmp_path_factory.mktemp("extending")
    packages, configs = root / "packages", root / "configs"
    for path, text in FILES.items():
        first, rest = path.split("/", 1)
        target = (configs if first == "configs" else packages) / rest
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(relocate(text) + "\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(packages), str(ROOT)])}
    return {"root": root, "configs": configs, "env": env}


def call(argv: list[str], plugged: dict[str, Any], env: dict[str, str] | None = None) -> str:
    out = subprocess.run(
        argv, capture_output=True, text=True, cwd=plugged["root"], env=env or plugged["env"],
        timeout=120,
    )  # fmt: skip
    assert out.returncode == 0, f"{shlex.join(argv)}\n{out.stderr[-3000:]}"
    return out.stdout


def finished(folder: Path) -> dict[str, Any]:
    """A run folder's summary, after checking it is complete and every question was scored."""
    summary = json.loads((folder / "summary.json").read_text())
    scored = (folder / "scores.jsonl").read_text().splitlines()
    assert summary["complete"] and summary["n"] > 0, folder
    assert len(scored) == summary["n"], folder
    return summary


def test_the_guide_marks_an_arm_a_benchmark_and_a_profile() -> None:
    kinds = {p.split("/")[-2] for p in FILES if p.startswith("configs/")}
    assert {"arm", "benchmark", "llm"} <= kinds
    assert {"dry-run", "benchmark"} <= set(RUNS)
    for path, text in FILES.items():
        if path.startswith("configs/"):
            spec = yaml.safe_load(text)
            if "_target_" in spec:  # a component: its class is one the guide defines
                module, _, cls = spec["_target_"].rpartition(".")
                source = {module_of(p): t for p, t in FILES.items()}.get(module, "")
                assert re.search(rf"^class {cls}\b", source, re.M), spec["_target_"]


def test_the_worked_arm_is_a_memory_arm_that_reads_no_label(tmp_path: Path) -> None:
    (path,) = [p for p in FILES if p.startswith("baselines/")]
    tree = ast.parse(FILES[path])
    read = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    assert not read & FORBIDDEN, f"the arm reads {sorted(read & FORBIDDEN)}"
    file = tmp_path / "arm.py"
    file.write_text(FILES[path])
    spec = importlib.util.spec_from_file_location("guide_arm", file)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    arms = [v for v in vars(module).values() if isinstance(v, type) and v.__module__ == "guide_arm"]
    assert any(issubclass(a, MemoryArm) for a in arms)


@pytest.mark.parametrize("path", [p for p in FILES if p.endswith(".py")])
def test_the_guides_modules_pass_the_projects_lint(path: str) -> None:
    """As they would in the tree (`make lint`: ruff check, ruff format --check)."""
    for args in (["check"], ["format", "--check"]):
        out = subprocess.run(
            [sys.executable, "-m", "ruff", *args, "--stdin-filename", path, "-"],
            input=FILES[path] + "\n", capture_output=True, text=True, cwd=ROOT,
        )  # fmt: skip
        assert out.returncode == 0, f"{path}: {out.stdout}{out.stderr}"


def test_the_dry_run_gives_the_arm_a_scored_run_on_every_benchmark_and_a_table_row(
    plugged: dict[str, Any],
) -> None:
    (line,) = RUNS["dry-run"].splitlines()
    arm = yaml.safe_load(FILES["configs/arm/keyword_recency.yaml"])["name"]
    experiments = re.search(r"experiment=(\S+)", line)[1].split(",")  # type: ignore[index]
    root = plugged["root"] / "dry-run"
    call(command(line, root=root, configs=plugged["configs"]), plugged)
    runs = root / "runs"
    folders = sorted(runs.glob(f"*/{arm}__*"))
    assert len(folders) == len(experiments), folders
    benchmarks = {json.loads((f / "manifest.json").read_text())["config"]["benchmark"]["_target_"]
                  for f in folders}  # fmt: skip
    assert len(benchmarks) == len(experiments), "one benchmark per experiment"
    for folder in folders:
        finished(folder)

    listed = call(
        [sys.executable, "-m", "benchmarks.results", "list", "--include-scripted",
         "--runs", str(runs)], plugged,
    )  # fmt: skip
    assert arm in listed
    look = next(b for b in BASH.findall(GUIDE) if "pmem-results list" in b)
    (report,) = [x for x in look.splitlines() if "--include-scripted" in x and "reports" in x]
    call(command(report, root=root, configs=plugged["configs"]), plugged)
    table = shlex.split(report)[3]
    assert arm in (root / "out" / "tables" / f"{table}.md").read_text()


def test_the_worked_benchmark_runs_and_builds_its_table(plugged: dict[str, Any]) -> None:
    bench, report = RUNS["benchmark"].splitlines()
    name = re.search(r"\bname=(\w+)", bench)[1]  # type: ignore[index]
    arms = re.search(r"\barm=(\S+)", bench)[1].split(",")  # type: ignore[index]
    root = plugged["root"] / "benchmark"
    call(command(bench, root=root, configs=plugged["configs"]), plugged)
    sizes = {finished(f)["n"] for arm in arms for f in (root / "runs" / name).glob(f"{arm}__*")}
    assert len(sizes) == 1, "each arm answered every question of the benchmark"
    call(command(report, root=root, configs=plugged["configs"]), plugged)
    md = (root / "out" / "tables" / f"{name}.md").read_text()
    assert all(arm in md for arm in arms)


def test_the_worked_profile_reaches_an_openai_compatible_server(plugged: dict[str, Any]) -> None:
    (path,) = [p for p in FILES if p.startswith("configs/llm/")]
    profile = yaml.safe_load(FILES[path])
    block = next(b for b in BASH.findall(GUIDE) if f"llm={Path(path).stem}" in b)
    lines = [x for x in block.splitlines() if x.startswith("pmem-bench")]
    served = re.search(r"https?://[\w.]+:\d+/v1", block)[0]  # type: ignore[index]
    server_rules = yaml.safe_load((ROOT / "configs" / "server" / "scripted.yaml").read_text())
    rules = [[r'Reply with the JSON object \{"ok": true\}', '{"ok": true}'], *server_rules["rules"]]
    with ScriptedServer(rules, models=[profile["model"]], default="I do not know.") as server:
        env = {**plugged["env"], profile["base_url_env"]: server.base_url}
        for line in lines:
            line = line.replace(served, server.base_url)
            argv = command(line, root=plugged["root"] / "profile", configs=plugged["configs"])
            out = call(argv, plugged, env)
            assert re.search(r"(\d+)/\1 questions answered", out), out
            assert "100.0%" in out, "the smoke questions are answered from the arm's read"
        assert server.last_body()["model"] == profile["model"]


def test_every_command_of_the_guide_names_what_exists() -> None:
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    added = {(p.split("/")[1], Path(p).stem) for p in FILES if p.startswith("configs/")}
    lines = [x for b in BASH.findall(GUIDE) for x in b.splitlines()]
    lines += re.findall(r"`((?:make|python -m|pmem-bench|pmem-results) [^`]*)`", GUIDE)
    checked = set()
    for line in lines:
        line = line.split("#")[0].split("&&")[0].strip()
        argv = line.split()
        if not argv:
            continue
        if argv[0] == "make":
            args = [a for a in argv[1:] if not a.startswith("<") and "<" not in a]
            out = subprocess.run(["make", "-n", *args], cwd=ROOT, capture_output=True, text=True)
            assert out.returncode == 0, f"{line}: {out.stderr}"
        elif argv[:2] == ["python", "-m"]:
            if "<" in argv[2]:  # a placeholder: benchmarks.<name>
                continue
            assert importlib.util.find_spec(argv[2]) is not None, line
        elif argv[0] in ("pmem-bench", "pmem-results"):
            assert argv[0] in scripts, line
            for group, options in (a.split("=", 1) for a in argv[1:] if "=" in a):
                if group in GROUPS:
                    for option in options.split(","):
                        assert option in choices(group) or (group, option) in added, line
        else:
            continue
        checked.add(argv[0])
    assert {"make", "python", "pmem-bench", "pmem-results"} <= checked
