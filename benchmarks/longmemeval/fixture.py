"""A generated fixture in the official schema, for tests and dry runs.

Four small instances written by hand to exercise what the real data exercises (a knowledge
update revised in passing, an aggregation, an abstention, a temporal question) without the
277 MB S file. The shipped ``benchmarks/data/longmemeval/fixture.json`` is ``write_fixture()``'s
output; the tests check that it still is. Not real data.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchmarks.longmemeval.loader import FIXTURE_FILE

__all__ = ["fixture_instances", "write_fixture"]


def _t(role: str, content: str, has_answer: bool = False) -> dict[str, Any]:
    turn: dict[str, Any] = {"role": role, "content": content}
    if has_answer:
        turn["has_answer"] = True
    return turn


def _filler(topic: str) -> list[dict[str, Any]]:
    return [
        _t("user", f"Can you give me three quick tips about {topic}?"),
        _t("assistant", f"Sure. Here are three tips about {topic}: start small, be consistent, "
           "and keep notes."),
    ]  # fmt: skip


def fixture_instances() -> list[dict[str, Any]]:
    """Four small instances in the official schema (the shipped ``data/longmemeval/
    fixture.json`` is this list): a knowledge update stated plainly and later revised in
    passing, an aggregation over two sessions, an abstention, and a temporal question."""
    ku_sessions = [
        [
            _t("user", "I just moved into a flat in Boston and I love my new neighbourhood.",
               True),
            _t("assistant", "Congratulations on the move to Boston!"),
        ],
        _filler("sourdough baking"),
        [
            _t("user", "Since we relocated to Denver last month the commute is so much "
               "shorter; anyway, what is a good houseplant for a dry climate?", True),
            _t("assistant", "A snake plant or a jade plant does well in dry air."),
        ],
        _filler("running shoes"),
    ]  # fmt: skip
    ku = {
        "question_id": "fx_ku_1",
        "question_type": "knowledge-update",
        "question": "Which city do I live in now?",
        "answer": "Denver",
        "question_date": "2023/04/20 (Thu) 18:00",
        "haystack_session_ids": ["answer_fx_ku_a", "fx_noise_1", "answer_fx_ku_b", "fx_noise_2"],
        "haystack_dates": [
            "2023/01/10 (Tue) 09:15",
            "2023/02/02 (Thu) 12:00",
            "2023/03/15 (Wed) 20:30",
            "2023/04/01 (Sat) 08:45",
        ],
        "haystack_sessions": ku_sessions,
        "answer_session_ids": ["answer_fx_ku_a", "answer_fx_ku_b"],
    }
    agg = {
        "question_id": "fx_multi_1",
        "question_type": "multi-session",
        "question": "How many doctor's appointments did I go to in March?",
        "answer": 2,
        "question_date": "2023/03/30 (Thu) 10:00",
        # deliberately not in date order, as in the oracle file
        "haystack_session_ids": ["answer_fx_multi_b", "fx_noise_3", "answer_fx_multi_a"],
        "haystack_dates": [
            "2023/03/21 (Tue) 17:00",
            "2023/03/10 (Fri) 11:00",
            "2023/03/03 (Fri) 09:00",
        ],
        "haystack_sessions": [
            [
                _t("user", "Back from the dentist today, my second doctor's appointment this "
                   "month. Any tips for sensitive teeth?", True),
                _t("assistant", "Try a desensitising toothpaste and a soft brush."),
            ],
            _filler("indoor cycling"),
            [
                _t("user", "I saw my GP this morning for a check-up. What should I eat to "
                   "lower cholesterol?", True),
                _t("assistant", "Oats, beans, nuts and fatty fish all help."),
            ],
        ],
        "answer_session_ids": ["answer_fx_multi_a", "answer_fx_multi_b"],
    }  # fmt: skip
    abstention = {
        "question_id": "fx_user_1_abs",
        "question_type": "single-session-user",
        "question": "What is the name of my cat?",
        "answer": "The information provided is not enough. You mentioned your dog Biscuit but "
        "not a cat.",
        "question_date": "2023/05/05 (Fri) 09:00",
        "haystack_session_ids": ["fx_noise_4", "answer_fx_user_abs"],
        "haystack_dates": ["2023/05/01 (Mon) 07:30", "2023/05/02 (Tue) 19:10"],
        "haystack_sessions": [
            _filler("meal prep"),
            [
                _t("user", "My dog Biscuit hates the rain. How can I tire him out indoors?",
                   True),
                _t("assistant", "Puzzle feeders and short training games work well."),
            ],
        ],
        "answer_session_ids": ["answer_fx_user_abs"],
    }  # fmt: skip
    temporal = {
        "question_id": "fx_temporal_1",
        "question_type": "temporal-reasoning",
        "question": "How many days before my marathon did I buy new running shoes?",
        "answer": "10 days. 11 days (including the last day) is also acceptable.",
        "question_date": "2023/06/20 (Tue) 12:00",
        "haystack_session_ids": ["answer_fx_temp_a", "answer_fx_temp_b"],
        "haystack_dates": ["2023/06/01 (Thu) 08:00", "2023/06/11 (Sun) 16:00"],
        "haystack_sessions": [
            [
                _t("user", "I bought new running shoes today. How should I break them in?",
                   True),
                _t("assistant", "Wear them on a few short runs first."),
            ],
            [
                _t("user", "I ran my marathon today! How should I recover?", True),
                _t("assistant", "Rest, hydrate and walk gently tomorrow."),
            ],
        ],
        "answer_session_ids": ["answer_fx_temp_a", "answer_fx_temp_b"],
    }  # fmt: skip
    return [ku, agg, abstention, temporal]


def write_fixture(path: Path = FIXTURE_FILE) -> Path:
    path.write_text(json.dumps(fixture_instances(), indent=1) + "\n", encoding="utf-8")
    return path
