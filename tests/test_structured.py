"""The fence-tolerant JSON parser: what small models actually send back."""

from __future__ import annotations

import json

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from benchmarks.models.structured import StructuredOutputError, parse_json

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**12), max_value=10**12)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)
containers = st.one_of(
    st.lists(json_values, max_size=4), st.dictionaries(st.text(max_size=8), json_values, max_size=4)
)
# Prose a model wraps around its answer: no brackets or backticks of its own.
prose = st.text(
    alphabet=st.characters(blacklist_characters="{}[]`", blacklist_categories=("Cs",)), max_size=40
)


@given(json_values, st.booleans(), st.sampled_from(["json", "JSON", ""]), prose, prose)
def test_any_fenced_value_parses_back_equal(
    value: object, ascii_only: bool, tag: str, before: str, after: str
) -> None:
    dumped = json.dumps(value, ensure_ascii=ascii_only, indent=None if ascii_only else 2)
    text = f"{before}\n```{tag}\n{dumped}\n```\n{after}"
    assert parse_json(text) == value


@given(json_values)
def test_any_bare_value_parses_back_equal(value: object) -> None:
    assert parse_json(f"  {json.dumps(value)}\n") == value


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


@given(containers, prose, prose)
def test_an_object_or_array_inside_prose_parses_back_equal(
    value: object, before: str, after: str
) -> None:
    text = f"{before} {json.dumps(value)} {after}"
    # prose that makes the whole reply one JSON value (`" [] "`, a string) is that value
    assume(not _is_json(text))
    assert parse_json(text) == value


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('```json\n{"op": "noop"}\n```', {"op": "noop"}),
        (
            'Sure! Here is the patch:\n```\n{"op": "revise", "key": "a"}\n```\nDone.',
            {"op": "revise", "key": "a"},
        ),
        ('<think>maybe {"op": "x"}? no</think>\n{"op": "accept"}', {"op": "accept"}),
        ('The answer is {"value": "$50k"} as requested.', {"value": "$50k"}),
        ("```json\n[1, 2, 3]\n```", [1, 2, 3]),
        ('```json\n{"code": "```inner```"}\n```', {"code": "```inner```"}),
        ('{"a": 1}', {"a": 1}),
        ("null", None),
        ('["<think>kept</think>"]', ["<think>kept</think>"]),
    ],
)
def test_typical_replies(text: str, expected: object) -> None:
    assert parse_json(text) == expected


@pytest.mark.parametrize(
    "text", ["", "I cannot answer that.", "```json\n{broken\n```", '{"a": 1', "<think>{}</think>"]
)
def test_no_json_raises_with_an_excerpt(text: str) -> None:
    with pytest.raises(StructuredOutputError, match="no JSON value"):
        parse_json(text)


def test_the_error_excerpt_is_short_for_a_long_reply() -> None:
    with pytest.raises(StructuredOutputError) as info:
        parse_json("word " * 5000)
    assert len(str(info.value)) < 200
