"""Appendix D's write-time materialized state on LongMemEval-shaped histories.

The writer is a scripted OpenAI-compatible server on 127.0.0.1 (extraction by regular
expressions over the session text; the same/different check from a fixed set of pairs, every
call recorded). The embedder runs in process: the scripted word-hash vectors, except for key
names pinned at an exact cosine to another key, so each merge band is hit on purpose.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import re
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from hydra import compose, initialize_config_dir
from hydra.utils import instantiate

from baselines.pmem_arms.materialized import (
    DEFAULT_STATUS_OPS,
    EXTRACT_SESSION_PROMPT,
    MaterializedStateArm,
    parse_status_facts,
    sessions_of,
)
from baselines.pmem_arms.state import STATE_HEADER
from benchmarks.longmemeval import fixture_instances, parse_instance, to_episode
from benchmarks.models.client import ChatModel, Endpoint
from benchmarks.models.scripted import ScriptedServer, embed_text
from benchmarks.runner.arm import Services
from benchmarks.runner.cli import CONFIG_DIR
from benchmarks.runner.types import Episode, Event, Question
from pmem.graph import REVOKED

EXTRACT_HEAD = EXTRACT_SESSION_PROMPT.split("{{", 1)[0]  # "Extract every fact ... list of "

# (pattern over the session text, key, status): the scripted extractor's whole knowledge.
RULES: list[tuple[str, str, str]] = [
    (r"moved into a flat in (\w+)", "user_home_city", "asserted"),
    (r"relocated to (\w+)", "city_of_residence", "asserted"),  # a key variant (pinned 0.90)
    (r"I live in (\w+)", "user_home_city", "asserted"),
    (r"I might move to (\w+)", "user_home_city", "hedged"),
    (r"I am no longer in (\w+)", "user_home_city", "withdrawn"),
    (r"I am (vegetarian)", "user_diet", "asserted"),
    (r"I am no longer (vegetarian)", "user_diet", "withdrawn"),
    (r"My sister says her dog is called (\w+)", "sister_dog_name", "reported"),
    (r"My car is a (\w+)", "user_car", "probably"),  # an invalid status: read as asserted
    (r"KEY (\w+) IS (\w+)", "", "asserted"),  # the key comes from the text
]
# the only pairs the scripted same/different check calls "same"
SAME_PAIRS = {frozenset({"user_current_city", "user_home_city"})}


class Writer:
    """The scripted writer's replies, and a record of every same/different check."""

    def __init__(self) -> None:
        self.checks: list[tuple[str, str]] = []
        self.extractions = 0

    def __call__(self, messages: list[dict[str, Any]]) -> str:
        text = messages[-1]["content"]
        if text.startswith(EXTRACT_HEAD):
            self.extractions += 1
            body = text.split("Conversation:\n", 1)[1]
            found = []
            for pattern, key, status in RULES:
                for m in re.finditer(pattern, body):
                    k, v = (m[1], m[2]) if not key else (key, m[1])
                    found.append((m.start(), {"key": k, "value": v, "status": status}))
            return "```json\n" + json.dumps([f for _, f in sorted(found, key=lambda x: x[0])])
        if text.startswith("Do these two keys"):
            a, b = re.findall(r"^[AB]: (\S+)$", text, re.M)
            self.checks.append((a, b))
            return "same" if frozenset({a, b}) in SAME_PAIRS else "different"
        return "?"


class PinnedEmbedder:
    """Word-hash vectors, except pinned texts: ``text -> (anchor text, cosine)`` gives a unit
    vector at exactly that cosine to the anchor's vector (and near-orthogonal to the rest)."""

    def __init__(self, pins: dict[str, tuple[str, float]] | None = None) -> None:
        self.pins = pins or {}
        self.calls = 0

    def vector(self, text: str) -> np.ndarray:
        if text not in self.pins:
            return np.asarray(embed_text(text), dtype=np.float64)
        anchor_text, cos = self.pins[text]
        anchor = self.vector(anchor_text)
        # a one-word text of its own: unrelated to every other vector
        own = np.asarray(embed_text(hashlib.sha256(text.encode()).hexdigest()), dtype=np.float64)
        own -= (own @ anchor) * anchor
        own /= np.linalg.norm(own)
        return cos * anchor + math.sqrt(1 - cos * cos) * own

    async def embed(self, texts: list[str], kind: str = "passage") -> np.ndarray:
        self.calls += 1
        return np.asarray([self.vector(t) for t in texts], dtype=np.float32)


def run(coro: Any) -> Any:
    return asyncio.run(coro)


@pytest.fixture
def writer() -> Iterator[tuple[ChatModel, Writer, ScriptedServer]]:
    script = Writer()
    with ScriptedServer(script) as server:
        yield ChatModel(Endpoint(server.base_url, "scripted"), role="writer"), script, server


def instance(qid: str, sessions: list[list[str]], question: str = "Where do I live?") -> Episode:
    """A LongMemEval instance in the official schema, one user turn per line, dated by day."""
    raw = {
        "question_id": qid,
        "question_type": "knowledge-update",
        "question": question,
        "answer": "x",
        "question_date": "2023/12/31 (Sun) 12:00",
        "haystack_session_ids": [f"{qid}_s{i}" for i in range(len(sessions))],
        "haystack_dates": [f"2023/{1 + i // 28:02d}/{1 + i % 28:02d} (Mon) 10:00" for i in
                           range(len(sessions))],
        "haystack_sessions": [
            [{"role": "user", "content": line} for line in lines] for lines in sessions
        ],
        "answer_session_ids": [],
    }  # fmt: skip
    return to_episode(parse_instance(raw, "test", 0))


def fixture_episode(qid: str) -> Episode:
    raw = next(i for i in fixture_instances() if i["question_id"] == qid)
    return to_episode(parse_instance(raw, "fixture", 0))


# ------------------------------------------------------------------ grouping and parsing


def test_turns_group_into_sessions_in_date_order() -> None:
    episode = fixture_episode("fx_multi_1")  # its sessions are out of date order in the file
    sessions = sessions_of(episode.events)
    assert [s.id for s in sessions] == ["answer_fx_multi_a", "fx_noise_3", "answer_fx_multi_b"]
    assert [s.at for s in sessions] == sorted(s.at for s in sessions)
    first = sessions[0].text.split("\n")
    assert first[0] == "Session date: 2023/03/03 (Fri) 09:00"
    assert first[1].startswith("user: I saw my GP") and first[2].startswith("assistant: ")
    # shuffled turns regroup by session id, and a turn without one is a session of its own
    shuffled = [*reversed(episode.events), Event("loose", "user: hello", at="2023-03-04")]
    assert [s.id for s in sessions_of(shuffled)] == [
        "answer_fx_multi_a",
        "loose",
        "fx_noise_3",
        "answer_fx_multi_b",
    ]


def test_extraction_replies_parse_with_a4_statuses() -> None:
    facts, dropped, invalid = parse_status_facts(
        {
            "facts": [
                {"key": "User Home-City", "value": " Denver ", "status": "Asserted"},
                {"key": "plan", "value": "Chicago", "status": "hedged"},
                {"key": "x", "value": "y", "status": "negated"},  # not A.4's: asserted
                {"key": "", "value": "lost"},
                "junk",
            ]
        }
    )
    assert [(f.key, f.value, f.status) for f in facts] == [
        ("user_home_city", "Denver", "asserted"),
        ("plan", "Chicago", "hedged"),
        ("x", "y", "asserted"),
    ]
    assert (dropped, invalid) == (2, 1)


# ------------------------------------------------------------------ supersession (D, §3.3)


def test_the_fixture_update_in_passing_supersedes_the_earlier_value_in_one_cell(writer) -> None:
    chat, script, server = writer
    embedder = PinnedEmbedder({"city of residence": ("user home city", 0.90)})
    arm = MaterializedStateArm(Services(writer=chat, embedder=embedder), k=None)
    episode = fixture_episode("fx_ku_1")
    run(arm.ingest(episode.events))
    # one extraction call per session (Appendix E), nothing else: 0.90 merges without a check
    assert script.extractions == server.count("/chat/completions") == 4
    assert script.checks == []
    cell = arm.memory.cell("user_home_city")
    assert cell.value == "Denver"
    assert [v.value for v in cell.history] == ["Boston"]  # retained as history, superseded
    assert [c.key for c in arm.memory.frontier()] == ["user_home_city"]
    assert arm.aliases == {"city_of_residence": ["user_home_city", pytest.approx(0.90, abs=1e-5)]}
    s = arm.stats
    assert (s["sessions"], s["facts"], s["committed"]) == (4, 2, 2)
    assert (s["merged_high"], s["merged_low"], s["merged_confirmed"], s["checks"]) == (1, 0, 0, 0)
    assert (s["keys"], s["cells"], s["facts_per_cell"]) == (1, 1, 2.0)
    assert s["decisions"] == {"accept": 1, "create": 1}
    assert s["status_asserted"] == 2
    # the head's validity starts at its session's date (arrival order, not the clock)
    assert cell.head.valid_from.date().isoformat() == "2023-03-15"
    context = run(arm.read(episode.questions[0]))
    assert context.text.split("\n") == [STATE_HEADER, "user_home_city: Denver"]
    assert "Boston" not in context.text
    assert context.meta["read"] == "full" and context.meta["merged_high"] == 1
    assert arm.memory.check() == []


def test_without_a_merge_the_update_forks_a_stale_sibling(writer) -> None:
    chat, _, _ = writer
    embedder = PinnedEmbedder({"city of residence": ("user home city", 0.80)})
    arm = MaterializedStateArm(Services(writer=chat, embedder=embedder), k=None)  # 0.80 < 0.85
    run(arm.ingest(fixture_episode("fx_ku_1").events))
    held = {c.key: c.value for c in arm.memory.frontier()}
    assert held == {"user_home_city": "Boston", "city_of_residence": "Denver"}  # D's failure
    assert arm.stats["facts_per_cell"] == 1.0 and arm.stats["merged"] == 0


# ------------------------------------------------------------------ statuses (A.4)


STATUS_SESSIONS = [
    ["I live in Boston and I am vegetarian.", "My car is a Volvo."],
    ["I might move to Chicago next year.", "My sister says her dog is called Rex."],
    ["I am no longer vegetarian, and I am no longer in Denver either."],
]


def test_hedged_and_withdrawn_statements_do_not_become_current(writer) -> None:
    chat, _, _ = writer
    arm = MaterializedStateArm(Services(writer=chat, embedder=PinnedEmbedder()), k=None)
    run(arm.ingest(instance("st", STATUS_SESSIONS).events))
    home = arm.memory.cell("user_home_city")
    assert home.value == "Boston"  # the hedged Chicago is not committed ...
    assert [v.value for v in arm.memory.versions("user_home_city")] == ["Boston"]
    # ... and withdrawing a value the cell does not hold (Denver) leaves the head alone
    diet = arm.memory.versions("user_diet")
    assert [(v.value, v.status) for v in diet] == [("vegetarian", REVOKED)]  # retained
    assert arm.memory.cell("user_diet").value is None  # the withdrawal emptied the cell
    assert arm.memory.cell("sister_dog_name").value == "Rex"  # reported: committed
    assert arm.memory.cell("user_car").value == "Volvo"  # invalid status -> asserted (A.4)
    s = arm.stats
    assert {k: s[f"status_{k}"] for k in ("asserted", "hedged", "reported", "withdrawn")} == {
        "asserted": 3,
        "hedged": 1,
        "reported": 1,
        "withdrawn": 2,
    }
    assert (s["invalid_status"], s["skipped"]) == (1, 1)
    assert (s["withdrawn_applied"], s["withdrawn_unmatched"]) == (1, 1)
    assert s["decisions"] == {"create": 4, "noop": 1, "revoke": 1}
    text = run(arm.read(Question("q", "Where do I live?", ("Boston",)))).text
    assert "Chicago" not in text and "vegetarian" not in text and "Denver" not in text
    assert "user_home_city: Boston" in text.split("\n")
    assert arm.stats["keys"] == 4 and arm.stats["cells"] == 3


def test_status_ops_are_configurable(writer) -> None:
    chat, _, _ = writer
    arm = MaterializedStateArm(
        Services(writer=chat, embedder=PinnedEmbedder()), k=None, status_ops={"hedged": "revise"}
    )
    assert arm.status_ops == {**DEFAULT_STATUS_OPS, "hedged": "revise"}
    run(arm.ingest(instance("st", STATUS_SESSIONS).events))
    assert arm.memory.cell("user_home_city").value == "Chicago"
    with pytest.raises(ValueError, match="status_ops"):
        MaterializedStateArm(status_ops={"negated": "revoke"})
    with pytest.raises(ValueError, match="status_ops"):
        MaterializedStateArm(status_ops={"hedged": "contest"})


# ------------------------------------------------------------------ merge bands (D)

# Each candidate key is pinned at a cosine to the first one, user_home_city.
BAND_PINS = {
    "user residence city": ("user home city", 0.90),  # >= 0.85
    "user current city": ("user home city", 0.78),  # [0.70, 0.85), the check says same
    "user birth city": ("user home city", 0.75),  # [0.70, 0.85), the check says different
    "user work city": ("user home city", 0.60),  # < 0.70
}
BAND_SESSIONS = [
    ["KEY user_home_city IS Boston"],
    ["KEY user_residence_city IS Denver"],
    ["KEY user_current_city IS Austin"],
    ["KEY user_birth_city IS Paris"],
    ["KEY user_work_city IS Seattle"],
]


@pytest.mark.parametrize(
    ("mode", "merged", "checks", "cells"),
    [
        # (merged_high, merged_low, merged_confirmed), check calls, current cells
        ("high", (1, 0, 0), [], ["user_home_city", "user_current_city", "user_birth_city",
                                 "user_work_city"]),
        ("low", (1, 2, 0), [], ["user_home_city", "user_work_city"]),
        ("confirm", (1, 0, 1), [("user_current_city", "user_home_city"),
                                ("user_birth_city", "user_home_city")],
         ["user_home_city", "user_birth_city", "user_work_city"]),
        ("off", (0, 0, 0), [], ["user_home_city", "user_residence_city", "user_current_city",
                                "user_birth_city", "user_work_city"]),
    ],
)  # fmt: skip
def test_merge_bands(writer, mode: str, merged: tuple[int, ...], checks: list, cells) -> None:
    chat, script, _ = writer
    arm = MaterializedStateArm(
        Services(writer=chat, embedder=PinnedEmbedder(BAND_PINS)), k=None, merge=mode
    )
    run(arm.ingest(instance("bands", BAND_SESSIONS).events))
    s = arm.stats
    assert (s["merged_high"], s["merged_low"], s["merged_confirmed"]) == merged
    assert script.checks == checks  # ">= 0.85 without a check, [0.70, 0.85) only on same"
    assert s["checks"] == len(checks) and s["check_different"] == (mode == "confirm")
    assert [c.key for c in arm.memory.frontier()] == cells
    assert s["candidates"] == (0 if mode == "off" else 5)  # new key names embedded
    assert s["merged"] == sum(merged) and s["facts_per_cell"] == round(5 / len(cells), 4)
    # a merged key's value supersedes the head it merged into, in arrival order
    chain = [v.value for v in arm.memory.versions("user_home_city")]
    expected = {
        "high": ["Boston", "Denver"],
        "low": ["Boston", "Denver", "Austin", "Paris"],
        "confirm": ["Boston", "Denver", "Austin"],
        "off": ["Boston"],
    }[mode]
    assert chain == expected and arm.memory.cell("user_home_city").value == expected[-1]


def test_each_candidate_key_is_decided_once(writer) -> None:
    chat, script, _ = writer
    embedder = PinnedEmbedder(BAND_PINS)
    arm = MaterializedStateArm(Services(writer=chat, embedder=embedder), k=None, merge="confirm")
    sessions = [
        *BAND_SESSIONS,
        ["KEY user_current_city IS Dallas"],
        ["KEY user_birth_city IS Rome"],
    ]
    run(arm.ingest(instance("again", sessions).events))
    assert len(script.checks) == 2  # the repeated candidates reuse their decisions
    assert arm.memory.cell("user_home_city").value == "Dallas"
    assert [v.value for v in arm.memory.versions("user_birth_city")] == ["Paris", "Rome"]


def test_arguments_are_checked() -> None:
    with pytest.raises(ValueError, match=r"arm\.merge must be"):
        MaterializedStateArm(merge="aggressive")
    with pytest.raises(ValueError, match="low <= high"):
        MaterializedStateArm(merge_high=0.7, merge_low=0.85)
    with pytest.raises(ValueError, match=r"arm\.k"):
        MaterializedStateArm(k=0)
    with pytest.raises(ValueError, match="writer"):
        run(MaterializedStateArm(Services(embedder=PinnedEmbedder())).ingest([]))


# ------------------------------------------------------------------ reads and snapshots

THINGS = [
    ("car_brand", "Toyota"), ("pet_name", "Biscuit"), ("gym_day", "Tuesday"),
    ("coffee_order", "flat white"), ("sister_city", "Lisbon"), ("bike_colour", "green"),
    ("bank_name", "Monzo"), ("dentist_name", "Dr Shah"), ("phone_model", "Pixel 8"),
    ("boss_name", "Maria"), ("shoe_size", "43"), ("team_name", "Arsenal"),
    ("plant_kind", "monstera"), ("tea_kind", "oolong"), ("guitar_make", "Fender"),
    ("laptop_make", "Lenovo"), ("book_club_day", "Friday"), ("yoga_studio", "Flow"),
]  # fmt: skip
READ_SESSIONS = [[f"KEY {k} IS {v.replace(' ', '_')}"] for k, v in THINGS] + [
    ["KEY car_brand IS Honda"]  # an update: still one cell
]


@pytest.fixture
def read_arm(writer) -> MaterializedStateArm:
    chat, _, _ = writer
    # the question is pinned next to the car cell, so the top-12 read must rank it first
    embedder = PinnedEmbedder({"Which car do I drive?": ("car_brand: Honda", 0.95)})
    arm = MaterializedStateArm(Services(writer=chat, embedder=embedder), k=12)
    run(arm.ingest(instance("reads", READ_SESSIONS).events))
    return arm


def test_full_state_and_twelve_cell_reads(read_arm: MaterializedStateArm) -> None:
    arm = read_arm
    question = Question("q", "Which car do I drive?", ("Honda",))
    assert arm.stats["cells"] == len(THINGS) == len(arm.keys)
    top = run(arm.read(question))
    lines = top.text.split("\n")
    assert lines[0] == STATE_HEADER and len(lines) == 13 and len(top.ids) == 12
    assert top.ids[0] == "car_brand" and lines[1] == "car_brand: Honda"
    assert "Toyota" not in top.text
    assert (top.meta["read"], top.meta["shown"]) == ("top12", 12)
    arm.k = None  # D's full-state read: every current cell, in order of first arrival
    full = run(arm.read(question))
    assert full.ids == tuple(k for k, _ in THINGS)
    assert full.text.split("\n")[1:] == [
        f"{k}: {'Honda' if k == 'car_brand' else v.replace(' ', '_')}" for k, v in THINGS
    ]
    assert (full.meta["read"], full.meta["shown"]) == ("full", len(THINGS))
    assert full.meta["chars"] == len(full.text) > top.meta["chars"] == len(top.text)


def test_save_and_load_round_trip(tmp_path, read_arm: MaterializedStateArm) -> None:
    arm = read_arm
    question = Question("q", "What is my pet_name?", ("Biscuit",))
    assert arm.save(tmp_path)
    embedder = PinnedEmbedder()
    again = MaterializedStateArm(Services(embedder=embedder), k=12)
    assert again.load(tmp_path)
    assert again.memory.check() == []
    assert [e.op for e in again.memory.entries()] == [e.op for e in arm.memory.entries()]
    assert (again.keys, again.stats, again.aliases) == (arm.keys, arm.stats, arm.aliases)
    assert run(again.read(question)) == run(arm.read(question))
    assert [v.value for v in again.memory.versions("car_brand")] == ["Toyota", "Honda"]
    again.k = arm.k = None
    assert run(again.read(question)) == run(arm.read(question))
    assert arm.save(tmp_path)  # saving over an earlier save replaces it
    assert not MaterializedStateArm().load(tmp_path / "missing")


# ------------------------------------------------------------------ configs


def test_configs_build_the_arms() -> None:
    built = {}
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        for name, embedder in [
            ("pmem_materialized", "scripted"),
            ("pmem_materialized_full", "scripted"),
            ("pmem_materialized", "local"),
            ("pmem_materialized", "none"),
        ]:
            c = compose(config_name="config", overrides=[f"arm={name}", f"embedder={embedder}"])
            arm = instantiate({k: v for k, v in c.arm.items() if k != "name"})
            built[name, embedder] = (c.arm.name, arm)
    name, twelve = built["pmem_materialized", "scripted"]
    assert name == "pmem_materialized" and isinstance(twelve, MaterializedStateArm)
    assert (twelve.k, twelve.merge, twelve.merge_high, twelve.merge_low) == (12, "high", 0.85, 0.7)
    assert twelve.status_ops == DEFAULT_STATUS_OPS
    name, full = built["pmem_materialized_full", "scripted"]
    assert name == "pmem_materialized_full" and full.k is None and full.merge_high == 0.85
    # the thresholds follow the embedder profile where it has them, else D's values
    _, local = built["pmem_materialized", "local"]
    assert (local.merge_high, local.merge_low) == (0.93, 0.89)
    _, bare = built["pmem_materialized", "none"]
    assert (bare.merge_high, bare.merge_low) == (0.85, 0.70)
    assert MaterializedStateArm.needs == ("writer", "embedder")
    assert set(MaterializedStateArm.prompts) == {"extract_session", "same", "state_header"}
