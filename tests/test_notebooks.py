"""The notebooks run: every notebooks/*.ipynb executes top to bottom in a kernel of this venv
and shows its tables and figures.

Why: a notebook nobody executes rots silently (a renamed column, a moved module). Each is run
here with nbclient in the `python3` kernel, which jupyter_client starts with the interpreter
running the tests (the venv's), from the repository root, as a user's Jupyter would from
notebooks/ (the notebooks find the repository either way). The assertions are on the outputs a
reader sees: the builders' Markdown headings, DataFrames (text/html) naming arms by their
display names, and at least one figure (image/png) per notebook. A fresh clone has no runs, so
these run on whatever runs/ holds, else on the committed results: both must work.

The notebooks are committed executed (`make notebooks`), so GitHub shows their outputs; the
execution here starts from a fresh kernel and replaces every output, so what is stored never
stands in for what runs.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = {p.stem: p for p in sorted((REPO / "notebooks").glob("*.ipynb"))}

# What each notebook must show: text in its Markdown outputs (the builders' titles), text in its
# DataFrames' HTML (display names, the verdict column), and how many of each output it has.
EXPECTED: dict[str, dict[str, Any]] = {
    "alfworld": {
        "markdown": ["Table 6", "Table 8", "contest and resolve"],
        "html": ["P-Mem commit", "Raw top-10", "verdict", "recovered (paper)", "flagged before"],
        "tables": 5,
        "images": 1,
    },
    "factconsolidation": {
        "markdown": ["Table 7"],
        "html": ["P-Mem (state read)", "verdict", "cells, soft identity on", "survives_pct"],
        "tables": 5,
        "images": 1,
    },
    "longmemeval": {
        "markdown": ["read cost as the haystack grows"],
        "html": ["Long-context", "P-Mem, turn read", "tokens / added session"],
        "tables": 2,
        "images": 1,
    },
}
SECONDS = 90  # each runs in a few seconds; this only catches one that starts computing
LIMIT = 1_000_000  # bytes per stored notebook (its outputs included)


def execute(nb: Any) -> Any:
    """Run a notebook in the venv's python3 kernel from the repository root."""
    client = NotebookClient(
        nb, kernel_name="python3", timeout=120, resources={"metadata": {"path": str(REPO)}}
    )
    return client.execute()


def outputs(nb: Any, mime: str) -> list[str]:
    """Every output of `mime` in an executed notebook, as text."""
    found = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if mime in data:
                value = data[mime]
                found.append("".join(value) if isinstance(value, list) else value)
    return found


@pytest.fixture(scope="module")
def executed() -> dict[str, tuple[Any, float]]:
    runs = {}
    for name, path in NOTEBOOKS.items():
        started = time.monotonic()
        nb = execute(nbformat.read(path, as_version=4))
        runs[name] = (nb, time.monotonic() - started)
    return runs


def test_every_notebook_has_expectations() -> None:
    """A new notebook is tested too: it needs its line in EXPECTED (and table6.ipynb, folded
    into alfworld.ipynb, is gone)."""
    assert set(NOTEBOOKS) == set(EXPECTED)


def test_kernel_is_this_venv_and_imports_the_project() -> None:
    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell(
                "import sys, benchmarks\nprint(sys.executable)\nprint(benchmarks.__file__)"
            )
        ]
    )
    text = "".join(o.get("text", "") for o in execute(nb).cells[0].outputs)
    executable, module = text.split()
    assert Path(executable).resolve() == Path(sys.executable).resolve()
    assert Path(module).resolve().is_relative_to(REPO)


def test_notebooks_are_stored_executed() -> None:
    """Committed with their outputs, as `make notebooks` (scripts/execute_notebooks.py) writes
    them, since GitHub shows a notebook as stored: every code cell run once and in order,
    without an error, the figures inline, under LIMIT bytes, and nothing that differs between
    two executions of the same results (the cells' timings, the kernel's exact version, the
    path of the checkout that ran them)."""
    for name, path in NOTEBOOKS.items():
        nb = nbformat.read(path, as_version=4)
        nbformat.validate(nb)
        code = [cell for cell in nb.cells if cell.cell_type == "code"]
        assert [c.execution_count for c in code] == list(range(1, len(code) + 1)), name
        assert not [o for c in code for o in c.outputs if o.output_type == "error"], name
        assert outputs(nb, "image/png") and outputs(nb, "text/html"), name
        assert not [c for c in nb.cells if "execution" in c.metadata], name
        assert nb.metadata.get("language_info") == {"name": "python"}, name
        assert path.stat().st_size < LIMIT, f"{name}: {path.stat().st_size:,} bytes"
        assert str(REPO) not in path.read_text(), name


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_notebook_runs_and_shows_its_tables(
    name: str, executed: dict[str, tuple[Any, float]]
) -> None:
    nb, seconds = executed[name]
    expected = EXPECTED[name]
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o["output_type"] == "error"]
    assert not errors
    markdown = "\n".join(outputs(nb, "text/markdown"))
    for text in expected["markdown"]:
        assert text in markdown, f"{name}: no Markdown output with {text!r}"
    tables = [h for h in outputs(nb, "text/html") if "<table" in h]
    assert len(tables) >= expected["tables"], f"{name}: {len(tables)} tables"
    html = "\n".join(tables)
    for text in expected["html"]:
        assert text in html, f"{name}: no table shows {text!r}"
    images = outputs(nb, "image/png")
    assert len(images) >= expected["images"] and all(len(i) > 1000 for i in images)
    assert seconds < SECONDS, f"{name} took {seconds:.0f} s"
