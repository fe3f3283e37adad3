"""Cases in the harness's form (episodes) and as JSON lines (the CLI's output, the fingerprint).

`to_episodes` gives one episode per case plus, for the retraction and conflict probes, the
``{id}-pre`` episode asked before the retraction / settling check; `dumps` and `read_cases`
write and read the byte-stable JSON lines.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from benchmarks.alfworld_revision.cases import Case
from benchmarks.alfworld_revision.spec import AlfworldDataError
from benchmarks.runner.types import Episode, Event, Question


def to_episodes(cases: Iterable[Case], pre_queries: bool = True) -> list[Episode]:
    """Harness episodes: one per case (all events, the final question, golds=(gold,)), plus,
    with `pre_queries`, one ``{id}-pre`` episode per retraction / conflict case holding the
    events before ``pre_query_index`` and the pre-retraction (v2) / pre-resolution question
    (golds = both candidates, ``meta["expect"] == "conflict"``)."""
    episodes = []
    for case in cases:
        events = tuple(
            Event(e["id"], e["text"], meta={k: v for k, v in e.items() if k not in ("id", "text")})
            for e in case.events
        )
        meta = {
            "probe": case.probe,
            "L": case.L,
            "d": case.d,
            "object": case.object,
            "key": case.key,
            "record_source": case.record_source,
            "scene": case.scene,
            "target_event_ids": list(case.target_event_ids),
            "intermediate_locations": list(case.intermediate_locations),
            "distractor_locations": list(case.distractor_locations),
            "candidates": list(case.candidates),
        }
        final = Question(
            case.id, case.question, (case.gold,), meta={**meta, "phase": "final", "expect": "value"}
        )
        episodes.append(Episode(case.id, events, (final,)))
        if pre_queries and case.pre_query_index is not None:
            conflict = case.probe == "conflict"
            golds = tuple(case.candidates) if conflict else (case.pre_gold or "",)
            phase = "pre_resolution" if conflict else "pre_retraction"
            expect = "conflict" if conflict else "value"
            pre = Question(
                f"{case.id}-pre",
                case.question,
                golds,
                meta={**meta, "phase": phase, "expect": expect},
            )
            episodes.append(Episode(f"{case.id}-pre", events[: case.pre_query_index], (pre,)))
    return episodes


def dumps(cases: Iterable[Case]) -> str:
    """JSON lines, one case per line, keys sorted, no timestamps: same cases, same bytes."""
    return "".join(
        json.dumps(c.to_json(), sort_keys=True, ensure_ascii=False) + "\n" for c in cases
    )


def read_cases(path: str | Path) -> list[Case]:
    """The cases `dumps` wrote; a line that is not one is one `AlfworldDataError` naming it."""
    try:
        lines = Path(path).read_text(encoding="utf-8").split("\n")
    except (OSError, UnicodeDecodeError) as err:
        raise AlfworldDataError(f"{path}: cannot read the cases ({err})") from None
    cases = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            cases.append(Case.from_json(row))
        except (ValueError, TypeError) as err:
            raise AlfworldDataError(f"{path}: line {number}: not a case ({err})") from None
    return cases
