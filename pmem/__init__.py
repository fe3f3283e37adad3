"""Provenant Memory (P-Mem): commit each fact on arrival, keep what it displaced as provenance.

    >>> from pmem import Memory
    >>> m = Memory()
    >>> _ = m.accept("client.budget", "$30k")
    >>> _ = m.accept("client.budget", "$50k")
    >>> _ = m.revoke("client.budget")        # "$50k was a mistake"
    >>> m.cell("client.budget").value
    '$30k'

"Memory of Memory" (Qin & Lu, 2026); standard library only. Here: `Memory`, `Patch` (the patch
interface, §3.3), the snapshot and error types, and `copy_log` (copy a store by replaying its log).
`pmem.write` (extraction, soft identity, annotation) and `pmem.revise` (Revise patch prediction)
are the LLM write paths, against the protocols of `pmem.protocols` that a caller's clients
satisfy; `pmem.render` is the value-first read (§3.4); `pmem.cli` is the `pmem` command.
"""

from pmem.graph import (
    CELL_STATUSES,
    OPERATIONS,
    STATUSES,
    Cell,
    Evidence,
    InvalidOperation,
    StoreError,
    Version,
)
from pmem.memory import Applied, Citation, Memory
from pmem.patch import Patch
from pmem.replay import copy_log

__version__ = "0.1.0"

__all__ = [
    "CELL_STATUSES",
    "OPERATIONS",
    "STATUSES",
    "Applied",
    "Cell",
    "Citation",
    "Evidence",
    "InvalidOperation",
    "Memory",
    "Patch",
    "StoreError",
    "Version",
    "copy_log",
]
