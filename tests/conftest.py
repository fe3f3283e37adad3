"""Shared fixtures, and a guard: no test may open a connection beyond 127.0.0.1."""

from __future__ import annotations

import datetime as dt
import ipaddress
import socket

import pytest

_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex


def _loopback_only(address: object) -> None:
    if not isinstance(address, tuple):
        return  # a unix socket path never leaves the machine
    host = address[0]
    try:
        ok = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        ok = False
    if not ok:
        raise RuntimeError(f"test tried to connect beyond loopback: {address!r}")


def _guarded_connect(self: socket.socket, address: object) -> None:
    _loopback_only(address)
    return _real_connect(self, address)


def _guarded_connect_ex(self: socket.socket, address: object) -> int:
    _loopback_only(address)
    return _real_connect_ex(self, address)


@pytest.fixture(autouse=True)
def _no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(socket.socket, "connect", _guarded_connect)
    monkeypatch.setattr(socket.socket, "connect_ex", _guarded_connect_ex)


class Clock:
    """A clock that ticks one second per reading, so recorded times are distinct and ordered."""

    def __init__(self, start: str = "2026-01-01T00:00:00+00:00") -> None:
        self.now = dt.datetime.fromisoformat(start)

    def __call__(self) -> dt.datetime:
        self.now += dt.timedelta(seconds=1)
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()
