"""MemoryAgentBench's official answer scoring, ported word for word.

Source: ``HUST-AI-HYZ/MemoryAgentBench`` @ ``455306dcabc3842526eb83cd4e225e5d486c5c5d``,
``utils/eval_other_utils.py`` (MIT, Copyright (c) 2026 Yuanzhe Hu; adapted from DensePhrases'
``eval_utils.py``), statement for statement so our numbers compare with the paper's; only names,
type hints and return types differ. The port departs only for inputs the original cannot score
(see ``_flatten_golds``). FactConsolidation reports ``substring_exact_match`` as "accuracy",
through ``default_post_process``, whose ROUGE (not a headline metric) is left out.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Callable, Iterable
from typing import TypeVar

__all__ = [
    "exact_match",
    "memoryagentbench_score",
    "normalize_answer",
    "parse_output",
    "substring_exact_match",
    "token_f1",
]

Golds = str | Iterable["Golds"]
"""A gold answer: one string, or a (possibly nested) list of strings."""

_T = TypeVar("_T", bool, float)

_PUNCTUATION = frozenset(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_SPECIAL_ANSWERS = frozenset({"yes", "no", "noanswer"})
_ANSWER_PREFIX = "Answer:"


def normalize_answer(s: str) -> str:
    """Normalize text the way the official scorer does, so that matches are comparable.

    The steps run in the official order: lower-case, delete every ``string.punctuation``
    character, replace the articles ``a``/``an``/``the`` with a space, then collapse
    whitespace. The order matters: ``"a.b"`` becomes ``"ab"`` (one word, no article).
    """
    text = s.lower()
    text = "".join(char for char in text if char not in _PUNCTUATION)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def _substring_exact_match_one(prediction: str, gold: str) -> bool:
    return normalize_answer(gold) in normalize_answer(prediction)


def _exact_match_one(prediction: str, gold: str) -> bool:
    return normalize_answer(prediction) == normalize_answer(gold)


def _f1_one(prediction: str, gold: str) -> float:
    normalized_prediction = normalize_answer(prediction)
    normalized_gold = normalize_answer(gold)
    # A yes/no/noanswer question gets no partial credit: either the sides agree or F1 is 0.
    if (
        normalized_prediction in _SPECIAL_ANSWERS or normalized_gold in _SPECIAL_ANSWERS
    ) and normalized_prediction != normalized_gold:
        return 0.0
    prediction_tokens = normalized_prediction.split()
    gold_tokens = normalized_gold.split()
    common_tokens = Counter(prediction_tokens) & Counter(gold_tokens)
    num_common_tokens = sum(common_tokens.values())
    if num_common_tokens == 0:
        return 0.0
    precision = num_common_tokens / len(prediction_tokens)
    recall = num_common_tokens / len(gold_tokens)
    return (2 * precision * recall) / (precision + recall)


def _flatten_golds(golds: Golds) -> list[str]:
    """Flatten golds to a list of strings, as the official max-over-golds helper does.

    The official helper accepts a string, a list of strings, or a list of lists (the
    dataset's ``answers[i]``). It flattens one level. This version flattens any depth.
    It gives the same answer on every input the original handles correctly, and it also
    handles mixed or deeper nesting. The original would crash on those, or treat the
    characters of a string as separate golds.
    """
    if isinstance(golds, str):
        return [golds]
    flat: list[str] = []
    for gold in golds:
        flat.extend(_flatten_golds(gold))
    return flat


def _max_over_golds(metric: Callable[[str, str], _T], prediction: str, golds: Golds) -> _T:
    """Return the best score over all golds, the benchmark's rule for multiple answers."""
    gold_list = _flatten_golds(golds)
    if not gold_list:
        # The original fails here too (``max()`` of an empty sequence); the message is clearer.
        raise ValueError("golds must contain at least one gold answer string")
    return max(metric(prediction, gold) for gold in gold_list)


def substring_exact_match(prediction: str, golds: Golds) -> bool:
    """True if some normalized gold occurs in the normalized prediction.

    This is the "accuracy" MemoryAgentBench reports for FactConsolidation. It tolerates
    chatty outputs such as "The answer is Pesäpallo." for the gold ``"pesäpallo"``.
    """
    return _max_over_golds(_substring_exact_match_one, prediction, golds)


def exact_match(prediction: str, golds: Golds) -> bool:
    """True if the normalized prediction equals some normalized gold (DrQA exact match)."""
    return _max_over_golds(_exact_match_one, prediction, golds)


def token_f1(prediction: str, golds: Golds) -> float:
    """Best token-level F1 over golds, on normalized text (SQuAD/DrQA style).

    F1 is 0.0 when either side normalizes to ``yes``/``no``/``noanswer`` and the two
    differ, so a yes/no answer is not credited merely for sharing tokens.
    """
    return float(_max_over_golds(_f1_one, prediction, golds))


def parse_output(output: str) -> str:
    """Extract the answer from a model output, as the official ``parse_output`` does.

    It returns the text after the first ``Answer:`` (case-insensitive) up to the end of
    that line. If there is no ``Answer:``, it returns the first line. The result is
    stripped, and one repeated leading ``Answer:`` is removed. The official version can
    return ``None``, but for a string input its second pattern always matches.
    """
    patterns = (
        re.compile(f"(?:{_ANSWER_PREFIX})(.*)(?:\n|$)", flags=re.IGNORECASE),
        re.compile(r"(?:^)(.*)(?:\n|$)"),
    )
    for pattern in patterns:
        match = pattern.search(output)
        if match:
            extracted = match[1].strip()
            return re.sub(
                f"^{re.escape(_ANSWER_PREFIX)}", "", extracted, flags=re.IGNORECASE
            ).strip()
    return ""  # Unreachable for str input (the first-line pattern always matches).


def memoryagentbench_score(output: str, golds: Golds) -> dict[str, bool | float]:
    """Score one output as ``default_post_process`` does.

    Each metric is computed on the raw output and again on ``parse_output(output)``,
    and the per-metric maximum is kept. So a verbose answer and an ``Answer:`` line
    can both earn credit.

    Returns ``{"substring_exact_match": bool, "exact_match": bool, "f1": float}``.
    """
    parsed = parse_output(output)
    return {
        "substring_exact_match": max(
            substring_exact_match(output, golds), substring_exact_match(parsed, golds)
        ),
        "exact_match": max(exact_match(output, golds), exact_match(parsed, golds)),
        "f1": max(token_f1(output, golds), token_f1(parsed, golds)),
    }
