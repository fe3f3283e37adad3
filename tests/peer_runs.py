"""The peer arms on the ALFWorld-Revision probes through `pmem-bench` (a subprocess, as a user
runs it), every model call answered by one scripted server on 127.0.0.1: the peer package's own
prompts by the test's script, the shared reader's answer prompt by `tests.alfworld_agent.Agent`.
Then the Table 8 / conflict builders over the run folders, as `make tables` builds them."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.models.scripted import ScriptedServer
from tests.alfworld_agent import Agent

READER_PROMPT = "You are given entries from a household agent's memory."


def with_reader(package: Callable[[dict[str, Any]], str]) -> Callable[[dict[str, Any]], str]:
    """A server script: the benchmark's answer prompt goes to the scripted agent (the answer is
    the destination of the last memory line about the object), everything else to `package`."""
    agent = Agent()

    def script(body: dict[str, Any]) -> str:
        text = str(body["messages"][-1]["content"])
        if text.startswith(READER_PROMPT):
            return agent.answer(text)
        return package(body)

    return script


def run_probe(root: Path, server: ScriptedServer, *overrides: str) -> Path:
    """One `pmem-bench` run against `server` (reader, writer and embedder); its run folder."""
    cmd = [
        sys.executable,
        "-m",
        "benchmarks.runner.cli",
        f"run.root={root}",
        "run.progress=false",
        "llm=openai",
        "llm.model=scripted",
        f"llm.base_url={server.base_url}",
        "embedder=scripted",
        f"embedder.base_url={server.base_url}",
        *overrides,
    ]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=root.parent)
    assert out.returncode == 0, out.stderr[-3000:]
    return Path(out.stdout.split("run folder: ", 1)[1].split()[0])


def build_table(root: Path, experiment: str, out: Path) -> str:
    """The experiment's table from the run folders (scripted runs let in, as the tests do)."""
    from benchmarks.reports.frame import collect
    from benchmarks.reports.registry import builders

    TABLES = builders()

    return TABLES[experiment](collect(root, experiment, include_scripted=True), root, out)


def table_row(markdown: str, arm: str) -> dict[str, str]:
    """One row of a markdown table (first column `arm`, printed by its display name), by its
    header."""
    from benchmarks.reports.names import display_name

    lines = [line for line in markdown.splitlines() if line.startswith("|")]
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    for line in lines[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        if cells[0] == display_name(arm):
            return dict(zip(header, cells, strict=True))
    raise AssertionError(f"no row {arm!r} in:\n{markdown}")
