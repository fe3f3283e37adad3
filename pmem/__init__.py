"""Provenant Memory (P-Mem): commit the current value of each fact on arrival, keep everything
it displaced as typed provenance ("Memory of Memory", Qin & Lu, 2026).

    >>> from pmem import Memory
    >>> m = Memory()
    >>> _ = m.accept("client.budget", "$30k")
    >>> _ = m.accept("client.budget", "$50k")
    >>> _ = m.revoke("client.budget")        # "$50k was a mistake"
    >>> m.cell("client.budget").value
    '$30k'
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
]
