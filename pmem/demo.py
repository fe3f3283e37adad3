"""`pmem demo`: the paper's running examples on a real SQLite store, printed with history.

Figure 1 (§1): a 5K personal best revised from 27:12 to 25:50; the $30k budget raised to $50k and
then retracted; two meeting rooms contested and resolved (§4.2.3). The demo writes only into a
store it creates: an existing file is refused, unopened and unchanged.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from pmem.memory import Memory

FULL = ("alternatives", "history", "support")


def refusal(store: str) -> str | None:
    """Why the demo may not write into `store`, or None (a new or empty file). Any store that
    exists is refused without being opened: a user's store and an earlier demo's look alike
    enough (the same keys, even the same values) that only the user can tell them apart."""
    path = Path(store)
    if not path.exists():
        return None
    if path.is_dir():
        return "is a directory"
    if path.stat().st_size == 0 and not Path(f"{store}-wal").exists():
        return None
    return "already exists"


def _say(title: str) -> None:
    print(f"\n== {title}")


def run(store: str | None = None) -> int:
    tmp = None
    if store is not None:
        why = refusal(store)
        if why is not None:
            print(
                f"pmem demo: {store} {why}: the demo writes only into a store it creates; pass "
                "--store a new path (delete an earlier demo's store to reuse its name)",
                file=sys.stderr,
            )
            return 2
    if store is None:
        tmp = tempfile.TemporaryDirectory(prefix="pmem-demo-")
        store = os.path.join(tmp.name, "demo.sqlite")
    try:
        _stories(store)
    finally:
        if tmp is not None:
            tmp.cleanup()
    return 0


def _stories(store: str) -> None:
    print(f"P-Mem demo on the SQLite store {store}")
    with Memory(store) as m:
        _say("Figure 1: a knowledge update (accept)")
        e1 = m.observe("My 5K personal best is 27:12.", at="2026-03-02T08:00:00")
        m.accept("user.5k_personal_best", "27:12", evidence=e1, at="2026-03-02T08:00:00")
        e2 = m.observe("Beat my PB of 25:50 at the park run!", at="2026-07-19T09:30:00")
        m.accept("user.5k_personal_best", "25:50", evidence=e2, at="2026-07-19T09:30:00")
        print("what's my 5K PB?   ", m.render(["user.5k_personal_best"]))
        old = m.as_of("user.5k_personal_best", valid_at="2026-05-01")
        print("what was it in May?", old.value if old else None, "(the old value stays answerable)")
        print("with history:      ", m.render(["user.5k_personal_best"], disclose=["history"]))

        _say("Figure 1(c): a mistaken update, then its retraction (accept, accept, revoke)")
        b1 = m.accept("client.budget", "$30k", evidence=m.observe("The client's budget is $30k."))
        b2 = m.accept("client.budget", "$50k", evidence=m.observe("Budget raised to $50k."))
        m.cite("plan:q3-campaign", b2)
        print("after the raise:   ", m.render(["client.budget"], disclose=["history"]))
        print("the Q3 plan rests on $50k:", m.citation_status("plan:q3-campaign"))
        m.revoke("client.budget", evidence=m.observe("Sorry, the $50k was an error."))
        print("after retraction:  ", m.render(["client.budget"], disclose=["history"]))
        reinstated = m.cell("client.budget").head
        print("reinstated version:", reinstated and reinstated.id, "== the original", b1)
        print(
            "the Q3 plan now:  ",
            m.citation_status("plan:q3-campaign"),
            "(it cited a value that was retracted)",
        )

        _say("§4.2.3: a genuine conflict held open, then settled once (contest, resolve)")
        m.accept(
            "standup.room", "Room 4A", evidence=m.observe("Standup is in Room 4A.", source="alice")
        )
        m.contest(
            "standup.room", "Room 2B", evidence=m.observe("Standup is in Room 2B.", source="bob")
        )
        print("before settling:   ", m.render(["standup.room"], disclose=["alternatives"]))
        m.resolve(
            "standup.room",
            "Room 2B",
            evidence=m.observe("Confirmed: 2B from now on.", source="alice"),
        )
        print("after resolve:     ", m.render(["standup.room"], disclose=["history"]))

    _say("Reopened from disk: the same state, every link checked")
    with Memory(store) as m:
        print(m.render(disclose=FULL))
        problems = m.check()
        print("check():", problems or "ok")
        print(f"stats: {m.stats()}")
