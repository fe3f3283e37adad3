"""A scripted stand-in for the models of the ALFWorld-Revision arms, served by `ScriptedServer`.

One callable answers the three prompts the arms and the benchmark send:
- the key prompt: the key of the object the observation is about, spelt as told;
- the patch prompt: a correct Revise object for the observation and the cell shown (the
  template parser of `baselines.pmem_arms.commit` fills it), or garbage when told to;
- soft identity's same/different check: same when the two keys name one object;
- the reconstruction prompt: the destination of the last retrieved line about the object;
- the answer prompt: the value of a ``[key] value`` cell (both candidates when it is
  contested, nothing when it is empty), else the destination of the last line about the object.
It counts the calls of each kind, so tests can assert "no writer call on a rerun".
"""

from __future__ import annotations

import collections
import json
import re
import threading
from typing import Any

from baselines.pmem_arms.commit import oracle_patch
from benchmarks.alfworld_revision.scripted import same_object, subject_of
from benchmarks.alfworld_revision.spec import WORDING

CELL = re.compile(
    r"^Cell: (?P<key>\S+) = (?P<value>.+?)(?P<contested> \(contested\))?"
    r"(?: \| alternatives: .*)?$",
    re.M,
)
OBSERVATION = re.compile(r"^Observation: (?P<text>.+)$", re.M)
SAME = re.compile(r"^A: (?P<a>\S+)\nB: (?P<b>\S+)$", re.M)
# how the writer may spell a key (soft identity must bring each back to the object's cell)
KEY_STYLES = {
    "exact": lambda obj: f"{obj}.location",
    "spaced": lambda obj: f"{obj} location",
    "paraphrased": lambda obj: f"Location of {obj}",
}
READ_CELL = re.compile(
    r"^\[(?P<key>\S+)\] (?P<value>[^\n|]+?)(?P<contested> \(contested\))?"
    r"(?: \| alternatives: (?P<alts>[^\n|]+?))?(?: \|[^\n]*)?$",
    re.M,
)
QUESTION = re.compile(r"^Question: where is the (?P<obj>\S+) now\?$", re.M)
DESTINATION = re.compile(r"(?:moved (?:from .+? )?to|was in|is in) (?P<loc>[^.\n]+)\.")


def last_location(lines: str, obj: str) -> str | None:
    """The destination named by the last line about `obj`, in the order listed."""
    found = None
    for line in lines.splitlines():
        m = DESTINATION.search(line)
        if m and re.search(rf"\b{re.escape(obj)}\b", line):
            found = m["loc"]
    return found


class Agent:
    """The callable for `ScriptedServer(rules=Agent())`; `garbage` makes the writer useless;
    `key_styles` (names of `KEY_STYLES`) are the spellings the key call cycles through, per
    object (default: always `{obj}.location`)."""

    def __init__(self, garbage: str | None = None, key_styles: tuple[str, ...] = ()) -> None:
        self.garbage = garbage
        self.key_styles = [KEY_STYLES[k] for k in key_styles]
        self._written: collections.Counter[str] = collections.Counter()
        self.calls: collections.Counter[str] = collections.Counter()
        self._lock = threading.Lock()

    def __call__(self, messages: list[dict[str, Any]]) -> str:
        text = str(messages[-1]["content"])
        kind = (
            "key"
            if "belong to?" in text
            else "patch"
            if text.startswith("You maintain an agent's memory")
            else "same"
            if text.startswith("Do these two keys")
            else "recon"
            if "Reconstruct the current state" in text
            else "answer"
        )
        with self._lock:
            self.calls[kind] += 1
        return getattr(self, kind)(text)

    def patch(self, text: str) -> str:
        if self.garbage is not None:
            return self.garbage
        cells, observations = list(CELL.finditer(text)), list(OBSERVATION.finditer(text))
        assert cells and observations, text
        cell, obs = cells[-1], observations[-1]  # the last: the real ones, after the examples
        value = None if cell["value"] == "(empty)" else cell["value"]
        status = "contested" if cell["contested"] else "active"
        p = oracle_patch(obs["text"], cell["key"], value, status, WORDING)
        fields = ("op", "key", "old_value", "new_value", "status", "supersedes")
        return json.dumps({f: getattr(p, f) for f in fields})

    def key(self, text: str) -> str:
        """The key call: the observed object's key, spelt the next of `key_styles` ways."""
        obs = list(OBSERVATION.finditer(text))[-1]["text"]
        obj = subject_of(obs) or "object"
        with self._lock:
            n, self._written[obj] = self._written[obj], self._written[obj] + 1
        style = (
            self.key_styles[n % len(self.key_styles)] if self.key_styles else KEY_STYLES["exact"]
        )
        return json.dumps({"key": style(obj)})

    def same(self, text: str) -> str:
        m = SAME.search(text)
        assert m, text
        return "same" if same_object(m["a"], m["b"]) else "different"

    def recon(self, text: str) -> str:
        evidence = text.split("Entries:\n", 1)[1].split("\n\nQuestion:", 1)[0]
        obj = QUESTION.search(text)["obj"]  # type: ignore[index]
        return f"The {obj} is in {last_location(evidence, obj) or 'an unknown place'}."

    def answer(self, text: str) -> str:
        memory = text.split("Memory:\n", 1)[1].split("\n\nQuestion:", 1)[0]
        m = READ_CELL.search(memory)
        if m:
            if m["value"] == "(empty)":
                return "I do not know."
            return f"{m['value']} or {m['alts']}" if m["alts"] else m["value"]
        q = QUESTION.search(text)
        return (last_location(memory, q["obj"]) if q else None) or "I do not know."
