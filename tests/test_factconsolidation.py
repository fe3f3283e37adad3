"""FactConsolidation: every line parses, the gold state's figures, chunking, the benchmark.

The figures asserted here are the ones the released data gives (docs/factconsolidation.md sets
them beside the paper's B.4 figures). The key and overwritten counts agree with an independent
parse of the data (294 / 1,473 / 2,889 / 11,096 and 161 / 837 / 1,691 / 7,236).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import sys
from itertools import pairwise
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from benchmarks import factconsolidation as fc
from benchmarks.runner.types import Question

FACTS = {"6k": 455, "32k": 2310, "64k": 4580, "262k": 18332}
KEYS = {"6k": 294, "32k": 1473, "64k": 2889, "262k": 11096}
OVERWRITTEN = {"6k": 161, "32k": 837, "64k": 1691, "262k": 7236}
STALE_DENOMINATOR = {"6k": 74, "32k": 63, "64k": 64, "262k": 74}
GOLD_IS_CURRENT = {"6k": 100, "32k": 98, "64k": 98, "262k": 97}

# sha256 of the prompts as ported (checked once against the official utils/templates.py).
PROMPT_SHA256 = {
    "system": "fbb5a811635de72d10075fa9ef51c69e6e33b8ea4ed5fbfd193526910de6a2a5",
    "memorize": "7fb298c148aeea82bb4029b7bd4a55489a9ae5e02ed85ee910d60b1ad33482a6",
    "query": "ca4ea130355adab357ce8cd00bb11c1cdbe7cb945454764a66f1ac7f692f501d",
    "query_agentic": "16dfd7ef2a32eb12197672ebfda42145602a6d214492e0a1f2f629694495f0da",
}


@pytest.fixture(scope="module")
def data() -> dict[str, fc.SourceData]:
    return {source: fc.load(source) for source in fc.SOURCES}


# --- parsing -------------------------------------------------------------------------------


def test_every_line_of_every_source_parses_and_rerenders(data: dict[str, fc.SourceData]) -> None:
    for source, d in data.items():
        for fact in d.facts:
            assert fc.render_fact(fact.subject, fact.relation, fact.object) == fact.text, source
            assert fc.parse_fact(fact.text) == (fact.subject, fact.relation, fact.object)


def test_each_line_has_exactly_one_parse_after_the_documented_tie_break(
    data: dict[str, fc.SourceData],
) -> None:
    """No template splits a line two ways, and the chosen template is strictly most specific."""
    for length in fc.LENGTHS:
        for fact in data[f"sh_{length}"].facts:
            candidates = fc.fact_candidates(fact.text)
            relations = [t.relation for t, _, _ in candidates]
            assert len(relations) == len(set(relations)), fact.text
            best = max(t.specificity for t, _, _ in candidates)
            winners = [t.relation for t, _, _ in candidates if t.specificity == best]
            assert winners == [fact.relation], fact.text
            # The only ambiguity in the data: the catch-all officeholder template.
            assert set(relations) - {fact.relation} <= {"officeholder"}, fact.text


def test_the_37_relation_templates_are_all_used(data: dict[str, fc.SourceData]) -> None:
    used = {f.relation for d in data.values() for f in d.facts}
    assert len(fc.TEMPLATES) == 37
    assert used == set(fc.RELATIONS)


def test_line_numbers_and_serials(data: dict[str, fc.SourceData]) -> None:
    for d in data.values():
        assert [f.serial for f in d.facts] == list(range(len(d.facts)))
        assert [f.line_no for f in d.facts] == list(range(2, len(d.facts) + 2))


def test_an_unparseable_fact_raises_with_its_line_number() -> None:
    with pytest.raises(fc.UnparsedFact) as err:
        fc.parse_fact("Paris loves the city of Rome.", source="sh_6k", line_no=7)
    assert err.value.line_no == 7
    assert err.value.source == "sh_6k"
    assert "line 7" in str(err.value) and "sh_6k" in str(err.value)


def test_the_loader_reports_every_unparsed_line_at_once(tmp_path: Path) -> None:
    context = "\n".join(
        [
            fc.HEADER,
            "0. goaltender is associated with the sport of ice hockey.",
            "1. Paris loves the city of Rome.",
            "2. goaltender is associated with the sport of pesäpallo.",
            "no serial number here",
            "",
        ]
    )
    path = _write_rows(tmp_path, context)
    with pytest.raises(fc.UnparsedFact) as err:
        fc.load("sh_6k", path)
    assert err.value.lines == (
        (3, "1. Paris loves the city of Rome."),
        (5, "no serial number here"),
    )
    assert "sh_6k: 2 fact lines match no relation template" in str(err.value)
    assert "line 3" in str(err.value) and "line 5" in str(err.value)


def test_a_local_json_file_loads(tmp_path: Path) -> None:
    context = "\n".join(
        [
            fc.HEADER,
            "0. goaltender is associated with the sport of ice hockey.",
            "1. goaltender is associated with the sport of pesäpallo.",
            "",
        ]
    )
    d = fc.load("factconsolidation_sh_6k", _write_rows(tmp_path, context))
    assert d.source == "sh_6k" and len(d.facts) == 2
    state = fc.gold_state(d.facts)
    assert state[("goaltender", "sport")].current == "pesäpallo"
    assert d.origin.endswith("rows.json")


def test_repeated_serial_numbers_are_rejected(tmp_path: Path) -> None:
    context = "\n".join(
        [
            fc.HEADER,
            "0. goaltender is associated with the sport of ice hockey.",
            "0. goaltender is associated with the sport of pesäpallo.",
        ]
    )
    with pytest.raises(ValueError, match=r"serial 0 on lines \[2, 3\]"):
        fc.load("sh_6k", _write_rows(tmp_path, context))


def _write_rows(tmp_path: Path, context: str) -> Path:
    row = {
        "context": context,
        "questions": ["Which sport is goaltender associated with?"],
        "answers": [["pesäpallo"]],
        "metadata": {"source": "factconsolidation_sh_6k", "qa_pair_ids": ["q0"]},
    }
    path = tmp_path / "rows.json"
    path.write_text(json.dumps([row]), encoding="utf-8")
    return path


# Entity-like names: capitalised words, so no template's lower-case literal text can occur in
# them and the round trip is well defined (real names are covered by the exhaustive test).
_WORD = st.from_regex(r"[A-Z][a-zäöéü]{0,8}", fullmatch=True)
_NAME = st.builds(
    lambda words, tail: " ".join(words) + tail,
    st.lists(_WORD, min_size=1, max_size=4),
    st.sampled_from(["", ".", " Jr.", ", Inc.", " F.C.", "'s", " (1998)", " 2"]),
)


@given(relation=st.sampled_from(fc.RELATIONS), subject=_NAME, obj=_NAME)
def test_render_then_parse_round_trips(relation: str, subject: str, obj: str) -> None:
    line = fc.render_fact(subject, relation, obj)
    assert fc.parse_fact(line) == (subject, relation, obj)


def test_render_rejects_an_unknown_relation() -> None:
    with pytest.raises(ValueError, match="unknown relation 'nationality'"):
        fc.render_fact("A", "nationality", "B")


# --- loading -------------------------------------------------------------------------------


def test_fact_counts(data: dict[str, fc.SourceData]) -> None:
    for length, n in FACTS.items():
        assert len(data[f"sh_{length}"].facts) == n
        assert len(data[f"mh_{length}"].facts) == n
        assert data[f"sh_{length}"].facts == data[f"mh_{length}"].facts  # one shared stream


def test_questions_answers_and_ids(data: dict[str, fc.SourceData]) -> None:
    for source, d in data.items():
        assert len(d.questions) == len(d.answers) == len(d.question_ids) == 100
        assert d.question_ids[0] == f"factconsolidation_{source}_no0"
        assert all(len(golds) == 1 for golds in d.answers)


def test_spot_checks_from_the_data_readme(data: dict[str, fc.SourceData]) -> None:
    sh6 = data["sh_6k"]
    f223, f310 = sh6.facts[223], sh6.facts[310]
    assert f223.line == "223. goaltender is associated with the sport of ice hockey."
    assert (f223.subject, f223.relation, f223.object) == ("goaltender", "sport", "ice hockey")
    assert f310.line == "310. goaltender is associated with the sport of pesäpallo."
    assert sh6.answers[0] == ("pesäpallo",)
    assert fc.gold_state(sh6.facts)[("goaltender", "sport")].current == "pesäpallo"
    assert data["mh_6k"].answers[60] == ("Berlin",)


def test_source_names(data: dict[str, fc.SourceData]) -> None:
    assert fc.normalize_source("factconsolidation_mh_262k") == "mh_262k"
    assert fc.normalize_source("Factconsolidation_sh_6k") == "sh_6k"
    assert data["mh_64k"].name == "factconsolidation_mh_64k"
    assert (data["mh_64k"].hop, data["mh_64k"].length) == ("mh", "64k")


def test_an_unknown_source_lists_the_valid_ones_with_a_did_you_mean() -> None:
    with pytest.raises(fc.UnknownSource) as err:
        fc.load("sh_62k")
    message = str(err.value)
    assert "did you mean 'sh_262k'?" in message or "did you mean 'sh_32k'?" in message
    assert all(source in message for source in fc.SOURCES)
    with pytest.raises(fc.UnknownSource, match="did you mean 'mh_6k'"):
        fc.FactConsolidation("mh6k")


def test_the_hub_path_names_the_missing_package(monkeypatch: pytest.MonkeyPatch) -> None:
    # neither parquet reader imports, so it fails before any download; no network is touched
    for name in ("datasets", "pyarrow", "pyarrow.parquet"):
        monkeypatch.setitem(sys.modules, name, None)
    with pytest.raises(RuntimeError, match=r"pip install pyarrow\).*pip install datasets"):
        fc.load("sh_6k", path="hf")


def test_the_shipped_gzip_matches_the_sha256_recorded_in_sources_md() -> None:
    sources_md = (fc.DATA_DIR / "SOURCES.md").read_text(encoding="utf-8")
    recorded = dict(
        re.findall(r"\| `(Conflict_Resolution\.json(?:\.gz)?)`[^|]*\| `([0-9a-f]{64})`", sources_md)
    )
    raw = fc.DATA_FILE.read_bytes()
    assert hashlib.sha256(raw).hexdigest() == recorded["Conflict_Resolution.json.gz"]
    assert hashlib.sha256(gzip.decompress(raw)).hexdigest() == recorded["Conflict_Resolution.json"]
    assert recorded["Conflict_Resolution.json"] == fc.DATA_SHA256
    assert recorded["Conflict_Resolution.json.gz"] == fc.DATA_GZ_SHA256


# --- gold state and the stale denominator --------------------------------------------------


def test_keys_and_overwritten_keys_match_the_independent_parse(
    data: dict[str, fc.SourceData],
) -> None:
    for length in fc.LENGTHS:
        for hop in fc.HOPS:
            stats = fc.source_stats(data[f"{hop}_{length}"])
            assert (stats.facts, stats.keys, stats.overwritten) == (
                FACTS[length],
                KEYS[length],
                OVERWRITTEN[length],
            )


def test_every_key_is_stated_at_most_twice_with_different_values(
    data: dict[str, fc.SourceData],
) -> None:
    for length in fc.LENGTHS:
        for history in fc.gold_state(data[f"sh_{length}"].facts).values():
            assert len(history.values) <= 2
            assert len({v for _, v in history.values}) == len(history.values)


def test_gold_current_value_is_the_highest_serial() -> None:
    facts = [
        fc.Fact(5, "A is married to B.", 7, "A", "spouse", "B"),
        fc.Fact(2, "A is married to C.", 4, "A", "spouse", "C"),
    ]
    history = fc.gold_state(facts)[("A", "spouse")]
    assert history.values == ((2, "C"), (5, "B"))
    assert history.current == "B" and history.overwritten


def test_single_hop_questions_all_match_a_key_and_the_stale_denominator(
    data: dict[str, fc.SourceData],
) -> None:
    for length in fc.LENGTHS:
        stats = fc.source_stats(data[f"sh_{length}"])
        assert stats.matched == 100
        assert stats.gold_is_current == GOLD_IS_CURRENT[length]
        assert stats.stale_denominator == STALE_DENOMINATOR[length]
        mh = fc.source_stats(data[f"mh_{length}"])
        assert (mh.matched, mh.gold_is_current, mh.stale_denominator) == (None, None, None)


def test_question_matching_prefers_the_specific_template(data: dict[str, fc.SourceData]) -> None:
    state = fc.gold_state(data["sh_6k"].facts)
    question = "Who is the author of The Marriage of Figaro?"
    assert fc.match_question(question, state) == ("The Marriage of Figaro", "author")
    assert fc.match_question("Who is the Mayor of London?", {}) is None


def test_golds_that_are_the_superseded_value_stay_out_of_the_denominator(
    data: dict[str, fc.SourceData],
) -> None:
    infos = fc.question_infos(data["sh_32k"])
    odd = [i for i in infos if not i.gold_is_current]
    assert [(i.index, i.key, i.golds, i.current) for i in odd] == [
        (8, ("Noel Pemberton Billing", "work_location"), ("London",), "Washington, D.C."),
        (9, ("Papal States", "capital"), ("Rome",), "Watertown"),
    ]
    assert not any(i.stale_scoreable for i in odd)


def test_stale_is_an_incorrect_answer_naming_a_superseded_value(
    data: dict[str, fc.SourceData],
) -> None:
    q0 = fc.question_infos(data["sh_6k"])[0]
    assert q0.stale_scoreable and q0.superseded == ("ice hockey",)
    assert fc.is_stale("Ice hockey.", q0)
    assert not fc.is_stale("Answer: pesäpallo", q0)
    assert not fc.is_stale("football", q0)


# --- chunking (B.4) ------------------------------------------------------------------------


def test_chunks_are_line_aligned_and_at_most_1000_characters(
    data: dict[str, fc.SourceData],
) -> None:
    for length in fc.LENGTHS:
        facts = data[f"sh_{length}"].facts
        lines = [f.line for f in facts]
        pieces = fc.chunks(facts)
        assert all(len(p) <= fc.CHUNK_SIZE for p in pieces)
        assert [line for p in pieces for line in p.split("\n")] == lines
        assert "\n".join(pieces) == "\n".join(lines)
        # Greedy: the next chunk's first line would not have fit.
        for a, b in pairwise(pieces):
            assert len(a) + 1 + len(b.split("\n")[0]) > fc.CHUNK_SIZE


def test_a_line_longer_than_the_size_is_its_own_chunk() -> None:
    long = "x" * 30
    assert fc.chunks(["ab", long, "cd", "ef"], size=10) == ["ab", long, "cd\nef"]
    assert fc.chunks([], size=10) == []
    with pytest.raises(ValueError, match="positive"):
        fc.chunks(["a"], size=0)


@given(
    lines=st.lists(st.text(st.characters(exclude_characters="\n"), max_size=40), max_size=30),
    size=st.integers(1, 60),
)
def test_chunks_property(lines: list[str], size: int) -> None:
    pieces = fc.chunks(lines, size=size)
    assert "\n".join(pieces) == "\n".join(lines)
    assert sum(p.count("\n") + 1 for p in pieces) == len(lines)
    for p in pieces:
        assert len(p) <= size or "\n" not in p


# --- the benchmark -------------------------------------------------------------------------


def test_benchmark_episode_events_and_questions() -> None:
    bench = fc.FactConsolidation("sh_6k", limit=5)
    assert bench.name == "factconsolidation_sh_6k"
    (episode,) = bench.episodes()
    assert episode.id == "factconsolidation_sh_6k"
    assert len(episode.events) == 455 and len(episode.questions) == 5
    event = episode.events[223]
    assert event.text == "223. goaltender is associated with the sport of ice hockey."
    assert event.meta == {
        "serial": 223,
        "subject": "goaltender",
        "relation": "sport",
        "object": "ice hockey",
    }
    q0 = episode.questions[0]
    assert (q0.id, q0.golds) == ("factconsolidation_sh_6k_no0", ("pesäpallo",))
    assert q0.meta == {
        "source": "sh_6k",
        "hop": "single",
        "key": ["goaltender", "sport"],
        "current": "pesäpallo",
        "superseded": ["ice hockey"],
        "stale_scoreable": True,
    }
    mh = fc.FactConsolidation("mh_6k").episodes()[0].questions[60]
    assert mh.golds == ("Berlin",) and mh.meta["hop"] == "multi" and mh.meta["key"] is None


def test_answer_messages_use_the_official_templates() -> None:
    bench = fc.FactConsolidation("sh_6k")
    question = Question("q", "Which sport is goaltender associated with?", ("pesäpallo",))
    messages = bench.answer_messages(question, "0. A is married to B.")
    assert [m["role"] for m in messages] == ["system", "user"]
    assert messages[0]["content"] == fc.SYSTEM_MESSAGE
    user = messages[1]["content"]
    assert user.startswith(
        "Dialogue between User and Assistant 2025-01-01 00:00:00 \\n<User> The following context "
        "is the facts I have learned: \n0. A is married to B.\n <Assistant> I have learned the "
        "facts and I will answer the question you ask.\nPretend you are a knowledge management "
        "system."
    )
    assert user.endswith(
        "Now Answer the Question: Based on the provided Knowledge Pool, Which sport is "
        "goaltender associated with? \nAnswer:"
    )


def test_prompts_are_the_ported_templates_unchanged() -> None:
    prompts = fc.FactConsolidation().prompts()
    hashes = {k: hashlib.sha256(v.encode()).hexdigest() for k, v in prompts.items()}
    assert hashes == PROMPT_SHA256


def test_fingerprint_names_the_file_hash_and_source() -> None:
    info = fc.FactConsolidation("factconsolidation_mh_32k", limit=3).fingerprint()
    assert info["source"] == "factconsolidation_mh_32k"
    assert info["sha256"] == fc.DATA_SHA256
    assert info["file"] == "benchmarks/data/memoryagentbench/Conflict_Resolution.json.gz"
    assert info["questions"] == 3


def test_limit_must_be_positive() -> None:
    with pytest.raises(ValueError, match="positive"):
        fc.FactConsolidation(limit=0)


# --- CLI -----------------------------------------------------------------------------------


def test_stats_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert fc.main(["stats", "--json", "--source", "sh_6k", "--source", "mh_262k"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["sha256"] == fc.DATA_SHA256
    sh, mh = payload["sources"]
    assert sh == {
        "source": "sh_6k",
        "facts": 455,
        "keys": 294,
        "overwritten": 161,
        "stale_denominator": 74,
        "questions": 100,
        "questions_matched": 100,
        "gold_is_current": 100,
        "paper": {"facts": 455, "keys": 239, "overwritten": 131, "stale_denominator": 64},
    }
    assert mh["keys"] == 11096 and mh["stale_denominator"] is None
    assert mh["paper"]["stale_denominator"] is None


def test_stats_table_and_a_bad_source(capsys: pytest.CaptureFixture[str]) -> None:
    assert fc.main(["stats"]) == 0
    out = capsys.readouterr().out
    assert all(source in out for source in fc.SOURCES)
    assert "11,096 (8,445)" in out and "74 (64)" in out
    assert fc.main(["stats", "--source", "sh_7k"]) == 2
    assert "did you mean" in capsys.readouterr().err
