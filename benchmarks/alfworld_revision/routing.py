"""Key corruptions and the routing audit of the commit arm's soft identity (§3.3, B.2's control).

A small writer rarely names an object's key the same way twice: `mug.location`, then
`mugs.location`, `cup.location`, `red_mug.location`, `mug_1.location`. Soft identity is meant to
route such variants to the object's one cell. `corrupt` makes those variants (one kind at a
time, seeded per event), `classify` says where each event of a pool went: its object's cell
(the first cell one of its own events created), another object's cell, or a new cell of its own
(a fork). `scripts/measure_routing.py` runs the commit arm on the pool route with a writer that
names keys this way and writes the table (docs/routing.md).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Sequence

import pandas as pd

__all__ = ["KINDS", "OUTCOMES", "SYNONYMS", "classify", "corrupt", "key_of", "table"]

# What a small writer does to an object's name, in the order the table lists them.
KINDS = ("exact", "typo", "plural", "synonym", "added word", "numbered", "split compound")
OUTCOMES = ("own cell", "other object's cell", "new cell")

# A word a writer may use instead of ALFWorld's object name. Several are other objects' names
# or close to them (a hand towel called a towel, a plate a dish): what a writer really does.
SYNONYMS = {
    "alarmclock": "clock", "book": "novel", "bowl": "dish", "box": "carton", "candle": "taper",
    "cd": "disc", "cellphone": "phone", "cloth": "rag", "creditcard": "card",
    "desklamp": "lamp", "dishsponge": "sponge", "handtowel": "towel", "keychain": "keys",
    "laptop": "notebook", "mug": "cup", "newspaper": "paper", "pen": "ballpoint",
    "pillow": "cushion", "plate": "dish", "remotecontrol": "remote", "soapbar": "soap",
    "soapbottle": "soap dispenser", "statue": "figurine", "teddybear": "teddy",
    "tissuebox": "tissues", "toiletpaper": "toilet roll", "vase": "urn",
    "watch": "wristwatch",
}  # fmt: skip
# ALFWorld's compound names as two words.
COMPOUNDS = {
    "alarmclock": "alarm clock", "cellphone": "cell phone", "creditcard": "credit card",
    "desklamp": "desk lamp", "dishsponge": "dish sponge", "handtowel": "hand towel",
    "keychain": "key chain", "remotecontrol": "remote control", "soapbar": "soap bar",
    "soapbottle": "soap bottle", "teddybear": "teddy bear", "tissuebox": "tissue box",
    "toiletpaper": "toilet paper",
}  # fmt: skip
ADJECTIVES = ("small", "red", "old", "white", "blue")


def plural(name: str) -> str:
    if name.endswith(("s", "x", "ch", "sh")):
        return name + "es"
    return name + "s"


def typo(name: str, rng: random.Random) -> str:
    """One slip of the keyboard: a letter dropped, doubled, swapped with the next, or replaced
    by its neighbour in the alphabet (never the first letter: small writers keep it)."""
    if len(name) < 3:
        return name + name[-1]
    i = rng.randrange(1, len(name) - 1)
    slip = rng.choice(("drop", "double", "swap", "replace"))
    if slip == "swap" and name[i] != name[i + 1]:
        return name[:i] + name[i + 1] + name[i] + name[i + 2 :]
    if slip in ("drop", "swap"):  # a swap of two equal letters would change nothing: drop one
        return name[:i] + name[i + 1 :]
    if slip == "double":
        return name[:i] + name[i] + name[i:]
    letter = chr((ord(name[i]) - ord("a") + 1) % 26 + ord("a")) if name[i].isalpha() else "x"
    return name[:i] + letter + name[i + 1 :]


def corrupt(name: str, kind: str, rng: random.Random) -> str | None:
    """`name` as a writer corrupting it by `kind` would name it; None where the kind does not
    apply to it (no synonym listed, not a compound)."""
    if kind == "exact":
        return name
    if kind == "typo":
        return typo(name, rng)
    if kind == "plural":
        return plural(name)
    if kind == "synonym":
        return SYNONYMS.get(name)
    if kind == "added word":
        return f"{rng.choice(ADJECTIVES)} {name}"
    if kind == "numbered":
        return f"{name} {rng.randint(1, 3)}"
    if kind == "split compound":
        return COMPOUNDS.get(name)
    raise ValueError(f"corruption {kind!r}; choose one of {', '.join(KINDS)}")


def key_of(name: str) -> str:
    """The location key a writer names for an object name: `red_mug.location`."""
    return "_".join(name.split()) + ".location"


def classify(routes: Sequence[tuple[str | None, str | None]]) -> list[str | None]:
    """Where each (object, cell routed to) pair in arrival order went (`OUTCOMES`): an object's
    own cell is the first cell one of its events created (as `routing_audit` of the commit arm
    has it); None for an event not routed at all."""
    owner: dict[str, str] = {}
    home: dict[str, str] = {}
    out: list[str | None] = []
    for obj, cell in routes:
        if obj is None or cell is None:
            out.append(None)
            continue
        owner.setdefault(cell, obj)
        if owner[cell] != obj:
            out.append("other object's cell")
            continue
        home.setdefault(obj, cell)
        out.append("own cell" if home[obj] == cell else "new cell")
    return out


def table(rows: Iterable[dict[str, object]]) -> pd.DataFrame:
    """Shares by (check, corruption): rows of (check, kind, outcome) counted, in %, with n."""
    counts: Counter[tuple[str, str, str]] = Counter()
    for r in rows:
        counts[(str(r["check"]), str(r["kind"]), str(r["outcome"]))] += 1
    cells = sorted({(c, k) for c, k, _ in counts}, key=lambda ck: (ck[0], KINDS.index(ck[1])))
    out = []
    for check, kind in cells:
        n = sum(counts[(check, kind, o)] for o in (*OUTCOMES, "None"))
        shares = {o: round(100 * counts[(check, kind, o)] / n, 1) for o in OUTCOMES}
        out.append({"check": check, "corruption": kind, **shares, "n": n})
    return pd.DataFrame(out)
