"""LongMemEval loader: the shipped real S instance, the generated fixture, flattening into
dated turns, abstention and the knowledge-update subset, schema errors that name the file, the
instance and the field, unknown ids, the reading prompt, and the stats and fetch commands."""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from benchmarks import longmemeval as lme
from benchmarks.longmemeval import (
    DATA_DIR,
    DATA_FILE,
    DATA_SHA256,
    EXTRA_FILES,
    FIXTURE_FILE,
    LongMemEval,
    SchemaError,
    UnknownQuestion,
    fixture_instances,
    load,
    normalize_date,
)


def write(tmp_path: Path, rows: Any, name: str = "bad.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(rows), encoding="utf-8")
    return path


@pytest.fixture
def fixture_file(tmp_path: Path) -> Path:
    return write(tmp_path, fixture_instances(), "fixture.json")


# ---------------------------------------------------------------- the shipped real instance


def test_the_shipped_instance_is_the_shared_copy_byte_for_byte() -> None:
    assert hashlib.sha256(DATA_FILE.read_bytes()).hexdigest() == DATA_SHA256
    sources = (DATA_FILE.parent / "SOURCES.md").read_text(encoding="utf-8")
    assert DATA_SHA256 in sources and "zjunlp/LightMem" in sources


def test_the_real_instance_loads_and_flattens_into_dated_turns() -> None:
    bench = LongMemEval()
    (episode,) = bench.episodes()
    (q,) = episode.questions
    assert (episode.id, q.id, q.text) == (
        "e47becba",
        "e47becba",
        "What degree did I graduate with?",
    )
    assert q.golds == ("Business Administration",)
    assert q.at == "2023-05-30T23:40:00"
    assert q.meta["question_type"] == "single-session-user"
    assert q.meta["abstention"] is False
    assert q.meta["question_date"] == "2023/05/30 (Tue) 23:40"
    assert q.meta["answer_session_ids"] == ["answer_280352e9"]
    assert len(episode.events) == 550
    first = episode.events[0]
    assert first.id == "e47becba-s0-t0" and first.at == "2023-05-20T02:21:00"
    assert first.text.startswith("user: The farmer needs to transport a fox")
    assert first.meta == {
        "session_id": "sharegpt_yywfIrx_0",
        "session_index": 0,
        "turn_index": 0,
        "role": "user",
        "has_answer": False,
        "date": "2023/05/20 (Sat) 02:21",
    }
    answer = [e for e in episode.events if e.meta["has_answer"]]
    assert [e.id for e in answer] == ["e47becba-s51-t4", "e47becba-s51-t5"]
    assert answer[0].text.startswith("user: I graduated with a degree in Business Administration")
    assert answer[1].text.startswith("assistant: ")
    ats = [e.at for e in episode.events]
    assert ats == sorted(ats)  # arrival order
    assert [e["turn_index"] for e in q.meta["evidence"]] == [4, 5]
    fp = bench.fingerprint()
    assert fp["sha256"] == DATA_SHA256 and fp["matches_pin"] is True
    assert fp["file"] == "benchmarks/data/longmemeval/longmemeval_s_single_e47becba.json"
    assert fp["questions"] == 1


def test_the_extra_real_instances_load_as_their_variants_with_their_provenance() -> None:
    """Ten more real records, split by haystack style; with the shipped one, nine questions of
    five types. Each file's provenance is index-aligned with it."""
    sources = (DATA_DIR / "SOURCES.md").read_text(encoding="utf-8")
    ids: dict[str, list[str]] = {}
    for variant, (path, sha256) in EXTRA_FILES.items():
        assert hashlib.sha256(path.read_bytes()).hexdigest() == sha256 and sha256 in sources
        loaded = load(path, variant)
        provenance = json.loads(path.with_name(f"{path.stem}_provenance.json").read_text())
        ids[variant] = [i.question_id for i in loaded.instances]
        assert [p["question_id"] for p in provenance] == ids[variant]
        assert all(p["source"].startswith("github:") for p in provenance)
    assert ids["s"] == ["ba358f49", "6a1eabeb"]
    assert len(ids["oracle"]) == 8 and "gpt4_70e84552_abs" in ids["oracle"]
    every = load(DATA_FILE).instances + tuple(
        i for v, (path, _) in EXTRA_FILES.items() for i in load(path, v).instances
    )
    assert len({i.question_id for i in every}) == 9
    assert {i.question_type for i in every} == {
        "single-session-user",
        "single-session-preference",
        "multi-session",
        "knowledge-update",
        "temporal-reasoning",
    }
    # the S haystacks are whole haystacks; the oracle ones hold the evidence sessions only
    assert all(len(i.sessions) >= 40 for i in load(EXTRA_FILES["s"][0], "s").instances)
    oracle = load(EXTRA_FILES["oracle"][0], "oracle").instances
    assert all(len(i.sessions) <= 3 for i in oracle)


# ---------------------------------------------------------------- the generated fixture


def test_the_shipped_fixture_file_is_the_generated_fixture() -> None:
    assert json.loads(FIXTURE_FILE.read_text(encoding="utf-8")) == fixture_instances()


def test_the_fixture_covers_update_aggregation_abstention(fixture_file: Path) -> None:
    instances = load(fixture_file).instances
    by_id = {i.question_id: i for i in instances}
    assert set(by_id) == {"fx_ku_1", "fx_multi_1", "fx_user_1_abs", "fx_temporal_1"}
    assert [i.question_id for i in instances if i.abstention] == ["fx_user_1_abs"]
    assert by_id["fx_multi_1"].answer == "2"  # an integer answer, as in the released files
    ku = LongMemEval(fixture_file, types=["knowledge-update"]).episodes()
    assert [e.id for e in ku] == ["fx_ku_1"]
    (q,) = ku[0].questions
    assert [e["content"][:20] for e in q.meta["evidence"]] == [
        "I just moved into a ",
        "Since we relocated t",
    ]
    assert [e["date"] for e in q.meta["evidence"]] == [
        "2023/01/10 (Tue) 09:15",
        "2023/03/15 (Wed) 20:30",
    ]


def test_sessions_are_flattened_in_date_order_when_the_file_is_not(fixture_file: Path) -> None:
    (episode,) = LongMemEval(fixture_file, ids=["fx_multi_1"]).episodes()
    assert [e.id for e in episode.events] == [
        "fx_multi_1-s2-t0",
        "fx_multi_1-s2-t1",
        "fx_multi_1-s1-t0",
        "fx_multi_1-s1-t1",
        "fx_multi_1-s0-t0",
        "fx_multi_1-s0-t1",
    ]
    assert [e.at[:10] for e in episode.events[::2]] == ["2023-03-03", "2023-03-10", "2023-03-21"]
    assert episode.events[0].text.startswith("user: I saw my GP")
    assert episode.events[1].text.startswith("assistant: ")


def test_abstention_questions_are_marked(fixture_file: Path) -> None:
    (episode,) = LongMemEval(fixture_file, ids=["fx_user_1_abs"]).episodes()
    q = episode.questions[0]
    assert q.meta["abstention"] is True and q.meta["question_type"] == "single-session-user"
    assert lme.is_abstention("0862e8bf_abs") and not lme.is_abstention("0862e8bf")


def test_limit_types_and_ids_select_in_file_order(fixture_file: Path) -> None:
    assert [e.id for e in LongMemEval(fixture_file, limit=2).episodes()] == [
        "fx_ku_1",
        "fx_multi_1",
    ]
    both = LongMemEval(fixture_file, ids=["fx_temporal_1", "fx_ku_1"]).episodes()
    assert [e.id for e in both] == ["fx_ku_1", "fx_temporal_1"]
    assert LongMemEval(fixture_file, types=["single-session-preference"]).episodes() == []
    with pytest.raises(ValueError, match="unknown question types"):
        LongMemEval(fixture_file, types=["knowledge_update"])


def test_a_keys_file_selects_questions(fixture_file: Path, tmp_path: Path) -> None:
    keys = tmp_path / "keys.jsonl"
    keys.write_text(
        '{"question_id": "fx_temporal_1", "question_type": "temporal-reasoning"}\n',
        encoding="utf-8",
    )
    assert [e.id for e in LongMemEval(fixture_file, keys=keys).episodes()] == ["fx_temporal_1"]


def test_dates_normalize_to_iso() -> None:
    assert normalize_date("2023/05/20 (Sat) 02:21") == "2023-05-20T02:21:00"
    assert normalize_date("2023-05-20T02:21") == "2023-05-20T02:21:00"
    with pytest.raises(ValueError):
        normalize_date("May 20, 2023")


# ---------------------------------------------------------------- the reading prompt


def test_the_answer_prompt_is_the_official_reading_prompt_with_the_question_date() -> None:
    bench = LongMemEval()
    (episode,) = bench.episodes()
    (msg,) = bench.answer_messages(episode.questions[0], "HISTORY")
    assert msg["role"] == "user"
    assert msg["content"] == (
        "I will give you several history chats between you and a user. Please answer the "
        "question based on the relevant chat history.\n\n\nHistory Chats:\n\nHISTORY\n\n"
        "Current Date: 2023/05/30 (Tue) 23:40\nQuestion: What degree did I graduate with?\n"
        "Answer:"
    )
    prompts = bench.prompts()
    assert hashlib.sha256(prompts["answer"].encode()).hexdigest() == (
        "e427ff913456e51a132ec865b1b5038d562bdc36890976943ad421cc9b365c9d"
    )
    cot = LongMemEval(reading="cot").prompts()["answer"]
    assert hashlib.sha256(cot.encode()).hexdigest() == (
        "9e2b3110622929ab896696dd8937231c7436740ec3b9586f653f97346e19ab2c"
    )
    assert {"judge.default", "judge.knowledge-update", "judge.abstention"} <= set(prompts)


# ---------------------------------------------------------------- bad input


def _broken(mutate: Any, index: int = 1) -> list[dict[str, Any]]:
    rows = copy.deepcopy(fixture_instances())
    mutate(rows[index])
    return rows


@pytest.mark.parametrize(
    ("mutate", "field", "says"),
    [
        (lambda r: r.pop("answer"), "answer", "missing"),
        (lambda r: r.pop("haystack_sessions"), "haystack_sessions", "missing"),
        (lambda r: r.update(question=7), "question", "expected a string, got int"),
        (lambda r: r.update(answer=None), "answer", "got null"),
        (lambda r: r.update(question_type="knowledge_update"), "question_type", "is not one of"),
        (lambda r: r.update(question_date="yesterday"), "question_date", "not a date"),
        (
            lambda r: r.update(haystack_dates=r["haystack_dates"][:1]),
            "haystack_sessions",
            "aligned",
        ),
        (lambda r: r.update(haystack_session_ids="a,b"), "haystack_session_ids", "list"),
        (lambda r: r["haystack_dates"].__setitem__(1, 5), "haystack_dates[1]", "got int"),
        (
            lambda r: r["haystack_sessions"][2][1].pop("role"),
            "haystack_sessions[2][1].role",
            "missing",
        ),
        (
            lambda r: r["haystack_sessions"][0][0].update(role="bot"),
            "haystack_sessions[0][0].role",
            "not 'user'",
        ),
        (
            lambda r: r["haystack_sessions"][0][0].update(has_answer="yes"),
            "haystack_sessions[0][0].has_answer",
            "boolean",
        ),
        (
            lambda r: r["haystack_sessions"].__setitem__(1, {"role": "user"}),
            "haystack_sessions[1]",
            "list of turns",
        ),
        (lambda r: r.update(answer_session_ids=None), "answer_session_ids", "got null"),
    ],
)
def test_a_bad_field_names_the_file_the_instance_and_the_field(
    tmp_path: Path, mutate: Any, field: str, says: str
) -> None:
    path = write(tmp_path, _broken(mutate))
    with pytest.raises(SchemaError) as info:
        load(path)
    err = info.value
    assert (err.file, err.index, err.question_id, err.field) == (str(path), 1, "fx_multi_1", field)
    message = str(err)
    assert str(path) in message and "instance 1" in message and "'fx_multi_1'" in message
    assert repr(field) in message and says in message


def test_a_missing_question_id_names_the_instance(tmp_path: Path) -> None:
    path = write(tmp_path, _broken(lambda r: r.pop("question_id"), index=2))
    with pytest.raises(SchemaError, match=r"bad\.json: instance 2: field 'question_id': missing"):
        load(path)


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ('{"question_id": "x"}', "expected a JSON list of instances, got dict"),
        ("[1, 2]", "instance 0: expected a JSON object, got int"),
        ("not json", "not valid JSON"),
    ],
)
def test_a_file_that_is_not_the_schema_is_named(tmp_path: Path, content: str, says: str) -> None:
    path = tmp_path / "other.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(SchemaError, match=r"other\.json") as info:
        load(path)
    assert says in str(info.value)


def test_duplicate_question_ids_are_refused(tmp_path: Path) -> None:
    rows = fixture_instances()
    rows.append(copy.deepcopy(rows[0]))
    with pytest.raises(SchemaError, match="duplicate question_id") as info:
        load(write(tmp_path, rows))
    assert info.value.index == 4 and info.value.question_id == "fx_ku_1"


def test_an_id_not_in_the_file_names_the_file_and_the_id(fixture_file: Path) -> None:
    bench = LongMemEval(fixture_file, ids=["fx_ku_1", "0100672e"])
    with pytest.raises(UnknownQuestion) as info:
        bench.episodes()
    assert info.value.ids == ("0100672e",) and info.value.file == str(fixture_file)
    assert str(fixture_file) in str(info.value) and "'0100672e'" in str(info.value)


def test_a_keys_file_id_not_in_the_file_is_named(fixture_file: Path, tmp_path: Path) -> None:
    keys = tmp_path / "keys.jsonl"
    keys.write_text('{"question_id": "fx_ku_1"}\n{"question_id": "00ca467f"}\n', encoding="utf-8")
    with pytest.raises(UnknownQuestion, match="00ca467f") as info:
        LongMemEval(fixture_file, keys=keys).episodes()
    assert "keys file" in str(info.value) and str(fixture_file) in str(info.value)


def test_a_missing_file_says_how_to_get_one(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="longmemeval-cleaned"):
        load(tmp_path / "nope.json", variant="s_cleaned")


def test_bad_options_are_refused() -> None:
    with pytest.raises(ValueError, match="variant"):
        LongMemEval(variant="m")
    with pytest.raises(ValueError, match="limit"):
        LongMemEval(limit=0)
    with pytest.raises(ValueError, match="reading"):
        LongMemEval(reading="con")


# ---------------------------------------------------------------- commands


def test_stats_prints_types_abstentions_and_sizes(
    fixture_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert lme.main(["stats", "--path", str(fixture_file)]) == 0
    out = capsys.readouterr().out
    assert "instances: 4" in out
    for line in (
        "knowledge-update               1",
        "multi-session                  1",
        "single-session-preference      0",
        "abstention (_abs)              1",
    ):
        assert line in out
    assert "knowledge-update subset: 1 (the paper's full S file: 78)" in out
    assert "sessions                 mean          2.8   min          2   max          4" in out
    assert "turns                    mean          5.5   min          4   max          8" in out


def test_stats_json_on_the_real_instance(capsys: pytest.CaptureFixture[str]) -> None:
    assert lme.main(["stats", "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["sha256"] == DATA_SHA256 and stats["instances"] == 1
    assert stats["question_types"]["single-session-user"] == 1 and stats["abstention"] == 0
    assert stats["sessions"] == {"mean": 53, "min": 53, "max": 53}
    assert stats["turns"]["max"] == 550 and stats["total_chars"] == 485_494
    assert stats["answer_sessions_missing"] == 0


def test_stats_on_a_bad_file_reports_the_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, _broken(lambda r: r.pop("question_date")))
    assert lme.main(["stats", "--path", str(path)]) == 2
    assert "field 'question_date': missing" in capsys.readouterr().err


def test_fetch_offline_says_which_url_goes_where(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert lme.main(["fetch", "--variant", "oracle", "--dest", str(tmp_path), "--offline"]) == 1
    err = capsys.readouterr().err
    url = (
        "https://huggingface.co/datasets/xiaowu0162/longmemeval-cleaned/resolve/"
        "98d7416c24c778c2fee6e6f3006e7a073259d48f/longmemeval_oracle.json"
    )
    assert url in err and str(tmp_path / "longmemeval_oracle.json") in err
    assert "821a2034d219ab45846873dd14c14f12cfe7776e73527a483f9dac095d38620c" in err


def test_download_offline_raises_with_instructions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(lme.DownloadError, match=r"longmemeval_s_cleaned\.json") as info:
        lme.download(lme.VARIANTS["s_cleaned"], tmp_path)
    assert lme.VARIANTS["s_cleaned"].url in str(info.value)
    monkeypatch.setenv("PMEM_DATA_DIR", str(tmp_path))
    with pytest.raises(lme.DownloadError, match="offline"):
        LongMemEval(path="hf", variant="oracle").episodes()


def test_fetch_checks_a_pinned_hash(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "longmemeval_oracle.json").write_text("[]", encoding="utf-8")
    assert lme.main(["fetch", "--variant", "oracle", "--dest", str(tmp_path), "--offline"]) == 1
    assert "MISMATCH" in capsys.readouterr().err
    with pytest.raises(lme.DownloadError, match="is not the pinned"):
        lme.download(lme.VARIANTS["oracle"], tmp_path)


def test_fetch_records_a_hash_where_none_is_pinned(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "longmemeval_s.json"
    target.write_bytes(DATA_FILE.read_bytes())
    assert lme.main(["fetch", "--variant", "s", "--dest", str(tmp_path), "--offline"]) == 0
    out = capsys.readouterr().out
    assert DATA_SHA256 in out and "recorded" in out
    record = tmp_path / "longmemeval_s.json.sha256"
    assert record.read_text(encoding="utf-8") == f"{DATA_SHA256}  longmemeval_s.json\n"


# ------------------------------------------------------------------ §4.1.1 haystack growth


def test_subsample_keeps_the_evidence_and_nests_across_sizes() -> None:
    real = lme.load().instances[0]
    assert len(real.sessions) == 53 and real.answer_session_ids == ("answer_280352e9",)
    kept = {n: lme.subsample(real, n) for n in (1, 8, 16, 24, 32, 48, 60)}
    for n, inst in kept.items():
        ids = [s.id for s in inst.sessions]
        assert "answer_280352e9" in ids  # the evidence is never dropped
        assert len(ids) == min(max(n, 1), 53)
        # file order (the S file's date order) is kept, so arrival order is unchanged
        assert [s.index for s in inst.sessions] == sorted(s.index for s in inst.sessions)
        assert inst.question_id == real.question_id and inst.answer == real.answer
    for small, large in ((8, 16), (16, 24), (24, 32), (32, 48)):
        assert {s.id for s in kept[small].sessions} <= {s.id for s in kept[large].sessions}
    assert kept[60] == real
    # the same draw every time (seeded by the question id, not by the process)
    assert lme.subsample(real, 8) == kept[8]
    # the draw is not just the first or the last sessions of the file
    indices = [s.index for s in kept[8].sessions]
    assert indices != list(range(8)) and indices != list(range(45, 53))


def test_subsample_never_drops_evidence_below_its_own_size() -> None:
    raw = next(i for i in fixture_instances() if i["question_id"] == "fx_ku_1")
    inst = lme.parse_instance(raw, "fixture", 0)
    two = lme.subsample(inst, 1)  # two evidence sessions: both stay
    assert [s.id for s in two.sessions] == ["answer_fx_ku_a", "answer_fx_ku_b"]
    episode = lme.to_episode(two)
    assert episode.questions[0].meta["haystack_sessions"] == 2
    assert {e.meta["session_id"] for e in episode.events} == {"answer_fx_ku_a", "answer_fx_ku_b"}
    with pytest.raises(ValueError, match="positive"):
        lme.subsample(inst, 0)
    with pytest.raises(ValueError, match=r"benchmark\.sessions"):
        lme.LongMemEval(sessions=0)


def test_the_benchmark_option_shrinks_every_haystack_and_is_fingerprinted() -> None:
    bench = lme.LongMemEval(sessions=8)
    (episode,) = bench.episodes()
    assert len({e.meta["session_id"] for e in episode.events}) == 8
    assert bench.fingerprint()["sessions"] == 8
    assert lme.LongMemEval().fingerprint()["sessions"] is None
