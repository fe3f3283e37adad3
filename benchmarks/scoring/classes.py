"""The paper's question classes (Appendix B.1: superseded, aggregation, single) and the prompt a
judge classifies with: ours, since the paper prints none. A class store's rows carry the
prompt's hash, so a read path (the class-oracle gate) and the scorer that writes the store agree
on which classification they mean."""

from __future__ import annotations

import hashlib
import re

__all__ = ["CLASSES", "CLASS_TEMPLATE", "parse_class", "prompt_sha256"]


def prompt_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


CLASSES = ("superseded", "aggregation", "single")

CLASS_TEMPLATE = (
    "I will give you a question about a user's chat history, its correct answer, and the "
    "time-stamped messages from the history that contain the evidence for the answer. Classify "
    "the question into exactly one class:\n"
    "superseded: the evidence states an earlier value of the asked fact that a later message "
    "replaced, and the question asks for the value after the change.\n"
    "aggregation: the answer combines several values from the evidence (a count, a total, a "
    "list, a comparison), none of which replaces another.\n"
    "single: otherwise.\n\n"
    "Question: {question}\n\nCorrect Answer: {answer}\n\nEvidence (oldest first):\n{evidence}"
    "\n\nAnswer with one word: superseded, aggregation, or single."
)

_CLASS_WORD = re.compile(r"\b(superseded|aggregation|single)\b")


def parse_class(reply: str) -> str | None:
    """The first class name in the reply (case-insensitive), or None when it names none."""
    match = _CLASS_WORD.search(reply.lower())
    return match.group(1) if match else None
