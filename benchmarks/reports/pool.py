"""One experiment's runs from several roots, read by the table builders as one (`--with`).

The peers' targets add rows to tables whose other rows are committed exports (`results/runs/`);
`runs/` alone would lose those rows, and the builder rightly refuses (`tables.WouldDropRows`).
`pooled` links the run folders of several roots side by side in a temporary folder, so every
builder, drill-downs included, reads them as one root unchanged; `pooled` says which runs win.
"""

from __future__ import annotations

import contextlib
import json
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

from benchmarks.reports.frame import say
from benchmarks.results.loader import is_scripted, profile_of


def _folders(root: Path, experiment: str) -> list[Path]:
    where = root / experiment
    return sorted(p for p in where.iterdir() if p.is_dir()) if where.is_dir() else []


def _config(folder: Path) -> dict | None:
    try:
        return json.loads((folder / "manifest.json").read_text())["config"]
    except (OSError, ValueError, KeyError):
        return None  # not a run folder (or a broken one): the loader says so when it reads


@contextlib.contextmanager
def pooled(roots: Sequence[Path], experiment: str) -> Iterator[Path]:
    """A root holding `experiment`'s runs from every root in `roots`; the first root itself
    when there is only one.

    The first root's runs all come in, and win: another root's run of the same config (the
    same folder name, e.g. the exported copy of a run resumed here) is left out. Another root's
    run comes in only if its profile is one the first root ran this experiment with, so a
    cluster sweep's table never takes the laptop's rows, nor the other way round; scripted dry
    runs never come in from another root. Within a cell the builder's own rule then decides
    (`frame.collect`: most cases, then newest)."""
    first, *others = roots
    if not others:
        yield first
        return
    with tempfile.TemporaryDirectory(prefix="pmem-pooled-runs-") as tmp:
        into = Path(tmp) / experiment
        into.mkdir()
        names: set[str] = set()
        profiles: set[str] = set()
        for folder in _folders(first, experiment):
            (into / folder.name).symlink_to(folder.resolve(), target_is_directory=True)
            names.add(folder.name)
            config = _config(folder)
            if config is not None and not is_scripted(config):
                profiles.add(profile_of(config))
        added, other_profile = 0, 0
        for root in others:
            for folder in _folders(root, experiment):
                config = _config(folder)
                if folder.name in names or config is None or is_scripted(config):
                    continue
                if profile_of(config) not in profiles:
                    other_profile += 1
                    continue
                (into / folder.name).symlink_to(folder.resolve(), target_is_directory=True)
                names.add(folder.name)
                added += 1
        also = ", ".join(str(r / experiment) for r in others)
        aside = f"; {other_profile} of another profile left out" if other_profile else ""
        say(f"{experiment}: {added} run(s) of {also} join those of {first / experiment}{aside}")
        yield Path(tmp)
