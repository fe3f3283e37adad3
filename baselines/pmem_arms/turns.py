"""P-Mem's LongMemEval read: dated turns, graph-guided supersession pruning, and its gates.

On LongMemEval the headline path retrieves raw turns, not cells (A.3; write-time extraction
misses updates stated in passing, App. D): the cosine top-12 (date, message) turns as dated
lines (B.1). Validity is enforced on that read (§3.4): of two retrieved turns related by
supersession the earlier is dropped, so a superseded statement cannot re-enter by similarity.
The paper gives the pruning query's content, not its wording, and prints no gate prompt: all
prompts here are ours (docs/longmemeval_reads.md lists every choice the paper leaves open).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from baselines.base import load_events, save_events
from baselines.retrieval import EmbeddingIndex
from benchmarks.runner.arm import Context, MemoryArm, Services
from benchmarks.runner.types import Event, Question
from benchmarks.scoring.classes import CLASS_TEMPLATE, prompt_sha256

VECTORS_FILE = "vectors.npy"

DATE_FORMATS = ("released", "day")
GATES = ("none", "class_oracle", "intent", "router")

# B.1's pruning query: "a constrained binary query - do the two state different values of the
# queried attribute?" The content is the paper's; the wording is ours. No dates and retrieval
# order (not date order), so the model has nothing to judge recency by (§3.4, B.1).
PRUNE_PROMPT = (
    "Here is a question about a user's chat history and two messages from that history.\n\n"
    "Question: {question}\n\n"
    "Message A: {first}\n\n"
    "Message B: {second}\n\n"
    "Do messages A and B state different values of the attribute the question asks about? "
    "Answer yes or no only."
)
# App. C's intent classifier: "prune only when the question asks for a current value" (ours).
INTENT_PROMPT = (
    "Here is a question a user asks about their own chat history.\n\n"
    "Question: {question}\n\n"
    "Does the question ask for the current value of something that can change over time (for "
    "example where the user lives now, or their current job), as opposed to counting, listing, "
    "comparing or dating several things? Answer yes or no only."
)
# App. C's binary prune-vs-keep router, from the question text alone (ours).
ROUTER_PROMPT = (
    "A memory system answers a user's question from messages retrieved from their chat "
    "history. It can read them in one of two ways:\n"
    "prune: when two messages state different values of what the question asks about, drop "
    "the older one, so only the latest value is left;\n"
    "keep: show every retrieved message.\n"
    "Pruning helps when the question asks for a value that may have been updated since; it "
    "hurts when the answer combines several messages (counting, totals, lists, comparisons, "
    "or when things happened).\n\n"
    "Question: {question}\n\n"
    "Should the system prune or keep? Answer with one word: prune or keep."
)
# B (shared setup): temperature 0; App. C: "the gate is a one-token classification". A few
# tokens of room so a leading space or "Yes." still parses; the reply is read by its first word.
BINARY_MAX_TOKENS = 4
PROMPTS: dict[str, str] = {
    "prune_pair": PRUNE_PROMPT,
    "gate_intent": INTENT_PROMPT,
    "gate_router": ROUTER_PROMPT,
}

_WORD = re.compile(r"[a-z]+")


def first_word(reply: str) -> str | None:
    """The first alphabetic word of a reply, lower-cased (how a binary answer is read)."""
    match = _WORD.search((reply or "").lower())
    return match.group(0) if match else None


def says_yes(reply: str) -> bool:
    """A binary reply is yes only when its first word is "yes"; anything else keeps the turn."""
    return first_word(reply) == "yes"


def render_date(event: Event, date_format: str = "released") -> str:
    """The date shown on a turn's line: the session date as released ("2023/05/20 (Sat)
    02:21", the form of the reading prompt's current date), or the day alone ("2023/05/20")."""
    at = event.at or ""
    if date_format == "day":
        return at[:10].replace("-", "/")
    return str(event.meta.get("date") or at.replace("T", " ").replace("-", "/")[:16])


def dated_line(event: Event, date_format: str = "released") -> str:
    """B.1's dated line: ``[date] role: content`` (the event text is ``role: content``)."""
    return f"[{render_date(event, date_format)}] {event.text}"


@dataclass(frozen=True, slots=True)
class PairQuery:
    """One supersession check: positions in the pool, the earlier-dated one first."""

    earlier: int
    later: int
    cosine: float


class TurnArm(MemoryArm):
    """B.1's turn read: cosine top-k (12) turns, listed as dated lines, oldest first.

    Table 3 "turn read", Tables 4-5, Table 9 "ungated". Each event's text (``role: content``)
    is embedded as a passage, the question as a query; the retrieved turns are sorted by date as
    the official LongMemEval reader does (ties keep the history's order).
    """

    needs: ClassVar[tuple[str, ...]] = ("embedder",)

    def __init__(
        self, services: Services | None = None, k: int = 12, date_format: str = "released"
    ) -> None:
        super().__init__(services)
        if k < 1:
            raise ValueError(f"arm.k must be >= 1, not {k}")
        if date_format not in DATE_FORMATS:
            raise ValueError(
                f"arm.date_format={date_format!r}; choose one of {', '.join(DATE_FORMATS)}"
            )
        self.k = k
        self.date_format = date_format
        self.events: list[Event] = []
        self.index: EmbeddingIndex | None = None

    # -- write: keep every turn ----------------------------------------------------------------

    async def ingest(self, events: Sequence[Event]) -> None:
        self.events.extend(events)
        # B.1 "embeds ... each turn": the message (role: content), not its date, so the raw
        # arms and this one share one set of cached embeddings of the same pool.
        self.index = await EmbeddingIndex.build(
            self.services.embedder, [e.text for e in self.events]
        )

    # -- read ----------------------------------------------------------------------------------

    async def retrieve(self, question: Question) -> list[tuple[int, float]]:
        """(position, cosine) of the top-k turns, most similar first."""
        assert self.index is not None, "read before ingest"
        return await self.index.query(self.services.embedder, question.text, self.k)

    def render(self, positions: Sequence[int], **meta: Any) -> Context:
        """The turns as dated lines in arrival order (date order; ties in the history's order)."""
        shown = sorted(positions)
        lines = [dated_line(self.events[i], self.date_format) for i in shown]
        meta = {"k": self.k, "pool": len(self.events), "retrieved": len(positions), **meta}
        return Context("\n".join(lines), tuple(self.events[i].id for i in shown), meta)

    async def read(self, question: Question) -> Context:
        hits = await self.retrieve(question)
        return self.render([i for i, _ in hits], shown=len(hits))

    # -- snapshots (turn texts and vectors, as baselines/reference/raw.py) ---------------------

    def save(self, directory: Path) -> bool:
        save_events(directory, self.events)
        if self.index is not None:
            self.index.save(directory / VECTORS_FILE)
        return True

    def load(self, directory: Path) -> bool:
        events, vectors = load_events(directory), directory / VECTORS_FILE
        if events is None or not vectors.exists():
            return False
        self.events = events
        self.index = EmbeddingIndex.load(vectors)
        return len(self.index) == len(self.events)


class PrunedTurnArm(TurnArm):
    """The turn read with B.1's supersession pruning, optionally gated per question (App. C).

    ``prune_pair``: the mutual-cosine threshold between two retrieved turns (the embedder
    profile's ``thresholds.prune_pair``; 0.55 for the paper's embedder). ``gate``: none |
    class_oracle | intent | router. ``classes``: the stored B.1 classification (the JSON-lines
    file the ``QuestionClass`` scorer writes) that ``class_oracle`` reads; ``class_judge``
    picks one judge's rows when the file holds several.

    Pruning (B.1): every retrieved pair above ``prune_pair`` with different dates gets one
    constrained binary query to the writer ("do the two state different values of the queried
    attribute?"); on "yes" the earlier-dated turn is dropped. The messages are shown undated and
    in retrieval order, so the model never judges which is older: the dates fix the direction.

    Gates (App. C): ``none`` prunes every question; ``class_oracle`` only those the stored
    classification calls superseded; ``intent`` asks whether the question asks for a current
    value; ``router`` asks prune or keep. Intent and router see the question text only. A gate
    that says keep returns exactly `TurnArm`'s context and one that says prune exactly the
    ungated pruned context, so gated runs reuse both reads' answers through the response cache
    (App. C: "the comparison is paired").
    """

    needs: ClassVar[tuple[str, ...]] = ("embedder", "writer")
    prompts: ClassVar[dict[str, str]] = dict(PROMPTS)
    #: the service that answers the intent / router gate (App. C: "with the 4B and the 35B")
    gate_role: ClassVar[str] = "writer"

    def __init__(
        self,
        services: Services | None = None,
        k: int = 12,
        date_format: str = "released",
        prune_pair: float = 0.55,
        gate: str = "none",
        classes: str | Path | None = None,
        class_judge: str | None = None,
    ) -> None:
        super().__init__(services, k=k, date_format=date_format)
        if gate not in GATES:
            raise ValueError(f"arm.gate={gate!r}; choose one of {', '.join(GATES)}")
        if not -1.0 <= prune_pair <= 1.0:
            raise ValueError(f"arm.prune_pair is a cosine in [-1, 1], not {prune_pair}")
        if gate == "class_oracle" and not classes:
            raise ValueError(
                "arm.gate=class_oracle reads the stored B.1 classification: set arm.classes to "
                "the QuestionClass scorer's store (e.g. results/longmemeval_classes.jsonl)"
            )
        self.prune_pair = prune_pair
        self.gate = gate
        self.classes = Path(classes) if classes else None
        self.class_judge = class_judge
        self._labels: dict[str, str | None] | None = None

    # -- the gate (Appendix C) -----------------------------------------------------------------

    async def decide(self, question: Question) -> tuple[bool, dict[str, Any]]:
        """(prune?, what the gate saw and said). Only the class oracle sees the class; the
        intent and router gates see the question text alone (App. C)."""
        if self.gate == "none":
            return True, {"gate": "none"}
        if self.gate == "class_oracle":
            label = self.stored_class(question.id)
            return label == "superseded", {"gate": "class_oracle", "gate_class": label}
        model = self._gate_model()
        template = INTENT_PROMPT if self.gate == "intent" else ROUTER_PROMPT
        result = await model.complete(
            [{"role": "user", "content": template.format(question=question.text)}],
            max_tokens=BINARY_MAX_TOKENS,
            temperature=0.0,
        )
        word = first_word(result.text)
        prune = word == "yes" if self.gate == "intent" else word == "prune"
        return prune, {"gate": self.gate, "gate_model": self.gate_role, "gate_reply": result.text}

    def _gate_model(self) -> Any:
        model = getattr(self.services, self.gate_role, None)
        if model is None:
            raise ValueError(
                f"arm.gate={self.gate} asks the {self.gate_role} model, and this run has none"
            )
        return model

    def stored_class(self, question_id: str) -> str | None:
        """The question's B.1 class from the stored classification (B.1: "All runs read the
        same stored classification"). A question the store does not hold is an error: the
        oracle gate must not silently fall back to keep or prune."""
        if self._labels is None:
            self._labels = read_classes(self.classes, self.class_judge)  # type: ignore[arg-type]
        if question_id not in self._labels:
            raise KeyError(
                f"{self.classes}: no stored class for question {question_id!r}; classify the "
                "questions first (the QuestionClass scorer with store= this file)"
            )
        return self._labels[question_id]

    # -- pruning (§3.4, B.1) -------------------------------------------------------------------

    def candidate_pairs(self, positions: Sequence[int]) -> tuple[list[PairQuery], dict[str, int]]:
        """Every retrieved pair with mutual cosine >= prune_pair and different dates, each
        oriented by date (earlier, later); and how many pairs each rule let through."""
        assert self.index is not None, "read before ingest"
        vectors = self.index.vectors
        counts = {"pairs": 0, "pairs_similar": 0, "pairs_same_date": 0}
        out: list[PairQuery] = []
        for a, b in itertools.combinations(positions, 2):  # in retrieval order
            counts["pairs"] += 1
            cosine = float(np.dot(vectors[a], vectors[b]))
            if cosine < self.prune_pair:
                continue
            counts["pairs_similar"] += 1
            at_a, at_b = self.events[a].at, self.events[b].at
            if not at_a or not at_b or at_a == at_b:  # no date order, no direction: never asked
                counts["pairs_same_date"] += 1
                continue
            # ISO 8601 strings order as dates: the date, never the model, fixes the direction.
            earlier, later = (a, b) if at_a < at_b else (b, a)
            out.append(PairQuery(earlier, later, cosine))
        return out, counts

    async def supersedes(self, question: Question, first: int, second: int) -> tuple[bool, str]:
        """B.1's constrained binary query for one pair, shown in retrieval order, undated."""
        writer = self.services.writer
        if writer is None:
            raise ValueError("supersession pruning needs a writer model (the llm profile)")
        prompt = PRUNE_PROMPT.format(
            question=question.text,
            first=self.events[first].text,
            second=self.events[second].text,
        )
        result = await writer.complete(
            [{"role": "user", "content": prompt}],
            max_tokens=BINARY_MAX_TOKENS,
            temperature=0.0,
        )
        return says_yes(result.text), result.text

    async def prune(self, question: Question, positions: Sequence[int]) -> dict[str, Any]:
        """Ask every candidate pair (concurrently, so the outcome does not depend on the order
        of the checks) and drop the earlier-dated turn of every pair answered yes."""
        pairs, counts = self.candidate_pairs(positions)
        rank = {p: r for r, p in enumerate(positions)}

        async def ask(pair: PairQuery) -> tuple[bool, str]:
            # shown in retrieval order, so A is not always the earlier (or the later) message
            first, second = sorted((pair.earlier, pair.later), key=rank.__getitem__)
            return await self.supersedes(question, first, second)

        answers = await asyncio.gather(*(ask(p) for p in pairs))
        dropped = {p.earlier for p, (yes, _) in zip(pairs, answers, strict=True) if yes}
        return {
            **counts,
            "queries": len(pairs),
            "yes": sum(1 for yes, _ in answers if yes),
            "dropped": dropped,
            "checks": [
                {
                    "earlier": self.events[p.earlier].id,
                    "later": self.events[p.later].id,
                    "cosine": round(p.cosine, 4),
                    "reply": reply,
                }
                for p, (_, reply) in zip(pairs, answers, strict=True)
            ],
        }

    async def read(self, question: Question) -> Context:
        hits = await self.retrieve(question)
        positions = [i for i, _ in hits]
        prune, gate = await self.decide(question)
        base = {"prune_pair": self.prune_pair, **gate, "pruned_read": prune}
        if not prune:  # exactly TurnArm's context: the stored raw-read answer is reused
            empty = {"pairs": 0, "pairs_similar": 0, "pairs_same_date": 0, "queries": 0}
            return self.render(positions, **base, **empty, pruned=0, kept=len(positions))
        out = await self.prune(question, positions)
        dropped = out.pop("dropped")
        kept = [i for i in positions if i not in dropped]
        return self.render(
            kept,
            **base,
            **out,
            pruned=len(dropped),
            kept=len(kept),
            pruned_ids=[self.events[i].id for i in sorted(dropped)],
        )


class JudgeGatedTurnArm(PrunedTurnArm):
    """Table 9's 35B question-only router: the gate asks the judge model (Qwen3.6-35B-A3B),
    the pruning judgments stay with the writer (the shared 4B agent), so its pruned read is
    the same as every other arm's. Needs a ``judge`` service; see docs/longmemeval_reads.md."""

    needs: ClassVar[tuple[str, ...]] = ("embedder", "writer", "judge")
    gate_role: ClassVar[str] = "judge"

    def __init__(self, services: Services | None = None, **options: Any) -> None:
        super().__init__(services, **options)
        if self.gate not in ("intent", "router"):
            raise ValueError(
                f"{type(self).__name__} routes with the judge model: arm.gate must be intent "
                f"or router, not {self.gate!r}"
            )


def read_classes(path: Path, judge: str | None = None) -> dict[str, str | None]:
    """Question id -> B.1 class from a class store file (the QuestionClass scorer's), restricted
    to rows written with the current class prompt (and to `judge` when given). Rows of several
    judges for one question without `judge` are ambiguous, and an error."""
    if not path.exists():
        raise FileNotFoundError(
            f"{path}: no stored question classes; run the QuestionClass scorer with store= "
            "this file first (B.1: every run reads the same stored classification)"
        )
    sha = prompt_sha256(CLASS_TEMPLATE)
    rows: dict[str, dict[str, Any]] = {}  # (id) -> {judge: class}; a later row wins
    for line in path.read_text(encoding="utf-8").split("\n"):  # \n only, as JSON lines end
        if not line.strip():
            continue
        row = json.loads(line)
        if row.get("prompt_sha256") != sha or (judge is not None and row.get("judge") != judge):
            continue
        rows.setdefault(str(row["id"]), {})[row.get("judge")] = row.get("class")
    labels: dict[str, str | None] = {}
    for qid, by_judge in rows.items():
        if len(by_judge) > 1:
            raise ValueError(
                f"{path}: question {qid!r} is classified by several judges "
                f"({', '.join(map(str, by_judge))}); set arm.class_judge"
            )
        labels[qid] = next(iter(by_judge.values()))
    return labels
