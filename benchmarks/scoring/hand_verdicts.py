"""Verdicts read by hand, beside a model judge's.

The local LongMemEval judge (the 1.5B reader with the official prompts) credits answers no reader
would, so a committed file holds one hand verdict per distinct answer to a question, reviewable in
a diff; a table shows both counts and how many answers nobody has read yet. An answer is keyed by
its file, question id and `answer_key` of its text (whitespace collapsed): the same words get the
same verdict whichever arm gave them, and a one-character change is unread again.
"""

from __future__ import annotations

import csv
import hashlib
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LONGMEMEVAL_LOCAL = ROOT / "results" / "longmemeval_local" / "verdicts_by_hand.csv"

FIELDS = ("file", "question_id", "answer_key", "verdict", "reason", "answer")
VERDICTS = ("correct", "wrong")


class BadVerdicts(ValueError):
    """The verdicts file cannot be read: the message names the file, the row and the field."""


@dataclass(frozen=True)
class Verdict:
    correct: bool
    reason: str


Key = tuple[str, str, str]  # (data file's name, question id, answer_key)


def flat(answer: object) -> str:
    """The answer with whitespace collapsed: how the tables show it and what the key hashes."""
    return " ".join(str(answer).split())


def answer_key(answer: object) -> str:
    """16 hex digits of the SHA-256 of the collapsed answer."""
    return hashlib.sha256(flat(answer).encode("utf-8")).hexdigest()[:16]


def load(path: Path = LONGMEMEVAL_LOCAL) -> dict[Key, Verdict]:
    """The hand verdicts by (file, question id, answer key); none when the file does not exist
    (a fork that has read nothing yet). A malformed file raises `BadVerdicts` naming the row.

    Each row holds the whole (collapsed) answer, so a reviewer reads what was judged and every
    key is checked against its text."""
    if not path.exists():
        return {}
    verdicts: dict[Key, Verdict] = {}
    wanted = ", ".join(FIELDS)
    with path.open(newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        missing = [name for name in FIELDS if name not in (reader.fieldnames or [])]
        if missing:
            raise BadVerdicts(f"{path}: header lacks {', '.join(missing)} (wants {wanted})")
        for entry in reader:
            where = f"{path}, line {reader.line_num}"  # the file's line (a record may span two)
            if None in entry or None in entry.values():  # too many fields, or too few
                raise BadVerdicts(f"{where}: not {len(FIELDS)} fields ({wanted})")
            if entry["verdict"] not in VERDICTS:
                raise BadVerdicts(
                    f"{where}: verdict {entry['verdict']!r} (allowed: correct, wrong)"
                )
            if not (entry["reason"] or "").strip():
                raise BadVerdicts(f"{where}: reason is empty (say why, against the gold)")
            if answer_key(entry["answer"]) != entry["answer_key"]:
                raise BadVerdicts(f"{where}: answer_key is not the key of the row's answer")
            key = (entry["file"], entry["question_id"], entry["answer_key"])
            if key in verdicts:
                raise BadVerdicts(f"{where}: a second verdict on {key[1]}'s answer {key[2]}")
            verdicts[key] = Verdict(entry["verdict"] == "correct", entry["reason"].strip())
    return verdicts


def row(file: str, question_id: str, answer: object, verdict: str, reason: str) -> dict[str, str]:
    """One row of the file, as `write` wants it."""
    return {
        "file": file,
        "question_id": question_id,
        "answer_key": answer_key(answer),
        "verdict": verdict,
        "reason": reason,
        "answer": flat(answer),
    }


def write(rows: list[dict[str, str]], path: Path = LONGMEMEVAL_LOCAL) -> None:
    """Write the rows sorted by file, question and key, so an added verdict is a one-line diff."""
    path.parent.mkdir(parents=True, exist_ok=True)
    ordered = sorted(rows, key=lambda r: (r["file"], r["question_id"], r["answer_key"]))
    with path.open("w", newline="", encoding="utf-8") as f:
        out = csv.DictWriter(f, fieldnames=FIELDS, lineterminator="\n")
        out.writeheader()
        out.writerows(ordered)
