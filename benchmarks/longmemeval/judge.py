"""LongMemEval's judges: the official accuracy judge, and B.1's question classes and stale rate.

``LongMemEvalJudge`` uses the official per-type prompts word for word (xiaowu0162/LongMemEval @
9e0b455f4ef0e2ab8f2e582289761153549043fc, evaluate_qa.py ``get_anscheck_prompt``; MIT; kept in
``benchmarks.longmemeval.prompts``), with the official call (one user message, temperature 0,
max_tokens 10) and label (``'yes' in reply.lower()``); the judge model is the judge profile's.
B.1's own judge uses (``classify_question`` and ``StaleJudge``) print no prompt in the paper, so
those prompts are ours, hashes pinned in the tests. Class and value extraction depend only on
the question, so the response cache computes them once per question and judge model.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from benchmarks.longmemeval.prompts import JUDGE_TEMPLATES, judge_prompt, judge_template_name
from benchmarks.longmemeval.schema import KNOWLEDGE_UPDATE, is_abstention
from benchmarks.scoring.classes import CLASS_TEMPLATE, CLASSES, parse_class, prompt_sha256
from benchmarks.scoring.rules import normalize_answer

__all__ = [
    "CLASSES",
    "CLASS_TEMPLATE",
    "EXTRACT_TEMPLATE",
    "JUDGE_MAX_TOKENS",
    "JUDGE_TEMPLATES",
    "MATCH_TEMPLATE",
    "ClassStore",
    "LongMemEvalJudge",
    "QuestionClass",
    "StaleJudge",
    "StaleValues",
    "classify_question",
    "extract_values",
    "format_evidence",
    "judge_label",
    "judge_prompt",
    "judge_template_name",
    "parse_class",
    "prompt_sha256",
]

JUDGE_MAX_TOKENS = 10  # evaluate_qa.py
JUDGE_TEMPERATURE = 0.0  # evaluate_qa.py


def judge_label(reply: str) -> bool:
    """The official label: ``'yes' in reply.lower()`` (so "Yes." and "yes, but" both count)."""
    return "yes" in reply.lower()


def _user(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


def _meta(record: Mapping[str, Any]) -> Mapping[str, Any]:
    return record.get("meta") or {}


def _abstention(record: Mapping[str, Any]) -> bool:
    meta = _meta(record)
    if "abstention" in meta:
        return bool(meta["abstention"])
    return is_abstention(str(meta.get("question_id") or record["id"]))


def _gold(record: Mapping[str, Any]) -> str:
    golds = list(record.get("golds") or [])
    if not golds:
        raise ValueError(f"record {record.get('id')!r} has no gold answer")
    return str(golds[0])


async def official_verdict(record: Mapping[str, Any], judge: Any) -> tuple[bool, str, str]:
    """(correct, raw reply, template name) for one prediction record."""
    meta = _meta(record)
    qtype = str(meta.get("question_type") or "")
    abstention = _abstention(record)
    name = judge_template_name(qtype, abstention)
    prompt = JUDGE_TEMPLATES[name].format(record["question"], _gold(record), record["prediction"])
    result = await judge.complete(
        _user(prompt), max_tokens=JUDGE_MAX_TOKENS, temperature=JUDGE_TEMPERATURE
    )
    return judge_label(result.text), result.text, name


class LongMemEvalJudge:
    """LongMemEval's accuracy: the official judge prompt for the question's type (abstention
    overrides the type), temperature 0, max_tokens 10, correct iff "yes" is in the lower-cased
    reply. The raw reply is kept. Questions of unknown type raise, as the official script does."""

    #: hashed into the run manifest (the judge's prompts are part of the metric)
    prompts: ClassVar[dict[str, str]] = dict(JUDGE_TEMPLATES)

    name = "longmemeval_judge"
    needs: tuple[str, ...] = ("judge",)

    async def score(self, record: dict[str, Any], models: Any) -> dict[str, Any]:
        correct, reply, template = await official_verdict(record, models["judge"])
        return {
            "correct": correct,
            "reply": reply,
            "template": template,
            "question_type": _meta(record).get("question_type"),
        }


# --------------------------------------------------------------------------------------------
# Evidence
# --------------------------------------------------------------------------------------------


def format_evidence(evidence: Sequence[Mapping[str, Any]]) -> str:
    """Time-stamped answer-bearing turns, one per line block, in the order given (oldest
    first, as the loader stores them): ``[2023/01/10 (Tue) 09:15] user: ...``."""
    return "\n".join(f"[{e['date']}] {e['role']}: {e['content']}" for e in evidence)


# --------------------------------------------------------------------------------------------
# B.1 question classes (our prompt: the paper does not print one)
# --------------------------------------------------------------------------------------------


async def classify_question(
    judge: Any, question: str, answer: str, evidence: Sequence[Mapping[str, Any]]
) -> tuple[str | None, str]:
    """(class or None, raw reply): one judge call, temperature 0, cached like every call."""
    prompt = CLASS_TEMPLATE.format(
        question=question, answer=answer, evidence=format_evidence(evidence)
    )
    result = await judge.complete(
        _user(prompt), max_tokens=JUDGE_MAX_TOKENS, temperature=JUDGE_TEMPERATURE
    )
    return parse_class(result.text), result.text


def _judge_id(judge: Any) -> str:
    endpoint = getattr(judge, "endpoint", None)
    model = getattr(endpoint, "model", None) or "unknown"
    revision = getattr(endpoint, "revision", None)
    return f"{model}@{revision}" if revision else str(model)


class ClassStore:
    """The stored classification every run reads (B.1: "All runs read the same stored
    classification"): a JSON-lines file, one row per question id, with the judge model and
    the prompt's sha256, so a different judge or prompt classifies afresh instead of reusing."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._rows: dict[tuple[str, str, str], dict[str, Any]] = {}
        if self.path.exists():
            for line in self.path.read_text(encoding="utf-8").split("\n"):
                if line.strip():
                    row = json.loads(line)
                    self._rows[(row["id"], row["judge"], row["prompt_sha256"])] = row

    def get(self, qid: str, judge: str) -> dict[str, Any] | None:
        return self._rows.get((qid, judge, prompt_sha256(CLASS_TEMPLATE)))

    def put(self, qid: str, judge: str, label: str | None, reply: str) -> dict[str, Any]:
        row = {
            "id": qid,
            "class": label,
            "reply": reply,
            "judge": judge,
            "prompt_sha256": prompt_sha256(CLASS_TEMPLATE),
        }
        with self._lock:
            self._rows[(qid, judge, row["prompt_sha256"])] = row
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as out:
                out.write(json.dumps(row, ensure_ascii=False) + "\n")
        return row


async def stored_class(
    record: Mapping[str, Any], judge: Any, store: ClassStore | None = None
) -> dict[str, Any]:
    """The record's question class: from the store when it holds one for this judge and
    prompt, else classified (and stored). Abstention questions are classified too."""
    qid = str(record["id"])
    who = _judge_id(judge)
    if store is not None and (row := store.get(qid, who)) is not None:
        return {"class": row["class"], "reply": row["reply"], "stored": True}
    evidence = _meta(record).get("evidence") or []
    label, reply = await classify_question(judge, record["question"], _gold(record), evidence)
    if store is not None:
        store.put(qid, who, label, reply)
    return {"class": label, "reply": reply, "stored": False}


class QuestionClass:
    """B.1's susceptibility class of each question (superseded / aggregation / single), from
    the question, gold answer and time-stamped evidence turns; our prompt (CLASS_TEMPLATE),
    since the paper does not print its own. ``store``: a JSON-lines file that keeps the
    classification across runs (the response cache already makes a repeat call free)."""

    #: hashed into the run manifest (the judge's prompts are part of the metric)
    prompts: ClassVar[dict[str, str]] = {"class": CLASS_TEMPLATE}

    name = "question_class"
    needs: tuple[str, ...] = ("judge",)

    def __init__(self, store: str | Path | None = None) -> None:
        self.store = ClassStore(store) if store else None

    async def score(self, record: dict[str, Any], models: Any) -> dict[str, Any]:
        out = await stored_class(record, models["judge"], self.store)
        return {"class": out["class"], "reply": out["reply"]}


# --------------------------------------------------------------------------------------------
# B.1 stale rate (our prompts: the paper does not print them)
# --------------------------------------------------------------------------------------------

EXTRACT_TEMPLATE = (
    "I will give you a question about a user's chat history, its correct answer, and the "
    "time-stamped messages from the history that contain the evidence for the answer. The fact "
    "the question asks about may have changed over time. Find the value it had before it was "
    "last replaced (the superseded value) and the value that holds now (the current value). "
    "Copy each value as the evidence states it. If the evidence never states an earlier value "
    "that a later message replaced, the superseded value is null.\n\n"
    "Question: {question}\n\nCorrect Answer: {answer}\n\nEvidence (oldest first):\n{evidence}"
    '\n\nReply with JSON only: {{"superseded": <earlier value or null>, "current": <current '
    "value>}}"
)
EXTRACT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "superseded": {"type": ["string", "null"]},
        "current": {"type": ["string", "null"]},
    },
    "required": ["superseded", "current"],
    "additionalProperties": False,
}
EXTRACT_MAX_TOKENS = 200

MATCH_TEMPLATE = (
    "I will give you a question, a superseded answer (a value that held earlier but was later "
    "replaced), the current correct answer, and a response from a model. Please answer yes if "
    "the response gives the superseded answer as its answer to the question. Otherwise, answer "
    "no. If the response gives another value, or no value, answer no.\n\nQuestion: {}\n\n"
    "Superseded Answer: {}\n\nCurrent Answer: {}\n\nModel Response: {}\n\nDoes the model "
    "response answer with the superseded value? Answer yes or no only."
)


@dataclass(frozen=True, slots=True)
class StaleValues:
    """What the judge extracted for one question: None for a value it could not give."""

    superseded: str | None
    current: str | None
    reply: str
    parsed: bool


def _value(raw: Any) -> str | None:
    if raw is None or isinstance(raw, bool):
        return None
    text = str(raw).strip()
    return text if text and text.lower() not in {"null", "none", "n/a"} else None


async def extract_values(
    judge: Any, question: str, answer: str, evidence: Sequence[Mapping[str, Any]]
) -> StaleValues:
    """B.1: the superseded and current values, extracted by the judge from the evidence."""
    prompt = EXTRACT_TEMPLATE.format(
        question=question, answer=answer, evidence=format_evidence(evidence)
    )
    result = await judge.complete(
        _user(prompt),
        max_tokens=EXTRACT_MAX_TOKENS,
        temperature=JUDGE_TEMPERATURE,
        schema=EXTRACT_SCHEMA,
        schema_name="stale_values",
    )
    parsed = result.parsed if isinstance(result.parsed, dict) else None
    if parsed is None:
        return StaleValues(None, None, result.text, False)
    return StaleValues(
        _value(parsed.get("superseded")), _value(parsed.get("current")), result.text, True
    )


def coincide(a: str, b: str) -> bool:
    """Two values are the same value: equal after MemoryAgentBench's normalization."""
    return normalize_answer(a) == normalize_answer(b)


def exclusion(values: StaleValues, gold: str) -> str | None:
    """Why a question is outside the stale denominator, or None when it is scoreable."""
    if not values.parsed:
        return "extraction_failed"
    if values.superseded is None:
        return "no_superseded_value"
    if values.current is not None and coincide(values.superseded, values.current):
        return "coincident"
    if coincide(values.superseded, gold):
        return "coincident"
    return None


SUBSETS = ("knowledge-update", "superseded", "all")


class StaleJudge:
    """B.1's gold-aware stale rate.

    For each question in the subset (``knowledge-update``: the question type, as in Table 3;
    ``superseded``: the B.1 class, as in Table 9; ``all``), the judge extracts the superseded
    and the current value from the time-stamped evidence turns. The question is excluded
    (``{"excluded": reason}``) when no superseded value is found, the extraction does not
    parse, the two values coincide (or the superseded one coincides with the gold), or the
    question is an abstention question (its gold is an explanation, not a value). Otherwise
    ``stale`` is True when the prediction is wrong by the official judge (the same call as
    ``LongMemEvalJudge``, so a cache hit) and a second judge call says it answers with the
    superseded value. ``verdict`` is the exclusive outcome: correct, stale or wrong_other.
    The extraction and match prompts are ours (EXTRACT_TEMPLATE, MATCH_TEMPLATE): the paper
    does not print its own. Questions outside the subset get no score."""

    #: hashed into the run manifest (the judge's prompts are part of the metric)
    prompts: ClassVar[dict[str, str]] = {
        **JUDGE_TEMPLATES,
        "extract": EXTRACT_TEMPLATE,
        "match": MATCH_TEMPLATE,
    }

    name = "stale_judge"
    needs: tuple[str, ...] = ("judge",)

    def __init__(self, subset: str = "knowledge-update", store: str | Path | None = None) -> None:
        if subset not in SUBSETS:
            raise ValueError(f"subset must be one of {SUBSETS}, not {subset!r}")
        self.subset = subset
        self.store = ClassStore(store) if store else None

    async def in_subset(self, record: Mapping[str, Any], judge: Any) -> bool:
        if self.subset == "all":
            return True
        if self.subset == KNOWLEDGE_UPDATE:
            return _meta(record).get("question_type") == KNOWLEDGE_UPDATE
        return (await stored_class(record, judge, self.store))["class"] == "superseded"

    async def score(self, record: dict[str, Any], models: Any) -> dict[str, Any]:
        judge = models["judge"]
        if not await self.in_subset(record, judge):
            return {}
        if _abstention(record):
            return {"excluded": "abstention"}
        gold = _gold(record)
        evidence = _meta(record).get("evidence") or []
        values = await extract_values(judge, record["question"], gold, evidence)
        found = {"superseded": values.superseded, "current": values.current}
        reason = exclusion(values, gold)
        if reason is not None:
            return {"excluded": reason, **found, "extract_reply": values.reply}
        correct, _, _ = await official_verdict(record, judge)
        if correct:
            return {"stale": False, "verdict": "correct", **found}
        assert values.superseded is not None  # exclusion() returned None
        prompt = MATCH_TEMPLATE.format(
            record["question"], values.superseded, gold, record["prediction"]
        )
        result = await judge.complete(
            _user(prompt), max_tokens=JUDGE_MAX_TOKENS, temperature=JUDGE_TEMPERATURE
        )
        stale = judge_label(result.text)
        return {
            "stale": stale,
            "verdict": "stale" if stale else "wrong_other",
            **found,
            "match_reply": result.text,
        }
