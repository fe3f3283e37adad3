"""Rename run folders to the identity the current code gives them, and point their manifests'
`_target_`s at where each class lives now.

A run's identity hashes each component by class name (`benchmarks.results.identity`). Folders
named while the hash still held import paths get a new name here: the manifest's config is
rewritten (each `_target_` whose module no longer holds the class becomes the target of the same
class name in configs/), its `config_sha256` recomputed, the folder renamed and its summary's
`run` path updated. Idempotent: a folder already named by its identity is left alone.

    python scripts/migrate_run_identities.py results/runs [runs ...]
"""

from __future__ import annotations

import argparse
import importlib
import json
import re
import sys
from pathlib import Path
from typing import Any

from benchmarks.results.identity import component_name, config_hash

CONFIGS = Path(__file__).resolve().parents[1] / "configs"
_TARGET = re.compile(r"^\s*_target_:\s*([\w.]+)\s*$", re.MULTILINE)


def current_targets(configs: Path = CONFIGS) -> dict[str, str]:
    """Class name -> the one import path configs/ names for it."""
    found: dict[str, set[str]] = {}
    for path in configs.rglob("*.yaml"):
        for target in _TARGET.findall(path.read_text(encoding="utf-8")):
            found.setdefault(component_name(target), set()).add(target)
    return {name: next(iter(paths)) for name, paths in found.items() if len(paths) == 1}


def importable(target: str) -> bool:
    module, _, name = target.rpartition(".")
    try:
        return hasattr(importlib.import_module(module), name)
    except ImportError:
        return False


def retarget(node: Any, targets: dict[str, str]) -> Any:
    """`node` with every stale `_target_` replaced by the current path of its class."""
    if isinstance(node, dict):
        out = {}
        for key, value in node.items():
            if key == "_target_" and isinstance(value, str) and not importable(value):
                value = targets.get(component_name(value), value)
            out[key] = retarget(value, targets)
        return out
    if isinstance(node, list):
        return [retarget(v, targets) for v in node]
    return node


def migrate(folder: Path, targets: dict[str, str]) -> Path:
    """Migrate one run folder; its path afterwards."""
    manifest_path = folder / "manifest.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    manifest["config"] = retarget(manifest["config"], targets)
    digest = config_hash(manifest["config"])
    manifest["config_sha256"] = digest
    manifest_path.write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")
    stem, _, _ = folder.name.rpartition("__")
    new = folder.with_name(f"{stem}__{digest[:10]}")
    if new != folder:
        if new.exists():
            raise SystemExit(f"{folder}: its new name {new.name} is taken; nothing renamed")
        folder.rename(new)
    summary_path = new / "summary.json"
    if summary_path.exists():
        summary = json.loads(summary_path.read_text(encoding="utf-8"))
        if isinstance(summary.get("run"), str):
            head, _, _ = summary["run"].rpartition("/")
            summary["run"] = f"{head}/{new.name}" if head else new.name
            summary_path.write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n")
    return new


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("roots", nargs="+", type=Path, help="run roots (runs/, results/runs)")
    args = p.parse_args(argv)
    targets = current_targets()
    renamed = 0
    for root in args.roots:
        for manifest in sorted(root.glob("*/*/manifest.json")):
            folder = manifest.parent
            if migrate(folder, targets) != folder:
                renamed += 1
    print(f"{renamed} run folder(s) renamed", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
