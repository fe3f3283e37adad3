"""Servers the harness starts, waits for, and always stops.

`ManagedServer` is the small protocol every such server follows (the scripted server here,
llama.cpp and the embedding server elsewhere): `start()` returns the OpenAI-style base URL,
`stop()` is idempotent, and a `with` block stops it on any exit, Ctrl-C included.

`SubprocessServer` runs a command on a free loopback port with its output in a log file, waits
for a health URL, and makes sure the child never outlives us: `stop()` terminates then kills,
an atexit hook stops whatever is still running on a normal exit, and on Linux the kernel sends
the child SIGTERM when the parent dies, even by SIGKILL (`die_with_parent`).
"""

from __future__ import annotations

import atexit
import contextlib
import ipaddress
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any, Self

__all__ = [
    "ManagedServer",
    "ServerStartError",
    "SubprocessServer",
    "free_port",
    "log_tail",
    "wait_healthy",
]

LOOPBACK = "127.0.0.1"


class ServerStartError(RuntimeError):
    """A server did not become healthy; the message carries the tail of its log."""


def check_loopback(host: str, allow_remote: bool, what: str) -> str:
    """`host`, if it is loopback or the caller asked for another on purpose: a server the
    harness starts answers anyone who can reach it (no key, or a key in a config file)."""
    if allow_remote or host == "localhost":
        return host
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise ServerStartError(
            f"{what}: host {host!r} is not a loopback address; the server would answer anyone "
            "who can reach it. Bind 127.0.0.1, or set allow_remote=true to serve it on purpose"
        )
    return host


def free_port(host: str = LOOPBACK) -> int:
    """A port nothing listens on right now (the OS picks it; a small race remains)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def log_tail(path: str | os.PathLike[str] | None, lines: int = 30) -> str:
    """The last lines of a log file, or "" when there is none: what a start error should show."""
    if path is None:
        return ""
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            fh.seek(max(0, fh.tell() - 16_384))
            text = fh.read().decode("utf-8", "replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


# Health checks go straight to the server: an HTTP(S)_PROXY in the environment must not
# intercept a request to a loopback port.
_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def wait_healthy(
    url: str,
    timeout_s: float,
    proc: subprocess.Popen[Any] | None = None,
    *,
    log_path: str | os.PathLike[str] | None = None,
    interval_s: float = 0.05,
) -> None:
    """Poll `url` with GET until it answers 200 (llama.cpp answers 503 while loading).

    Raises `ServerStartError` when `proc` exits first or `timeout_s` passes, with the log tail.
    """
    deadline = time.monotonic() + timeout_s
    last = "no answer"
    while True:
        if proc is not None and proc.poll() is not None:
            raise ServerStartError(
                _with_tail(
                    f"server exited (code {proc.returncode}) before {url} was healthy", log_path
                )
            )
        try:
            with _DIRECT.open(url, timeout=max(0.1, min(2.0, deadline - time.monotonic()))) as resp:
                if resp.status == 200:
                    return
                last = f"HTTP {resp.status}"
        except urllib.error.HTTPError as exc:
            last = f"HTTP {exc.code}"
        except (urllib.error.URLError, OSError) as exc:
            last = str(getattr(exc, "reason", exc))
        if time.monotonic() >= deadline:
            msg = f"{url} not healthy after {timeout_s:g}s (last: {last})"
            raise ServerStartError(_with_tail(msg, log_path))
        time.sleep(interval_s)


def _with_tail(message: str, log_path: str | os.PathLike[str] | None) -> str:
    tail = log_tail(log_path)
    return f"{message}; log {log_path}:\n{tail}" if tail else message


class ManagedServer(ABC):
    """A server with a lifetime: `start()` → base URL ("http://127.0.0.1:PORT/v1"), `stop()`."""

    log_path: Path | None = None
    _base_url: str | None = None

    @abstractmethod
    def start(self) -> str:
        """Start (if not running), wait until it serves, and return the base URL."""

    @abstractmethod
    def stop(self) -> None:
        """Stop; calling it again, or before `start()`, does nothing."""

    @property
    def base_url(self) -> str:
        if self._base_url is None:
            raise RuntimeError(f"{type(self).__name__} is not running; call start() first")
        return self._base_url

    @property
    def root_url(self) -> str:
        """The base URL without its API prefix: where /health and /tokenize live."""
        return _strip_api_prefix(self.base_url)

    @property
    def running(self) -> bool:
        return self._base_url is not None

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _strip_api_prefix(url: str) -> str:
    url = url.rstrip("/")
    return url[: -len("/v1")] if url.endswith("/v1") else url


# Servers still running, stopped by the atexit hook. Strong references on purpose: a server
# object dropped without stop() must still be found at exit.
_RUNNING: set[SubprocessServer] = set()
_RUNNING_LOCK = threading.Lock()


def _stop_all() -> None:
    with _RUNNING_LOCK:
        servers = list(_RUNNING)
    for server in servers:
        with contextlib.suppress(Exception):
            server.stop()


atexit.register(_stop_all)


class SubprocessServer(ManagedServer):
    """A server run as a child process on a loopback port.

    `command` items may contain `{host}` and `{port}`, filled in at start; subclasses can
    override `build_command` instead. Output goes to `log_path` (a temporary file, removed on a
    clean stop, when none is given) so a failed start can show why.
    """

    #: what the kernel sends the child when its parent dies (die_with_parent). SIGTERM lets a
    #: server clean up; a server that finishes its current work before it obeys SIGTERM, and
    #: holds nothing worth flushing, asks for SIGKILL instead (LlamaCppServer).
    death_signal: signal.Signals = signal.SIGTERM

    def __init__(
        self,
        command: Sequence[str] = (),
        *,
        host: str = LOOPBACK,
        port: int | None = None,
        health_path: str = "/health",
        api_path: str = "/v1",
        log_path: str | os.PathLike[str] | None = None,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        startup_timeout_s: float = 120.0,
        stop_grace_s: float = 10.0,
        die_with_parent: bool = True,
        allow_remote: bool = False,
    ) -> None:
        self.command = list(command)
        self.host = check_loopback(host, allow_remote, f"server {' '.join(command[:1])}")
        self.port = port
        self.health_path = health_path
        self.api_path = api_path
        self.log_path = Path(log_path) if log_path is not None else None
        self.env = dict(env) if env is not None else None
        self.cwd = cwd
        self.startup_timeout_s = startup_timeout_s
        self.stop_grace_s = stop_grace_s
        self.die_with_parent = die_with_parent
        self.proc: subprocess.Popen[bytes] | None = None
        self._log_file: IO[bytes] | None = None
        self._temp_log = False

    def build_command(self, host: str, port: int) -> list[str]:
        return [str(part).format(host=host, port=port) for part in self.command]

    @property
    def pid(self) -> int | None:
        return None if self.proc is None else self.proc.pid

    def start(self) -> str:
        if self.proc is not None and self.proc.poll() is None and self._base_url is not None:
            return self._base_url
        port = self.port or free_port(self.host)
        command = self.build_command(self.host, port)
        if not command:
            raise ValueError("SubprocessServer needs a command")
        self._open_log()
        env = None if self.env is None else {**os.environ, **self.env}
        with _RUNNING_LOCK:
            self.proc = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=self._log_file,
                stderr=subprocess.STDOUT,
                env=env,
                cwd=self.cwd,
                preexec_fn=_parent_death_hook(self.death_signal) if self.die_with_parent else None,
            )
            _RUNNING.add(self)
        root = f"http://{self.host}:{port}"
        try:
            wait_healthy(
                root + self.health_path, self.startup_timeout_s, self.proc, log_path=self.log_path
            )
        except BaseException:
            self.stop(keep_log=True)
            raise
        self._base_url = root + self.api_path
        return self._base_url

    def stop(self, *, keep_log: bool = False) -> None:
        proc, self.proc, self._base_url = self.proc, None, None
        with _RUNNING_LOCK:
            _RUNNING.discard(self)
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(self.stop_grace_s)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if self._log_file is not None:
            self._log_file.close()
            self._log_file = None
        if self._temp_log and self.log_path is not None:
            if not keep_log:
                with contextlib.suppress(OSError):
                    self.log_path.unlink()
                self.log_path = None
            self._temp_log = False

    def _open_log(self) -> None:
        if self.log_path is None:
            fd, name = tempfile.mkstemp(prefix="pmem-server-", suffix=".log")
            os.close(fd)
            self.log_path, self._temp_log = Path(name), True
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log_file = open(self.log_path, "ab")  # noqa: SIM115 - closed in stop()

    def __repr__(self) -> str:
        state = self._base_url or "stopped"
        return f"{type(self).__name__}({self.command[:1]!r}…, {state})"


def _parent_death_hook(death_signal: signal.Signals = signal.SIGTERM) -> Any:
    """A preexec function asking Linux to send the child `death_signal` when its parent dies,
    or None.

    Resolved in the parent so the forked child only makes one foreign call. Caveat of the
    kernel feature: "parent" is the *thread* that started the child, so start servers from the
    main thread (or a thread that outlives them).
    """
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def hook() -> None:
        prctl(1, int(death_signal))  # PR_SET_PDEATHSIG
        if os.getppid() != parent:  # the parent died before the hook ran
            os._exit(1)

    return hook
