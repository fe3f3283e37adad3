"""The figures the released data gives for each source, beside Appendix B.4's.

Facts, keys, overwritten keys and the stale-rate denominator, as ``stats`` prints them
(``python -m benchmarks.factconsolidation stats``); docs/factconsolidation.md says why they
differ from the paper's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from benchmarks.factconsolidation.gold import gold_state, question_infos
from benchmarks.factconsolidation.load import SourceData

__all__ = [
    "PAPER_FIGURES",
    "PaperFigures",
    "SourceStats",
    "format_table",
    "source_stats",
]


@dataclass(frozen=True, slots=True)
class PaperFigures:
    """B.4's figures for one length (the paper reports 6k, 64k and 262k only)."""

    facts: int
    keys: int
    overwritten: int
    stale_denominator: int


PAPER_FIGURES: dict[str, PaperFigures] = {
    "6k": PaperFigures(455, 239, 131, 64),
    "64k": PaperFigures(4580, 2263, 1277, 69),
    "262k": PaperFigures(18332, 8445, 5321, 71),
}


@dataclass(frozen=True, slots=True)
class SourceStats:
    """What the data gives for one source. Question figures are None for multi-hop sources."""

    source: str
    facts: int
    keys: int
    overwritten: int
    questions: int
    matched: int | None  # single-hop questions matched to a key
    gold_is_current: int | None  # ... whose gold is the key's current value
    stale_denominator: int | None  # ... that are stale-scoreable

    def to_json(self) -> dict[str, Any]:
        paper = PAPER_FIGURES.get(self.source.split("_")[1])
        return {
            "source": self.source,
            "facts": self.facts,
            "keys": self.keys,
            "overwritten": self.overwritten,
            "stale_denominator": self.stale_denominator,
            "questions": self.questions,
            "questions_matched": self.matched,
            "gold_is_current": self.gold_is_current,
            "paper": None
            if paper is None
            else {
                "facts": paper.facts,
                "keys": paper.keys,
                "overwritten": paper.overwritten,
                # B.4's denominator is single-hop only.
                "stale_denominator": paper.stale_denominator if self.source[:2] == "sh" else None,
            },
        }


def source_stats(data: SourceData) -> SourceStats:
    state = gold_state(data.facts)
    infos = question_infos(data)
    single = data.hop == "sh"
    return SourceStats(
        source=data.source,
        facts=len(data.facts),
        keys=len(state),
        overwritten=sum(h.overwritten for h in state.values()),
        questions=len(infos),
        matched=sum(i.key is not None for i in infos) if single else None,
        gold_is_current=sum(i.gold_is_current for i in infos) if single else None,
        stale_denominator=sum(i.stale_scoreable for i in infos) if single else None,
    )


def _cell(value: int | None, paper: int | None) -> str:
    ours = "-" if value is None else f"{value:,}"
    return ours if paper is None else f"{ours} ({paper:,})"


def _row(cells: Sequence[str], widths: Sequence[int]) -> str:
    """The source left-aligned, the figures right-aligned."""
    return "  ".join(
        c.ljust(w) if i == 0 else c.rjust(w)
        for i, (c, w) in enumerate(zip(cells, widths, strict=True))
    )


def format_table(stats: Sequence[SourceStats]) -> str:
    """A readable table; B.4's figure is in parentheses where the paper gives one."""
    header = ("source", "facts", "keys", "overwritten", "stale denom.", "matched", "gold current")
    rows = [header]
    for s in stats:
        paper = PAPER_FIGURES.get(s.source.split("_")[1])
        sh = s.source.startswith("sh")
        rows.append(
            (
                s.source,
                _cell(s.facts, paper and paper.facts),
                _cell(s.keys, paper and paper.keys),
                _cell(s.overwritten, paper and paper.overwritten),
                _cell(s.stale_denominator, paper.stale_denominator if paper and sh else None),
                _cell(s.matched, None),
                _cell(s.gold_is_current, None),
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines = [_row(r, widths) for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    note = [
        "(n) = the paper's figure (B.4 reports 6k, 64k and 262k only).",
        "The last three columns are single-hop only; see docs/factconsolidation.md.",
    ]
    return "\n".join([*lines, "", *note])
