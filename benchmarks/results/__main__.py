"""`pmem-results` (or `python -m benchmarks.results`): look at runs without writing code.

The command itself is `benchmarks.results.cli` (its usage: ``pmem-results --help``). This module
is its entry point and imports nothing of the harness's extra: `entry` starts the command through
`benchmarks.extras.run_cli`, so without pandas it ends in one line that names the extra.
"""

from __future__ import annotations

import sys

from benchmarks.extras import run_cli


def main(argv: list[str] | None = None) -> int:
    """The command (`benchmarks.results.cli.main`): 0, or 2 with one line on stderr."""
    from benchmarks.results.cli import main as command

    return command(argv)


def entry() -> None:
    """The `pmem-results` command (a broken pipe, as from `| head`, is not an error)."""
    try:
        code = run_cli("pmem-results", "benchmarks.results.cli:main")
        sys.stdout.flush()
    except BrokenPipeError:  # `| head`: the reader has seen enough
        sys.stderr.close()
        code = 0
    raise SystemExit(code)


if __name__ == "__main__":
    entry()
