"""The paper's 140 valid_seen games as the default record source (B.2: "Object-location facts
come from 140 valid-seen ALFWorld games, one record per game").

The games are ALFWorld release assets that cannot be downloaded here, so a derived file ships:
``benchmarks/data/alfworld/valid_seen/records.jsonl.gz`` (provenance, licence and sha256s in
SOURCES.md there), one line per game kept by ALFWorld's own filter, with its ``inReceptacle``
atoms as PDDL ids and in-game names and its task object. A line becomes the same `GameFacts` a
game folder gives (`games.harvest_game`); games are taken in sorted order, case k = game k.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Mapping
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any

from benchmarks.alfworld_revision.games import GameFacts
from benchmarks.alfworld_revision.scenes import Inventory, _natural, _thor_type
from benchmarks.alfworld_revision.spec import (
    KEY_TEMPLATE,
    VALID_SEEN_RECORDS,
    VALID_SEEN_SOURCE,
    AlfworldDataError,
)

# The fields this module reads; a records file without them is refused, naming the field.
REQUIRED_FIELDS = (
    "game",
    "floor_plan",
    "pddl_params",
    "receptacles_text",
    "in_receptacle",
    "in_receptacle_text",
)


def _type_of(pddl_id: str) -> str:
    """THOR type of a PDDL instance id: "Sink_bar_..._bar_SinkBasin" -> "SinkBasin"."""
    return _thor_type(pddl_id.replace("_bar_", "|"))


def _text_pair(item: Any) -> bool:
    return isinstance(item, list) and len(item) == 2 and all(isinstance(t, str) for t in item)


def _check_row(path: Path, line: int, row: Any) -> dict[str, Any]:
    where = f"{path}: line {line}"
    if not isinstance(row, dict):
        raise AlfworldDataError(f"{where}: expected a JSON object per line (one game)")
    missing = [f for f in REQUIRED_FIELDS if f not in row]
    if missing:
        raise AlfworldDataError(f"{where}: missing field(s) {', '.join(missing)}")
    for field, kind in (("game", str), ("floor_plan", str), ("receptacles_text", dict)):
        if not isinstance(row[field], kind):
            raise AlfworldDataError(f"{where}: field {field!r} should be {kind.__name__}")
    params = row["pddl_params"]
    if params is not None and not isinstance(params, dict):
        raise AlfworldDataError(f"{where}: field 'pddl_params' should be an object or null")
    target = (params or {}).get("object_target")
    if target is not None and not isinstance(target, str):
        raise AlfworldDataError(f"{where}: pddl_params.object_target should be text or null")
    names = row["receptacles_text"].items()
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in names):
        raise AlfworldDataError(f"{where}: receptacles_text maps PDDL ids to names (text)")
    pairs, texts = row["in_receptacle"], row["in_receptacle_text"]
    if not isinstance(pairs, list) or not isinstance(texts, list) or len(pairs) != len(texts):
        raise AlfworldDataError(
            f"{where}: in_receptacle and in_receptacle_text must be lists of the same length"
        )
    for field, items in (("in_receptacle", pairs), ("in_receptacle_text", texts)):
        if not all(_text_pair(item) for item in items):
            raise AlfworldDataError(f"{where}: every {field} entry is a pair of texts")
    if not pairs:
        raise AlfworldDataError(f"{where}: game {row['game']} has no in_receptacle placement")
    return row


@cache
def valid_seen_records(path: str | Path = VALID_SEEN_RECORDS) -> tuple[dict[str, Any], ...]:
    """The records file's games, sorted by ``game`` (the documented case order)."""
    path = Path(path)
    try:
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            lines = fh.read().split("\n")
    except (OSError, EOFError, UnicodeDecodeError) as err:
        raise AlfworldDataError(f"{path}: cannot read the valid_seen records ({err})") from None
    rows = []
    for number, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        try:
            rows.append(_check_row(path, number, json.loads(text)))
        except json.JSONDecodeError as err:
            raise AlfworldDataError(f"{path}: line {number}: not JSON ({err.msg})") from err
    games = [r["game"] for r in rows]
    if len(set(games)) != len(games):
        raise AlfworldDataError(f"{path}: a game appears more than once (field 'game')")
    return tuple(sorted(rows, key=lambda r: r["game"]))


def record_facts(row: Mapping[str, Any]) -> GameFacts:
    """One game's line as `GameFacts`: the facts `harvest_game` would read from its folder.

    The text names are the engine's own (the records were made by loading each game), so they
    are used as they are; they agree with `alfworld_names` on every id of the 140 games. Only
    receptacles with an in-game name are chain locations (the records name every receptacle
    of the 140 games; the four nameless fixture types, e.g. Faucet, are objects)."""
    facts = []
    for (obj_id, rec_id), (instance, receptacle) in zip(
        row["in_receptacle"], row["in_receptacle_text"], strict=True
    ):
        if not instance or not receptacle:
            continue  # an atom the game shows no entity for cannot be stated in its words
        obj_type = obj_id.split("_bar_", 1)[0]
        facts.append(
            {
                "object": obj_type.lower(),
                "object_type": obj_type,
                "instance": instance,
                "receptacle": receptacle,
                "receptacle_type": _type_of(rec_id),
                "object_id": obj_id,
                "receptacle_id": rec_id,
            }
        )
    receptacles = tuple(
        sorted(
            ((name, _type_of(rid)) for rid, name in row["receptacles_text"].items() if name),
            key=lambda r: _natural(r[0]),
        )
    )
    target = (row["pddl_params"] or {}).get("object_target") or None
    task = target.lower() if target else None
    rows = sorted(
        ((f["instance"], f["receptacle"], f["object"]) for f in facts),
        key=lambda r: (_natural(r[0]), _natural(r[1])),
    )
    chosen = next((r for r in rows if r[2] == task), rows[0])
    record = {"object": chosen[2], "key": KEY_TEMPLATE.format(obj=chosen[2]), "location": chosen[1]}
    return GameFacts(row["game"], row["floor_plan"], task, tuple(facts), receptacles, record)


@cache
def valid_seen_inventories(path: str | Path = VALID_SEEN_RECORDS) -> tuple[Inventory, ...]:
    """One `Inventory` per game, sorted by ``game``, each labelled with its ``game`` and
    carrying the split's receptacle vocabulary (every in-game receptacle name of the 140)."""
    games = [
        record_facts(row).inventory(row["game"], VALID_SEEN_SOURCE)
        for row in valid_seen_records(path)
    ]
    vocabulary = tuple(sorted({n for g in games for n, _ in g.receptacles}, key=_natural))
    return tuple(replace(g, vocabulary=vocabulary) for g in games)
