"""The official LongMemEval files: where each variant is published, its pinned hash, the download.

The haystack files are not shipped (S is 277 MB) and no hub is reachable from most machines
that run this harness, so every failure says which URL to put where. ``path="hf"`` (see
``load``) downloads a pinned file when a hub is reachable; ``python -m benchmarks.longmemeval
fetch`` downloads it, or checks (or, with no pin known, records) the hash of a file that is there.
"""

from __future__ import annotations

import hashlib
import os
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from benchmarks.runner.types import InputError

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
    def url(self) -> str:
        return (
            f"https://huggingface.co/datasets/{self.repo}/resolve/{self.revision}/{self.filename}"
        )

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


class DownloadError(InputError, RuntimeError):
    """The official file could not be downloaded; the message says what to put where."""


def sha256_file(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


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


def hub_offline() -> bool:
    """Whether the environment forbids the hub (HF_HUB_OFFLINE=1 or HF_DATASETS_OFFLINE=1)."""
    return any(os.environ.get(k) == "1" for k in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"))


def download(variant: Variant, dest: Path, *, timeout_s: float = 60.0) -> Path:
    """The variant's file in ``dest``: already there (hash checked when pinned) or downloaded
    from its pinned URL. Raises DownloadError saying what to put where when it cannot."""
    target = dest / variant.local_name
    if target.exists():
        check_hash(variant, target)
        return target
    instructions = (
        f"put the official file there by hand: download\n  {variant.url}\nand save it as\n"
        f"  {target}"
    )
    if hub_offline():
        raise DownloadError(f"offline (HF_HUB_OFFLINE=1); {instructions}")
    dest.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".part")
    request = urllib.request.Request(variant.url, headers={"User-Agent": "pmem-bench"})
    try:
        with (
            urllib.request.urlopen(request, timeout=timeout_s) as response,
            partial.open("wb") as out,
        ):
            while block := response.read(1 << 20):
                out.write(block)
    except Exception as exc:  # any network, DNS, HTTP or guard failure: say what to do
        partial.unlink(missing_ok=True)
        raise DownloadError(f"could not download {variant.url} ({exc}); {instructions}") from exc
    partial.replace(target)
    check_hash(variant, target)
    return target


def check_hash(variant: Variant, file: Path) -> str:
    """The file's sha256; raises DownloadError when a pinned hash is known and differs."""
    sha = sha256_file(file)
    if variant.sha256 is not None and sha != variant.sha256:
        raise DownloadError(
            f"{file}: sha256 {sha} is not the pinned {variant.sha256} of {variant.repo} @ "
            f"{variant.revision}: {variant.filename}; it is another revision or a damaged copy"
        )
    return sha


def fetch(variant: str, dest: Path, *, offline: bool = False) -> tuple[int, str]:
    """What ``fetch`` does: (exit code, report). Verifies or records the hash of a file that is
    there; downloads one that is not, unless offline; says what to put where otherwise."""
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
        if offline:
            lines += ["status:   missing; not downloading (--offline)", _put_there(v, target)]
            return 1, "\n".join(lines)
        try:
            download(v, dest)
        except DownloadError as exc:
            lines += [f"status:   cannot download: {exc}"]
            return 1, "\n".join(lines)
        lines.append("status:   downloaded")
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
        f"to get it: download\n  {v.url}\nand save it as\n  {target}\n"
        f"(for example: curl -L -o {target} '{v.url}'), then run fetch again to check it."
    )
