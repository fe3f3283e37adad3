"""The committed tables are what the committed runs build: `python -m benchmarks.reports all
--check --runs results/runs` rebuilds each table under results/tables/ from the exported runs in
a scratch folder and compares it byte for byte. A table edited by hand, or built from runs that
were never exported, cannot pass for one that was."""

from __future__ import annotations

import shutil
from importlib.metadata import version
from pathlib import Path

import pandas as pd
from packaging.requirements import Requirement

from benchmarks.reports import claims, figures, html
from benchmarks.reports.tables import build, check, main
from tests.bench import fake_run

REPO = Path(__file__).resolve().parents[1]


def test_the_formatting_stack_is_the_one_the_tables_were_written_with() -> None:
    """constraints.txt names the pandas and tabulate releases the committed tables were printed
    with, and every `make setup*` installs under it. A venv outside it would fail the byte check
    below for a reason that is not a result: this test says which package first."""
    for line in (REPO / "constraints.txt").read_text().splitlines():
        if line := line.split("#")[0].strip():
            req = Requirement(line)
            have = version(req.name)
            assert req.specifier.contains(have, prereleases=True), (
                f"{req.name} {have} is outside constraints.txt ({req}); `make setup` installs "
                "under it (or raise it and rebuild the tables: constraints.txt says how)"
            )


def test_every_committed_table_is_what_its_exported_runs_build(capsys) -> None:
    """Every committed table, Appendix F's audit and the claims rebuild byte for byte from the
    exported runs, each of which still shows what the code does: no row without a current run
    (`make check-tables`, part of `make test`)."""
    code = main(["all", "--check", "--runs", str(REPO / "results/runs"), "--out",
                 str(REPO / "results")])  # fmt: skip
    lines = dict(line.split(": ", 1) for line in capsys.readouterr().out.splitlines())
    committed = {p.stem for p in (REPO / "results/tables").glob("*.md")} - {"claims"}
    assert set(lines) == committed
    assert code == 0, {name: v for name, v in lines.items() if not v.startswith("ok: ")}
    ok, why = claims.check(REPO / "results/runs", REPO / "results")
    assert ok, why


def test_the_committed_report_is_what_the_exported_runs_build(
    tmp_path: Path, capsys, monkeypatch
) -> None:
    """results/report.html is the page `--runs results/runs` builds from the repository root (it
    names its inputs as given): a run exported (or a table rebuilt) without rebuilding the page
    leaves a stale page, and this says where it differs."""
    monkeypatch.chdir(REPO)
    args = ["--check", "--runs", "results/runs", "--results", "results"]
    code = html.main([*args, "--out", "results/report.html"])
    verdict = capsys.readouterr().out
    assert code == 0 and verdict.startswith("report: ok: "), verdict
    page = (REPO / "results/report.html").read_text(encoding="utf-8")
    # nothing of the checkout it was built in (a warning's source path, say); the runs'
    # manifests may name the paths they were run with
    assert str(REPO / "benchmarks") not in page
    # the same page with one figure changed by hand is named, with the place of the change
    stale = tmp_path / "report.html"
    stale.write_text(page.replace("</h1>", " (edited)</h1>", 1), encoding="utf-8")
    assert html.main([*args, "--out", str(stale)]) == 1
    verdict = capsys.readouterr().out
    assert verdict.startswith(f"report: NOT BACKED: {stale} is not what ") and "(edited)" in verdict
    assert stale.read_text(encoding="utf-8") != page  # --check wrote nothing
    assert html.main([*args, "--out", str(tmp_path / "none.html")]) == 1
    assert "no page at" in capsys.readouterr().out


def test_every_committed_figure_is_what_its_committed_frame_draws(tmp_path: Path, capsys) -> None:
    """results/figures/<table>.png and .svg are what `python -m benchmarks.reports.figures`
    draws from results/tables/<table>.csv, the same function the table's builder calls: a
    figure left from older runs or older drawing code beside a table it no longer shows is
    named, with where its SVG first differs; one no drawing claims cannot pass either."""
    tables, committed = REPO / "results/tables", REPO / "results/figures"
    code = figures.main(["--check", "--tables", str(tables), "--out", str(committed)])
    lines = capsys.readouterr().out.splitlines()
    assert code == 0, lines
    assert {line.split(":")[0] for line in lines} == {p.stem for p in committed.glob("*.png")}
    assert set(figures.drawings()) >= {"table6", "table7", "table7_peers", "haystack_growth"}
    # a copy with one SVG edited, one PNG edited, and one figure nothing draws
    copy = tmp_path / "figures"
    shutil.copytree(committed, copy)
    svg = copy / "table6.svg"
    svg.write_text(svg.read_text().replace("accuracy (%)", "accuracy (edited)", 1))
    png = copy / "table7.png"
    png.write_bytes(png.read_bytes()[:-1] + b"\0")
    shutil.copy(copy / "table6.png", copy / "table99.png")
    before = {p.name: p.read_bytes() for p in copy.iterdir()}
    assert figures.main(["--check", "--tables", str(tables), "--out", str(copy)]) == 1
    verdicts = dict(line.split(": ", 1) for line in capsys.readouterr().out.splitlines())
    assert verdicts["table6"].startswith(f"STALE: {svg} is not what its frame draws, from line ")
    assert "accuracy (edited)" in verdicts["table6"] and "accuracy (%)" in verdicts["table6"]
    assert (
        verdicts["table7"] == f"STALE: {png} differs from what its frame draws in its pixels only"
    )
    assert verdicts["table99"].endswith("cannot be checked: no drawing registered for table99")
    assert verdicts["haystack_growth"].startswith("ok: ")
    assert {p.name: p.read_bytes() for p in copy.iterdir()} == before  # --check wrote nothing


def test_the_check_names_a_hand_edit_and_a_row_with_no_run(tmp_path: Path) -> None:
    runs, out = tmp_path / "runs", tmp_path / "results"
    for L in (1, 2):
        fake_run(runs, f"L{L}", arm="pmem_commit", L=L, cases=20, correct=18)
    build("table6", runs, out)
    committed = (out / "tables" / "table6.md").read_bytes()
    ok, why = check("table6", runs, out)
    assert ok and "from the 2 run(s)" in why
    # a figure edited by hand
    md = out / "tables" / "table6.md"
    lines = md.read_text().splitlines()
    md.write_text("\n".join([*lines[:-1], lines[-1] + " (edited)"]) + "\n")
    ok, why = check("table6", runs, out)
    assert not ok and f"is not what {runs} builds, from line {len(lines)}, column" in why
    committed_part, rebuilt_part = why.split(", rebuilt ")
    assert "(edited)" in committed_part and "(edited)" not in rebuilt_part  # shows the change
    assert why.endswith("the committed tables' versions are in constraints.txt)")  # and the stack
    assert f"pandas {pd.__version__}, tabulate" in why
    md.write_bytes(committed)
    # a committed row whose run is not under --runs (never exported)
    shutil.rmtree(runs / "table6" / "L2")
    ok, why = check("table6", runs, out)
    assert (
        not ok
        and why.startswith("1 of 2 committed row(s) have no current run under")
        and "L=2" in why
    )
    # the check writes nothing: the committed table is untouched
    assert md.read_bytes() == committed
    assert sorted(p.name for p in (out / "tables").iterdir()) == ["table6.csv", "table6.md"]


def test_the_check_tells_line_ends_a_damaged_run_and_no_tables_apart(
    tmp_path: Path, capsys
) -> None:
    runs, out = tmp_path / "runs", tmp_path / "results"
    fake_run(runs, "L1", arm="pmem_commit", L=1, cases=20, correct=18)
    build("table6", runs, out)
    md = out / "tables" / "table6.md"
    good = md.read_bytes()
    md.write_bytes(good.replace(b"\n", b"\r\n"))  # the same text, other line ends
    ok, why = check("table6", runs, out)
    assert not ok and why.endswith("in its bytes only")
    md.write_bytes(good)
    (runs / "table6" / "L1" / "summary.json").write_text("{not json")  # a damaged record
    ok, why = check("table6", runs, out)
    assert not ok and why.startswith(f"cannot be rebuilt from {runs}: JSONDecodeError")
    assert md.read_bytes() == good
    assert main(["all", "--check", "--runs", str(runs), "--out", str(tmp_path / "none")]) == 1
    assert "no committed tables under" in capsys.readouterr().out
