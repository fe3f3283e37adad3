"""LongMemEval's judges against a scripted judge server over real HTTP: the official prompts
(hashed), the yes/no rule, raw replies kept, B.1's question classes stored once, and the stale
rate's exclusions (coincident values, no superseded value, abstention)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchmarks.longmemeval import FIXTURE_FILE, LongMemEval
from benchmarks.longmemeval import judge as jm
from benchmarks.longmemeval.judge import (
    CLASS_TEMPLATE,
    EXTRACT_TEMPLATE,
    JUDGE_TEMPLATES,
    MATCH_TEMPLATE,
    LongMemEvalJudge,
    QuestionClass,
    StaleJudge,
    judge_label,
    judge_prompt,
    judge_template_name,
    prompt_sha256,
)
from benchmarks.models.cache import ResponseCache
from benchmarks.models.client import ChatModel, Endpoint
from benchmarks.models.scripted import ScriptedServer
from benchmarks.runner.pipeline import summarize

# The official templates (xiaowu0162/LongMemEval @ 9e0b455f, src/evaluation/evaluate_qa.py),
# hashed after they were compared character for character with the official source.
OFFICIAL_SHA256 = {
    "default": "fba020ba3d57982efdc9a937c1c01f897b789a608c7f88e60244121f6505e5bc",
    "temporal-reasoning": "8d33a5fdd83afeeb4592454a965eab43d1fcb2dedc042d1d3892f4254be6c273",
    "knowledge-update": "183a9b3a6197ec620940f610cdc1207201ec98c1113dd633ea685cfc322fafac",
    "single-session-preference": (
        "741ee3bcbea7ff5e8ed359acef61d2f8ded3de021bbcff6ee13de455f2e2aa9b"
    ),
    "abstention": "5c0b365a1e1d06db36377c735432b56e122ca3c428f89faf61d43a0d5a7e050b",
}
# Ours (the paper does not print them): a change must be deliberate, and shows up here.
OURS_SHA256 = {
    "class": "7db50d22cb20b1ac73beb40453ac870cea02e7ce95cab5b24a55fb8f5f20784a",
    "extract": "f83c641706f860fa0d220a7e132597cc1ec27210b2b0dd19460d1437537ca38f",
    "match": "1d9d1b3a9f50c5d79db8a06e5a9faa58afd37b2cfa650bd03af406f35e383dbc",
}


def test_the_official_prompts_are_pinned() -> None:
    assert {k: prompt_sha256(v) for k, v in JUDGE_TEMPLATES.items()} == OFFICIAL_SHA256
    ours = {"class": CLASS_TEMPLATE, "extract": EXTRACT_TEMPLATE, "match": MATCH_TEMPLATE}
    assert {k: prompt_sha256(v) for k, v in ours.items()} == OURS_SHA256


def test_the_official_wording_and_its_quirks() -> None:
    assert JUDGE_TEMPLATES["default"].startswith(
        "I will give you a question, a correct answer, and a response from a model."
    )
    # the official general and temporal templates have a space before the first blank line
    assert "answer no. \n\nQuestion: {}" in JUDGE_TEMPLATES["default"]
    assert "still correct. \n\nQuestion: {}" in JUDGE_TEMPLATES["temporal-reasoning"]
    assert "required answer.\n\nQuestion: {}" in JUDGE_TEMPLATES["knowledge-update"]
    assert "\n\nRubric: {}\n\n" in JUDGE_TEMPLATES["single-session-preference"]
    assert JUDGE_TEMPLATES["abstention"].endswith(
        "\n\nExplanation: {}\n\nModel Response: {}\n\nDoes the model correctly identify the "
        "question as unanswerable? Answer yes or no only."
    )


@pytest.mark.parametrize(
    ("qtype", "abstention", "name"),
    [
        ("single-session-user", False, "default"),
        ("single-session-assistant", False, "default"),
        ("multi-session", False, "default"),
        ("temporal-reasoning", False, "temporal-reasoning"),
        ("knowledge-update", False, "knowledge-update"),
        ("single-session-preference", False, "single-session-preference"),
        ("knowledge-update", True, "abstention"),
        ("temporal-reasoning", True, "abstention"),
    ],
)
def test_the_template_follows_the_type_and_abstention_overrides(
    qtype: str, abstention: bool, name: str
) -> None:
    assert judge_template_name(qtype, abstention) == name


def test_an_unknown_type_has_no_prompt() -> None:
    with pytest.raises(ValueError, match="no LongMemEval judge prompt"):
        judge_template_name("knowledge_update")


@pytest.mark.parametrize(
    ("reply", "label"),
    [
        ("yes", True),
        ("Yes.", True),
        ("YES", True),
        ("  yes, the response is correct", True),
        ("No.", False),
        ("no", False),
        ("The response is wrong", False),
        ("", False),
    ],
)
def test_the_official_label_is_yes_in_the_lower_cased_reply(reply: str, label: bool) -> None:
    assert judge_label(reply) is label


# ---------------------------------------------------------------- against a scripted judge


def fixture_records() -> dict[str, dict[str, Any]]:
    """Prediction records as the runner writes them, for the shipped fixture's questions."""
    out = {}
    for ep in LongMemEval(FIXTURE_FILE).episodes():
        (q,) = ep.questions
        out[q.id] = {
            "id": q.id,
            "episode": ep.id,
            "question": q.text,
            "golds": list(q.golds),
            "meta": q.meta,
            "prediction": "",
        }
    return out


def record(qid: str, prediction: str) -> dict[str, Any]:
    rec = dict(fixture_records()[qid])
    rec["prediction"] = prediction
    return rec


class Judge:
    """A scripted gold-aware judge: decides from the prompt, as a real judge would."""

    def __init__(self, extraction: dict[str, Any] | str | None = None) -> None:
        self.extraction = extraction or {"superseded": "Boston", "current": "Denver"}
        self.prompts: list[str] = []

    def __call__(self, body: dict[str, Any]) -> str:
        prompt = body["messages"][-1]["content"]
        self.prompts.append(prompt)
        response = prompt.rsplit("Model Response: ", 1)[-1]
        if "Classify the question" in prompt:
            return "Superseded" if "Denver" in prompt else "aggregation"
        if "Reply with JSON only" in prompt:
            ex = self.extraction
            return ex if isinstance(ex, str) else "```json\n" + json.dumps(ex) + "\n```"
        if prompt.startswith(MATCH_TEMPLATE[:60]):
            return "Yes." if "Boston" in response else "No."
        if "unanswerable" in prompt:
            return "Yes" if "not mentioned" in response else "No"
        gold = prompt.split("Correct Answer: ", 1)[1].split("\n\n", 1)[0]
        return "Yes, it matches." if gold.lower() in response.lower() else "No."


@pytest.fixture
def script() -> Judge:
    return Judge()


@pytest.fixture
def server(script: Judge) -> Iterator[ScriptedServer]:
    with ScriptedServer(script=script, models=["judge-35b"]) as srv:
        yield srv


@pytest.fixture
def cache(tmp_path: Path) -> Iterator[ResponseCache]:
    with ResponseCache(tmp_path / "responses.sqlite") as c:
        yield c


def models(server: ScriptedServer, cache: ResponseCache | None = None) -> dict[str, Any]:
    return {"judge": ChatModel(Endpoint(server.base_url, "judge-35b"), "judge", cache)}


def score(scorer: Any, rec: dict[str, Any], m: dict[str, Any]) -> dict[str, Any]:
    return asyncio.run(scorer.score(rec, m))


def test_the_judge_sends_the_official_call_and_keeps_the_reply(server: ScriptedServer) -> None:
    rec = record("fx_ku_1", "You live in Denver now (you moved from Boston).")
    out = score(LongMemEvalJudge(), rec, models(server))
    assert out == {
        "correct": True,
        "reply": "Yes, it matches.",
        "template": "knowledge-update",
        "question_type": "knowledge-update",
    }
    body = server.last_body()
    assert body["temperature"] == 0 and body["max_tokens"] == 10 and body["model"] == "judge-35b"
    assert body["messages"] == [
        {
            "role": "user",
            "content": judge_prompt(
                "knowledge-update", "Which city do I live in now?", "Denver", rec["prediction"]
            ),
        }
    ]
    assert body["messages"][0]["content"].endswith(
        "Question: Which city do I live in now?\n\nCorrect Answer: Denver\n\nModel Response: "
        "You live in Denver now (you moved from Boston).\n\nIs the model response correct? "
        "Answer yes or no only."
    )


def test_a_no_is_wrong_and_an_integer_gold_is_its_text(server: ScriptedServer) -> None:
    out = score(LongMemEvalJudge(), record("fx_multi_1", "Three."), models(server))
    assert (out["correct"], out["reply"], out["template"]) == (False, "No.", "default")
    assert "Correct Answer: 2\n\n" in server.last_body()["messages"][0]["content"]
    out = score(LongMemEvalJudge(), record("fx_multi_1", "2 appointments"), models(server))
    assert out["correct"] is True


def test_abstention_questions_use_the_abstention_prompt(server: ScriptedServer) -> None:
    m = models(server)
    out = score(LongMemEvalJudge(), record("fx_user_1_abs", "A cat was not mentioned."), m)
    assert out["correct"] is True and out["template"] == "abstention"
    content = server.last_body()["messages"][0]["content"]
    assert content.startswith("I will give you an unanswerable question, an explanation")
    assert "\n\nExplanation: The information provided is not enough." in content
    out = score(LongMemEvalJudge(), record("fx_user_1_abs", "Her name is Luna."), m)
    assert out["correct"] is False and out["reply"] == "No"


def test_temporal_questions_use_the_temporal_prompt(server: ScriptedServer) -> None:
    out = score(LongMemEvalJudge(), record("fx_temporal_1", "10 days."), models(server))
    assert out["template"] == "temporal-reasoning"
    assert "off-by-one" in server.last_body()["messages"][0]["content"]


# ---------------------------------------------------------------- the stale rate


def test_stale_is_wrong_and_answering_the_superseded_value(
    server: ScriptedServer, script: Judge
) -> None:
    m = models(server)
    out = score(StaleJudge(), record("fx_ku_1", "You live in Boston."), m)
    assert out == {
        "stale": True,
        "verdict": "stale",
        "superseded": "Boston",
        "current": "Denver",
        "match_reply": "Yes.",
    }
    extract = next(p for p in script.prompts if "Reply with JSON only" in p)
    assert "[2023/01/10 (Tue) 09:15] user: I just moved into a flat in Boston" in extract
    assert "[2023/03/15 (Wed) 20:30] user: Since we relocated to Denver" in extract
    assert extract.index("Boston and I love") < extract.index("relocated to Denver")
    match = server.last_body()
    assert match["max_tokens"] == 10 and match["temperature"] == 0
    assert (
        "Superseded Answer: Boston\n\nCurrent Answer: Denver\n\n"
        in (match["messages"][0]["content"])
    )


def test_a_correct_answer_is_not_stale_and_needs_no_match_call(
    server: ScriptedServer, script: Judge
) -> None:
    out = score(StaleJudge(), record("fx_ku_1", "Denver."), models(server))
    assert out["stale"] is False and out["verdict"] == "correct"
    assert not any(p.startswith(MATCH_TEMPLATE[:60]) for p in script.prompts)


def test_a_wrong_answer_of_another_value_is_not_stale(server: ScriptedServer) -> None:
    out = score(StaleJudge(), record("fx_ku_1", "Chicago."), models(server))
    assert (out["stale"], out["verdict"], out["match_reply"]) == (False, "wrong_other", "No.")


@pytest.mark.parametrize(
    ("extraction", "reason"),
    [
        ({"superseded": "Denver", "current": "Denver"}, "coincident"),
        ({"superseded": "the Denver", "current": "denver."}, "coincident"),  # normalized
        ({"superseded": "Denver", "current": None}, "coincident"),  # equals the gold
        ({"superseded": None, "current": "Denver"}, "no_superseded_value"),
        ({"superseded": "null", "current": "Denver"}, "no_superseded_value"),
        ("I cannot tell.", "extraction_failed"),
    ],
)
def test_coincident_and_unextractable_questions_are_excluded(
    extraction: dict[str, Any] | str, reason: str
) -> None:
    script = Judge(extraction)
    with ScriptedServer(script=script, models=["judge-35b"]) as srv:
        out = score(StaleJudge(), record("fx_ku_1", "You live in Boston."), models(srv))
        assert out["excluded"] == reason and "stale" not in out
        # excluded before any verdict: one extraction call, no accuracy or match call
        assert srv.count("/chat/completions") == 1


def test_questions_outside_the_subset_get_no_score(server: ScriptedServer) -> None:
    m = models(server)
    assert score(StaleJudge(), record("fx_multi_1", "2"), m) == {}
    assert server.count() == 0
    assert score(StaleJudge(subset="all"), record("fx_user_1_abs", "x"), m) == {
        "excluded": "abstention"
    }
    with pytest.raises(ValueError, match="subset"):
        StaleJudge(subset="updates")


def test_the_rate_counts_only_scoreable_questions(server: ScriptedServer) -> None:
    m = models(server)
    rows = []
    for qid, prediction in [
        ("fx_ku_1", "Boston"),
        ("fx_multi_1", "2"),
        ("fx_user_1_abs", "Luna"),
        ("fx_temporal_1", "10 days"),
    ]:
        rows.append({"id": qid, "stale_judge": score(StaleJudge(), record(qid, prediction), m)})
    predictions = [
        {"id": r["id"], "context_chars": 0, "context_tokens": 0, "context_tokens_exact": True}
        for r in rows
    ]
    rate = summarize(predictions, rows, len(rows))["rates"]["stale_judge.stale"]
    assert (rate["n"], rate["count"]) == (1, 1)


# ---------------------------------------------------------------- B.1 question classes


def test_the_class_is_stored_once_and_reused(server: ScriptedServer, tmp_path: Path) -> None:
    store = tmp_path / "classes.jsonl"
    m = models(server)
    first = score(QuestionClass(store=store), record("fx_ku_1", "Boston"), m)
    assert first == {"class": "superseded", "reply": "Superseded"}
    assert server.count() == 1
    content = server.last_body()["messages"][0]["content"]
    assert "Correct Answer: Denver" in content and "[2023/01/10 (Tue) 09:15] user:" in content
    # another run, another prediction: read from the store, no call
    again = score(QuestionClass(store=store), record("fx_ku_1", "Denver"), m)
    assert again == first and server.count() == 1
    (row,) = [json.loads(line) for line in store.read_text().splitlines()]
    assert row["judge"] == "judge-35b" and row["prompt_sha256"] == OURS_SHA256["class"]
    other = score(QuestionClass(store=store), record("fx_multi_1", "2"), m)
    assert other["class"] == "aggregation" and server.count() == 2


def test_without_a_store_the_response_cache_serves_the_repeat(
    server: ScriptedServer, cache: ResponseCache
) -> None:
    m = models(server, cache)
    score(QuestionClass(), record("fx_ku_1", "Boston"), m)
    score(QuestionClass(), record("fx_ku_1", "Denver"), m)
    assert server.count() == 1


def test_the_superseded_subset_reads_the_classes(server: ScriptedServer) -> None:
    m = models(server)
    out = score(StaleJudge(subset="superseded"), record("fx_ku_1", "Boston"), m)
    assert out["stale"] is True
    assert score(StaleJudge(subset="superseded"), record("fx_multi_1", "3"), m) == {}


@pytest.mark.parametrize(
    ("reply", "label"),
    [
        ("superseded", "superseded"),
        ("Aggregation.", "aggregation"),
        ("Class: single", "single"),
        ("I am not sure", None),
    ],
)
def test_class_replies_parse(reply: str, label: str | None) -> None:
    assert jm.parse_class(reply) == label


def test_the_class_store_reloads_a_reply_holding_a_unicode_line_separator(tmp_path: Path) -> None:
    """A judge's reply with U+2028 (JSON leaves it unescaped) made the next run's store fail to
    load: the line was split there and neither half parsed."""
    reply = "knowledge-update\u2028(because the fact changed)\x85"
    jm.ClassStore(tmp_path / "classes.jsonl").put("q1", "judge@r", "knowledge-update", reply)
    again = jm.ClassStore(tmp_path / "classes.jsonl").get("q1", "judge@r")
    assert again is not None and again["reply"] == reply


def test_the_class_oracle_gate_reads_a_store_whose_reply_holds_a_line_separator(
    tmp_path: Path,
) -> None:
    from baselines.pmem_arms.turns import read_classes

    store = jm.ClassStore(tmp_path / "classes.jsonl")
    store.put("q1", "judge@r", "superseded", "superseded\u2028(the fact changed)")
    assert read_classes(tmp_path / "classes.jsonl") == {"q1": "superseded"}
