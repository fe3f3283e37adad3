"""Token-budgeted reads: the budget sweep of §4.1.1 and Appendix B.1.

B.1: budgets {1k, 2k, 3k, 5k, 8k, 11k}, each arm retrieving once per question, its context
truncated to the budget in tokens of the agent model's tokenizer. The budgeted arms subclass the
arms, so retrieval, rendering, snapshots and prompts are untouched; a read that fits is returned
unchanged (same text, same ids), so an (arm, budget) cell that does not truncate is exactly the
unbudgeted run, answered from the response cache.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, ClassVar

from baselines.pmem_arms.turns import TurnArm, dated_line
from baselines.reference.chunks import ChunkArm
from baselines.reference.long_context import LongContextArm
from benchmarks.runner.arm import Context, Services
from benchmarks.runner.types import Question

#: B.1's budgets, in tokens
BUDGETS = (1000, 2000, 3000, 5000, 8000, 11000)
KEEPS = ("rank", "head", "tail")

Measure = Callable[[str], Awaitable[int]]


async def count_tokens(services: Services, text: str) -> int:
    """Tokens of `text` under the agent model's tokenizer (the writer client shares the reader's
    model); the labelled chars/4 estimate when no chat model is configured."""
    if services.writer is None:
        return (len(text) + 3) // 4
    return (await services.writer.count_tokens(text)).n


def _snap(piece: str, full: str, keep: str) -> str:
    """Cut back to a word boundary when one is near, so no half word reaches the reader."""
    if keep == "tail":
        if len(piece) == len(full) or full[len(full) - len(piece) - 1].isspace():
            return piece
        space = next((i for i, c in enumerate(piece[:200]) if c.isspace()), None)
        return piece[space + 1 :] if space is not None else piece
    if len(piece) == len(full) or full[len(piece)].isspace():
        return piece
    space = max(piece.rfind(" ", max(0, len(piece) - 200)), piece.rfind("\n"))
    return piece[:space] if space > 0 and space >= len(piece) - 200 else piece


async def cut(text: str, budget: int, measure: Measure, keep: str = "head") -> str:
    """The longest prefix (``head``) or suffix (``tail``) of `text` whose measure is within
    `budget`, at a word boundary where one is near. `measure` takes the piece and returns the
    tokens of whatever the piece ends up in (the piece alone, or a whole rendered read).

    Galloping from a chars/4 guess, then bisection: a 1k budget on a 500k-character history
    needs about a dozen tokenizer calls on short pieces, not on the whole history."""

    def piece(n: int) -> str:
        return text[:n] if keep == "head" else text[len(text) - n :]

    if await measure(text) <= budget:
        return text
    lo, hi = 0, len(text)  # piece(lo) fits, piece(hi) does not
    size = min(len(text) - 1, max(1, 4 * budget))
    while size > lo:
        if await measure(piece(size)) <= budget:
            lo = size
            size = min(len(text) - 1, 2 * size)
        else:
            hi = size
            break
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if await measure(piece(mid)) <= budget:
            lo = mid
        else:
            hi = mid
    return _snap(piece(lo), text, keep) if lo else ""


class BudgetMixin:
    """The budget options shared by the budgeted arms; `budget: null` reads unbudgeted.

    Tokens are counted through the writer client: writer and reader are one model (the `llm`
    profile) and the harness measures `context_tokens` with the same endpoint, so a recorded
    read never exceeds its budget when the count is exact (vLLM or llama.cpp /tokenize); else
    the client's labelled chars/4 estimate is used, as the pipeline does.

    ``keep`` (B.1 does not say; our choice): ``rank`` takes retrieved turns whole by retrieval
    rank, the first that does not fit cut at a word boundary, then renders them as the arm does
    (cutting the date-ordered text would keep the oldest turns, for an update the superseded
    value); ``head`` keeps the rendered prefix (a retrieval-ordered listing: the same rule);
    ``tail`` keeps the suffix, the most recent history, as long context does for characters.
    `Context.meta` gets ``budget``, ``budget_truncated`` (0/1, averaged into the share cut) and
    ``budget_tokens_before``.
    """

    default_keep: ClassVar[str] = "head"
    services: Services

    def __init__(
        self,
        services: Services | None = None,
        budget: int | None = None,
        keep: str | None = None,
        **options: Any,
    ) -> None:
        super().__init__(services, **options)  # type: ignore[call-arg]  # the arm after the mixin
        if budget is not None and budget < 1:
            raise ValueError(f"arm.budget must be a positive token count or null, not {budget}")
        keep = keep or self.default_keep
        if keep not in KEEPS:
            raise ValueError(f"arm.keep={keep!r}; choose one of {', '.join(KEEPS)}")
        if keep == "rank" and self.default_keep != "rank":
            # an arm without a turn ranking of its own reads "by rank" as its own order: chunk
            # listings are in retrieval order (their head is the top rank), long context in
            # recency order (its tail)
            keep = self.default_keep
        self.budget = budget
        self.keep = keep

    async def tokens(self, text: str) -> int:
        return await count_tokens(self.services, text)

    def _meta(self, context: Context, before: int, truncated: bool, **extra: Any) -> dict[str, Any]:
        return {
            **context.meta,
            "budget": self.budget,
            "budget_keep": self.keep,
            "budget_tokens_before": before,
            "budget_truncated": int(truncated),
            **extra,
        }

    async def truncate_text(
        self, context: Context, unit_texts: Sequence[str], separator: str
    ) -> Context:
        """Head or tail of a rendered read whose units (`unit_texts`, in `context.ids` order)
        are joined by `separator`; ids keep the units at least partly shown."""
        before = await self.tokens(context.text)
        if self.budget is None or before <= self.budget:
            return Context(context.text, context.ids, self._meta(context, before, False))
        keep = "tail" if self.keep == "tail" else "head"
        text = await cut(context.text, self.budget, self.tokens, keep)
        spans, start = [], 0
        for unit in unit_texts:
            spans.append((start, start + len(unit)))
            start += len(unit) + len(separator)
        if keep == "head":
            ids = tuple(i for i, (s, _) in zip(context.ids, spans, strict=True) if s < len(text))
        else:
            first = len(context.text) - len(text)
            ids = tuple(i for i, (_, e) in zip(context.ids, spans, strict=True) if e > first)
        return Context(text, ids, self._meta(context, before, True, shown=len(ids)))


class BudgetedTurnArm(BudgetMixin, TurnArm):
    """P-Mem's turn read (B.1) under a token budget: whole turns by retrieval rank, the first
    that does not fit cut to what is left, rendered as dated lines oldest first (``keep:
    rank``); ``head``/``tail`` cut the rendered text instead."""

    needs: ClassVar[tuple[str, ...]] = ("embedder", "writer")
    default_keep: ClassVar[str] = "rank"

    def _assemble(self, whole: Sequence[int], partial: tuple[int, str] | None) -> str:
        lines = {i: dated_line(self.events[i], self.date_format) for i in whole}
        if partial is not None and partial[1]:
            lines[partial[0]] = partial[1]
        return "\n".join(lines[i] for i in sorted(lines))

    async def read(self, question: Question) -> Context:
        hits = await self.retrieve(question)
        full = self.render([i for i, _ in hits], shown=len(hits))
        if self.keep != "rank":
            shown = sorted(i for i, _ in hits)
            lines = [dated_line(self.events[i], self.date_format) for i in shown]
            return await self.truncate_text(full, lines, "\n")
        before = await self.tokens(full.text)
        if self.budget is None or before <= self.budget:
            return Context(full.text, full.ids, self._meta(full, before, False))
        whole: list[int] = []
        partial: tuple[int, str] | None = None
        for i, _ in hits:  # most similar first
            if await self.tokens(self._assemble([*whole, i], None)) <= self.budget:
                whole.append(i)
                continue
            line = dated_line(self.events[i], self.date_format)
            frozen = list(whole)

            async def measure(piece: str, i: int = i, frozen: list[int] = frozen) -> int:
                return await self.tokens(self._assemble(frozen, (i, piece)))

            piece = await cut(line, self.budget, measure, "head")
            partial = (i, piece) if piece else None
            break
        shown = sorted([*whole, *([partial[0]] if partial else [])])
        context = Context(
            self._assemble(whole, partial), tuple(self.events[i].id for i in shown), full.meta
        )
        return Context(
            context.text,
            context.ids,
            self._meta(
                context,
                before,
                True,
                shown=len(shown),
                budget_whole=len(whole),
                budget_cut_id=self.events[partial[0]].id if partial else None,
            ),
        )


class BudgetedChunkArm(BudgetMixin, ChunkArm):
    """Chunk (or session) retrieval under a token budget: the prefix of its retrieval-ordered
    listing, i.e. the best-ranked units, the last one cut (``keep: head``)."""

    needs: ClassVar[tuple[str, ...]] = ("embedder", "writer")
    default_keep: ClassVar[str] = "head"

    async def read(self, question: Question) -> Context:
        full = await super().read(question)
        by_id = {f"unit{u.index}": u.text for u in self.units}
        return await self.truncate_text(full, [by_id[i] for i in full.ids], self.separator)


class BudgetedLongContextArm(BudgetMixin, LongContextArm):
    """Long context under a token budget: the most recent history that fits (``keep: tail``),
    on top of the arm's own character cap (set ``max_chars`` high to cap by tokens alone)."""

    needs: ClassVar[tuple[str, ...]] = ("writer",)
    default_keep: ClassVar[str] = "tail"

    async def read(self, question: Question) -> Context:
        full = await super().read(question)
        by_id = {e.id: e.text for e in self.events}
        return await self.truncate_text(full, [by_id[i] for i in full.ids], self.separator)


__all__ = [
    "BUDGETS",
    "KEEPS",
    "BudgetMixin",
    "BudgetedChunkArm",
    "BudgetedLongContextArm",
    "BudgetedTurnArm",
    "count_tokens",
    "cut",
]
