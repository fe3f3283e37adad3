"""The Markdown the table builders print, as blocks the report can render and annotate.

The builders (benchmarks/reports/*.py) write headings, paragraphs, `*` lists and pandas'
`to_markdown()` pipe tables with `**bold**` and backticks; nothing else. Parsing that subset
here, rather than pulling in a Markdown package, keeps the harness's dependencies as they are
and, more to the point, gives the page the tables as rows and columns: a verdict badge can then
be put into the very cell it judges, and numbers right-aligned.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field

__all__ = ["Block", "Table", "inline", "parse", "split_title"]

_NUMERIC = re.compile(r"^[-+~−]?\d[\d,.]*(?:\s|$|%|\[|/|\()|^[–—-]$")


@dataclass
class Table:
    """A pipe table: the header, each column's alignment ("left"/"right"/"center"), the rows."""

    header: list[str]
    align: list[str]
    rows: list[list[str]] = field(default_factory=list)

    def column(self, name: str) -> int | None:
        """The index of a column by its header text, or None."""
        return self.header.index(name) if name in self.header else None


@dataclass
class Block:
    """One block of a builder's Markdown: a heading (level 1-6), a paragraph, a list, a table."""

    kind: str  # "heading" | "paragraph" | "list" | "table"
    text: str = ""
    level: int = 0
    items: list[str] = field(default_factory=list)
    table: Table | None = None


def _cells(line: str) -> list[str]:
    inner = line.strip()
    inner = inner[1:] if inner.startswith("|") else inner
    inner = inner[:-1] if inner.endswith("|") else inner
    return [c.strip() for c in inner.split("|")]


def _alignment(spec: str) -> str:
    spec = spec.strip()
    if spec.startswith(":") and spec.endswith(":"):
        return "center"
    return "right" if spec.endswith(":") else "left"


def _is_rule(line: str) -> bool:
    return bool(line.strip()) and all(re.fullmatch(r":?-{2,}:?", c) for c in _cells(line))


def parse(md: str) -> list[Block]:
    """The blocks of a builder's Markdown, in order."""
    blocks: list[Block] = []
    lines = md.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if not stripped:
            i += 1
            continue
        heading = re.match(r"^(#{1,6})\s+(.*)$", stripped)
        if heading:
            blocks.append(Block("heading", heading[2].strip(), level=len(heading[1])))
            i += 1
        elif stripped.startswith("|") and i + 1 < len(lines) and _is_rule(lines[i + 1]):
            table = Table(_cells(line), [_alignment(c) for c in _cells(lines[i + 1])])
            i += 2
            while i < len(lines) and lines[i].strip().startswith("|"):
                row = _cells(lines[i])
                table.rows.append((row + [""] * len(table.header))[: len(table.header)])
                i += 1
            blocks.append(Block("table", table=table))
        elif re.match(r"^[*-]\s+", stripped):
            items = []
            while i < len(lines) and re.match(r"^\s*[*-]\s+", lines[i]):
                items.append(re.sub(r"^\s*[*-]\s+", "", lines[i]).strip())
                i += 1
            blocks.append(Block("list", items=items))
        else:
            para = []
            while i < len(lines) and lines[i].strip() and not _starts_block(lines, i):
                para.append(lines[i].strip())
                i += 1
            blocks.append(Block("paragraph", " ".join(para)))
    return blocks


def _starts_block(lines: list[str], i: int) -> bool:
    s = lines[i].strip()
    if re.match(r"^#{1,6}\s", s) or re.match(r"^[*-]\s+", s):
        return True
    return s.startswith("|") and i + 1 < len(lines) and _is_rule(lines[i + 1])


def inline(text: str) -> str:
    """Escaped HTML of one line of Markdown: `code` and **bold** kept, everything else text."""
    out = []
    for k, part in enumerate(re.split(r"(`[^`]*`)", text)):
        if k % 2:
            out.append(f"<code>{html.escape(part[1:-1])}</code>")
        else:
            escaped = html.escape(part)
            out.append(re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", escaped))
    return "".join(out)


def is_numeric(cell: str) -> bool:
    """Whether a cell reads as a number (or a number with its interval): right-aligned."""
    return bool(_NUMERIC.match(cell.strip()))


def split_title(blocks: list[Block]) -> tuple[str | None, list[Block]]:
    """The first level-1 heading (the table's title) and the blocks without it."""
    for k, b in enumerate(blocks):
        if b.kind == "heading" and b.level == 1:
            return b.text, blocks[:k] + blocks[k + 1 :]
    return None, blocks
