"""Copying a store by replaying its operation log (`Memory.entries()`) into an empty one.

A persisted store and an in-memory one that saw the same operations in the same order are equal
by construction (`pmem.memory`), node ids included. So a caller working in memory saves itself
by replaying into a fresh SQLite store, and loads by replaying the file back into memory, with
no second serialization format to keep in step with the graph.
"""

from __future__ import annotations

from pmem.memory import Memory


def copy_log(src: Memory, dst: Memory) -> None:
    """Replay `src`'s operation log into an empty `dst` through the public operations, with
    the recorded times: same log order, so the same node ids and the same derived state.

    This is how a store is saved from memory to a file and loaded back (no second format).
    Each accept is copied as logged, even one of the head's own value that an old log may hold
    (`Memory.accept` now records that as support), so the copy derives the same versions."""
    if dst.entries():
        raise ValueError(f"copy_log: the destination {dst.path or 'memory'} is not empty")
    with dst.batch():
        for e in src.entries():
            b = e.body
            ev = b.get("evidence") or None
            if e.op == "observe":
                dst.observe(b["text"], source=b.get("source", "user"), at=e.at)
            elif e.key is None:  # every operation but an observation is on a key
                raise ValueError(f"copy_log: log entry {e.seq} ({e.op}) names no key")
            elif e.op == "accept":  # as logged: an old log may accept the head's own value
                dst._copy_accept(  # (which `accept` now records as support)
                    e.key, b.get("value"), evidence=ev, valid_from=b.get("valid_from"), at=e.at
                )
            elif e.op in ("contest", "reject"):
                value = b.get("value")
                if e.op == "reject" and value is None:
                    dst.reject(e.key, evidence=ev, at=e.at)
                else:
                    getattr(dst, e.op)(
                        e.key, value, evidence=ev, valid_from=b.get("valid_from"), at=e.at
                    )
            elif e.op == "resolve":
                dst.resolve(e.key, b["value"], evidence=ev, at=e.at)
            elif e.op in ("revoke", "support"):
                getattr(dst, e.op)(e.key, evidence=ev, at=e.at)
            else:
                raise ValueError(f"copy_log: log entry {e.seq} has op {e.op!r}")
