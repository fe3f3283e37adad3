"""The library alone: both write paths driven by a scripted chat class and a word-hash embedder
written here (no harness client, no server), the same write in a fresh interpreter that may
import nothing but the standard library and `pmem`, and the plain-Python key index against a
numpy argmax."""

from __future__ import annotations

import asyncio
import inspect
import json
import subprocess
import sys
import textwrap
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pmem import Memory
from pmem.revise import AnnotationError, predict_patch, revise_schema
from pmem.write import FlatKeyIndex, WritePath

ROOT = Path(__file__).resolve().parent.parent


# -- the caller's side: a scripted chat callable and an embedder -------------------------------
# (their source is also sent to the subprocess below, so they use nothing but the stdlib)


@dataclass
class Reply:
    text: str
    parsed: Any = None


class ScriptedWriter:
    """Fixed replies: an extraction per record, "same" for one pair of key names."""

    EXTRACTIONS: ClassVar[dict[str, list[dict[str, str]]]] = {
        "alice home city: Paris\nalice job: nurse": [
            {"key": "alice home city", "value": "Paris"},
            {"key": "Alice job", "value": "nurse"},
        ],
        "alice residence city: Rome": [{"key": "alice residence city", "value": "Rome"}],
    }
    SAME: ClassVar[set[tuple[str, str]]] = {("alice_residence_city", "alice_home_city")}

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    async def complete(
        self, messages, *, max_tokens=None, temperature=None, schema=None, schema_name="answer"
    ):
        prompt = messages if isinstance(messages, str) else messages[-1]["content"]
        self.calls.append({"prompt": prompt, "schema_name": schema_name, "max_tokens": max_tokens})
        if prompt.startswith("Extract every fact"):
            text = json.dumps(self.EXTRACTIONS[prompt.split("Text:\n", 1)[1]])
        elif prompt.startswith("Do these two keys"):
            lines = prompt.splitlines()
            pair = (lines[1].removeprefix("A: "), lines[2].removeprefix("B: "))
            return Reply("same" if pair in self.SAME else "different")
        else:
            text = prompt.rsplit("REPLY: ", 1)[-1]  # the Revise test puts its reply in the prompt
        try:
            parsed = json.loads(text) if schema is not None else None
        except ValueError:
            parsed = None
        return Reply(text, parsed)


def hash_vector(text: str, dimensions: int = 256) -> list[float]:
    """A unit bag-of-words vector, one crc32 bucket per word (texts sharing words are close)."""
    v = [0.0] * dimensions
    for word in text.lower().split():
        v[zlib.crc32(word.encode()) % dimensions] += 1.0
    norm = sum(x * x for x in v) ** 0.5 or 1.0
    return [x / norm for x in v]


class HashEmbedder:
    async def embed(self, texts, kind="passage"):
        return [hash_vector(t) for t in texts]


def write_two(soft_identity: float | None) -> dict[str, Any]:
    """Two records through `WritePath.write`; what the memory and the stats then say."""
    memory, writer = Memory(), ScriptedWriter()
    path = WritePath(memory, writer, HashEmbedder(), soft_identity=soft_identity)
    asyncio.run(path.write(list(ScriptedWriter.EXTRACTIONS)))
    return {
        "cells": {c.key: c.value for c in memory.frontier()},
        "history": {c.key: [v.value for v in c.history] for c in memory.frontier()},
        "decisions": path.stats.decisions,
        "gated_merged": [path.stats.gated, path.stats.merged],
        "calls": len(writer.calls),
        "check": memory.check(),
    }


WITHOUT_SOFT_IDENTITY = {
    "cells": {"alice_home_city": "Paris", "alice_job": "nurse", "alice_residence_city": "Rome"},
    "history": {"alice_home_city": [], "alice_job": [], "alice_residence_city": []},
    "decisions": {"create": 3},
    "gated_merged": [0, 0],
    "calls": 2,
    "check": [],
}
# "alice residence city" shares two of three words with "alice home city": cosine 2/3
WITH_SOFT_IDENTITY = {
    "cells": {"alice_home_city": "Rome", "alice_job": "nurse"},
    "history": {"alice_home_city": ["Paris"], "alice_job": []},
    "decisions": {"create": 2, "accept": 1},
    "gated_merged": [1, 1],
    "calls": 3,
    "check": [],
}


def test_the_write_path_with_a_scripted_chat_class() -> None:
    assert write_two(None) == WITHOUT_SOFT_IDENTITY
    assert write_two(0.6) == WITH_SOFT_IDENTITY
    assert write_two(0.7)["cells"] == WITHOUT_SOFT_IDENTITY["cells"]  # below the threshold


def test_the_extraction_call() -> None:
    writer = ScriptedWriter()
    run = WritePath(Memory(), writer, soft_identity=None).write(["alice residence city: Rome"])
    asyncio.run(run)
    (call,) = writer.calls
    assert (call["schema_name"], call["max_tokens"]) == ("facts", 1024)


def test_the_revise_path_with_a_scripted_chat_class() -> None:
    writer = ScriptedWriter()
    reply = {
        "op": "revise",
        "key": "mug.location",
        "old_value": None,
        "new_value": "shelf 2.",
        "status": "superseded",
        "supersedes": None,
    }
    patch, mismatch = asyncio.run(
        predict_patch(writer, f"REPLY: {json.dumps(reply)}", "mug.location", resolvable=False)
    )
    assert (patch.op, patch.key, patch.new_value, patch.status, mismatch) == (
        "revise",
        "mug.location",
        "shelf 2",
        "superseded",
        False,
    )
    assert Memory().apply(patch).decision == "create"
    with pytest.raises(AnnotationError) as err:
        asyncio.run(predict_patch(writer, "REPLY: no json", "mug.location", resolvable=True))
    assert err.value.reason == "unparsed"
    assert revise_schema(True)["properties"]["op"]["enum"] == ["revise", "resolve", "noop"]


# -- the library in an interpreter that refuses everything but the stdlib and pmem -------------

GUARD = """\
import importlib.abc
import sys

class StdlibOnly(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        top = name.partition(".")[0]
        if top == "pmem" or top in sys.stdlib_module_names:
            return None
        raise ModuleNotFoundError(f"not the standard library: {name}")

sys.meta_path.insert(0, StdlibOnly())
sys.path.insert(0, sys.argv[1])
"""
PROGRAM = """\
import asyncio
import json
import zlib
from dataclasses import dataclass
from typing import Any, ClassVar

import pmem.cli, pmem.protocols, pmem.replay, pmem.revise
from pmem import Memory
from pmem.write import WritePath

{helpers}

result = {{"without": write_two(None), "with": write_two(0.6)}}
foreign = sorted(
    name for name in sys.modules
    if name.partition(".")[0] not in sys.stdlib_module_names | {{"pmem", "__main__"}}
)
result["foreign"] = foreign
print(json.dumps(result))
"""


def test_the_library_needs_only_the_standard_library() -> None:
    helpers = "\n\n".join(
        textwrap.dedent(inspect.getsource(obj))
        for obj in (Reply, ScriptedWriter, hash_vector, HashEmbedder, write_two)
    )
    code = "from __future__ import annotations\n" + GUARD + PROGRAM.format(helpers=helpers)
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", code, str(ROOT)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result == {
        "without": WITHOUT_SOFT_IDENTITY,
        "with": WITH_SOFT_IDENTITY,
        "foreign": [],
    }


def test_the_guard_refuses_a_third_party_import() -> None:
    code = GUARD + "import numpy\n"
    done = subprocess.run(
        [sys.executable, "-I", "-c", code, str(ROOT)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode != 0 and "not the standard library: numpy" in done.stderr


# -- FlatKeyIndex decides as numpy does ------------------------------------------------------


def numpy_nearest(rows: list[list[float]], query: list[float]) -> tuple[int, float]:
    """What soft identity did with numpy: float32 rows, the query as given, np.argmax."""
    scores = np.asarray(rows, dtype=np.float32) @ np.asarray(query)
    best = int(np.argmax(scores))
    return best, float(scores[best])


def flat_nearest(rows: list[list[float]], query: list[float]) -> tuple[int, float]:
    index = FlatKeyIndex()
    for i, row in enumerate(rows):
        index.add(f"k{i}", row)
    hit = index.nearest(query)
    assert hit is not None
    return int(hit[0][1:]), hit[1]


def vectors(
    values: st.SearchStrategy[float],
) -> st.SearchStrategy[tuple[list[list[float]], list[float]]]:
    return st.integers(1, 8).flatmap(
        lambda d: st.tuples(
            st.lists(st.lists(values, min_size=d, max_size=d), min_size=1, max_size=8),
            st.lists(values, min_size=d, max_size=d),
        )
    )


# Eighths in [-2, 2]: every product and sum is exact, so ties are exact and common.
EIGHTHS = st.integers(-16, 16).map(lambda n: n / 8)


@settings(max_examples=300, deadline=None)
@given(vectors(EIGHTHS), st.integers(-16, 16).map(lambda n: n / 8))
def test_flat_index_picks_numpys_key_ties_to_the_first(case, threshold: float) -> None:
    rows, query = case
    best, score = numpy_nearest(rows, query)
    assert flat_nearest(rows, query) == (best, score)
    assert (flat_nearest(rows, query)[1] >= threshold) == (score >= threshold)


@settings(max_examples=300, deadline=None)
@given(vectors(st.floats(-1, 1, width=32)))
def test_flat_index_picks_numpys_key_on_random_vectors(case) -> None:
    rows, query = case
    best, score = numpy_nearest(rows, query)
    picked, flat_score = flat_nearest(rows, query)
    assert abs(flat_score - score) <= 1e-12
    if picked != best:  # only within rounding of a tie
        scores = np.asarray(rows, dtype=np.float32).astype(np.float64) @ np.asarray(query)
        assert abs(scores[picked] - scores[best]) <= 1e-12


def test_flat_index_stores_float32_and_checks_dimensions() -> None:
    index = FlatKeyIndex()
    assert index.nearest([1.0]) is None
    index.add("a", [0.1, 0.0])
    assert index.nearest(np.asarray([1.0, 0.0], dtype=np.float32)) == ("a", float(np.float32(0.1)))
    with pytest.raises(ValueError, match="dimensions"):
        index.add("b", [1.0])
    with pytest.raises(ValueError, match="dimensions"):
        index.nearest([1.0, 0.0, 0.0])
