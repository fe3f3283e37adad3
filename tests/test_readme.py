"""The README is the front door: short, and every command and example in it works from a clean
clone. Make targets are dry-run (`make -n`, which composes every recipe without running it),
the Slurm job's tables are ones the job file takes, module commands answer `--help`, links lead
to files, and the Python examples run for real."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
MAX_LINES = 200


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README, re.S)


def commands() -> list[str]:
    """Every shell command the README gives: the lines of its bash blocks (comments cut) and
    the backticked `make …`, `python -m …` and `… sbatch …` commands of its tables and prose."""
    lines = [
        line.split("  #")[0].strip()
        for block in blocks("bash")
        for line in block.splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    spans = re.findall(r"`([^`\n]+)`", README)
    lines += [s for s in spans if s.startswith(("make ", "python -m ")) or " sbatch " in f" {s}"]
    return list(dict.fromkeys(lines))


def _variables() -> dict[str, str]:
    """The shell variables the README's commands use, as it defines them (`ALL="…"`), and a
    folder for the LongMemEval files."""
    found = dict(re.findall(r'`([A-Z]+)="([^"]*)"', README))
    return {"LME": "/tmp/pmem-readme-lme", **found}


def _split(command: str) -> tuple[dict[str, str], list[str]]:
    """(VAR=value assignments before the program, the program and its words), with the
    README's shell variables substituted."""
    variables = _variables()
    words = shlex.split(re.sub(r"\$(\w+)", lambda m: variables.get(m[1], m[0]), command))
    env = {}
    while words and re.fullmatch(r"[A-Z_]+=.*", words[0]):
        key, _, value = words.pop(0).partition("=")
        env[key] = value
    return env, words


def test_the_readme_is_short() -> None:
    assert len(README.splitlines()) <= MAX_LINES
    assert not re.search(r"\b20\d\d-\d\d-\d\d\b", README), "a dated entry"


def test_it_gives_every_paper_table_a_command() -> None:
    given = " ".join(commands())
    for table in ("table3", "table4", "table5", "table6", "table6-single", "table7",
                  "table7-peers", "table8", "table8-peers", "table9", "table10", "table11",
                  "conflict", "conflict-peers", "appendix-f", "growth"):  # fmt: skip
        assert f"reproduce-{table}" in given, f"no plain-vLLM command for {table}"
        assert re.search(rf"reproduce\.sbatch [\w -]*\b{table}\b", given), f"no sbatch for {table}"


def test_every_make_command_composes() -> None:
    makes = [c for c in commands() if _split(c)[1][:1] == ["make"]]
    assert len(makes) >= 10
    for command in makes:
        env, words = _split(command)
        if "&&" in words:
            words = words[: words.index("&&")]
        done = subprocess.run(
            ["make", "-n", *words[1:]], cwd=ROOT, env={**os.environ, **env},
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert done.returncode == 0, f"{command}: {done.stderr.strip()[-300:]}"


def test_every_sbatch_command_names_what_the_job_runs() -> None:
    job = (ROOT / "slurm/reproduce.sbatch").read_text(encoding="utf-8")
    accepted = set(re.search(r"\n\s+(table6\|[\w|-]+)\)", job)[1].split("|"))
    jobs = [c for c in commands() if "sbatch" in c]
    assert jobs
    for command in jobs:
        _, words = _split(command)
        script = words[words.index("sbatch") + 1]
        assert (ROOT / script).is_file(), command
        assert set(words[words.index(script) + 1 :]) <= accepted, command


def test_every_module_command_answers_help() -> None:
    modules = [c for c in commands() if " -m " in f" {c}" and "pip" not in c]
    assert modules
    for command in modules:
        _, words = _split(command)
        head = words[: next((i for i, w in enumerate(words) if w.startswith("-") and i > 2),
                            len(words))]  # fmt: skip
        done = subprocess.run(
            [sys.executable, *head[1:], "--help"], cwd=ROOT, capture_output=True, text=True,
            timeout=120,
        )  # fmt: skip
        assert done.returncode == 0, f"{command}: {done.stderr.strip()[-300:]}"


def test_the_results_command_lists_the_committed_runs() -> None:
    results = Path(sys.executable).with_name("pmem-results")
    if not results.exists():
        pytest.skip("pmem-results is not installed beside this interpreter")
    done = subprocess.run(
        [str(results), "list", "--runs", "results/runs"], cwd=ROOT, capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip
    assert done.returncode == 0 and "table6" in done.stdout, done.stderr[-300:]


def test_the_python_examples_run(tmp_path: Path) -> None:
    library, loader = blocks("python")
    library_run = subprocess.run(
        [sys.executable, "-c", library], cwd=tmp_path, capture_output=True, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=60,
    )  # fmt: skip
    assert library_run.returncode == 0, library_run.stderr
    assert library_run.stdout.splitlines()[0] == "$30k"
    assert "history: $50k (revoked)" in library_run.stdout
    loaded = subprocess.run(
        [sys.executable, "-c", loader + "\nprint(len(runs), len(questions))"], cwd=ROOT,
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert loaded.returncode == 0, loaded.stderr
    runs, questions = map(int, loaded.stdout.split()[-2:])
    assert runs > 100 and questions > 100


def test_every_link_leads_to_a_file() -> None:
    links = re.findall(r"\]\(([^)#]+)\)", README)
    assert links
    for link in links:
        assert link.startswith("http") or (ROOT / link).exists(), link


def test_its_figures_are_the_committed_ones() -> None:
    """The claim counts and Table 6's cells quoted are those of the committed results."""
    import pandas as pd

    from benchmarks.reports.names import display_name

    claims = pd.read_csv(ROOT / "results/tables/claims.csv")["verdict"].value_counts()
    quoted = re.search(r"\*\*(\d+) hold, (\d+) do\s+not, (\d+) are not run\*\*", README)
    assert quoted, "the README quotes the claims' verdicts"
    assert tuple(map(int, quoted.groups())) == (
        claims.get("holds", 0),
        claims.get("does not hold", 0),
        claims.get("not run", 0),
    )
    table6 = pd.read_csv(ROOT / "results/tables/table6.csv")
    ours = {(display_name(a), int(L)): acc
            for a, L, acc in zip(table6["arm"], table6["L"], table6["location.acc"],
                                 strict=True)}  # fmt: skip
    rows = re.findall(r"^\| ([^|]+) \| (\d+)[^|]*\| (\d+)[^|]*\| (\d+)[^|]*\| (\d+)[^|]*\|",
                      README.split("| arm | L=1")[1], re.M)  # fmt: skip
    assert len(rows) >= 4
    for arm, *cells in rows:
        for L, cell in zip((1, 2, 4, 8), cells, strict=True):
            assert round(ours[(arm.strip(), L)]) == int(cell), (arm, L)
