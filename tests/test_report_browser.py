"""The reproduction report in a real browser: Debian's headless Chromium, driven by Playwright.

    .venv/bin/python -m pytest -m browser tests/test_report_browser.py     (make test-browser)

The page is built from the committed results plus scripted dry runs of ALFWorld and
FactConsolidation (for the drill-down), loaded from a file: URL with every network request
refused, and checked on the rendered DOM (never a screenshot): no console or page error, no
request beyond the file, every table section and its tables there, every figure decoded
(naturalWidth > 0), and a per-sample drill-down that opens on a click and shows what the
reader saw. Skipped, with the reason, where Chromium or Playwright is missing."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks.reports import registry
from benchmarks.reports.html import MEASUREMENTS, build
from tests.bench import pmem_bench

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "results"
CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

if not CHROMIUM.exists():
    pytest.skip(
        f"{CHROMIUM} is missing: install Debian's chromium (apt-get install chromium)",
        allow_module_level=True,
    )
if importlib.util.find_spec("playwright") is None:
    pytest.skip(
        "playwright is not installed: pip install '.[browser]' (it drives the system Chromium; "
        "no browser download is needed)",
        allow_module_level=True,
    )

from playwright.sync_api import Page, Route, sync_playwright  # noqa: E402


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("browser")
    runs = tmp / "runs"
    pmem_bench(
        runs, "experiment=table6", "arm=pmem_commit_oracle", "benchmark.L=1", "benchmark.cases=3"
    )
    pmem_bench(runs, "experiment=table7", "run.limit=3")
    out = tmp / "report.html"
    build(runs, RESULTS, out)
    return out


@pytest.fixture(scope="module")
def loaded(report: Path) -> Iterator[tuple[Page, list[str], list[str]]]:
    """The page in Chromium, with the console errors, page errors and refused requests."""
    errors: list[str] = []
    requests: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))

            def refuse(route: Route) -> None:
                if route.request.url != report.as_uri():
                    requests.append(route.request.url)
                    route.abort()
                else:
                    route.continue_()

            page.route("**/*", refuse)
            page.goto(report.as_uri(), wait_until="load")
            yield page, errors, requests
        finally:
            browser.close()


def test_the_page_loads_without_errors_or_requests(loaded: tuple[Page, list, list]) -> None:
    page, errors, requests = loaded
    assert page.title() == "P-Mem reproduction report"
    assert errors == [], f"console or page errors: {errors}"
    assert requests == [], f"the page asked for something beyond itself: {requests}"


def test_every_table_and_figure_is_rendered(loaded: tuple[Page, list, list]) -> None:
    page, _, _ = loaded
    # every committed table (the claims lead the page, outside the table sections) and every
    # measurement with its data; every paper table not run in place, naming its command
    committed = [p.stem for p in (RESULTS / "tables").glob("*.md") if p.stem != "claims"]
    sections = page.eval_on_selector_all(
        "section.table-section",
        "els => els.map(s => [s.dataset.table, s.dataset.source,"
        " s.querySelectorAll('table').length, s.getBoundingClientRect().height])",
    )
    shown = sorted(name for name, source, _, _ in sections if source != "none")
    assert shown == sorted([*committed, *MEASUREMENTS])
    assert {name for name, *_ in sections} >= set(registry.tables())
    for name, source, tables, height in sections:
        if source == "none":
            continue  # not run on this profile: its command, no table
        assert tables >= 1, f"{name}: no table rendered"
        assert height > 100, f"{name}: the section is not laid out"
    images = page.eval_on_selector_all(
        "img", "els => els.map(i => [i.alt, i.complete, i.naturalWidth, i.naturalHeight])"
    )
    folders = ["figures", *MEASUREMENTS]  # the tables' figures and the measurements'
    figures = sorted(p.name for f in folders for p in (RESULTS / f).glob("*.png"))
    assert sorted(alt for alt, *_ in images) == figures
    for alt, complete, width, height in images:
        assert complete and width > 0 and height > 0, f"{alt} did not decode"
    badges = page.locator("section.table-section .badge.out, section.table-section .badge.in")
    assert badges.count() > 0 and badges.first.is_visible()
    assert "inside" in badges.first.inner_text() or "outside" in badges.first.inner_text()


def test_a_drill_down_opens_on_a_click(loaded: tuple[Page, list, list]) -> None:
    page, errors, _ = loaded
    run = page.locator('details.samples[data-experiment="table6"]').first
    sample = run.locator("details.sample").first
    assert not sample.is_visible(), "samples are folded until their run is opened"
    run.locator("summary").first.click()
    assert run.evaluate("d => d.open") and sample.is_visible()
    context = sample.locator("pre").first
    assert not context.is_visible()
    sample.locator("summary").click()
    assert sample.evaluate("d => d.open")
    assert context.is_visible() and context.inner_text().strip()
    body = sample.inner_text()
    assert "reply" in body and "user" in body, "the reader's messages and reply are shown"
    facts = page.locator('details.samples[data-experiment="table7"] details.sample')
    assert facts.count() >= 3  # the dry run's three questions (and any exported run's)
    experiment = page.locator("#manifests details.experiment").first
    experiment.locator("summary").first.click()
    manifest = experiment.locator("details.manifest").first
    manifest.locator("summary").first.click()
    assert "git commit" in manifest.inner_text()
    assert errors == []
