"""Provenant Memory (P-Mem): commit the current value of each fact on arrival, keep everything
it displaced as typed provenance ("Memory of Memory", Qin & Lu, 2026).

    >>> from pmem import Memory
    >>> m = Memory()
    >>> _ = m.accept("client.budget", "$30k")
    >>> _ = m.accept("client.budget", "$50k")
    >>> _ = m.revoke("client.budget")        # "$50k was a mistake"
    >>> m.cell("client.budget").value
    '$30k'

Standard library only. Exported here: the typed provenance graph and its operations (`Memory`,
`Patch` for the patch interface of §3.3, the snapshot and error types) and `copy_log`, which
copies a store by replaying its log. In the modules: `pmem.write` and `pmem.revise`, the two
LLM write paths (extraction + soft identity + annotation; Revise patch prediction), written
against the small protocols of `pmem.protocols` that a caller's model clients satisfy;
`pmem.render`, the value-first read (§3.4); `pmem.cli`, the `pmem` command.
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
