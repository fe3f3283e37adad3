"""Where a FactConsolidation answer was lost (docs/failure_stages.md), from the gold state.

A single-hop question asks one key, (subject, relation), whose gold is the object of its highest
serial (Appendix B.4); its earlier objects are superseded. A multi-hop question's gold is the
object of its chain's last hop. The first stage that fails:

* write (state arms, whose store's current cells the run keeps): no current cell holds the gold
  (single-hop: no cell about the subject, every word of the subject in the cell's key, holds
  it: Appendix F's "survives", `write_audit.audit_state`).
* retrieval: the memory holds it (the raw and chunk stores and the long context keep every
  line) but the read does not name it.
* stale: the read names it and the answer is a superseded value (the stale scorer, B.4).
* reader: the read names it and the answer is otherwise wrong.

Keys are free-form, so a value filed under another subject's key cannot be told from another
fact with the same object: there is no route stage here.
"""

from __future__ import annotations

from benchmarks.factconsolidation.gold import words
from benchmarks.runner.failures import Attempt
from benchmarks.scoring.rules import normalize_answer


def failure_stage(attempt: Attempt) -> tuple[str, str] | None:
    """None for a right (or unscored) answer, else (stage, why)."""
    verdict = attempt.scores.get("substring") or {}
    if verdict.get("correct") is None or verdict["correct"]:
        return None
    golds = [g for g in (normalize_answer(str(g)) for g in attempt.golds) if g]
    shown = " / ".join(attempt.golds)

    def names_gold(text: str) -> bool:
        value = normalize_answer(text)
        return any(g in value for g in golds)

    if attempt.memory is not None:  # a state store: what it held as current
        key = attempt.question_meta.get("key")
        subject = words(str(key[0])) if isinstance(key, list | tuple) and key else set()
        cells = [v for k, v in attempt.memory if not subject or subject <= words(k)]
        if not any(names_gold(v) for v in cells):
            about = f" about {key[0]!r}" if subject else ""
            return "write", f"no current cell{about} holds {shown!r} ({len(cells)} cells)"
    if attempt.read_text is None:
        return "unattributed", "the run kept no sample log of its reads"
    if not names_gold(attempt.read_text):
        return "retrieval", f"the read does not name {shown!r}"
    if (attempt.scores.get("stale") or {}).get("stale"):
        return "stale", f"the answer {attempt.prediction!r} is a superseded value"
    return "reader", f"the read names {shown!r}; the answer is {attempt.prediction!r}"
