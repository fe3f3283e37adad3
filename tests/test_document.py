"""The report renders each table from its frame: the cells it shows are the cells the Markdown
prints, and no committed table reaches the page by reading its Markdown back."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.reports import registry, tables
from benchmarks.reports.document import Document, Frame, markdown_table
from benchmarks.reports.markdown import parse

RUNS = Path(__file__).resolve().parents[1] / "results" / "runs"

text = (
    st.text(
        alphabet=st.characters(categories=("L", "N"), include_characters=" .%-[]()–"),
        min_size=1,
        max_size=12,
    )
    .map(str.strip)
    .filter(bool)
)
numbers = st.one_of(
    st.integers(-10_000, 10_000),
    st.floats(-1e6, 1e6, allow_nan=False).filter(lambda x: not math.isinf(x)),
)


@st.composite
def frames(draw: st.DrawFn) -> pd.DataFrame:
    columns = draw(st.lists(text, min_size=1, max_size=4, unique=True))
    rows = draw(st.integers(1, 5))
    data = {
        c: draw(st.lists(st.one_of(text, numbers), min_size=rows, max_size=rows)) for c in columns
    }
    return pd.DataFrame(data)


@settings(max_examples=150, deadline=None)
@given(frames(), st.booleans(), st.booleans())
def test_a_frames_cells_are_what_its_markdown_prints(
    df: pd.DataFrame, index: bool, numparse: bool
) -> None:
    options = {"index": index, "disable_numparse": not numparse}
    (block,) = parse(df.to_markdown(**options))
    assert Frame(df, options).table() == block.table


def test_a_document_is_its_markdown_and_keeps_its_parts_in_order() -> None:
    df = pd.DataFrame({"arm": ["a", "b"], "acc": [1.5, 20.25]})
    doc = "# Title\n\nSome prose.\n\n" + markdown_table(df, index=False) + "\n\nAfter."
    assert isinstance(doc, Document)
    assert str(doc) == "# Title\n\nSome prose.\n\n" + df.to_markdown(index=False) + "\n\nAfter."
    kinds = [type(p).__name__ for p in doc.parts]
    assert kinds == ["str", "Frame", "str"]
    assert doc.blocks() == parse(str(doc))
    doc += "\n\nMore."
    assert isinstance(doc, Document) and doc.endswith("More.")


BUILT = [n for n, t in registry.tables().items() if t.build is not None and (RUNS / n).is_dir()]


@pytest.mark.parametrize("name", BUILT)
def test_every_committed_table_reaches_the_page_from_its_frames(name: str, tmp_path: Path) -> None:
    md = tables.build(name, RUNS, tmp_path)
    assert isinstance(md, Document)
    prose = [p for p in md.parts if isinstance(p, str)]
    assert not any(b.kind == "table" for p in prose for b in parse(p)), "a table left as text"
    assert any(isinstance(p, Frame) for p in md.parts)
    assert md.blocks() == parse(str(md))


def test_the_readme_names_each_arm_by_its_display_name() -> None:
    """The result tables of README and docs/results (`| arm | ...`) name arms as the tables,
    figures and report do."""
    from pathlib import Path

    import pandas as pd

    from benchmarks.reports.names import NAMES, display_name

    repo = Path(__file__).resolve().parents[1]
    pages = [repo / "README.md", *sorted((repo / "docs" / "results").glob("*.md"))]
    readme = "\n\n".join(page.read_text() for page in pages)
    names = set(NAMES.values())
    for csv in (repo / "results" / "tables").glob("*.csv"):
        frame = pd.read_csv(csv)
        if "arm" in frame.columns:
            names |= {display_name(str(a)) for a in frame["arm"].dropna()}
    rows, in_table = [], False
    for line in readme.splitlines():
        if line.startswith("| arm |"):
            in_table = True
            continue
        if in_table and line.startswith("|"):
            if not line.startswith("| ---"):
                rows.append(line.strip("|").split("|")[0].strip())
        else:
            in_table = False
    assert rows, "README quotes result tables"
    assert sorted(set(rows) - names) == []
