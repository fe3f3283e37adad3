"""Value-first rendering of materialized cells (§3.4): one line per cell, `key = value`, with
support, alternatives or history appended only when a disclosure mode asks for them."""

from __future__ import annotations

from collections.abc import Iterable

from pmem.graph import CONTESTED, Cell

DISCLOSURES = ("support", "alternatives", "history")


def check_disclose(disclose: Iterable[str]) -> frozenset[str]:
    modes = frozenset(disclose)
    unknown = modes - set(DISCLOSURES)
    if unknown:
        raise ValueError(
            f"disclose: unknown mode(s) {sorted(unknown)}; choose from {list(DISCLOSURES)}"
        )
    return modes


def one_line(text: str) -> str:
    """Keep a cell on one line whatever its value holds."""
    return text.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r")


def render_cell(cell: Cell, modes: frozenset[str] = frozenset()) -> str:
    line = f"{one_line(cell.key)} = {one_line(cell.head.value) if cell.head else '(empty)'}"
    if cell.status == CONTESTED:
        line += " (contested)"
    if "support" in modes and cell.head is not None:
        line += f" | support: {cell.support}"
    if "alternatives" in modes and cell.alternatives:
        line += " | alternatives: " + "; ".join(one_line(v.value) for v in cell.alternatives)
    if "history" in modes and cell.history:
        line += " | history: " + "; ".join(
            f"{one_line(v.value)} ({v.status})" for v in cell.history
        )
    return line


def render(cells: Iterable[Cell], disclose: Iterable[str] = ()) -> str:
    modes = check_disclose(disclose)
    return "\n".join(render_cell(c, modes) for c in cells)
