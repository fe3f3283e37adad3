"""The reproduction report (`python -m benchmarks.reports.html`): the verdict's definition with
hand-checked values, and the page built from the committed results, from scripted dry runs
(the drill-down) and from live paper runs (tables rebuilt, verdicts from the run frame).

The browser test (tests/test_report_browser.py, marker `browser`) loads the same page in
headless Chromium; these tests read the HTML itself."""

from __future__ import annotations

import base64
import html
import json
import math
import re
from fractions import Fraction
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.reports import registry
from benchmarks.reports.html import MEASUREMENTS, build, main
from benchmarks.reports.markdown import inline, parse
from benchmarks.reports.report.cells import cells_for, count_from_rate
from benchmarks.reports.report.page import fit_budget
from benchmarks.reports.verdict import acceptance_interval, as_probability, verdict
from benchmarks.stats import binomial_ci
from tests.bench import pmem_bench

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "results"


# -- the verdict ----------------------------------------------------------------------------------


def test_acceptance_interval_hand_checked() -> None:
    # Binomial(10, 1/2): P(X<=1) = 11/1024 = 1.1% <= 2.5% < P(X<=2) = 56/1024 = 5.5%
    assert acceptance_interval(10, 0.5) == (2, 8)
    # Binomial(20, 1/2): P(X<=5) = 21700/2^20 = 2.07%, P(X<=6) = 60460/2^20 = 5.77%
    assert acceptance_interval(20, 0.5) == (6, 14)
    # Binomial(20, 0.943): P(X>=17) = 0.9755, so P(X<=16) = 2.45% <= 2.5%: 16 is outside
    assert acceptance_interval(20, Fraction(943, 1000)) == (17, 20)
    # one trial at p = 1/2: each outcome has 50% > 2.5%
    assert acceptance_interval(1, 0.5) == (0, 1)


def test_the_paper_at_100_or_0_percent_accepts_only_all_or_none() -> None:
    assert acceptance_interval(20, 1.0) == (20, 20)
    assert acceptance_interval(20, 0.0) == (0, 0)
    assert verdict(20, 20, 1.0).inside and verdict(20, 20, 1.0).label == "inside"
    assert not verdict(19, 20, 1.0).inside and verdict(19, 20, 1.0).label == "outside"
    assert verdict(0, 20, 0.0).inside and not verdict(1, 20, 0.0).inside


def test_table6_cells_hand_checked() -> None:
    """Committed Table 6 cells at n=20: raw top-k at L=2 (15/20 against 72.9%) is inside; P-Mem
    commit at L=2 (19/20 against 100%) is outside: the paper's 100% admits no miss."""
    raw = verdict(15, 20, as_probability(72.9, percent=True))
    assert (raw.low, raw.high, raw.inside) == (11, 18, True)
    assert not verdict(19, 20, as_probability(100.0, percent=True)).inside


def test_as_probability_reads_the_printed_decimal() -> None:
    assert as_probability(72.9, percent=True) == Fraction(729, 1000)
    assert as_probability("0.25") == Fraction(1, 4)
    with pytest.raises(ValueError):
        as_probability(101, percent=True)
    with pytest.raises(ValueError):
        verdict(21, 20, 0.5)
    with pytest.raises(ValueError):
        acceptance_interval(0, 0.5)


def _float_interval(n: int, p: float) -> tuple[int, int]:
    """An independent float computation of the same definition, by brute force."""
    pmf = [math.comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(n + 1)]
    low = min(k for k in range(n + 1) if sum(pmf[: k + 1]) > 0.025)
    high = max(k for k in range(n + 1) if sum(pmf[k:]) > 0.025)
    return low, high


@pytest.mark.parametrize("n", [1, 3, 19, 20, 50, 100, 140])
@pytest.mark.parametrize("pct", ["4.7", "25.0", "42.9", "72.9", "94.3", "98.6"])
def test_acceptance_interval_agrees_with_a_brute_force_and_its_tails(n: int, pct: str) -> None:
    p = as_probability(pct, percent=True)
    low, high = acceptance_interval(n, p)
    assert (low, high) == _float_interval(n, float(p))
    # exactly: each tail beyond the interval holds at most 2.5%, and the interval covers >= 95%
    pmf = [math.comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(n + 1)]
    assert sum(pmf[:low]) <= Fraction(1, 40) and sum(pmf[high + 1 :]) <= Fraction(1, 40)
    assert sum(pmf[low : high + 1]) >= Fraction(95, 100)


@pytest.mark.parametrize("n", [7, 20, 50, 140])
def test_inside_means_the_paper_lies_in_our_clopper_pearson_interval(n: int) -> None:
    """Duality: k is inside Binomial(n, p)'s acceptance interval exactly when p lies inside the
    exact (Clopper-Pearson) 95% interval of k/n (benchmarks.stats, found by bisection)."""
    for k in range(n + 1):
        lo, hi = binomial_ci(k, n, method="clopper-pearson")
        for pct in ("1.5", "12.0", "33.3", "50.0", "64.3", "80.0", "97.9"):
            p = float(pct) / 100
            if min(abs(p - lo), abs(p - hi)) < 1e-9:
                continue  # on the boundary: float bisection cannot say
            assert verdict(k, n, as_probability(pct, percent=True)).inside == (lo <= p <= hi)


def test_count_from_rate() -> None:
    assert count_from_rate(84.2, 19, 1) == 16  # Table 8: "84.2 (n=19)"
    assert count_from_rate(42, 50, 0) == 21  # Table 7 prints whole percents
    assert count_from_rate(47, 150, 0) is None  # 70/150 and 71/150 both print 47
    assert count_from_rate(50.0, 3, 1) is None  # no k of 3 is 50%
    assert count_from_rate(75.0, 20) == 15  # a stored (exact) rate


def test_cells_printed_with_the_papers_figure_are_judged() -> None:
    """LongMemEval's cells print "ours [interval] (n) / paper": each becomes a judged cell,
    keyed by its printed row and column; a cell with no paper figure does not."""
    md = (
        "| arm | overall | superseded |\n|:--|:--|:--|\n"
        "| P-Mem, turn read | 52.0 [38–65] (50) / 52.6 | 10.0 [3–30] (20) |\n"
        "| Mem0 | 20.0 [11–33] (50) / 39.4 | – |\n"
    )
    cells = cells_for("table4", None, parse(md))
    assert [(c.row, c.column, c.k, c.n, c.verdict.label) for c in cells] == [
        ("P-Mem, turn read", "overall", 26, 50, "inside"),
        ("Mem0", "overall", 10, 50, "outside"),  # Binomial(50, 0.394) accepts 13-27
    ]
    assert acceptance_interval(50, as_probability(39.4, percent=True)) == (13, 27)


def test_markdown_tables_and_escaping() -> None:
    blocks = parse("# T\n\nSome `x<y` **bold**.\n\n| arm | L=1 |\n|:--|--:|\n| a | 1.0 |\n")
    assert [b.kind for b in blocks] == ["heading", "paragraph", "table"]
    t = blocks[2].table
    assert t is not None and t.header == ["arm", "L=1"] and t.align == ["left", "right"]
    assert t.rows == [["a", "1.0"]]
    assert inline("`<script>` **a<b**") == "<code>&lt;script&gt;</code> <strong>a&lt;b</strong>"


# -- the page -----------------------------------------------------------------------------------


class Page(HTMLParser):
    """What the tests look at in the page: every src/href, the sections, the verdict rows, the
    drill-down samples."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.links: list[str] = []
        self.sections: dict[str, dict[str, str]] = {}
        self.samples: list[tuple[str, str, str]] = []  # (experiment, run, sample id)
        self.verdicts: list[list[str]] = []
        self._run = ("", "")
        self._row: list[str] | None = None
        self._cell: list[str] | None = None
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        self.links += [a[k] for k in ("src", "href") if k in a]
        if tag == "section" and "data-table" in a:
            self.sections[a["data-table"]] = a
        if tag == "details" and "data-run" in a:
            self._run = (a["data-experiment"], a["data-run"])
        if tag == "details" and "data-id" in a:
            self.samples.append((*self._run, a["data-id"]))
        if tag == "tr" and "verdict" in a.get("class", ""):
            self._row = []
        if tag == "td" and self._row is not None:
            self._cell = []

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "td" and self._row is not None and self._cell is not None:
            self._row.append("".join(self._cell).strip())
            self._cell = None
        if tag == "tr" and self._row is not None:
            self.verdicts.append(self._row)
            self._row = None


def _no_external_links(page: Page, text: str) -> None:
    for link in page.links:
        assert link.startswith(("#", "data:")), f"not self-contained: {link[:80]}"
        assert not re.match(r"^(https?:)?//", link)
    assert "<script" not in text and "<link" not in text and "@import" not in text


@pytest.fixture(scope="module")
def committed(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Page]:
    """The page a fresh clone builds: no runs, the committed results only."""
    tmp = tmp_path_factory.mktemp("committed")
    out = tmp / "report.html"
    build(tmp / "no-runs", RESULTS, out)
    text = out.read_text()
    return text, Page(text)


def test_every_committed_table_and_figure_is_on_the_page(committed: tuple[str, Page]) -> None:
    text, page = committed
    tables = sorted(p.stem for p in (RESULTS / "tables").glob("*.md") if p.stem != "claims")
    assert tables, "the repository commits its tables"
    shown = sorted(n for n, s in page.sections.items() if s["data-source"] != "none")
    assert shown == sorted([*tables, *MEASUREMENTS])
    assert set(page.sections) >= set(registry.tables()), "every paper table, run or not"
    assert all(s["data-source"] in ("committed", "none") for s in page.sections.values())
    for name, s in page.sections.items():  # a table not run names what runs it
        if s["data-source"] == "none":
            command = html.escape(registry.table(name).reproduce, quote=False)
            assert f"Not run on this profile: <code>{command}</code>" in text
    # the tables' figures, and those each measurement's script drew beside its table
    folders = ["figures", *MEASUREMENTS]
    figures = {p.name: p for folder in folders for p in (RESULTS / folder).glob("*.png")}
    assert "failure_stages.png" in figures
    images = re.findall(r'<img alt="([^"]+)" src="data:image/png;base64,([^"]+)"', text)
    assert sorted(name for name, _ in images) == sorted(figures)
    for name, data in images:
        assert base64.b64decode(data) == figures[name].read_bytes()
    _no_external_links(page, text)
    for anchor in (link for link in page.links if link.startswith("#")):
        assert f'id="{anchor[1:]}"' in text, f"the contents link {anchor} leads nowhere"


def test_committed_verdicts_are_computed(committed: tuple[str, Page]) -> None:
    _, page = committed
    rows = {(r[0], r[1]): r for r in page.verdicts}
    # Table 6 (n=20): computed as in test_table6_cells_hand_checked
    raw = rows[("Raw top-10", "L=2")]
    assert raw[3:7] == ["10/20", "50.0 [29.9–70.1]", "72.9", "11–18 of 20 (55.0–90.0%)"]
    assert raw[-1] == "✗ outside"
    raw4 = rows[("Raw top-10", "L=4")]
    assert raw4[3] == "9/20" and raw4[-1] == "✓ inside"
    # the commit arm routed by its own key is the paper's row; the label-routed one is an
    # oracle-routing row, with no paper figure to judge
    assert rows[("P-Mem commit", "L=4")][3:6] == ["20/20", "100.0 [83.9–100.0]", "100.0"]
    assert not any(r[0].startswith("P-Mem commit (oracle routing)") for r in page.verdicts)
    # Table 8 joins questions: "70.6 (n=17)" recovered against the paper's 100.0
    assert rows[("P-Mem commit, d=32", "recovered (ours)")][3] == "12/17"
    assert int(page.sections["table6"]["data-verdicts"]) == 20  # 5 paper arms x 4 L
    for r in page.verdicts:  # every verdict agrees with the definition
        k, n = map(int, r[3].split("/"))
        expected = verdict(k, n, as_probability(r[5], percent=True)).label
        if r[0] != "('6k', 'pmem_state')":  # Appendix F's paper figure is 37/133, not its print
            assert r[-1].endswith(expected)
    assert page.sections["haystack_growth"]["data-verdicts"] == "0"


def test_a_fresh_clone_gets_the_committed_samples(committed: tuple[str, Page]) -> None:
    """The exported runs (results/runs/) give the page its manifests and drill-down without
    any runs folder: every exported finished run, each with its questions (an unfinished
    run's export is its manifest and progress, for a table's partial rows)."""
    text, page = committed
    finished = sorted(
        m for m in RESULTS.glob("runs/*/*/manifest.json") if (m.parent / "summary.json").exists()
    )
    # a read-only run (the haystack-growth sweep's) records reads, no scores: its drill-down
    # shows what each question read
    exported = finished
    assert exported, "the repository commits sample-logged runs under results/runs/"
    for manifest in finished:
        assert json.loads(manifest.read_text())["config_sha256"] in text, manifest.parent.name
    for manifest in exported:
        run, experiment = manifest.parent.name, manifest.parent.parent.name
        assert f'id="s-{experiment}-{run}"' in text, run
    runs = {(e, r) for e, r, _ in page.samples}
    assert runs == {(m.parent.parent.name, m.parent.name) for m in exported}


def test_the_page_is_deterministic(tmp_path: Path) -> None:
    """The same inputs give the same bytes: rebuilding the committed page changes nothing."""
    pages = []
    for name in ("first.html", "second.html"):
        out = tmp_path / name
        argv = ["--runs", str(tmp_path / "none"), "--results", str(RESULTS), "--out", str(out)]
        assert main(argv) == 0
        pages.append(out.read_bytes())
    assert pages[0] == pages[1]


@pytest.fixture(scope="module")
def dry_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Scripted dry runs of ALFWorld (Table 6, oracle commit, 3 cases) and FactConsolidation
    (Table 7, 3 questions): a runs root whose runs never enter a paper table."""
    root = tmp_path_factory.mktemp("dry") / "runs"
    pmem_bench(
        root, "experiment=table6", "arm=pmem_commit_oracle", "benchmark.L=1", "benchmark.cases=3"
    )
    pmem_bench(root, "experiment=table7", "run.limit=3")
    return root


def test_dry_runs_get_a_drill_down_but_no_table(dry_runs: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    build(dry_runs, RESULTS, out, samples_per_run=10)
    text = out.read_text()
    page = Page(text)
    _no_external_links(page, text)
    assert all(s["data-source"] in ("committed", "none") for s in page.sections.values())
    assert "scripted dry run(s) under" in text  # Table 6 and 7 say why the runs are left out
    for experiment in ("table6", "table7"):
        (folder,) = (dry_runs / experiment).iterdir()
        samples = [json.loads(x) for x in (folder / "samples.jsonl").read_text().splitlines()]
        shown = sorted(i for e, r, i in page.samples if (e, r) == (experiment, folder.name))
        assert shown == sorted(s["id"] for s in samples)
        for s in samples:  # the context the arm built, the reader's messages and its reply
            assert _escaped(s["context"]["text"]) in text
            (reader,) = [c for c in s["calls"] if c["role"] == "reader"]
            assert _escaped(reader["messages"][-1]["content"]) in text
            assert _escaped(reader["reply"]) in text
        manifest = json.loads((folder / "manifest.json").read_text())
        assert manifest["git"]["commit"] in text
        assert manifest["config_sha256"] in text
    assert text.count('class="badge dry"') >= 4  # each run's samples and manifest say scripted
    table7 = json.loads(next((dry_runs / "table7").glob("*/manifest.json")).read_text())
    assert table7["dataset"]["sha256"] in text


def _escaped(s: str) -> str:
    return html.escape(s)


def test_live_paper_runs_rebuild_their_table(dry_runs: Path, tmp_path: Path) -> None:
    """A paper run under --runs replaces the committed table: Table 6 is rebuilt from it with
    the project's builder, its figure redrawn, its verdicts taken from the run frame. (A real
    model cannot run here: a raw top-k dry run stands in, its manifest relabelled as a paper
    profile, and the page must treat it as one.)"""
    root = tmp_path / "runs"
    pmem_bench(root, "experiment=table6", "arm=raw_topk", "benchmark.L=1", "benchmark.cases=3")
    (manifest_path,) = root.glob("table6/*/manifest.json")
    manifest = json.loads(manifest_path.read_text())
    for role in ("llm", "embedder", "judge"):
        manifest["config"][role]["server"] = None
        manifest["config"][role]["model"] = f"stand-in-{role}"
    manifest_path.write_text(json.dumps(manifest))
    out = tmp_path / "report.html"
    build(root, RESULTS, out)
    text = out.read_text()
    page = Page(text)
    assert page.sections["table6"]["data-source"] == "live"
    assert page.sections["table7"]["data-source"] == "committed"
    assert "live runs under" in text and "stand-in-llm" in text
    (row,) = [r for r in page.verdicts if r[:2] == ["Raw top-10", "L=1"]]
    scores = json.loads(manifest_path.with_name("summary.json").read_text())["scores"]
    k, n = scores["location"]["correct"], scores["location"]["n"]
    assert row[3] == f"{k}/{n}" and row[5] == "100.0"  # the paper: 100.0 at L=1
    assert row[-1] == ("✓ inside" if k == n else "✗ outside")
    assert page.sections["table6"]["data-verdicts"] == "1"
    assert 'alt="table6.png"' in text and "rebuilt from" in text
    assert not (RESULTS / "tables" / "table6.md").read_text().count("stand-in")  # untouched


# -- the drill-down's size budget -----------------------------------------------------------------

run_sizes = st.lists(st.lists(st.integers(1, 60), max_size=8), max_size=6)


def water_level(sizes: list[list[int]], budget: int) -> list[int]:
    """fit_budget by brute force: every cap from 0 up, the last whose prefixes fit."""
    best = [0] * len(sizes)
    for cap in range(sum(map(sum, sizes)) + 1):
        counts = [sum(1 for i in range(len(s)) if sum(s[: i + 1]) <= cap) for s in sizes]
        if sum(sum(s[:k]) for s, k in zip(sizes, counts, strict=True)) <= budget:
            best = counts
    return [max(k, min(1, len(s))) for s, k in zip(sizes, best, strict=True)]


@settings(max_examples=300, deadline=None)
@given(run_sizes, st.integers(0, 500), st.integers(0, 200))
def test_the_budget_fills_runs_of_small_samples_first(
    sizes: list[list[int]], budget: int, more: int
) -> None:
    shown = fit_budget(sizes, budget)
    assert shown == water_level(sizes, budget)
    totals = [sum(s[:k]) for s, k in zip(sizes, shown, strict=True)]
    if sum(map(sum, sizes)) <= budget:
        assert shown == [len(s) for s in sizes]
    # within the budget, but for first samples every run shows however large
    forced = sum(s[0] for s, k in zip(sizes, shown, strict=True) if k == 1)
    assert sum(totals) <= budget + forced
    for s, k in zip(sizes, shown, strict=True):
        if k < len(s):  # a cut run: no other run shows more than its cut point, one sample aside
            cut = sum(s[: k + 1])
            assert all(t < cut or k2 == 1 for t, k2 in zip(totals, shown, strict=True))
    # a larger budget never shows fewer samples of any run
    assert all(a <= b for a, b in zip(shown, fit_budget(sizes, budget + more), strict=True))
    assert fit_budget(sizes, None) == [len(s) for s in sizes]


def test_a_run_of_small_samples_stays_whole_beside_heavy_ones() -> None:
    assert fit_budget([[100] * 10, [1] * 10], 50) == [1, 10]
    assert fit_budget([[100] * 10, [1] * 10], 310) == [3, 10]


def test_the_drill_down_keeps_to_its_budget(dry_runs: Path, tmp_path: Path) -> None:
    """Over the committed exports (8 MB of samples): the samples shown keep to the budget, every
    run still shows one, a cut run says how many of how many, and the dry runs' small samples
    stay whole."""
    full, small = tmp_path / "full.html", tmp_path / "small.html"
    build(dry_runs, RESULTS, full, samples_bytes=None)
    args = ["--runs", str(dry_runs), "--results", str(RESULTS), "--out", str(small)]
    assert main([*args, "--samples-mib", "2"]) == 0
    texts = [p.read_text() for p in (full, small)]
    per_run = [
        [
            [len(m.encode()) for m in re.findall(r'<details class="sample".*?</details>', r, re.S)]
            for r in t.split('<details class="run samples"')[1:]
        ]
        for t in texts
    ]
    sample_bytes = [sum(map(sum, runs)) for runs in per_run]
    forced = sum(run[0] for run in per_run[1] if len(run) == 1)  # a run's one sample, always
    assert sample_bytes[1] <= 2 * 1024 * 1024 + forced and sample_bytes[0] > 2 * 1024 * 1024
    runs = [Page(t).samples for t in texts]
    assert {(e, r) for e, r, _ in runs[0]} == {(e, r) for e, r, _ in runs[1]}
    assert len(runs[1]) < len(runs[0])
    assert "questions shown, wrong answers first (the page's size budget)" in texts[1]
    assert "questions shown, wrong answers first (at most 40 per run)" in texts[0]
    dry = {(e, r, i) for e, r, i in runs[0] if (dry_runs / e / r).is_dir()}
    assert dry and dry <= set(runs[1])


def test_a_bad_budget_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        main(["--samples-mib", "-1"])
    assert e.value.code == 2
    assert "--samples-mib: '-1': a size in MiB, 0 or more" in capsys.readouterr().err
