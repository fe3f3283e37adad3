"""Display names for arms: what a legend, a notebook or a report prints instead of a config id.

Config ids (`raw_topk`, `pmem_state_oracle_iter`) key the runs and stay stable; figures show the
paper's row names (LongMemEval's labels, Tables 6-8), and arms without a paper row get a short
description. The suffixes `benchmarks.results.loader.arm_key` adds are spelled out: `_35b` (the
35B extractor), `@<model>` (another writer), `_b<tokens>` (LongMemEval budget runs).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# Every arm in configs/arm/*.yaml (and the names experiments give their variants), in the
# order the paper's tables list them: that order is also the order of legends and rows.
NAMES: dict[str, str] = {
    # ALFWorld-Revision (Table 6, Table 8, §4.2.3)
    "pmem_commit": "P-Mem commit",
    "pmem_commit_label_routed": "P-Mem commit (oracle routing)",
    "pmem_commit_oracle": "P-Mem commit (oracle writer)",
    "pmem_commit_pool": "P-Mem commit, full pool",
    "pmem_commit_pool_label_routed": "P-Mem commit, full pool (oracle routing)",
    "crud_commit": "Commit, no retention (CRUD)",
    "crud_commit_label_routed": "Commit, no retention (CRUD, oracle routing)",
    "crud_commit_oracle": "Commit, no retention (oracle writer)",
    "raw_topk": "Raw top-10",
    "raw_recon": "Raw + reconstruction",
    "raw_tags": "Raw + order tags",
    "raw_oracle_order": "Raw, oracle order",
    # FactConsolidation (Table 7, Appendix F)
    "long_context": "Long-context",
    "chunk_retrieval": "MemoryOS (chunk retrieval)",
    "mem0": "Mem0",
    "hipporag": "HippoRAG-v2",
    "graphiti": "Graphiti/Zep",
    "raw_facts": "Raw facts (top-12)",
    "raw_facts_tags": "Raw facts + order tags",
    "pmem_state": "P-Mem (state read)",
    "pmem_state_iter": "P-Mem + iterative readout",
    "pmem_state_nosoft": "P-Mem, no soft identity",
    "pmem_state_oracle": "P-Mem state (oracle writer)",
    "pmem_state_oracle_iter": "P-Mem + iterative (oracle writer)",
    # LongMemEval (Tables 3-5, 9, 10): the paper's row labels, with the model named by its role
    # (the paper's 4B is the reader profile, its 35B the judge or writer=vllm35b profile), so a
    # name holds on every profile; arms Table 7 shares keep the names above
    "no_memory": "No memory",
    "chunk_retrieval_generic": "MemoryOS (chunk retrieval), generic key",
    "pmem_turns": "P-Mem, turn read",
    "pmem_turns_pruned": "P-Mem, turn read + prune",
    "pmem_turns_gate_oracle": "Class-oracle gate",
    "pmem_turns_gate_intent": "Intent gate (reader model)",
    "pmem_turns_gate_router": "Question-only router (reader model)",
    "pmem_turns_gate_router_judge": "Question-only router (judge model)",
    "pmem_materialized_full": "Materialized state",
    "pmem_materialized_full_merge070": "Materialized state, merge 0.70",
    "pmem_materialized_full_35b": "35B extractor",
    "pmem_materialized_full_merge070_35b": "35B extractor, merge 0.70",
    "pmem_materialized": "Twelve-cell read",
    "pmem_materialized_merge070": "Twelve-cell read, merge 0.70",
    "pmem_materialized_35b": "Twelve-cell read, 35B extractor",
    "pmem_materialized_merge070_35b": "Twelve-cell read, 35B extractor, merge 0.70",
    "memoryos": "MemoryOS (package)",
    "long_context_budget": "Long-context, token budget",
    "chunk_retrieval_budget": "MemoryOS (chunk retrieval), token budget",
    "pmem_turns_budget": "P-Mem, turn read, token budget",
}

_ORDER = {arm: i for i, arm in enumerate(NAMES)}
_BUDGET = re.compile(r"^(?P<arm>.+)_b(?P<tokens>\d+)$")


def display_name(arm_id: str) -> str:
    """The name a figure or table prints for a run's arm (its `arm` column); an id this module
    does not know is returned as it is, so a new arm is never hidden or renamed wrongly."""
    if arm_id in NAMES:
        return NAMES[arm_id]
    if arm_id.endswith("_35b") and arm_id[:-4] in NAMES:
        return f"{NAMES[arm_id[:-4]]}, 35B extractor"
    arm, at, writer = arm_id.partition("@")
    if at and arm in NAMES:
        return f"{display_name(arm)}, writer {writer}"
    budget = _BUDGET.match(arm_id)
    if budget and budget["arm"] in NAMES:
        return f"{NAMES[budget['arm']]}, {int(budget['tokens']) / 1000:g}k-token budget"
    return arm_id


def sort_arms(arms: Iterable[str]) -> list[str]:
    """Arms in the paper's row order (the order of `NAMES`), unknown ones after, by id; a
    suffixed id (`_35b`, `@model`, `_b1000`) sorts right after its arm."""

    def key(arm: str) -> tuple[int, str]:
        base = arm.partition("@")[0].removesuffix("_35b")
        budget = _BUDGET.match(base)
        if base not in _ORDER and budget:
            base = budget["arm"]
        return (_ORDER.get(arm, _ORDER.get(base, len(_ORDER))), arm)

    return sorted(set(arms), key=key)


_IDS = {name: arm for arm, name in NAMES.items()}


def arm_id(name: str) -> str:
    """The config id a display name stands for (`display_name`'s inverse over `NAMES`); any
    other text is returned as it is."""
    return _IDS.get(name, name)
