"""A benchmark is one package plus one config: a dozen questions made here, outside the project,
get a run, a table and a report section without any file of the project naming them."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

PACKAGE = '''
"""Twelve facts about made-up items, one question each."""

from benchmarks.runner.types import Episode, Event, Question

PROMPT = "Facts:\\n{context}\\n\\nQuestion: {question}\\nAnswer with the value only."


class TinyBench:
    name = "tiny"
    wording = None

    def __init__(self, name: str = "tiny", questions: int = 12) -> None:
        self.questions = questions

    def episodes(self) -> list[Episode]:
        events = tuple(
            Event(f"e{i}", f"The colour of item{i} is shade{i}.") for i in range(self.questions)
        )
        questions = tuple(
            Question(f"tiny-q{i}", f"What is the colour of item{i}?", (f"shade{i}",))
            for i in range(self.questions)
        )
        return [Episode("tiny-0", events, questions)]

    def answer_messages(self, question: Question, context: str) -> list[dict[str, str]]:
        text = PROMPT.format(context=context, question=question.text)
        return [{"role": "user", "content": text}]

    def prompts(self) -> dict[str, str]:
        return {"answer": PROMPT}

    def fingerprint(self) -> dict[str, object]:
        return {"questions": self.questions}
'''

TABLES = '''
"""The tiny benchmark's one table."""

from benchmarks.reports.registry import Table


def tiny(df, runs, out):
    rows = df[["arm", "substring.n", "substring.acc"]].rename(
        columns={"substring.n": "n", "substring.acc": "accuracy"}
    )
    return "# Tiny: accuracy on twelve made-up facts\\n\\n" + rows.to_markdown(index=False)


TABLES = [Table("tiny", 1000, tiny, no_verdict="the paper has no tiny table")]
'''

CONFIG = """
name: tiny
_target_: tinybench.TinyBench
questions: 12
"""

PROJECT = [
    "benchmarks",
    "baselines",
    "configs",
    "pmem",
    "results",
    "Makefile",
    ".importlinter",
    "pyproject.toml",
]


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip())


def snapshot(root: Path) -> dict[str, float]:
    """Every project file with its modification time, to show that none changed."""
    out = {}
    for name in PROJECT:
        base = root / name
        paths = [base] if base.is_file() else base.rglob("*")
        for p in paths:
            if p.is_file() and "__pycache__" not in p.parts and ".pyc" not in p.suffixes:
                out[str(p)] = p.stat().st_mtime
    return out


def test_a_benchmark_added_as_one_package_and_one_config_runs_tables_and_reports(
    tmp_path: Path,
) -> None:
    root = Path(__file__).resolve().parents[1]
    before = snapshot(root)
    packages, configs = tmp_path / "packages", tmp_path / "configs"
    write(packages / "tinybench" / "__init__.py", PACKAGE)
    write(packages / "tinybench" / "tables.py", TABLES)
    write(configs / "benchmark" / "tiny.yaml", CONFIG)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(packages), str(root)])}

    def call(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, *args], capture_output=True, text=True, env=env, cwd=tmp_path,
            timeout=300,
        )  # fmt: skip

    runs, results = tmp_path / "runs", tmp_path / "results"
    run = call(
        "-m", "benchmarks.runner", "benchmark=tiny", "name=tiny", "arm=long_context",
        "llm=scripted", "embedder=none", "judge=none", "run.progress=false",
        f"run.root={runs}", f"hydra.searchpath=[file://{configs}]",
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    assert "12/12 questions answered" in run.stdout

    table = call(
        "-m", "benchmarks.reports", "tiny", "--runs", str(runs), "--out", str(results),
        "--include-scripted",
    )  # fmt: skip
    assert table.returncode == 0, table.stderr[-3000:]
    md = (results / "tables" / "tiny.md").read_text()
    assert md.startswith("# Tiny: accuracy on twelve made-up facts")
    assert "long_context" in md and "12" in md

    page = tmp_path / "report.html"
    report = call(
        "-m", "benchmarks.reports.html", "--runs", str(runs), "--results", str(results),
        "--out", str(page),
    )  # fmt: skip
    assert report.returncode == 0, report.stderr[-3000:]
    html = page.read_text()
    assert 'data-table="tiny"' in html
    assert "Tiny: accuracy on twelve made-up facts" in html
    assert "the paper has no tiny table" in html

    assert snapshot(root) == before, "adding a benchmark touched a file of the project"
