"""The harness's commands report a missing extra in one line, not a traceback.

`pip install pmem` is the library alone; `pmem-bench`, `pmem-results` and
`python -m benchmarks.reports` need the `harness` extra (and an arm of a peer system its own
extra). Each of those entry points imports its command through `run_cli`, which turns a
`ModuleNotFoundError` for a dependency of one of the package's extras into

    pmem-results: needs the harness extra (missing module 'pandas'): pip install 'pmem[harness]'

on stderr and exit status 2. Which extra a module belongs to is read from the package's own
metadata (`importlib.metadata.requires("pmem")`; in a checkout that was never installed,
pyproject.toml), so a dependency added to an extra is covered without a list kept here. A
missing module that belongs to no extra (a bug, not an installation) keeps its traceback, and
so does every one when PMEM_DEBUG is set.

Standard library only (checked by `make lint`): this module runs before the extras are known to
be there.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import os
import re
import sys
import tomllib
from pathlib import Path
from typing import Any

DISTRIBUTION = "pmem"
#: the extra the commands are part of: named for a module that several extras bring (openai)
COMMANDS_EXTRA = "harness"

#: import names of requirements whose distribution says otherwise, for when the distribution is
#: not installed (an installed one is asked: `importlib.metadata.packages_distributions`)
IMPORT_NAMES: dict[str, tuple[str, ...]] = {
    "hydra_core": ("hydra",),
    "pyyaml": ("yaml",),
    "faiss_cpu": ("faiss",),
    "mem0ai": ("mem0",),
    "memoryos_pro": ("memoryos",),
    "python_igraph": ("igraph",),
}

_REQUIREMENT = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[([^\]]*)\])?")
_EXTRA_MARKER = re.compile(r"""extra\s*==\s*["']([^"']+)["']""")


def _normal(name: str) -> str:
    """A distribution's or import's name as compared here (PEP 503, with underscores)."""
    return re.sub(r"[-_.]+", "_", name).lower()


def _requirements() -> list[tuple[str, str, list[str]]]:
    """(extra, distribution, the distribution's own extras) for every requirement of an extra."""
    try:
        lines = importlib.metadata.requires(DISTRIBUTION) or []
    except importlib.metadata.PackageNotFoundError:  # a checkout on sys.path, never installed
        pyproject = Path(__file__).resolve().parent.parent / "pyproject.toml"
        try:
            extras = tomllib.loads(pyproject.read_text())["project"]["optional-dependencies"]
        except (OSError, KeyError, tomllib.TOMLDecodeError):
            return []
        lines = [f'{req}; extra == "{extra}"' for extra, reqs in extras.items() for req in reqs]
    found = []
    for line in lines:
        requirement, _, marker = line.partition(";")
        extra = _EXTRA_MARKER.search(marker)
        match = _REQUIREMENT.match(requirement)
        if extra is None or match is None or _normal(match[1]) == DISTRIBUTION:
            continue  # a dependency of the library itself, or an extra naming others (peers)
        own = [_normal(e) for e in (match[2] or "").split(",") if e.strip()]
        found.append((extra[1], _normal(match[1]), own))
    return found


def _import_names(distribution: str, installed: dict[str, list[str]]) -> set[str]:
    """The top-level modules a distribution provides (as far as can be known without it)."""
    return {distribution, *IMPORT_NAMES.get(distribution, ()), *installed.get(distribution, ())}


def _extra_requirements(distribution: str, extra: str) -> set[str]:
    """The distributions an installed `distribution`'s `extra` requires (normalized)."""
    try:
        lines = importlib.metadata.requires(distribution) or []
    except importlib.metadata.PackageNotFoundError:
        return set()
    names = set()
    for line in lines:
        requirement, _, marker = line.partition(";")
        wanted = _EXTRA_MARKER.search(marker)
        match = _REQUIREMENT.match(requirement)
        if wanted is not None and match is not None and _normal(wanted[1]) == extra:
            names.add(_normal(match[1]))
    return names


def extras_of(module: str) -> list[str]:
    """The extras of `pmem` that bring `module` (a dotted name: its top level is looked up), in
    pyproject's order; [] for a module no extra provides."""
    top = _normal(module.partition(".")[0])
    installed: dict[str, list[str]] = {}
    for name, distributions in importlib.metadata.packages_distributions().items():
        for distribution in distributions:
            installed.setdefault(_normal(distribution), []).append(_normal(name))
    extras: list[str] = []
    for extra, distribution, own in _requirements():
        names = _import_names(distribution, installed)
        for own_extra in own:  # openai[aiohttp] brings aiohttp: ask openai, when it is there
            names |= _extra_requirements(distribution, own_extra)
        if top in names and extra not in extras:
            extras.append(extra)
    return extras


def missing_extra(prog: str, err: ModuleNotFoundError, prefer: str = COMMANDS_EXTRA) -> str | None:
    """The one line that says which extra `err`'s module comes with, or None when it comes with
    none. A module of several extras names `prefer` where it is one of them, else the first."""
    if not err.name:
        return None
    extras = extras_of(err.name)
    if not extras:
        return None
    extra = prefer if prefer in extras else extras[0]
    return (
        f"{prog}: needs the {extra} extra (missing module {err.name!r}): "
        f"pip install '{DISTRIBUTION}[{extra}]'"
    )


def run_cli(prog: str, target: str, /, *args: Any, **kwargs: Any) -> Any:
    """Import `target` ("package.module:function"), call it with `args` and `kwargs` and return
    what it returns; a module an extra provides that is missing, at import or while it runs,
    ends the process with one line on stderr and status 2 instead."""
    module, _, function = target.partition(":")
    try:
        return getattr(importlib.import_module(module), function)(*args, **kwargs)
    except ModuleNotFoundError as err:
        line = missing_extra(prog, err)
        if line is None or os.environ.get("PMEM_DEBUG"):
            raise
        print(line, file=sys.stderr)
        raise SystemExit(2) from None
