"""The scripted server's reply rules: regex pairs, and named rules chosen from a registry.

A rule set is a list, tried in order (first reply wins, else the server's default): ``[regex,
reply]`` or ``{pattern: regex, reply: reply}`` searches the last user message (DOTALL) and may
use its groups (``\\1``, ``\\g<name>``); ``{rule: module:name}``, with an optional ``pattern``,
calls `RULES[name]` of that module (a benchmark's `scripted` module), which may decline (None).
Named rules read the prompt alone, never a gold answer it does not show; a scripted profile is a
dry run: its numbers never enter a paper table.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from benchmarks.models.scripted_model import Request

__all__ = ["Request", "Rule", "RuleFunction", "compile_rules", "first_reply", "named_rule"]

#: a named rule: the request and the match of its pattern (None without one) -> reply or None
RuleFunction = Callable[[Request, re.Match[str] | None], str | None]


def named_rule(name: str) -> RuleFunction:
    """The rule `module:name` names: `RULES[name]` of that module.

    The function computes the reply from the request and the pattern's match (its named groups
    are the parts of the prompt the function reads): the pattern says *when* the rule applies,
    the function says *what* it answers, for what a regex cannot compute (the last value of a
    chain of moves, the highest-numbered fact for a key, a JSON object for a schema).

    The named rules answer the paper benchmarks' prompts from the text of the prompt alone: the
    context the arm built for a reader, the event text for a writer, the question, answer and
    response a judge is shown. They never see a gold answer that the prompt does not show, so a
    dry run exercises the whole pipeline with scores that come out of what the arms read
    (`configs/server/scripted.yaml` lists them; each benchmark's live in its `scripted` module).
    """
    module_name, sep, rule = name.partition(":")
    if not sep or not module_name or not rule:
        raise ValueError(f"scripted rule {name!r}: name it as module:rule (a module's RULES)")
    try:
        rules = getattr(importlib.import_module(module_name), "RULES", {})
    except ImportError as err:
        raise ValueError(f"scripted rule {name!r}: cannot import {module_name}: {err}") from None
    if rule not in rules:
        known = ", ".join(sorted(rules)) or "none"
        raise ValueError(f"scripted rule {name!r} is not in {module_name}.RULES; known: {known}")
    return rules[rule]


@dataclass(frozen=True, slots=True)
class Rule:
    """One compiled rule: a pattern with a reply template, or a named function."""

    pattern: re.Pattern[str] | None
    reply: str | None = None
    function: RuleFunction | None = None
    name: str | None = None

    def apply(self, request: Request) -> str | None:
        match = self.pattern.search(request.text) if self.pattern is not None else None
        if self.pattern is not None and match is None:
            return None
        if self.function is not None:
            return self.function(request, match)
        assert match is not None and self.reply is not None
        return match.expand(self.reply)


def _rule(entry: Any) -> Rule:
    if isinstance(entry, Mapping):
        unknown = set(entry) - {"pattern", "reply", "rule"}
        if unknown:
            raise ValueError(f"scripted rule {dict(entry)!r}: unknown field(s) {sorted(unknown)}")
        pattern = entry.get("pattern")
        compiled = re.compile(pattern, re.DOTALL) if pattern is not None else None
        if "rule" in entry:
            name = str(entry["rule"])
            if "reply" in entry:
                raise ValueError(f"scripted rule {name!r}: a named rule has no reply template")
            return Rule(compiled, function=named_rule(name), name=name)
        if compiled is None or "reply" not in entry:
            raise ValueError(f"scripted rule {dict(entry)!r}: needs pattern and reply, or rule")
        return Rule(compiled, reply=str(entry["reply"]))
    if isinstance(entry, Sequence) and not isinstance(entry, str) and len(entry) == 2:
        pattern, reply = entry
        return Rule(re.compile(str(pattern), re.DOTALL), reply=str(reply))
    raise ValueError(f"scripted rule {entry!r}: expected [regex, reply] or {{rule: name}}")


def compile_rules(rules: Sequence[Any]) -> list[Rule]:
    """A rule set as configured (a list of pairs and mappings), checked and compiled."""
    return [_rule(entry) for entry in rules]


def first_reply(rules: Sequence[Rule], request: Request) -> str | None:
    """The reply of the first rule that answers `request`, or None."""
    for rule in rules:
        reply = rule.apply(request)
        if reply is not None:
            return reply
    return None
