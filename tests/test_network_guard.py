import socket

import pytest


def test_guard_refuses_a_connection_beyond_loopback() -> None:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    with pytest.raises(RuntimeError, match="beyond loopback"):
        s.connect(("192.0.2.1", 80))
    s.close()


def test_guard_allows_loopback() -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    client = socket.socket()
    client.connect(server.getsockname())
    client.close()
    server.close()
