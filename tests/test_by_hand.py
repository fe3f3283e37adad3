"""Hand verdicts beside the local LongMemEval judge (benchmarks/scoring/hand_verdicts.py): the
file's rules, its keys, and that the committed file covers exactly the exported runs' answers,
so a new run's answers cannot reach the committed table unread and no verdict outlives its
answer; and `python -m benchmarks.longmemeval.by_hand`, which lists what is left to read."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from benchmarks.longmemeval import by_hand
from benchmarks.longmemeval.tables.shipped import agreement, answers, every_instance, with_labels
from benchmarks.reports.frame import collect, questions_of
from benchmarks.scoring import hand_verdicts as hv
from tests.peer_runs import table_row

REPO = Path(__file__).resolve().parents[1]
FILE = "longmemeval_extra_oracle.json"


@given(
    st.lists(st.text(alphabet="ab c", min_size=1), min_size=1),
    st.sampled_from([" ", "\n", "\t "]),
)
def test_the_key_ignores_how_words_are_spaced(words: list[str], sep: str) -> None:
    text = " ".join(words)
    assert hv.answer_key(text) == hv.answer_key(sep + sep.join(text.split()) + sep)


def test_one_character_makes_another_answer() -> None:
    assert hv.answer_key("25:50") != hv.answer_key("25:51")


def _write(path: Path, *rows: dict[str, str]) -> Path:
    hv.write(list(rows), path)
    return path


def test_the_file_round_trips_sorted(tmp_path: Path) -> None:
    b = hv.row(FILE, "q2", "27:12", "wrong", "the superseded time")
    a = hv.row(FILE, "q1", "25:50 " + "x" * 200, "correct", "the current time")
    path = _write(tmp_path / "v.csv", b, a)
    assert [line.split(",")[1] for line in path.read_text().splitlines()[1:]] == ["q1", "q2"]
    assert a["answer"] == "25:50 " + "x" * 200  # the whole answer: its key is checked
    verdicts = hv.load(path)
    assert verdicts[(FILE, "q1", hv.answer_key("25:50 " + "x" * 200))].correct
    assert verdicts[(FILE, "q2", hv.answer_key("27:12"))] == hv.Verdict(
        False, "the superseded time"
    )
    assert hv.load(tmp_path / "absent.csv") == {}


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"verdict": "right"}, "line 2: verdict 'right' (allowed: correct, wrong)"),
        ({"reason": " "}, "line 2: reason is empty"),
        ({"answer": "27:13"}, "line 2: answer_key is not the key of the row's answer"),
    ],
)
def test_a_bad_row_is_named_by_file_and_line(tmp_path: Path, change, says) -> None:
    path = _write(tmp_path / "v.csv", {**hv.row(FILE, "q", "27:12", "wrong", "old"), **change})
    with pytest.raises(hv.BadVerdicts) as err:
        hv.load(path)
    assert str(err.value) == f"{path}, {says}" or str(err.value).startswith(f"{path}, {says}")


def test_a_second_verdict_on_one_answer_and_a_missing_column_are_refused(tmp_path: Path) -> None:
    one = hv.row(FILE, "q", "27:12", "wrong", "old")
    path = _write(tmp_path / "v.csv", one, {**one, "verdict": "correct"})
    with pytest.raises(hv.BadVerdicts, match=r"line 3: a second verdict on q's answer"):
        hv.load(path)
    # a row cut short (or one field too many), after a blank line: the file's own line number
    header, first = path.read_text().splitlines()[:2]
    path.write_text(f"{header}\n{first}\n\n{FILE},q2,abc,wrong\n")
    with pytest.raises(hv.BadVerdicts, match=r"line 4: not 6 fields \(file, question_id"):
        hv.load(path)
    path.write_text(f"{header}\n{first},extra\n")
    with pytest.raises(hv.BadVerdicts, match=r"line 2: not 6 fields"):
        hv.load(path)
    path.write_text("file,question_id,verdict\n")
    with pytest.raises(hv.BadVerdicts, match="header lacks answer_key, reason, answer"):
        hv.load(path)


def _questions(*rows: tuple[str, str, bool, bool | None]) -> pd.DataFrame:
    """(arm, answer, judge's verdict, hand verdict) on one knowledge-update question."""
    return pd.DataFrame(
        [
            {"arm": arm, "file": FILE, "id": "q", "type": "knowledge-update", "abstention": False,
             "gold": "25:50", "prediction": answer, "correct": judge,
             "key": hv.answer_key(answer), "by_hand": hand,
             "why": None if hand is None else "read", "cut": answer.endswith("because")}
            for arm, answer, judge, hand in rows
        ]
    )  # fmt: skip


def test_the_tables_count_both_verdicts_and_the_unread() -> None:
    q = _questions(
        ("a", "25:50", True, True),
        ("b", "27:12", True, False),  # a judge credit read as wrong
        ("c", "I cannot tell", False, None),  # nobody has read it
        ("a2", "25:50", True, True),
        ("d", "It was 25:50 because", True, True),  # the reader's reply stopped at its limit
    )
    assert agreement(q) == (
        "Of 5 verdicts, the judge credits 4; read by hand, 3 of 4 are correct: 1 of the judge's "
        "credits are wrong answers and 0 of its misses are right; 1 answer(s) not read yet. 1 of "
        "the 5 replies stopped at the reader's token limit (marked [cut at the reply limit]). "
        "Cohen's κ of the judge and the hand verdicts: 0.00 over 4 answers."
    )
    every = every_instance(q)
    assert [table_row(every, "b")[c] for c in ("correct", "by hand")] == ["1/1", "0/1"]
    assert [table_row(every, "c")[c] for c in ("correct", "by hand")] == ["0/1", "0/1 (1 unread)"]
    shown = answers(q)
    assert "| correct | wrong     | read" in shown and "| wrong   | unread    | –" in shown
    assert "| It was 25:50 because [cut at the reply limit] |" in shown


def test_the_committed_verdicts_cover_exactly_the_exported_answers() -> None:
    """Every answer of an exported longmemeval_local run has a hand verdict, and every verdict
    is on an exported answer: export a run, then read its new answers (`python -m
    benchmarks.longmemeval.by_hand` lists them as rows to fill)."""
    runs = REPO / "results/runs"
    df = collect(runs, "longmemeval_local")
    q = with_labels(questions_of(runs, "longmemeval_local", df), df, hv.load())
    unread = q[q["by_hand"].isna()]
    assert unread.empty, unread[["file", "id", "arm", "prediction"]].to_string()[:2000]
    answered = set(zip(q["file"], q["id"], q["key"], strict=True))
    assert set(hv.load()) <= answered, set(hv.load()) - answered


def test_a_reply_is_cut_only_when_the_readers_call_stopped_at_its_limit() -> None:
    from benchmarks.longmemeval.tables.shipped import _cut

    reader = {"role": "reader", "finish_reason": "length"}
    assert _cut([{"role": "embedder", "finish_reason": None}, reader])
    assert not _cut([{**reader, "finish_reason": "stop"}])
    assert not _cut([{**reader, "role": "judge"}])  # the judge's reply is not the answer
    assert not _cut(float("nan"))  # a run that recorded no calls


def test_the_unread_answers_are_listed_with_what_to_judge_them_by(tmp_path: Path, capsys) -> None:
    """With the committed file's last rows gone, exactly those answers are listed, each with
    its gold and whole answer and a row that becomes a valid one once its verdict is filled."""
    rows = hv.LONGMEMEVAL_LOCAL.read_text().splitlines(keepends=True)
    partial = tmp_path / "partial.csv"
    partial.write_text("".join(rows[:-3]))
    gone = {line.split(",")[2] for line in rows[-3:]}
    todo = by_hand.unread(REPO / "results/runs", partial)
    assert {filled["answer_key"] for filled, _ in todo} == gone
    for filled, block in todo:
        assert block.startswith("# ") and "\n# gold: " in block
        assert block.endswith(filled["answer"])  # the whole answer, as the row holds it
        hv.write([{**filled, "verdict": "wrong", "reason": "r"}], tmp_path / "one.csv")
        assert len(hv.load(tmp_path / "one.csv")) == 1
    assert by_hand.main(["--runs", str(tmp_path / "none")]) == 2
    assert capsys.readouterr().err.startswith("error: no finished runs under")
