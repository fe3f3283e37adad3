"""The tables every benchmark contributes, found through the benchmarks' configs.

A benchmark package declares its tables in its own `tables` module (`TABLES`, a list of
`Table`). Nothing here names a benchmark: the packages are the ones the `_target_` of each
configs/benchmark/*.yaml lives in, and those the manifests of the runs being read name, so a
benchmark added as one package plus one config is on every table command and the report page.
"""

from __future__ import annotations

import functools
import importlib
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from benchmarks.reports.frame import Builder

__all__ = ["Table", "benchmark_packages", "builders", "claims_of", "table", "tables"]

CONFIGS = Path(__file__).resolve().parents[1] / "configs"
_TARGET = re.compile(r"^_target_:\s*([\w.]+)\s*$", re.MULTILINE)

#: (runs, experiment read, output folder) -> writes the table (an audit of another table's runs)
AuditWriter = Callable[[Path, str, Path], Any]
#: (runs, table name, profile) -> the rows of runs still going, labelled as such
PartialFrame = Callable[[Path, str, str | None], pd.DataFrame]
#: (the table's csv frame, the .png path) -> draws the figure (and its .svg)
Drawing = Callable[[pd.DataFrame, Path], None]
#: (the table's run frame, its parsed Markdown blocks) -> the cells the page judges
CellReader = Callable[[pd.DataFrame, list[Any]], list[Any]]


@dataclass(frozen=True, slots=True)
class Table:
    """One table of a benchmark: how it is built and how the report page shows it."""

    name: str  # the experiment whose runs it reads, and its file name under results/tables
    order: int  # its place on the report page (the paper's order)
    build: Builder | None = None
    #: an audit written from another experiment's runs (`reads`) by its own command
    audit: AuditWriter | None = None
    reads: str | None = None
    partial: PartialFrame | None = None  # runs still going shown as labelled rows
    figure: Drawing | None = None  # the committed figure drawn from results/tables/<name>.csv
    cells: CellReader | None = None  # our k of n beside the paper's figure, for the page
    no_verdict: str | None = None  # why the page judges none of its cells
    #: what runs it (the report names it where the table has no runs); default
    #: `make reproduce-<name>`, underscores as dashes
    command: str | None = None

    @property
    def experiment(self) -> str:
        return self.reads or self.name

    @property
    def reproduce(self) -> str:
        return self.command or f"make reproduce-{self.name.replace('_', '-')}"


@functools.cache
def _config_targets(configs: Path) -> list[str]:
    return [  # read once: the configs do not change while a process runs
        target
        for path in sorted((configs / "benchmark").glob("*.yaml"))
        for target in _TARGET.findall(path.read_text(encoding="utf-8"))
    ]


def _run_targets(runs: Path) -> list[str]:
    found = []
    for manifest in sorted(runs.glob("*/*/manifest.json")):
        try:
            target = json.loads(manifest.read_text(encoding="utf-8"))["config"]["benchmark"]
        except (OSError, ValueError, KeyError, TypeError):
            continue  # a damaged manifest names no benchmark; the loaders say what is wrong
        if isinstance(target, dict) and isinstance(target.get("_target_"), str):
            found.append(target["_target_"])
    return found


@functools.cache
def _package_of(target: str) -> str | None:
    """The package a benchmark class lives in, or None when it cannot be imported here."""
    module = target.rpartition(".")[0]
    try:
        imported = importlib.import_module(module)
    except ImportError:
        return None
    return imported.__package__ or module


#: packages found through runs read earlier in this process: a page built from a user's runs
#: keeps their benchmarks for every later lookup
_FROM_RUNS: dict[str, None] = {}


def benchmark_packages(runs: Iterable[Path] = (), configs: Path = CONFIGS) -> list[str]:
    """The packages of the configured benchmarks, then of those runs read so far name."""
    for target in (t for r in runs for t in _run_targets(Path(r))):
        if package := _package_of(target):
            _FROM_RUNS[package] = None
    packages = [_package_of(t) for t in _config_targets(configs)]
    return list(dict.fromkeys([*(p for p in packages if p), *_FROM_RUNS]))


@functools.cache
def _declared(package: str, module: str, name: str) -> tuple[Any, ...]:
    """`<package>.<module>.<name>` as a tuple, or () when the package has no such module."""
    try:
        found = importlib.import_module(f"{package}.{module}")
    except ModuleNotFoundError as err:
        if err.name != f"{package}.{module}":
            raise
        return ()
    return tuple(getattr(found, name, ()))


def _tables_of(package: str) -> tuple[Table, ...]:
    return _declared(package, "tables", "TABLES")


def claims_of(package: str) -> tuple[Any, ...]:
    """The paper's claims a benchmark checks (`<package>.claims.CLAIMS`), or none."""
    return _declared(package, "claims", "CLAIMS")


def tables(runs: Iterable[Path] = ()) -> dict[str, Table]:
    """Every benchmark's tables by name, in the report's order."""
    found: dict[str, Table] = {}
    for package in benchmark_packages(runs):
        for t in _tables_of(package):
            if t.name in found and found[t.name] is not t:
                raise ValueError(f"two benchmarks declare a table named {t.name!r}")
            found[t.name] = t
    return dict(sorted(found.items(), key=lambda item: (item[1].order, item[0])))


def table(name: str, runs: Iterable[Path] = ()) -> Table | None:
    """A table by name; the manifests under `runs` are read only for a name no benchmark known
    so far declares."""
    return tables().get(name) or tables(runs).get(name)


def builders(runs: Iterable[Path] = ()) -> dict[str, Builder]:
    """Each table built from runs: name -> (run frame, runs, output folder) -> Markdown."""
    return {name: t.build for name, t in tables(runs).items() if t.build is not None}
