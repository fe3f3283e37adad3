"""Invariants over random operation sequences (hypothesis)."""

from __future__ import annotations

import contextlib
import os
import tempfile

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pmem import InvalidOperation, Memory
from tests.conftest import Clock

# `make test-properties` runs the sequences test with PMEM_PROPERTY_EXAMPLES=10000
EXAMPLES = int(os.environ.get("PMEM_PROPERTY_EXAMPLES", "150"))
KEYS = st.sampled_from(["a", "b", "c"])
VALUES = st.sampled_from(["1", "2", "3", "4"])
OPS = st.one_of(
    st.tuples(st.sampled_from(["accept", "reject", "contest", "resolve"]), KEYS, VALUES),
    st.tuples(st.sampled_from(["retract", "revoke", "support", "forget"]), KEYS, st.none()),
)


def run(m: Memory, op: str, key: str, value: str | None) -> None:
    if op == "retract":
        m.reject(key)
    elif op == "forget":
        m.forget(key)
    elif value is None:
        getattr(m, op)(key)
    else:
        getattr(m, op)(key, value)


def dump(m: Memory) -> tuple:
    return (
        [c.to_dict() for c in m.frontier()],
        {k: [v.to_dict() for v in m.versions(k)] for k in m.keys()},
    )


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(OPS, max_size=30))
def test_random_sequences_keep_every_invariant_and_survive_reopening(ops) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "m.sqlite")
        mem, disk = Memory(clock=Clock()), Memory(path, clock=Clock())
        admitted: dict[str, set[str]] = {}
        for op, key, value in ops:
            before = dump(mem)
            outcomes = []
            for m in (mem, disk):
                try:
                    run(m, op, key, value)
                    outcomes.append("ok")
                except InvalidOperation:
                    outcomes.append("refused")
            assert outcomes[0] == outcomes[1]
            if outcomes[0] == "refused":
                assert dump(mem) == before  # a refused operation changes nothing
            elif op == "forget":
                admitted.pop(key, None)
            elif value is not None and op != "resolve":
                admitted.setdefault(key, set()).add(value)
            assert mem.check() == []
            with Memory(path) as reopened:
                assert dump(reopened) == dump(mem)
            heads = [c.key for c in mem.frontier()]
            assert len(heads) == len(set(heads))
            for k, values in admitted.items():
                assert values <= {v.value for v in mem.versions(k)}
        assert disk.check() == []
        disk.close()


@settings(max_examples=100, deadline=None)
@given(
    prefix=st.lists(OPS, max_size=10),
    values=st.lists(st.text(min_size=1, max_size=5).filter(str.strip), min_size=1, max_size=8),
)
def test_k_revokes_undo_k_value_changes_in_reverse_order(prefix, values) -> None:
    m = Memory(clock=Clock())
    key = "subject"  # never touched by the prefix, which only exercises other keys
    for op, k, value in prefix:
        with contextlib.suppress(InvalidOperation):
            run(m, op, k, value)
    for value in values:
        m.accept(key, value)
    # an accept of the value the cell holds is support, not a version (the same-value rule)
    changes = [v for i, v in enumerate(values) if i == 0 or v != values[i - 1]]
    reinstated = []
    for _ in changes:
        reinstated.append(m.cell(key).value)
        m.revoke(key)
    assert reinstated == list(reversed(changes))
    assert m.cell(key).head is None
    assert [v.value for v in m.versions(key)] == changes  # all retained
    assert m.check() == []
