"""The parts of the reproduction report page (`python -m benchmarks.reports.html`).

Why a package: the page is four separable jobs, each small enough to read alone: `markdown`
(the subset of Markdown the table builders print, parsed into blocks the page can annotate),
`cells` (which printed cells have a paper figure, and their verdicts), `sources` (each table
from live runs or from the committed results, with its figures and builder notes) and `page`
(the HTML: sections, manifests, per-sample drill-down). `benchmarks/reports/html.py` is the
command that puts them together.
"""
