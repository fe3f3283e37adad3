"""`pmem replay` on generated ops lines: every field of every type a JSON line can hold. The
contract: exit 0 with the lines applied, or exit 2 with one line naming the file, the line and
the field, and the store untouched (not even created); never a traceback."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pmem import Memory
from pmem.cli import main

FIELDS = ("op", "key", "old_value", "new_value", "status", "supersedes", "evidence",
          "valid_from", "at", "observe", "source", "hard_commit")  # fmt: skip
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=4,
)
good = {"op": st.sampled_from(["accept", "revise", "contest", "noop", "reject"]),
        "key": st.sampled_from(["k", "client.budget"]),
        "new_value": st.sampled_from(["$30k", "$50k", None])}  # fmt: skip
lines = st.fixed_dictionaries(
    good, optional={name: json_values for name in FIELDS if name not in good}
) | st.dictionaries(st.sampled_from(FIELDS), json_values, max_size=6)


def _digest(path: Path) -> str | None:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else None


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(lines, min_size=1, max_size=4), st.booleans())
def test_any_ops_line_is_applied_or_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], ops: list[dict], existing: bool
) -> None:
    store, path = tmp_path / "s.sqlite", tmp_path / "ops.jsonl"
    store.unlink(missing_ok=True)
    if existing:
        with Memory(store) as m:
            m.accept("client.budget", "$99k")
    before = _digest(store)
    path.write_text("".join(json.dumps(line) + "\n" for line in ops))
    code = main(["replay", str(store), str(path)])
    out = capsys.readouterr()
    assert code in (0, 2)
    if code == 2:
        (message,) = out.err.strip().splitlines()
        assert message.startswith("pmem: ") and str(path) in message
        assert _digest(store) == before, "a refused replay changed the store"
    else:
        assert out.out.startswith(f"{store}: applied {len(ops)} line(s)")
        with Memory(store) as m:
            assert m.check() == []
