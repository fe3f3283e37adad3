"""A table's page as the builders make it: prose and tables, the tables kept as DataFrames.

A builder returns a `Document`: it *is* the Markdown written to results/tables/<name>.md (a
`str`), and it keeps its parts, so the report renders each table from the same frame, cell by
cell as tabulate formats it, instead of reading the Markdown back. `markdown_table(df, ...)` is
`df.to_markdown(...)` as a part; `+` joins documents and strings in order.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd
from tabulate import DataRow, TableFormat, tabulate

from benchmarks.reports.markdown import Block, Table, parse
from benchmarks.reports.names import NAMES, display_name

__all__ = ["Document", "Frame", "markdown_table"]

_SEP, _ALIGN = "\x1f", "\x1e"
# tabulate's pipe format without its padding and bars: the cells as it formats them, one unit
# separator apart, and the alignment it chose per column on the line below the header
_CELLS = TableFormat(
    lineabove=None,
    linebelowheader=lambda _widths, aligns: _ALIGN + _SEP.join(aligns or ()),
    linebetweenrows=None,
    linebelow=None,
    headerrow=DataRow("", _SEP, ""),
    datarow=DataRow("", _SEP, ""),
    padding=0,
    with_header_hide=None,
)
# how the pipe format's alignment row reads each of tabulate's alignments
_READS_AS = {"right": "right", "decimal": "right", "center": "center"}


@dataclass(frozen=True, slots=True)
class Frame:
    """One table: the frame and the options it prints with (`DataFrame.to_markdown`'s)."""

    df: pd.DataFrame
    options: Mapping[str, Any]

    def markdown(self) -> str:
        return str(self.df.to_markdown(**self.options))

    def table(self) -> Table:
        """The cells exactly as the Markdown prints them, from the frame."""
        kwargs = dict(self.options)
        index = kwargs.pop("index", True)
        kwargs.pop("tablefmt", None)
        kwargs.setdefault("headers", "keys")
        text = tabulate(self.df, tablefmt=_CELLS, showindex=index, **kwargs)
        lines = text.split("\n")
        header = [c.strip() for c in lines[0].split(_SEP)]
        aligns = lines[1].removeprefix(_ALIGN).split(_SEP)
        rows = [[c.strip() for c in line.split(_SEP)] for line in lines[2:]]
        return Table(header, [_READS_AS.get(a, "left") for a in aligns], rows)


class Document(str):
    """Markdown that remembers its parts: prose (Markdown text) and `Frame`s, in order."""

    parts: tuple[str | Frame, ...]

    def __new__(cls, parts: Iterable[str | Frame] = ()) -> Document:
        merged: list[str | Frame] = []
        for part in parts:
            if isinstance(part, Document):
                pieces: Iterable[str | Frame] = part.parts
            else:
                pieces = (part,)
            for piece in pieces:
                if isinstance(piece, Frame) or not merged or isinstance(merged[-1], Frame):
                    merged.append(piece if isinstance(piece, Frame) else str(piece))
                else:
                    merged[-1] = merged[-1] + str(piece)
        text = "".join(p.markdown() if isinstance(p, Frame) else p for p in merged)
        doc = super().__new__(cls, text)
        doc.parts = tuple(merged)
        return doc

    def __add__(self, other: object) -> Document:
        if not isinstance(other, str):
            return NotImplemented
        return Document((self, other))

    def __radd__(self, other: object) -> Document:
        if not isinstance(other, str):
            return NotImplemented
        return Document((other, self))

    def blocks(self) -> list[Block]:
        """The page's blocks: prose read as Markdown, each table from its frame."""
        out: list[Block] = []
        for part in self.parts:
            if isinstance(part, Frame):
                out.append(Block("table", table=part.table()))
            else:
                out.extend(parse(part))
        return out


def markdown_table(df: pd.DataFrame, **options: Any) -> Document:
    """`df.to_markdown(**options)` as a document part that keeps the frame; an `arm` column
    (or index) prints each arm's display name (`names.display_name`: one name per arm in every
    table, figure and page)."""
    return Document((Frame(named(df), options),))


def named(df: pd.DataFrame) -> pd.DataFrame:
    """`df` with arms in display names (config ids stay in the csv): its `arm` column or index,
    and columns headed by an arm's id (a pivot with one column per arm)."""
    if "arm" in df.columns:
        df = df.assign(arm=df["arm"].map(lambda a: display_name(str(a)) if a == a else a))
    elif df.index.name == "arm":
        df = df.rename(index=lambda a: display_name(str(a)))
    arms = {c: NAMES[c] for c in df.columns if isinstance(c, str) and c in NAMES}
    return df.rename(columns=arms) if arms else df
