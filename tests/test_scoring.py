"""Tests for the MemoryAgentBench scoring port (benchmarks/scoring/rules.py)."""

from __future__ import annotations

import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from benchmarks.scoring.rules import (
    exact_match,
    memoryagentbench_score,
    normalize_answer,
    parse_output,
    substring_exact_match,
    token_f1,
)

# ---------------------------------------------------------------------------
# normalize_answer
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("Hello, World!", "hello world"),
        ("The Eiffel Tower", "eiffel tower"),
        ("an apple a day", "apple day"),
        ("  lots \t of\n\nspace  ", "lots of space"),
        ("Pesäpallo.", "pesäpallo"),
        # Punctuation is deleted (not replaced by a space) *before* articles are removed.
        ("a.b", "ab"),
        ("U.S.A.", "usa"),
        ("rock'n'roll", "rocknroll"),
        ("New-York", "newyork"),
        # Articles only as whole words; "a" inside a word stays.
        ("Anthem theatre atlas", "anthem theatre atlas"),
        ("THE A AN", ""),
        # "the." loses its dot first and is then removed as an article.
        ("at the. end", "at end"),
        ("", ""),
        ("!!!", ""),
    ],
)
def test_normalize_answer_examples(raw: str, expected: str) -> None:
    assert normalize_answer(raw) == expected


def test_normalize_deletes_every_ascii_punctuation_char() -> None:
    assert normalize_answer("x" + string.punctuation + "y") == "xy"


def test_normalize_keeps_non_ascii_punctuation() -> None:
    # Only string.punctuation (ASCII) is deleted, exactly as upstream.
    assert normalize_answer("«Berlin»") == "«berlin»"


# ---------------------------------------------------------------------------
# substring / exact / F1
# ---------------------------------------------------------------------------


def test_substring_match_pesapallo() -> None:
    assert substring_exact_match("The answer is Pesäpallo.", ["pesäpallo"])
    assert substring_exact_match("The answer is Pesäpallo.", "pesäpallo")
    assert not exact_match("The answer is Pesäpallo.", ["pesäpallo"])


def test_substring_match_is_not_word_bounded() -> None:
    # Upstream does plain `in` on normalized strings, so "berlin" matches "berliner".
    assert substring_exact_match("Berliner", ["Berlin"])
    assert not substring_exact_match("Paris", ["Berlin"])


def test_gold_normalizing_to_empty_always_matches() -> None:
    # "" in anything is True upstream as well.
    assert substring_exact_match("whatever", ["The"])


def test_nested_golds_are_flattened() -> None:
    golds = [["Paris"], ["Berlin", "Bonn"]]
    assert substring_exact_match("I think Bonn.", golds)
    assert exact_match("berlin", golds)
    assert not exact_match("Madrid", golds)
    assert token_f1("Bonn", golds) == 1.0


def test_deeply_nested_and_mixed_golds() -> None:
    golds = ["Paris", [["Berlin"], "Bonn"]]
    assert exact_match("berlin!", golds)
    assert exact_match("bonn", golds)
    assert exact_match("paris", golds)


def test_empty_golds_raise() -> None:
    with pytest.raises(ValueError, match="at least one gold"):
        substring_exact_match("x", [])
    with pytest.raises(ValueError, match="at least one gold"):
        token_f1("x", [[]])


def test_exact_match_uses_normalization() -> None:
    assert exact_match("The  Berlin!", ["berlin"])
    assert not exact_match("Berlin Germany", ["berlin"])


def test_token_f1_partial_credit() -> None:
    # prediction tokens: new york city (3), gold: new york (2); common 2.
    # precision 2/3, recall 1 -> F1 0.8.
    assert token_f1("New York City", ["new york"]) == pytest.approx(0.8)
    assert token_f1("Paris", ["Berlin"]) == 0.0
    assert token_f1("", ["Berlin"]) == 0.0


def test_token_f1_counts_repeated_tokens_once_per_match() -> None:
    # Counter intersection: min(2, 1) = 1 common; precision 1/2, recall 1 -> 2/3.
    assert token_f1("paris paris", ["paris"]) == pytest.approx(2 / 3)


def test_token_f1_yes_no_rule() -> None:
    assert token_f1("yes", ["no"]) == 0.0
    assert token_f1("Yes.", ["yes"]) == 1.0
    # "no" vs "no way": they differ and one side is special -> 0 despite the shared token.
    assert token_f1("no way", ["no"]) == 0.0
    assert token_f1("noanswer", ["noanswer found"]) == 0.0
    # Neither side special -> ordinary token F1.
    assert token_f1("no way", ["no way out"]) == pytest.approx(0.8)


def test_token_f1_max_over_golds() -> None:
    assert token_f1("new york", ["paris", "new york city"]) == pytest.approx(0.8)


def test_return_types() -> None:
    assert type(substring_exact_match("a", ["b"])) is bool
    assert type(exact_match("a", ["b"])) is bool
    assert type(token_f1("x", ["y"])) is float


# ---------------------------------------------------------------------------
# parse_output
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ("Answer: Berlin", "Berlin"),
        ("answer:   Berlin  \nbecause reasons", "Berlin"),
        ("Let me think.\nANSWER: Bonn\nMore text", "Bonn"),
        ("Berlin\nsecond line", "Berlin"),
        ("  Berlin  ", "Berlin"),
        ("", ""),
        ("\nBerlin", ""),
        # The first "Answer:" wins; a repeated leading prefix is stripped once.
        ("Answer: Answer: Paris", "Paris"),
        ("Answer: x\nAnswer: y", "x"),
        # The prefix is matched anywhere, including inside a sentence.
        ("The final answer: Rome.", "Rome."),
    ],
)
def test_parse_output(output: str, expected: str) -> None:
    assert parse_output(output) == expected


# ---------------------------------------------------------------------------
# memoryagentbench_score
# ---------------------------------------------------------------------------


def test_score_keeps_per_metric_max_of_raw_and_parsed() -> None:
    output = "Reasoning about facts 223 and 310.\nAnswer: Pesäpallo"
    score = memoryagentbench_score(output, [["pesäpallo"]])
    # The raw output contains the gold (substring); only the parsed answer is an exact match.
    assert score == {"substring_exact_match": True, "exact_match": True, "f1": 1.0}
    assert not exact_match(output, ["pesäpallo"])


def test_score_parsed_line_can_be_worse_than_raw() -> None:
    # The first line is "Berlin is" and the gold "Germany" only appears in the raw text.
    output = "Berlin is\nin Germany"
    score = memoryagentbench_score(output, ["Germany"])
    assert score["substring_exact_match"] is True
    assert score["exact_match"] is False
    # raw F1: tokens {berlin, is, in, germany} vs {germany} -> 2*(1/4)*1/(1/4+1) = 0.4
    assert score["f1"] == pytest.approx(0.4)


def test_score_miss() -> None:
    score = memoryagentbench_score("Answer: Paris", ["Berlin"])
    assert score == {"substring_exact_match": False, "exact_match": False, "f1": 0.0}


def test_score_keys() -> None:
    assert set(memoryagentbench_score("x", "x")) == {"substring_exact_match", "exact_match", "f1"}


# ---------------------------------------------------------------------------
# Properties
# ---------------------------------------------------------------------------

# Text that exercises the rules: articles, punctuation, case, whitespace and non-ASCII.
_pieces = st.sampled_from(["a", "an", "the", "The", "A", ".", ",", "-", "'", " ", "\n", "\t", "é"])
_texty = st.lists(st.one_of(_pieces, st.text(max_size=5)), max_size=12).map("".join)


@given(_texty)
def test_normalize_is_idempotent(s: str) -> None:
    once = normalize_answer(s)
    assert normalize_answer(once) == once


@given(_texty)
def test_normalized_text_has_no_punctuation_articles_or_extra_space(s: str) -> None:
    out = normalize_answer(s)
    assert not set(out) & set(string.punctuation)
    assert out == out.strip()
    assert "  " not in out
    assert not {"a", "an", "the"} & set(out.split())


@given(_texty, _texty, _texty)
def test_gold_contained_verbatim_always_matches(prefix: str, gold: str, suffix: str) -> None:
    # Separated by spaces, so the surrounding text cannot merge with the gold's words.
    prediction = f"{prefix} {gold} {suffix}"
    assert substring_exact_match(prediction, [gold])
    assert memoryagentbench_score(prediction, [[gold]])["substring_exact_match"]


@given(_texty, _texty)
def test_exact_match_implies_substring_match(prediction: str, gold: str) -> None:
    if exact_match(prediction, gold):
        assert substring_exact_match(prediction, gold)


@given(_texty, st.lists(_texty, min_size=1, max_size=4))
def test_f1_bounds_and_exact_match_gives_full_f1(prediction: str, golds: list[str]) -> None:
    f1 = token_f1(prediction, golds)
    assert 0.0 <= f1 <= 1.0
    if exact_match(prediction, golds) and normalize_answer(prediction):
        assert f1 == 1.0


@given(_texty, st.lists(_texty, min_size=1, max_size=4))
def test_max_over_golds_matches_best_single_gold(prediction: str, golds: list[str]) -> None:
    assert token_f1(prediction, golds) == max(token_f1(prediction, g) for g in golds)
    assert substring_exact_match(prediction, golds) == any(
        substring_exact_match(prediction, g) for g in golds
    )
    nested = [[g] for g in golds]
    assert exact_match(prediction, nested) == exact_match(prediction, golds)


@given(_texty, _texty)
def test_score_dominates_raw_and_parsed(output: str, gold: str) -> None:
    score = memoryagentbench_score(output, [gold])
    for text in (output, parse_output(output)):
        assert score["substring_exact_match"] >= substring_exact_match(text, [gold])
        assert score["exact_match"] >= exact_match(text, [gold])
        assert score["f1"] >= token_f1(text, [gold])


@given(_texty)
def test_parse_output_is_a_single_stripped_line(output: str) -> None:
    parsed = parse_output(output)
    assert "\n" not in parsed
    assert parsed == parsed.strip()
