"""Execute notebooks/*.ipynb in place: the committed files carry their outputs (make notebooks).

GitHub shows a notebook as stored: one committed without outputs shows code and no table or
figure. This runs each as tests/test_notebooks.py does (nbclient, the venv's `python3` kernel,
the repository root as the working directory) and writes it back with its outputs, the figures
inline, minus what changes on every execution: a cell's `metadata.execution` timestamps, and
the kernel's exact Python version (`metadata.language_info` is kept as the notebooks are
written: its name). Re-executing on unchanged results then changes nothing.

What the notebooks show is the committed results (results/), as a fresh clone shows them: a
runs/ folder holding finished runs of its own would enter the outputs, so this refuses to run
while there is one (`--with-runs` executes anyway, for a look of your own; do not commit that).
A notebook stored larger than LIMIT bytes is an error (an output meant to be a figure became a
dump): it is written, and its largest outputs are named.

    python scripts/execute_notebooks.py [NOTEBOOK ...] [--with-runs]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import nbformat
from nbclient import NotebookClient

REPO = Path(__file__).resolve().parents[1]
LIMIT = 1_000_000  # bytes per stored notebook


def finished_runs(root: Path) -> list[Path]:
    """Run folders with a summary.json under `root` (runs/: <experiment>/<run>/)."""
    return sorted(root.glob("*/*/summary.json")) if root.is_dir() else []


def execute(path: Path) -> Any:
    """`path` executed from the repository root, its volatile metadata taken out."""
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb,
        kernel_name="python3",
        timeout=120,
        resources={"metadata": {"path": str(REPO)}},
        record_timing=False,  # no metadata.execution timestamps
    )
    client.execute()
    for cell in nb.cells:  # nor any a save from Jupyter left
        cell.metadata.pop("execution", None)
    nb.metadata["language_info"] = {"name": "python"}
    return nb


def largest_outputs(nb: Any, n: int = 3) -> list[str]:
    """The `n` largest outputs, as "cell N: mime, size" lines."""
    sizes = []
    for i, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []):
            for mime, value in (out.get("data") or {"text": out.get("text", "")}).items():
                sizes.append((len(str(value)), f"cell {i}: {mime}"))
    return [f"{where}, {size:,} characters" for size, where in sorted(sizes, reverse=True)[:n]]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("notebooks", nargs="*", type=Path, help="default: notebooks/*.ipynb")
    p.add_argument("--with-runs", action="store_true", help="execute even if runs/ holds runs")
    args = p.parse_args(argv)
    own = finished_runs(REPO / "runs")
    if own and not args.with_runs:
        print(
            f"execute_notebooks: runs/ holds {len(own)} finished run(s) (e.g. "
            f"{own[0].parent.relative_to(REPO)}): the stored outputs would show them, not the "
            "committed results; move runs/ aside, or pass --with-runs for a look of your own",
            file=sys.stderr,
        )
        return 2
    paths = [p.resolve() for p in args.notebooks] or sorted((REPO / "notebooks").glob("*.ipynb"))
    too_big = False
    for path in paths:
        nb = execute(path)
        nbformat.write(nb, path)
        size = path.stat().st_size
        print(f"{path.relative_to(REPO) if path.is_relative_to(REPO) else path}: {size:,} bytes")
        if size > LIMIT:
            too_big = True
            print(f"  larger than {LIMIT:,} bytes; largest outputs:", file=sys.stderr)
            for line in largest_outputs(nb):
                print(f"    {line}", file=sys.stderr)
    return 1 if too_big else 0


if __name__ == "__main__":
    raise SystemExit(main())
