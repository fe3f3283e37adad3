"""The parts of the reproduction report page (`python -m benchmarks.reports.html`).

`markdown` parses the builders' Markdown into blocks the page can annotate, `cells` finds the
printed cells with a paper figure and their verdicts, `sources` takes each table from live runs
or the committed results, and `page` renders the HTML; `benchmarks/reports/html.py` is the
command that puts them together.
"""
