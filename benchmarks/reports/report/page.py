"""The report's HTML: one self-contained page (inline CSS, figures as data: URIs, no script).

The markup is in templates/ (Jinja2, rendered through one environment); this module prepares
their data from the gathered parts (`sources.Section`, the loader's frames) and keeps the rules
the templates share: escaping, anchors, and fitting the drill-down to its size budget.
"""

from __future__ import annotations

import base64
import html
import json
import re
from bisect import bisect_right
from collections.abc import Sequence
from functools import partial
from itertools import accumulate
from pathlib import Path
from typing import Any

import pandas as pd
from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup

from benchmarks.reports.markdown import inline, is_numeric
from benchmarks.reports.names import display_name
from benchmarks.reports.report.cells import no_verdict
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

TEMPLATES = Path(__file__).with_name("templates")
CSS = (TEMPLATES / "page.css").read_text(encoding="utf-8")


def esc(value: Any) -> str:
    return html.escape("" if value is None else str(value))


def anchor(*parts: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "-", "-".join(parts)).strip("-")


def _text(value: Any) -> Any:
    """What a template's `{{ value }}` prints: markup as it is, anything else through `esc`
    (None prints nothing; quotes as &quot; and &#x27;, as html.escape writes them)."""
    return value if hasattr(value, "__html__") else Markup(esc(value))


CLIP = 6000


def _clip(text: Any) -> Markup:
    s = "" if text is None else str(text)
    if len(s) <= CLIP:
        return Markup(esc(s))
    more = f"\n… {len(s) - CLIP:,} more characters in the run's samples log"
    return Markup(esc(s[:CLIP]) + esc(more))


_ENV = Environment(
    loader=FileSystemLoader(TEMPLATES),
    autoescape=True,
    finalize=_text,
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
)
_ENV.filters.update(
    inline=lambda text: Markup(inline(text)),
    b64=lambda data: Markup(base64.b64encode(data).decode("ascii")),
)
_ENV.globals.update(
    anchor=anchor,
    clip=_clip,
    css=Markup(CSS),
    is_numeric=is_numeric,
    no_verdict=no_verdict,
    zip=partial(zip, strict=True),
)


def _macro(template: str, name: str) -> Any:
    return getattr(_ENV.get_template(template).module, name)


def render(template: str, macro: str, *args: Any) -> str:
    """`macro` of `template` rendered with `args`: for the parts of the page put together
    outside this module (benchmarks/reports/html.py)."""
    return str(_macro(template, macro)(*args))


LEGEND = str(_macro("macros.html.j2", "legend")())


def section_html(s: Section) -> str:
    return str(_macro("section.html.j2", "section")(s))


def figure_html(fig: Figure, caption: str = "") -> str:
    return str(_macro("figure.html.j2", "figure")(fig, caption))


# -- runs: manifests and samples ----------------------------------------------------------------


def _models(cfg: dict[str, Any]) -> list[tuple[str, str]]:
    out = []
    for role in ("llm", "writer", "embedder", "judge"):
        node = cfg.get(role) or {}
        if node.get("model"):
            where = node.get("base_url") or (node.get("server") or {}).get("_target_") or ""
            rev = node.get("revision") or "no revision recorded"
            out.append((role, f"{node['model']} @ {rev}" + (f" ({where})" if where else "")))
    return out


def _manifest(run: str, manifest: dict[str, Any], origin: str) -> dict[str, Any]:
    """What manifests.html.j2 shows of one run: its rows, its full config, whether scripted."""
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
    return {
        "run": run,
        "rows": rows,
        "config": json.dumps(cfg, indent=1, sort_keys=True, default=str),
        "scripted": is_scripted(cfg),
    }


def manifests_html(runs: list[tuple[str, str, dict[str, Any], str]]) -> str:
    """Each run's manifest, grouped by experiment: (experiment, run, manifest, origin)."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for experiment, run, manifest, origin in runs:
        groups.setdefault(experiment, []).append(_manifest(run, manifest, origin))
    return str(_macro("manifests.html.j2", "manifests")(groups))


def _scores(row: pd.Series, scorers: list[str]) -> list[tuple[str, bool]]:
    """Each scorer's verdict on the question, for the scorers that gave one."""
    out = []
    for s in scorers:
        value = row.get(f"{s}.correct")
        if value is not None and not isinstance(value, str) and value == value:
            out.append((s, bool(value)))
    return out


def _listing(value: Any) -> list[Any]:
    if isinstance(value, list | tuple):
        return list(value)
    if value is None or (isinstance(value, float) and value != value):
        return []
    return list(value) if hasattr(value, "__iter__") and not isinstance(value, str) else [value]


def sample_html(row: pd.Series, scorers: list[str]) -> Markup:
    golds = " | ".join(str(g) for g in _listing(row.get("golds")))
    fields = [
        (c, row[c])
        for c in row.index
        if any(c.startswith(f"{s}.") for s in scorers) and row[c] is not None and row[c] == row[c]
    ]
    context = row.get("context_text")
    calls = [c for c in _listing(row.get("calls")) if isinstance(c, dict)]
    read = f"{row.get('context_chars')} chars, {row.get('context_tokens')} tokens"
    return _macro("samples.html.j2", "sample")(
        {
            "id": row.get("id"),
            "question": row.get("question"),
            "prediction": row.get("prediction"),
            "golds": golds,
            "scores": _scores(row, scorers),
            "rows": [
                ("question", row.get("question")),
                ("gold", golds),
                ("prediction", row.get("prediction")),
                ("read", read),
                *fields,
            ],
            "has_log": isinstance(context, str) or bool(calls),
            "context": context,
            "ids": _listing(row.get("context_ids")),
            "calls": calls,
        }
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


def _run(
    experiment: str,
    run: str,
    q: pd.DataFrame,
    samples: Sequence[Markup],
    scorers: list[str],
    origin: str,
    by_limit: bool,
    by_budget: bool,
) -> dict[str, Any]:
    """What samples.html.j2 shows of one run: `q` all its questions in display order, `samples`
    the rendered ones shown (a prefix of `q`), `by_limit`/`by_budget` what left the others out."""
    first = q.iloc[0]
    judged = [s for s in scorers if f"{s}.correct" in q.columns]
    score = "".join(
        f", {s} {int(v.sum())}/{len(v)}"
        for s in judged
        if len(v := q[f"{s}.correct"].dropna().astype(bool))
    )
    return {
        "experiment": experiment,
        "run": run,
        "arm": display_name(str(first["arm"])),
        "scripted": bool(first.get("scripted")),
        "profile": first.get("profile"),
        "score": score,
        "origin": origin,
        "samples": samples,
        "total": len(q),
        "by_limit": by_limit,
        "by_budget": by_budget,
    }


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
    ordered = [_display_order(q, scorers) for _, _, q, scorers, _ in groups]
    rendered = [
        [sample_html(r, g[3]) for _, r in q.head(limit).iterrows()]
        for q, g in zip(ordered, groups, strict=True)
    ]
    shown = fit_budget([[len(h.encode()) for h in r] for r in rendered], budget)
    runs = [
        _run(experiment, run, q, r[:k], scorers, origin, len(r) < len(q), k < len(r))
        for (experiment, run, _, scorers, origin), q, r, k in zip(
            groups, ordered, rendered, shown, strict=True
        )
    ]
    return str(_macro("samples.html.j2", "drill_down")(runs, limit))


def document(title: str, head: str, toc: list[tuple[str, str]], body: str) -> str:
    page = _ENV.get_template("base.html.j2")
    return page.render(title=title, head=Markup(head), toc=toc, body=Markup(body))
