"""Every page of a small store overwritten in turn: `pmem show`, `check` and `export` either
work or say in one line that the file is damaged, and never change it; never a traceback."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from pmem import Memory
from pmem.cli import main

PAGE = 4096


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    path = tmp_path_factory.mktemp("pages") / "m.sqlite"
    with Memory(path) as m:
        for i in range(40):
            m.accept(f"key{i % 7}", f"value {i} " + "x" * (i * 13))
        m.contest("key1", "another")
        m.revoke("key2")
    return path.read_bytes()


def pages(data: bytes) -> int:
    return len(data) // PAGE


@pytest.mark.parametrize("fill", [b"\x00", b"\xff", b"P"])
def test_every_page_overwritten_in_turn(store: bytes, fill: bytes, tmp_path: Path, capsys) -> None:
    assert pages(store) >= 3
    path = tmp_path / "m.sqlite"
    for page in range(pages(store)):
        damaged = store[: page * PAGE] + fill * PAGE + store[(page + 1) * PAGE :]
        path.write_bytes(damaged)
        for command in ("show", "check", "export"):
            code = main([command, str(path)])
            out = capsys.readouterr()
            assert code in (0, 1, 2), (page, command)
            if code == 2:
                (line,) = out.err.strip().splitlines()
                assert line.startswith("pmem: "), (page, command, line)
            assert hashlib.sha256(path.read_bytes()).digest() == hashlib.sha256(damaged).digest()
