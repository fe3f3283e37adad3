"""Each harness command without its extra ends in one line, not a traceback: `pmem-results`,
`pmem-bench` and `python -m benchmarks.reports` run for real in a fresh interpreter whose
sitecustomize makes a module unimportable, as an installation without the extra leaves it.
The extra is read from the package's metadata (`benchmarks.extras`); a missing module that no
extra brings keeps its traceback."""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import extras
from benchmarks.extras import extras_of, missing_extra, run_cli

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = Path(sys.executable).parent  # the console scripts of this interpreter's environment

SITECUSTOMIZE = """\
import importlib.abc, os, sys

BLOCKED = set(os.environ["PMEM_TEST_BLOCK"].split(","))


class Unimportable(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, Unimportable())
"""


def without(block: str, command: list[str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """`command` run in `tmp_path` by an interpreter that cannot import `block`."""
    site = tmp_path / "site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(SITECUSTOMIZE)
    env = {k: v for k, v in os.environ.items() if k != "PMEM_DEBUG"}
    env |= {"PMEM_TEST_BLOCK": block, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}
    return subprocess.run(
        command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False
    )


def line(prog: str, module: str, extra: str = "harness") -> str:
    return (
        f"{prog}: needs the {extra} extra (missing module '{module}'): pip install 'pmem[{extra}]'"
    )


# name: (command, the module made missing, the program its line names); each with arguments
# that would do nothing harmful were the module there after all
COMMANDS = {
    "pmem-results": ([str(SCRIPTS / "pmem-results"), "list", "--runs", "runs"], "pandas", None),
    "pmem-bench": ([str(SCRIPTS / "pmem-bench"), "--help"], "pandas", None),
    "pmem-bench, no hydra": ([str(SCRIPTS / "pmem-bench"), "--help"], "hydra", "pmem-bench"),
    "python -m benchmarks.reports": (
        [sys.executable, "-m", "benchmarks.reports", "table6", "--runs", "runs", "--out", "out"],
        "pandas",
        None,
    ),
    "python -m benchmarks.results": (
        [sys.executable, "-m", "benchmarks.results", "list"],
        "pandas",
        "pmem-results",
    ),
    "python -m benchmarks.runner, no omegaconf": (
        [sys.executable, "-m", "benchmarks.runner", "--help"],
        "omegaconf",
        "pmem-bench",
    ),
}


@pytest.mark.parametrize("name", COMMANDS)
def test_a_command_without_its_extra_says_so_in_one_line(name: str, tmp_path: Path) -> None:
    command, module, prog = COMMANDS[name]
    if not Path(command[0]).exists():
        pytest.skip(f"{command[0]} is not installed in this environment")
    done = without(module, command, tmp_path)
    assert done.stderr.splitlines() == [line(prog or name, module)], done.stderr
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert not (tmp_path / "out").exists()


def test_a_module_no_extra_brings_keeps_its_traceback(tmp_path: Path) -> None:
    # pandas's own dependency: a broken installation, not a missing extra
    done = without("dateutil", [sys.executable, "-m", "benchmarks.results", "list"], tmp_path)
    assert done.returncode == 1 and "Traceback" in done.stderr
    assert "ModuleNotFoundError: No module named 'dateutil'" in done.stderr


def test_the_extras_are_read_from_the_package_metadata() -> None:
    assert extras_of("pandas") == ["harness"]
    assert extras_of("yaml.constructor") == ["harness"]  # pyyaml: its import name differs
    assert extras_of("hydra") == extras_of("faiss") == ["harness"]
    assert extras_of("mem0") == ["mem0"] and extras_of("igraph") == ["hipporag"]
    assert extras_of("openai") == ["harness", "memoryos"]
    assert extras_of("json") == extras_of("pmem") == extras_of("no_such_module") == []
    err = ModuleNotFoundError("No module named 'openai'", name="openai")
    assert missing_extra("pmem-bench", err) == line("pmem-bench", "openai")
    assert missing_extra("x", ModuleNotFoundError("no name")) is None


def test_a_checkout_never_installed_reads_pyproject(monkeypatch) -> None:
    def requires(name: str) -> list[str]:
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(extras.importlib.metadata, "requires", requires)
    assert extras_of("pandas") == ["harness"] and extras_of("torch") == ["hipporag"]


def needs_pandas() -> None:
    """A command that meets a missing extra while it runs (as an arm importing its peer)."""
    raise ModuleNotFoundError("No module named 'pandas'", name="pandas")


def test_run_cli_stops_only_for_a_missing_extra(monkeypatch, capsys) -> None:
    assert run_cli("p", "os.path:join", "a", "b") == os.path.join("a", "b")
    with pytest.raises(ModuleNotFoundError):  # no extra brings it: a bug, with its traceback
        run_cli("p", "no_such_module_here:main")
    with pytest.raises(SystemExit) as stop:
        run_cli("p", f"{__name__}:needs_pandas")
    assert stop.value.code == 2
    assert capsys.readouterr().err == line("p", "pandas") + "\n"
    monkeypatch.setenv("PMEM_DEBUG", "1")
    with pytest.raises(ModuleNotFoundError):
        run_cli("p", f"{__name__}:needs_pandas")
