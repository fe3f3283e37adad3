"""The official LongMemEval files: where each variant is published, its pinned hash, the download.

The haystack files are not shipped (S is 277 MB) and most machines reach no hub, so every
failure says which URL to put where. ``path="hf"`` and ``fetch`` download with
``hf_hub_download(revision=<commit>)`` into the hub cache (size and sha256 checked against the
pin), then link to ``$PMEM_DATA_DIR/longmemeval/<file>``; a file already there is checked.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from benchmarks.runner.hubfile import HubError, HubFile, hub_download, hub_offline, mismatch
from benchmarks.runner.hubfile import sha256_file as sha256_file

__all__ = [
    "HF_CLEANED",
    "HF_CLEANED_REVISION",
    "HF_ORIGINAL",
    "VARIANTS",
    "DownloadError",
    "Variant",
    "check_hash",
    "default_dest",
    "download",
    "fetch",
    "fetch_hint",
    "hub_offline",
    "sha256_file",
    "variant_named",
]

HF_CLEANED = "xiaowu0162/longmemeval-cleaned"
HF_ORIGINAL = "xiaowu0162/longmemeval"
# The revision third-party harnesses pin for longmemeval-cleaned (docs/notes/data-sources.md);
# several independent repositories record the same (revision, sha256, bytes) triples below.
HF_CLEANED_REVISION = "98d7416c24c778c2fee6e6f3006e7a073259d48f"


@dataclass(frozen=True, slots=True)
class Variant:
    """One official haystack file: where it is published and what it should hash to."""

    name: str
    repo: str
    revision: str  # a commit, or "main" where no commit is known
    filename: str
    sha256: str | None  # None: no pin known; `fetch` records the hash it sees
    size: int | None

    @property
    def pin(self) -> HubFile:
        """The file as ``hub_download`` fetches and checks it."""
        return HubFile(self.repo, self.revision, self.filename, self.sha256, self.size)

    @property
    def url(self) -> str:
        return self.pin.url()

    @property
    def local_name(self) -> str:
        """The file name `fetch` saves to (the original S file is published without `.json`)."""
        return self.filename if self.filename.endswith(".json") else self.filename + ".json"


VARIANTS: dict[str, Variant] = {
    "oracle": Variant(
        "oracle",
        HF_CLEANED,
        HF_CLEANED_REVISION,
        "longmemeval_oracle.json",
        "821a2034d219ab45846873dd14c14f12cfe7776e73527a483f9dac095d38620c",
        15_388_478,
    ),
    "s_cleaned": Variant(
        "s_cleaned",
        HF_CLEANED,
        HF_CLEANED_REVISION,
        "longmemeval_s_cleaned.json",
        "d6f21ea9d60a0d56f34a05b609c79c88a451d2ae03597821ea3d5a9678c3a442",
        277_383_467,
    ),
    # The S file of the paper's time, from the original dataset repository. No commit or hash
    # for it is known here, so it is fetched from `main` and its hash is recorded, not checked.
    "s": Variant("s", HF_ORIGINAL, "main", "longmemeval_s", None, None),
}


# A hub failure of any benchmark is a DownloadError here: one class to catch, one line to print.
DownloadError = HubError


def variant_named(name: str) -> Variant:
    """The variant of that name; a ValueError naming the known ones otherwise."""
    if name not in VARIANTS:
        raise ValueError(f"unknown LongMemEval variant {name!r}; known: {', '.join(VARIANTS)}")
    return VARIANTS[name]


def default_dest() -> Path:
    root = os.environ.get("PMEM_DATA_DIR")
    return (Path(root) if root else Path.home() / ".cache" / "pmem") / "longmemeval"


def fetch_hint(variant: str) -> str:
    v = variant_named(variant)
    return f"download {v.url} to {default_dest() / v.local_name}, or pass a local path"


def download(
    variant: Variant,
    dest: Path,
    *,
    timeout_s: float = 60.0,
    cache_dir: str | Path | None = None,
    offline: bool | None = None,
) -> Path:
    """The variant's file in ``dest``: already there (hash checked when pinned), or fetched by
    ``hf_hub_download`` at the pinned revision into the hub cache (``cache_dir``, default the
    usual one), checked, and linked (or copied) into ``dest``. ``offline`` (default:
    HF_HUB_OFFLINE) consults the hub cache only. Raises DownloadError, one line saying what to
    put where."""
    target = dest / variant.local_name
    if target.exists():
        check_hash(variant, target)
        return target
    hint = f"save that file as {target} by hand, or pass a local path"
    cached = hub_download(
        variant.pin, hint=hint, cache_dir=cache_dir, offline=offline, etag_timeout=timeout_s
    )
    _place(cached, target)
    return target


def _place(cached: Path, target: Path) -> None:
    """Put the checked cache file at ``target``: a hard link (no second copy of 277 MB) where
    the file system allows one, a copy otherwise; atomically, so no half file is left there."""
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".part")
    partial.unlink(missing_ok=True)
    try:
        os.link(cached.resolve(), partial)
    except OSError:
        shutil.copyfile(cached, partial)
    partial.replace(target)


def check_hash(variant: Variant, file: Path) -> str:
    """The file's sha256; raises DownloadError when a pinned hash is known and differs."""
    sha = sha256_file(file)
    if variant.sha256 is not None and sha != variant.sha256:
        raise DownloadError(mismatch(variant.pin, file) or f"{file}: not the pinned file")
    return sha


def fetch(variant: str, dest: Path, *, offline: bool = False) -> tuple[int, str]:
    """What ``fetch`` does: (exit code, report). Verifies or records the hash of a file that is
    there; downloads one that is not (offline: takes it from the hub cache if it is there); says
    what to put where otherwise."""
    v = variant_named(variant)
    target = dest / v.local_name
    lines = [
        f"variant:  {v.name}",
        f"dataset:  {v.repo} @ {v.revision}",
        f"url:      {v.url}",
        f"file:     {target}",
        f"pinned:   {v.sha256 or 'none known (the hash is recorded, not checked)'}",
    ]
    if not target.exists():
        try:
            download(v, dest, offline=offline or None)  # False: HF_HUB_OFFLINE still holds
        except DownloadError as exc:
            status = "missing; not downloading (offline)" if offline else "cannot download"
            lines += [f"status:   {status}: {exc}", _put_there(v, target)]
            return 1, "\n".join(lines)
        lines.append("status:   from the hub cache" if offline else "status:   downloaded")
    sha = sha256_file(target)
    lines.append(f"sha256:   {sha}")
    if v.sha256 is None:
        record = target.with_name(target.name + ".sha256")
        record.write_text(f"{sha}  {target.name}\n", encoding="utf-8")
        lines.append(f"result:   recorded in {record} (no pinned hash to check against)")
        return 0, "\n".join(lines)
    if sha != v.sha256:
        lines.append("result:   MISMATCH: another revision or a damaged copy")
        return 1, "\n".join(lines)
    lines.append("result:   matches the pinned hash")
    return 0, "\n".join(lines)


def _put_there(v: Variant, target: Path) -> str:
    return (
        f"to get it:  curl -L -o {target} '{v.url}'  (or hf_hub_download at that revision), "
        "then run fetch again to check it"
    )
