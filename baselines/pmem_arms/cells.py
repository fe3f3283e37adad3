"""The two stores a commit arm writes to (paper §3.3, Table 8): retention and CRUD.

Both take the same patches and lower them through the same controller (`pmem.patch.decide`);
they differ only in what an update leaves behind, the one thing Table 8 varies. `RetentionStore`
is `pmem.Memory`: superseded values stay as typed provenance, so a retraction reopens the
retained predecessor. `CrudStore` is the ablation: one value per key and nothing behind it.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from pmem import InvalidOperation, Memory, Patch, copy_log
from pmem.graph import EMPTY
from pmem.patch import decide
from pmem.render import one_line, render_cell

STORE_FILE = "store.sqlite"  # a RetentionStore's snapshot: a pmem.Memory file
CRUD_FILE = "crud.json"  # a CrudStore's snapshot


def cell_line(key: str, rendered: str) -> str:
    """B.2's read, ``[key] value``, from a `key = value ...` rendering (§3.4)."""
    return f"[{key}] {rendered.removeprefix(f'{one_line(key)} = ')}"


class RetentionStore:
    """P-Mem: every event is evidence, every patch goes through `Memory.apply`; nothing is
    deleted, so a retraction reopens the retained predecessor (§3.3 rollback)."""

    retention = True

    def __init__(self) -> None:
        self.memory = Memory()

    def observe(self, text: str) -> str:
        return self.memory.observe(text, source="alfworld-revision")

    def apply(self, key: str, patch: Patch, evidence: str | None) -> str:
        return self.memory.apply(replace(patch, evidence=evidence)).decision

    def noop(self, key: str, evidence: str | None) -> None:
        """The paper's noop: a supported-by edge on the head, if there is one."""
        if self.memory.cell(key).head is not None:
            self.memory.support(key, evidence=evidence)

    def head(self, key: str) -> tuple[str | None, str]:
        cell = self.memory.cell(key)
        return cell.value, cell.status

    def describe(self, key: str) -> str:
        return self.memory.render(key, disclose=("alternatives",))

    def line(self, key: str, disclose: frozenset[str]) -> str:
        return cell_line(key, render_cell(self.memory.cell(key), disclose))

    def retained(self, key: str) -> list[str]:
        return list(dict.fromkeys(v.value for v in self.memory.versions(key)))

    def save(self, directory: Path) -> None:
        path = directory / STORE_FILE
        for stale in directory.glob(f"{STORE_FILE}*"):
            stale.unlink()  # a half-written earlier save
        with Memory(path) as disk:
            copy_log(self.memory, disk)

    def load(self, directory: Path) -> bool:
        path = directory / STORE_FILE
        if not path.exists():
            return False
        with Memory(path) as disk:
            self.memory = Memory()
            copy_log(disk, self.memory)
        return True


class CrudStore:
    """Retention off (Table 8's CRUD ablation): one value per key and nothing behind it.

    Patches are classified by the same controller (`pmem.patch.decide`); an accept, reject,
    contest or resolve overwrites (a contest is last-write-wins: no conflict is represented),
    a revoke or a value-less reject deletes the cell, a support changes nothing."""

    retention = False

    def __init__(self) -> None:
        self.cells: dict[str, str] = {}

    def observe(self, text: str) -> None:
        return None

    def apply(self, key: str, patch: Patch, evidence: str | None) -> str:
        head = self.cells.get(key)
        d = decide(patch, None, head, hard_commit=False)
        if d.op != "accept" and head is None:
            raise InvalidOperation(key, f"{d.op} needs a current value, but the cell is empty")
        if d.op in ("revoke", "reject") and d.value is None:
            del self.cells[key]
        elif d.value is not None:
            self.cells[key] = d.value
        return d.decision

    def noop(self, key: str, evidence: str | None) -> None:
        return None

    def head(self, key: str) -> tuple[str | None, str]:
        value = self.cells.get(key)
        return value, EMPTY if value is None else "active"

    def describe(self, key: str) -> str:
        return f"{one_line(key)} = {one_line(self.cells.get(key) or '(empty)')}"

    def line(self, key: str, disclose: frozenset[str]) -> str:
        return cell_line(key, self.describe(key))

    def retained(self, key: str) -> list[str]:
        return [self.cells[key]] if key in self.cells else []

    def save(self, directory: Path) -> None:
        (directory / CRUD_FILE).write_text(json.dumps(self.cells, ensure_ascii=False))

    def load(self, directory: Path) -> bool:
        path = directory / CRUD_FILE
        if not path.exists():
            return False
        self.cells = json.loads(path.read_text())
        return True
