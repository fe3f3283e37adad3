"""Scripted rules for ALFWorld-Revision (Tables 6 and 8, the conflict probe): where is an object.

Three calls, each answered from the text it is shown: `patch` (the commit writer: cell and
observation in, one Revise object out), `location` (the reader and single-revision verifier:
raw lines read in the order listed, sorted only when they carry ``[t=i]`` tags, so a
similarity-ordered read can come out stale as for a real reader) and `reconstruct` (the raw
arm's reconstruction: the object's moves linked and its end stated). Locations are receptacle
names (``cabinet 3``); a line is about an object when it names it as a whole word.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Any

from benchmarks.models.scripted_model import Request

__all__ = ["RULES", "locate", "object_of", "patch_for", "same_object", "subject_of"]

LOCATION = re.compile(r"\b[a-z]+ \d+\b")
_TAG = re.compile(r"^\[t=(\d+)\]\s*")
_CELL = re.compile(r"^\[(?P<key>[^\]\s]+)\]\s*(?P<rest>.*)$")
_MOVED = re.compile(
    r"\b(moved|carried|took|taken|put|placed|brought|picked|left|ended up|relocated|set down)\b",
    re.IGNORECASE,
)
_ERROR = re.compile(r"\b(error|mistake|mistaken|wrong|incorrect|correction|never)\b", re.IGNORECASE)
_CHECK = re.compile(r"^\s*(check|confirmed)\b", re.IGNORECASE)
_REPORT = re.compile(r"\breport", re.IGNORECASE)
_FROM_TO = re.compile(r"\bfrom (?P<a>[a-z]+ \d+) to (?P<b>[a-z]+ \d+)\b")
UNKNOWN = "I do not know."


def _about(line: str, obj: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(obj)}(?!\w)", line, re.IGNORECASE) is not None


def classify(line: str) -> tuple[str, str | None] | None:
    """What one observation says about its object's location: (kind, location) with kind one
    of revoke (a report taken back), correct (a report declared wrong, with the right location
    named after it), check (a settling check), report (a bare statement that may disagree),
    move, or set (where it was / is); None when it names no location."""
    found = LOCATION.findall(line.lower())
    if _ERROR.search(line):
        if len(set(found)) > 1:
            return "correct", found[-1]
        return "revoke", found[-1] if found else None
    if not found:
        return None
    if _CHECK.search(line):
        return "check", found[-1]
    if _REPORT.search(line):
        return "report", found[-1]
    return ("move" if _MOVED.search(line) else "set"), found[-1]


class Track:
    """An object's location as a careful reader follows the lines: the values it held, and the
    candidates of an open conflict (two reports with nothing to settle them)."""

    def __init__(self) -> None:
        self.values: list[str] = []
        self.contest: list[str] = []

    @property
    def head(self) -> str | None:
        return self.values[-1] if self.values else None

    def feed(self, kind: str, location: str | None) -> None:
        if kind == "revoke":
            if location is None or location == self.head:
                self.values = self.values[:-1]
            elif location in self.values:
                self.values.remove(location)
            self.contest = []
        elif kind == "correct":  # the head was wrong all along: the named location replaces it
            self.values = [*self.values[:-1], location]
            self.contest = []
        elif location is None:
            return
        elif kind == "check":  # settles it, whether or not it confirms the head
            if location != self.head:
                self.values.append(location)
            self.contest = []
        elif location == self.head:
            return
        elif kind == "report" and self.head is not None:
            self.contest = list(dict.fromkeys([*(self.contest or [self.head]), location]))
            self.values.append(location)
        else:
            self.values.append(location)
            self.contest = []

    def answer(self, both: bool) -> str | None:
        if both and len(self.contest) > 1:
            return " or ".join(self.contest)
        return self.head


def parse_cell(text: str) -> tuple[str | None, list[str], bool]:
    """A rendered cell's value (None when empty), its alternatives, and whether contested."""
    head, *parts = text.split(" | ")
    contested = head.endswith(" (contested)")
    value = head.removesuffix(" (contested)").strip()
    alternatives: list[str] = []
    for part in parts:
        if part.startswith("alternatives: "):
            alternatives = [v.strip() for v in part.removeprefix("alternatives: ").split(";")]
    return (None if value in ("(empty)", "") else value), alternatives, contested


def ordered_lines(memory: str) -> list[str]:
    """The memory's lines, sorted by arrival tag when every line carries one (untagged reads
    stay in the order they are listed); the tags themselves are dropped."""
    lines = [line.strip() for line in memory.splitlines() if line.strip()]
    tags = [_TAG.match(line) for line in lines]
    if lines and all(tags):
        order = sorted(range(len(lines)), key=lambda i: int(tags[i][1]))  # type: ignore[index]
        lines = [lines[i] for i in order]
    return [_TAG.sub("", line) for line in lines]


def locate(memory: str, obj: str, both: bool = False) -> str | None:
    """Where `obj` is by `memory`: its cell if the memory holds one, else its lines followed
    in order. `both`: name both candidates of an open conflict ("A or B")."""
    lines = ordered_lines(memory)
    for line in lines:
        cell = _CELL.match(line)
        if cell and cell["key"].split(".")[0] == obj:
            value, alternatives, contested = parse_cell(cell["rest"])
            if value is not None and contested and both and alternatives:
                return " or ".join([value, *alternatives])
            return value
    track = Track()
    for line in lines:
        if _about(line, obj) and (said := classify(line)) is not None:
            track.feed(*said)
    return track.answer(both)


def chain_end(lines: Sequence[str], obj: str) -> str | None:
    """The end of `obj`'s chain of moves, linked from each move's origin, whatever order the
    lines come in; where the chain cannot be linked, the lines followed in order."""
    about = [line for line in lines if _about(line, obj)]
    moves = [(m["a"], m["b"]) for line in about if (m := _FROM_TO.search(line.lower()))]
    starts = [said[1] for line in about if (said := classify(line)) and said[0] == "set"]
    if not moves:
        track = Track()
        for line in about:
            if (said := classify(line)) is not None:
                track.feed(*said)
        return track.head
    targets = {b for _, b in moves}
    roots = [a for a, _ in moves if a not in targets]
    here = next((s for s in starts if any(a == s for a, _ in moves)), None)
    here = here or (roots[0] if roots else moves[0][0])
    left = list(moves)
    while (step := next((m for m in left if m[0] == here), None)) is not None:
        left.remove(step)
        here = step[1]
    return here


def _revise(
    key: str, old: str | None, new: str | None, status: str | None, op: str = "revise"
) -> dict[str, Any]:
    return {
        "op": op,
        "key": key,
        "old_value": old,
        "new_value": new,
        "status": status,
        "supersedes": old,
    }


def patch_for(key: str, cell: str, observation: str, resolvable: bool) -> dict[str, Any]:
    """The Revise object for one observation on one cell: a move supersedes, a disagreeing
    report contests, a check resolves a contested cell, a retraction revokes, a correction that
    names the right location contradicts (reject); an observation that changes nothing is a
    noop."""
    value, alternatives, contested = parse_cell(cell)
    said = classify(observation)
    noop = {**_revise(key, value, None, None, op="noop"), "supersedes": None}
    if said is None:
        return noop
    kind, location = said
    if kind == "revoke":
        return noop if value is None else _revise(key, value, None, "revoked")
    if kind == "correct" and value is not None and location != value:
        return _revise(key, value, location, "contradicted")  # Table 2's reject
    if value is None:
        return {**_revise(key, None, location, "superseded"), "supersedes": None}
    if kind == "check" and contested and resolvable and location in (value, *alternatives):
        return _revise(key, value, location, None, op="resolve")
    if location == value:
        return noop
    return _revise(key, value, location, "contested" if kind == "report" else "superseded")


# who an observation is about: "[Kind: ][the report that ]{obj} was / is / has been ..."
_SUBJECT = re.compile(
    r"^(?:[A-Za-z ]+: )?(?:the report that )?(?:the )?(?P<obj>[a-z][\w ]*?) "
    r"(?:was|is|has been|had been)\b"
)


def object_of(key: str) -> str:
    """The object a ``{object}.location``-style key names, spelt as words."""
    words = [w for w in re.split(r"[^a-z0-9]+", key.lower()) if w]
    return " ".join(w for w in words if w not in ("location", "of", "the", "where"))


def subject_of(observation: str) -> str | None:
    """The object an observation is about, as a writer reads it ("Update: mug has been moved
    ..." -> ``mug``), or None."""
    m = _SUBJECT.match(observation.strip())
    return m["obj"] if m else None


def same_object(a: str, b: str) -> bool:
    """The scripted same/different check on two location keys: same object, same cell."""
    return object_of(a) == object_of(b)


def _resolvable(request: Request) -> bool:
    """Whether the request's schema offers `resolve` (only for a contested cell)."""
    schema = request.schema or {}
    ops = ((schema.get("properties") or {}).get("op") or {}).get("enum") or []
    return "resolve" in ops


def rule_patch(request: Request, match: re.Match[str] | None) -> str | None:
    """Groups: key, cell (the rendered value after ``key = ``), observation."""
    if match is None:
        return None
    patch = patch_for(match["key"], match["cell"], match["observation"], _resolvable(request))
    return json.dumps(patch, ensure_ascii=False)


def rule_key(request: Request, match: re.Match[str] | None) -> str | None:
    """Groups: observation. The key of the object it is about (the commit arm's key call)."""
    if match is None:
        return None
    obj = subject_of(match["observation"]) or "object"
    return json.dumps({"key": f"{obj.replace(' ', '_')}.location"})


def rule_same(request: Request, match: re.Match[str] | None) -> str | None:
    """Groups: a, b (two keys). Only for location keys; other checks fall through."""
    if match is None or not all(k.endswith("location") for k in (match["a"], match["b"])):
        return None
    return "same" if same_object(match["a"], match["b"]) else "different"


def rule_location(request: Request, match: re.Match[str] | None) -> str | None:
    """Groups: memory, obj. Names both candidates of an open conflict when the prompt asks
    for locations joined by " or "."""
    if match is None:
        return None
    both = 'joined by " or "' in request.text
    return locate(match["memory"], match["obj"].strip(), both) or UNKNOWN


def rule_reconstruct(request: Request, match: re.Match[str] | None) -> str | None:
    """Groups: memory, obj. One sentence, as the reconstruction prompt asks."""
    if match is None:
        return None
    obj = match["obj"].strip()
    where = chain_end(ordered_lines(match["memory"]), obj)
    return f"The {obj} is in {where}." if where else UNKNOWN


RULES: dict[str, Callable[[Request, re.Match[str] | None], str | None]] = {
    "alfworld_patch": rule_patch,
    "alfworld_key": rule_key,
    "alfworld_same": rule_same,
    "alfworld_location": rule_location,
    "alfworld_reconstruct": rule_reconstruct,
}
