"""A FactConsolidation data file mutated any way a careless edit or another tool could: loading
it either works or raises one `InputError` naming the file (printed by pmem-bench as one line),
never a KeyError, TypeError or AttributeError from deep inside the loader."""

from __future__ import annotations

import copy
import gzip
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks.factconsolidation.load import DATA_FILE, load
from benchmarks.runner.types import InputError

ROWS = json.loads(gzip.decompress(DATA_FILE.read_bytes()))
SH6K = next(i for i, r in enumerate(ROWS) if r["metadata"]["source"].endswith("sh_6k"))
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=5,
)
PLACES = [
    ("questions",), ("answers",), ("context",), ("metadata",), ("metadata", "source"),
    ("metadata", "qa_pair_ids"), ("answers", 0), ("questions", 3),
]  # fmt: skip


def mutated(place: tuple, value: object) -> list:
    rows = copy.deepcopy(ROWS)
    node = rows[SH6K]
    for step in place[:-1]:
        node = node[step]
    node[place[-1]] = value
    return rows


@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.sampled_from(PLACES), json_values)
def test_a_mutated_data_file_loads_or_is_refused_naming_it(
    tmp_path: Path, place: tuple, value: object
) -> None:
    path = tmp_path / "cr.json"
    path.write_text(json.dumps(mutated(place, value)))
    try:
        data = load("sh_6k", path)
    except InputError as err:
        assert str(path) in str(err) or "sh_6k" in str(err)
        assert "\n" not in str(err).strip() or "line" in str(err)
    else:
        assert len(data.questions) == len(data.answers) == len(data.question_ids)


@pytest.mark.parametrize(
    "rows",
    [
        {"not": "a list"},
        [1, 2, 3],
        [{"metadata": "x"}],
        [{**ROWS[SH6K], "questions": None}],
        [{**ROWS[SH6K], "answers": [[1, 2]] * len(ROWS[SH6K]["questions"])}],
        [ROWS[SH6K], ROWS[SH6K]],  # the source twice
        [{**ROWS[SH6K], "metadata": {**ROWS[SH6K]["metadata"],
                                     "qa_pair_ids": ["same"] * len(ROWS[SH6K]["questions"])}}],
    ],
)  # fmt: skip
def test_wrong_schema_files_are_one_input_error(tmp_path: Path, rows: object) -> None:
    path = tmp_path / "cr.json"
    path.write_text(json.dumps(rows))
    with pytest.raises(InputError) as err:
        load("sh_6k", path)
    assert str(path) in str(err.value)
