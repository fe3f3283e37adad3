"""The report's HTML: one self-contained page (inline CSS, figures as data: URIs, no script).

Why a module of its own: everything a browser sees is written here, from already-gathered
parts (`sources.Section`, the loader's frames), so the markup can change without touching how
the numbers are found. Nothing here computes a number the page claims: the verdicts come from
benchmarks/reports/verdict.py through `cells`, the intervals from benchmarks.stats.
"""

from __future__ import annotations

import base64
import html
import json
import re
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from itertools import accumulate
from pathlib import Path
from typing import Any

import pandas as pd

from benchmarks.reports.names import display_name
from benchmarks.reports.report.cells import NO_VERDICT, Cell
from benchmarks.reports.report.markdown import Block, Table, inline, is_numeric
from benchmarks.reports.report.sources import Figure, Section
from benchmarks.results import is_scripted

__all__ = [
    "CSS",
    "document",
    "figure_html",
    "fit_budget",
    "manifests_html",
    "samples_html",
    "section_html",
]

CSS = (Path(__file__).with_name("templates") / "page.css").read_text(encoding="utf-8")

LEGEND = (
    '<div class="legend" id="legend"><p><strong>Verdicts.</strong> For every cell with both '
    "our k of n and the paper's figure p: "
    '<span class="badge in">✓ inside</span> our k lies in the central 95% acceptance interval of '
    "Binomial(n, p) (the paper's figure is consistent with our count at our n); "
    '<span class="badge out">✗ outside</span> it does not (each tail beyond the interval holds at '
    "most 2.5%; <code>benchmarks/reports/verdict.py</code>). Our accuracy carries its 95% Wilson "
    "interval. A small n makes the interval wide: <em>inside</em> then says little.</p>"
    '<p><span class="badge dry">scripted</span> marks a dry run of the scripted profile: it tests '
    "the pipeline, never a paper figure.</p></div>"
)


def esc(value: Any) -> str:
    return html.escape("" if value is None else str(value))


def anchor(*parts: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "-", "-".join(parts)).strip("-")


def badge(cell: Cell) -> str:
    v = cell.verdict
    title = (
        f"ours {v.k}/{v.n}; paper {cell.paper_pct:.1f}% → 95% acceptance {v.low}–{v.high} of {v.n}"
    )
    mark = "✓ inside" if v.inside else "✗ outside"
    return f'<span class="badge {"in" if v.inside else "out"}" title="{esc(title)}">{mark}</span>'


def table_html(t: Table, cells: Iterable[Cell] = ()) -> str:
    cells = list(cells)
    head = "".join(
        f'<th class="{"num" if a == "right" else ""}">{inline(h)}</th>'
        for h, a in zip(t.header, t.align, strict=True)
    )
    body = []
    for row in t.rows:
        tds = []
        for j, (text, align) in enumerate(zip(row, t.align, strict=True)):
            marks = "".join(
                badge(c) for c in cells if c.column == t.header[j] and c.matches(t, row)
            )
            kind = "row" if j == 0 else ("num" if align == "right" or is_numeric(text) else "")
            tds.append(f'<td class="{kind}">{inline(text)}{marks}</td>')
        body.append(f"<tr>{''.join(tds)}</tr>")
    return (
        f'<div class="scroll"><table><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table></div>"
    )


def blocks_html(blocks: list[Block], cells: list[Cell]) -> str:
    out = []
    for b in blocks:
        if b.kind == "heading":
            level = min(6, b.level + 2)
            out.append(f"<h{level}>{inline(b.text)}</h{level}>")
        elif b.kind == "paragraph":
            out.append(f"<p>{inline(b.text)}</p>")
        elif b.kind == "list":
            out.append("<ul>" + "".join(f"<li>{inline(i)}</li>" for i in b.items) + "</ul>")
        elif b.table is not None:
            out.append(table_html(b.table, cells))
    return "\n".join(out)


def figure_html(fig: Figure, caption: str = "") -> str:
    data = base64.b64encode(fig.data).decode("ascii")
    text = esc(caption or fig.name)
    return (
        f'<figure id="{anchor("fig", fig.name)}"><img alt="{esc(fig.name)}" '
        f'src="data:image/png;base64,{data}"><figcaption>{text} '
        f'<span class="muted">({esc(fig.name)}; {esc(fig.origin)})</span></figcaption></figure>'
    )


def verdicts_html(cells: list[Cell]) -> str:
    head = (
        "<tr><th>row</th><th>column</th><th>measure</th><th class=num>ours k/n</th>"
        "<th class=num>ours % [95% Wilson]</th><th class=num>paper %</th>"
        "<th class=num>paper's 95% acceptance at our n</th><th>verdict</th></tr>"
    )
    rows = []
    for c in cells:
        lo, hi = c.wilson
        v = c.verdict
        rows.append(
            f'<tr class="verdict {v.label}"><td class="row">{esc(c.row)}</td>'
            f"<td>{esc(c.column)}</td><td>{esc(c.what)}</td>"
            f'<td class="num">{v.k}/{v.n}</td>'
            f'<td class="num">{c.ours_pct:.1f} [{lo:.1f}–{hi:.1f}]</td>'
            f'<td class="num">{c.paper_pct:.1f}</td>'
            f'<td class="num">{v.low}–{v.high} of {v.n} '
            f"({100 * v.low / v.n:.1f}–{100 * v.high / v.n:.1f}%)</td>"
            f"<td>{badge(c)}</td></tr>"
        )
    inside = sum(c.verdict.inside for c in cells)
    return (
        f"<h3>Verdicts: {inside} of {len(cells)} cells inside the paper's 95% interval</h3>"
        f'<div class="scroll"><table class="verdicts"><thead>{head}</thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def section_html(s: Section) -> str:
    meta = (
        f'<dl class="meta"><dt>source</dt><dd>{esc(s.origin)}</dd>'
        f"<dt>profile</dt><dd>{esc(s.profile)}</dd><dt>n</dt><dd>{esc(s.sizes)}</dd></dl>"
    )
    notes = ""
    if s.notes:
        items = "".join(f"<li>{esc(n)}</li>" for n in s.notes)
        notes = f'<ul class="notes" aria-label="builder notes">{items}</ul>'
    if s.cells:
        verdicts = verdicts_html(s.cells)
    else:
        why = NO_VERDICT.get(s.name, "no cell here has both our k of n and a paper figure")
        verdicts = f'<p class="muted">No verdicts: {esc(why)}.</p>'
    figures = "".join(figure_html(f, f"Figure for {s.title}") for f in s.figures)
    return (
        f'<section class="table-section" id="{anchor("t", s.name)}" data-table="{esc(s.name)}" '
        f'data-source="{"live" if s.live else "committed"}" data-verdicts="{len(s.cells)}">'
        f"<h2>{inline(s.title)} <span class=muted>({esc(s.name)})</span></h2>"
        f"{meta}{notes}{blocks_html(s.blocks, s.cells)}{verdicts}{figures}</section>"
    )


# -- runs: manifests and samples ----------------------------------------------------------------


def _kv(rows: Iterable[tuple[str, Any]]) -> str:
    body = "".join(f"<tr><th>{esc(k)}</th><td>{esc(v)}</td></tr>" for k, v in rows)
    return f'<table class="kv"><tbody>{body}</tbody></table>'


def _models(cfg: dict[str, Any]) -> list[tuple[str, str]]:
    out = []
    for role in ("llm", "writer", "embedder", "judge"):
        node = cfg.get(role) or {}
        if node.get("model"):
            where = node.get("base_url") or (node.get("server") or {}).get("_target_") or ""
            rev = node.get("revision") or "no revision recorded"
            out.append((role, f"{node['model']} @ {rev}" + (f" ({where})" if where else "")))
    return out


def manifest_html(experiment: str, run: str, manifest: dict[str, Any], origin: str) -> str:
    cfg = manifest.get("config") or {}
    git = manifest.get("git") or {}
    commit = str(git.get("commit") or "not recorded") + (
        " (dirty tree)" if git.get("dirty") else ""
    )
    rows: list[tuple[str, Any]] = [
        ("arm", (cfg.get("arm") or {}).get("name")),
        ("benchmark", (cfg.get("benchmark") or {}).get("name")),
        *_models(cfg),
        ("git commit", commit),
        ("config sha256", manifest.get("config_sha256")),
        ("started", manifest.get("started_at")),
        ("python", manifest.get("python")),
        ("platform", manifest.get("platform")),
        ("source", origin),
    ]
    packages = manifest.get("packages") or {}
    rows.append(("packages", ", ".join(f"{k} {v}" for k, v in sorted(packages.items())) or "–"))
    data = manifest.get("dataset") or {}
    for key, value in data.items():
        rows.append((f"data: {key}", value))
    for key, value in sorted((manifest.get("prompts") or {}).items()):
        rows.append((f"prompt {key}", value))
    full = json.dumps(cfg, indent=1, sort_keys=True, default=str)
    scripted = ' <span class="badge dry">scripted</span>' if is_scripted(cfg) else ""
    return (
        f'<details class="run manifest" id="{anchor("m", experiment, run)}"><summary>'
        f"<code>{esc(run)}</code>{scripted}</summary>{_kv(rows)}"
        f"<details><summary>full config</summary><pre>{esc(full)}</pre></details></details>"
    )


def manifests_html(runs: list[tuple[str, str, dict[str, Any], str]]) -> str:
    """Each run's manifest, grouped by experiment: (experiment, run, manifest, origin)."""
    if not runs:
        return (
            '<p class="muted">No run folders: no runs under the runs root and no committed '
            "exports under results/runs/.</p>"
        )
    groups: dict[str, list[str]] = {}
    for experiment, run, manifest, origin in runs:
        groups.setdefault(experiment, []).append(manifest_html(experiment, run, manifest, origin))
    return "".join(
        f'<details class="experiment"><summary><strong>{esc(exp)}</strong> '
        f"({len(items)} run(s))</summary>{''.join(items)}</details>"
        for exp, items in groups.items()
    )


CLIP = 6000


def _clip(text: Any) -> str:
    s = "" if text is None else str(text)
    if len(s) <= CLIP:
        return esc(s)
    return esc(s[:CLIP]) + esc(f"\n… {len(s) - CLIP:,} more characters in the run's samples log")


def _call_html(call: dict[str, Any]) -> str:
    head = ", ".join(
        f"{k} {call[k]}"
        for k in ("role", "model", "cached", "prompt_tokens", "completion_tokens")
        if call.get(k) is not None
    )
    messages = "".join(
        f"<div><strong>{esc(m.get('role'))}</strong><pre>{_clip(m.get('content'))}</pre></div>"
        for m in call.get("messages") or []
        if isinstance(m, dict)
    )
    if not messages and call.get("messages_ref"):
        messages = f"<p>messages stored at {esc(call['messages_ref'])}</p>"
    error = call.get("parse_error")
    err = f"<p><strong>parse error:</strong> {esc(error)}</p>" if error else ""
    reply = call.get("reply")
    reply_html = f"<div><strong>reply</strong><pre>{_clip(reply)}</pre></div>" if reply else ""
    return (
        f'<div class="call"><div class="muted">{esc(head)}</div>{messages}{reply_html}{err}</div>'
    )


def _score_badges(row: pd.Series, scorers: list[str]) -> str:
    out = []
    for s in scorers:
        value = row.get(f"{s}.correct")
        if value is not None and not isinstance(value, str) and value == value:
            ok = bool(value)
            out.append(
                f'<span class="badge {"ok" if ok else "bad"}">{esc(s)} {"✓" if ok else "✗"}</span>'
            )
    return "".join(out)


def _listing(value: Any) -> list[Any]:
    if isinstance(value, list | tuple):
        return list(value)
    if value is None or (isinstance(value, float) and value != value):
        return []
    return list(value) if hasattr(value, "__iter__") and not isinstance(value, str) else [value]


def sample_html(row: pd.Series, scorers: list[str]) -> str:
    golds = " | ".join(str(g) for g in _listing(row.get("golds")))
    fields = [
        (c, row[c])
        for c in row.index
        if any(c.startswith(f"{s}.") for s in scorers) and row[c] is not None and row[c] == row[c]
    ]
    context = row.get("context_text")
    ids = _listing(row.get("context_ids"))
    calls = [c for c in _listing(row.get("calls")) if isinstance(c, dict)]
    has_log = isinstance(context, str) or bool(calls)
    body = [
        _kv(
            [
                ("question", row.get("question")),
                ("gold", golds),
                ("prediction", row.get("prediction")),
                ("read", f"{row.get('context_chars')} chars, {row.get('context_tokens')} tokens"),
                *fields,
            ]
        )
    ]
    if has_log:
        body.append(f"<h4>The context the arm built</h4><pre>{_clip(context)}</pre>")
        if ids:
            body.append(
                f"<p><strong>memory entries read:</strong> {esc(', '.join(map(str, ids)))}</p>"
            )
        body.append("<h4>Model calls for this question</h4>" + "".join(map(_call_html, calls)))
    else:
        body.append('<p class="muted">This run kept no sample log (it predates samples.jsonl).</p>')
    summary = (
        f"<code>{esc(row.get('id'))}</code>{_score_badges(row, scorers)} "
        f"{esc(row.get('question'))} <span class=muted>→</span> "
        f"<strong>{esc(row.get('prediction'))}</strong> "
        f"<span class=muted>(gold: {esc(golds)})</span>"
    )
    return (
        f'<details class="sample" data-id="{esc(row.get("id"))}"><summary>{summary}</summary>'
        f'<div class="sample-body">{"".join(body)}</div></details>'
    )


def fit_budget(sizes: list[list[int]], budget: int | None) -> list[int]:
    """How many samples of each run the drill-down shows so that it fits `budget` bytes.

    `sizes` holds each run's rendered sample sizes in the order they would be shown. Water
    filling: the largest per-run cap C such that the runs' prefixes within C (each run's
    longest prefix whose total is at most C) add up to at most `budget`. A run of small samples
    shows them all and the heaviest runs share what is left, so one run of long LongMemEval
    contexts cannot crowd out every other run. Then every run with samples shows at least one:
    the page exceeds the budget only by such first samples larger than C. `None` shows all.

    Why a byte budget rather than a sample count: samples differ in size by three orders of
    magnitude (a FactConsolidation question against a 14k-token LongMemEval read), so a count
    that keeps the page small starves the small runs.
    """
    if budget is None or sum(map(sum, sizes)) <= budget:
        return [len(s) for s in sizes]
    prefixes = [list(accumulate(s)) for s in sizes]

    def total(cap: int) -> int:
        return sum(p[k - 1] for p in prefixes if (k := bisect_right(p, cap)))

    caps = sorted({0, *(v for p in prefixes for v in p)})
    lo, hi = 0, len(caps) - 1  # total(caps[0]) = total(0) = 0 <= budget
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if total(caps[mid]) <= budget:
            lo = mid
        else:
            hi = mid - 1
    return [max(bisect_right(p, caps[lo]), min(1, len(p))) for p in prefixes]


def run_samples_html(
    experiment: str,
    run: str,
    q: pd.DataFrame,
    samples: list[str],
    scorers: list[str],
    origin: str,
    cut_by: Sequence[str] = (),
) -> str:
    """One run's drill-down: `q` all its questions in display order, `samples` the rendered
    ones shown (a prefix of `q`), `cut_by` what left the others out."""
    first = q.iloc[0]
    judged = [s for s in scorers if f"{s}.correct" in q.columns]
    score = "".join(
        f", {s} {int(v.sum())}/{len(v)}"
        for s in judged
        if len(v := q[f"{s}.correct"].dropna().astype(bool))
    )
    more = (
        f'<p class="muted">{len(samples)} of {len(q)} questions shown, wrong answers first '
        f"({' and '.join(cut_by)}); every one is in the run's samples log "
        "(<code>python -m benchmarks.results show</code>).</p>"
        if len(q) > len(samples)
        else ""
    )
    dry = ' <span class="badge dry">scripted</span>' if bool(first.get("scripted")) else ""
    summary = (
        f"<strong>{esc(display_name(str(first['arm'])))}</strong> <code>{esc(run)}</code>{dry} "
        f"<span class=muted>{esc(first.get('profile'))}{esc(score)}; {esc(origin)}</span>"
    )
    return (
        f'<details class="run samples" id="{anchor("s", experiment, run)}" '
        f'data-experiment="{esc(experiment)}" data-run="{esc(run)}">'
        f"<summary>{summary}</summary>{more}{''.join(samples)}</details>"
    )


def _display_order(q: pd.DataFrame, scorers: list[str]) -> pd.DataFrame:
    """Wrong answers first: they are what a reader opens the drill-down for."""
    judged = [s for s in scorers if f"{s}.correct" in q.columns]
    if not judged:
        return q
    ok = q[f"{judged[0]}.correct"].fillna(False).astype(bool)
    return q.assign(_ok=ok).sort_values("_ok", kind="stable")


def samples_html(
    groups: list[tuple[str, str, pd.DataFrame, list[str], str]],
    limit: int,
    budget: int | None = None,
) -> str:
    """Per-sample drill-down: (experiment, run, its questions, its scorers, origin) per run; at
    most `limit` questions per run, and at most `budget` bytes of samples in all (fit_budget)."""
    if not groups:
        return (
            '<p class="muted">No sample logs: no runs under the runs root and no committed '
            "exports under results/runs/.</p>"
        )
    ordered = [_display_order(q, scorers) for _, _, q, scorers, _ in groups]
    rendered = [
        [sample_html(r, g[3]) for _, r in q.head(limit).iterrows()]
        for q, g in zip(ordered, groups, strict=True)
    ]
    shown = fit_budget([[len(h.encode()) for h in r] for r in rendered], budget)
    out, current = [], None
    for (experiment, run, _, scorers, origin), q, r, k in zip(
        groups, ordered, rendered, shown, strict=True
    ):
        if experiment != current:
            out.append(f"<h3>{esc(experiment)}</h3>")
            current = experiment
        cut_by = [f"at most {limit} per run"] if len(r) < len(q) else []
        cut_by += ["the page's size budget"] if k < len(r) else []
        out.append(run_samples_html(experiment, run, q, r[:k], scorers, origin, cut_by))
    return "".join(out)


def document(title: str, head: str, toc: list[tuple[str, str]], body: str) -> str:
    items = "".join(f'<li><a href="#{esc(a)}">{esc(t)}</a></li>' for a, t in toc)
    return (
        "<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>"
        '<meta name=viewport content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)}</title><style>\n{CSS}</style></head><body><main>"
        f'{head}<nav class="toc" aria-label="contents"><strong>Contents</strong><ol>{items}</ol>'
        f"</nav>{body}</main></body></html>\n"
    )
