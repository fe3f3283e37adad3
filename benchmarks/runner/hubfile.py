"""Pinned files from the Hugging Face hub: fetched with ``huggingface_hub``, checked by sha256.

A benchmark pins each file it needs (LongMemEval, MemoryAgentBench) as a `HubFile`: repository,
commit, path, sha256 and size. `hub_download` fetches it with ``hf_hub_download(revision=...)``
into the usual hub cache (``HF_HOME``, ``HF_HUB_CACHE``; ``HF_ENDPOINT`` for a mirror; the cache
only with ``HF_HUB_OFFLINE=1``) and never returns a file that does not match its pin.
``huggingface_hub`` is optional (the ``harness`` extra); each failure is one line with a hint.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from benchmarks.runner.types import InputError

__all__ = ["HubError", "HubFile", "hub_download", "hub_offline", "mismatch", "sha256_file"]

PUBLIC_ENDPOINT = "https://huggingface.co"
_OFFLINE = ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")


@dataclass(frozen=True, slots=True)
class HubFile:
    """One file of a hub repository, pinned to a revision and (where known) its sha256 and size."""

    repo: str
    revision: str  # a commit; "main" only where no commit is known
    filename: str  # the path inside the repository
    sha256: str | None  # None: no pin known, the file is returned unchecked
    size: int | None
    repo_type: str = "dataset"

    def url(self, endpoint: str = PUBLIC_ENDPOINT) -> str:
        kind = "" if self.repo_type == "model" else f"{self.repo_type}s/"
        return f"{endpoint.rstrip('/')}/{kind}{self.repo}/resolve/{self.revision}/{self.filename}"

    @property
    def label(self) -> str:
        return f"{self.repo} @ {self.revision}: {self.filename}"


class HubError(InputError, RuntimeError):
    """A pinned file could not be had (no package, no hub, a wrong hash); one line, with a hint."""


def sha256_file(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def hub_offline() -> bool:
    """Whether the environment forbids the hub (HF_HUB_OFFLINE=1 or HF_DATASETS_OFFLINE=1)."""
    return any(os.environ.get(k) == "1" for k in _OFFLINE)


def mismatch(pin: HubFile, path: str | Path) -> str | None:
    """None when the file has the pinned size and sha256 (or nothing is pinned); otherwise the
    one-line reason, naming the file, what was expected and what it is."""
    if pin.sha256 is None:
        return None
    size = os.path.getsize(path)
    sha = sha256_file(path)
    if sha == pin.sha256 and (pin.size is None or size == pin.size):
        return None
    expected = f"{pin.sha256} ({pin.size:,} bytes)" if pin.size is not None else pin.sha256
    return (
        f"{path}: got sha256 {sha} ({size:,} bytes), which is not the pinned {expected} of "
        f"{pin.label}; it is another revision or a damaged copy"
    )


def _endpoint() -> str | None:
    # Read at call time: huggingface_hub reads HF_ENDPOINT once, when it is first imported.
    return os.environ.get("HF_ENDPOINT") or None


def _import_hub() -> ModuleType | None:
    try:
        import huggingface_hub
    except ImportError:
        return None
    return huggingface_hub


def _evict(path: Path) -> None:
    """Delete a cached file that failed its check: the snapshot entry and the blob behind it."""
    blob = path.resolve()
    path.unlink(missing_ok=True)
    if blob != path:
        blob.unlink(missing_ok=True)


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or "no message"
    return f"{type(exc).__name__}: {text[:240]}"


def hub_download(
    pin: HubFile,
    *,
    hint: str,
    cache_dir: str | Path | None = None,
    offline: bool | None = None,
    etag_timeout: float = 10.0,
) -> Path:
    """The pinned file in the hub cache, downloaded when it is not there and checked against the
    pin. ``hint`` ends every error (what to do instead). ``offline`` (default: `hub_offline`)
    consults the cache only. Raises `HubError`; a file that fails its check is deleted.

    The download is ``huggingface_hub.hf_hub_download(revision=<commit>)``, the call users know;
    the package is imported only here. No hub is reachable from most machines that run this
    harness, so every failure is one line that ends with the caller's hint (which URL to put
    where, or which local path to pass)."""
    offline = hub_offline() if offline is None else offline
    endpoint = _endpoint()
    url = pin.url(endpoint or PUBLIC_ENDPOINT)
    why = next((f" ({k}=1)" for k in _OFFLINE if os.environ.get(k) == "1"), "")
    hub = _import_hub()
    if hub is None:
        if offline:
            raise HubError(f"offline{why}: no hub cache to look for {url} in; {hint}")
        raise HubError(
            f"downloading {url} needs huggingface_hub (pip install huggingface_hub, or "
            f"pip install 'pmem[harness]'); {hint}"
        )
    try:
        got = hub.hf_hub_download(
            repo_id=pin.repo,
            filename=pin.filename,
            revision=pin.revision,
            repo_type=pin.repo_type,
            cache_dir=cache_dir,
            endpoint=endpoint,
            etag_timeout=etag_timeout,
            local_files_only=offline,
        )
    except Exception as exc:  # any hub, network, cache or auth failure: one line and the hint
        if offline:
            raise HubError(f"offline{why}: {url} is not in the hub cache; {hint}") from None
        raise HubError(f"could not download {url} ({_one_line(exc)}); {hint}") from None
    path = Path(got)
    reason = mismatch(pin, path)
    if reason is not None:
        _evict(path)
        raise HubError(f"{reason}; that copy was deleted from the hub cache, not used")
    return path
