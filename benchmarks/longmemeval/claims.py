"""The paper's LongMemEval claims (§4.1, §4.1.1, Appendices C-E) as comparisons of per-question
outcomes: accuracy by the official judge (`judge.correct`), B.1's stale answer (`stale.stale`,
scored only on the stale-scoreable questions of the scorer's subset), read tokens
(`context_tokens`) and the writer's tokens per history, each on the runs of the table that
reports it (Tables 3, 4, 5, 9, 10, 11 and §4.1.1's haystack growth).

Not checked per question:

- t5_materialized_fewer_tokens (§4.1.1, "a variant that compiles memory into a materialized
  state ... reaches MemoryOS-comparable accuracy at ~1k tokens, an ~11x reduction"): no table
  runs both sides; the full-state read runs in Tables 10 and 11, MemoryOS retrieval in Tables
  3-5, and the paper does not say on which questions it measured the ~1k.
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from benchmarks.longmemeval.tables import TABLES
from benchmarks.longmemeval.tables.common import regime
from benchmarks.reports.claims import Claim, Side
from benchmarks.reports.frame import history_costs

__all__ = ["CLAIMS"]

COMMANDS = {t.name: t.reproduce for t in TABLES}
# Appendix D's rows with the 35B extractor building the store (`<arm>_35b`)
WRITER_35B = " WRITER=writer=vllm35b"

ACCURACY = "judge.correct"
STALE = "stale.stale"
TOKENS = "context_tokens"


# -- question filters ---------------------------------------------------------------------------


def oracle(q: pd.DataFrame) -> pd.Series:
    """Table 3's oracle regime (evidence sessions only)."""
    return q["variant"].map(regime) == "oracle"


def s_regime(q: pd.DataFrame) -> pd.Series:
    """Table 3's LongMemEval-S regime (the full haystack, original or cleaned)."""
    return q["variant"].map(regime) == "s"


def superseded(q: pd.DataFrame) -> pd.Series:
    """B.1's superseded class (the stored classification)."""
    return q["class.class"] == "superseded"


def aggregation(q: pd.DataFrame) -> pd.Series:
    return q["class.class"] == "aggregation"


def single(q: pd.DataFrame) -> pd.Series:
    return q["class.class"] == "single"


# -- outcomes -----------------------------------------------------------------------------------


def _haystack(row: pd.Series) -> float:
    """Sessions a question's haystack held: as read (the evidence is always kept), else the
    run's `benchmark.sessions` (none: the released haystack, the largest)."""
    read = (row["question_meta"] or {}).get("haystack_sessions")
    if read is not None:
        return float(read)
    sessions = row.get("sessions")
    return math.inf if sessions is None or pd.isna(sessions) else float(sessions)


def tokens_at_largest_haystack(q: pd.DataFrame) -> pd.Series:
    """Read tokens of each question at the largest haystack its side read (a side without a
    `sessions` cell: the released haystack), None at the smaller ones."""
    if q.empty:
        return pd.Series(dtype=float)
    largest = q.apply(_haystack, axis=1).groupby(q["id"]).idxmax()
    return q[TOKENS].where(q.index.isin(largest))


def write_tokens(q: pd.DataFrame) -> pd.Series:
    """The writer's prompt + completion tokens for the history a question is asked over (its
    episode's snapshot, as Table 11 sums them); None where any writer call came from the cache
    (its tokens were paid by another run)."""
    paid: dict[tuple[str, str], float | None] = {}
    for folder in q["folder"].dropna().unique():
        for _, c in history_costs(Path(folder)).iterrows():
            fresh = c["writer_calls"] > 0 and c["writer_cached"] == 0
            paid[(folder, c["snapshot"])] = float(c["write_tokens"]) if fresh else None
    return pd.Series(
        [paid.get((f, e)) for f, e in zip(q["folder"], q["episode"], strict=True)],
        index=q.index,
        dtype=object,
    )


# -- claims -------------------------------------------------------------------------------------


def _t3(id: str, statement: str, a: str, b: str, outcome: str, direction: str, reg: str,
        paper: str) -> Claim:  # fmt: skip
    """A Table 3 claim in one regime (oracle or s) of the knowledge-update subset."""
    s = reg == "s"
    return Claim(
        id, "§4.1", statement, "table3", Side(a), Side(b), outcome, direction,
        questions=s_regime if s else oracle,
        subset=f"knowledge-update, {'LongMemEval-S' if s else 'oracle'} regime"
        + (", stale-scoreable" if outcome == STALE else ""),
        command=COMMANDS["table3"], paper=paper,
    )  # fmt: skip


CLAIMS: list[Claim] = [
    # §4.1 Table 3: the provenance prune on the knowledge-update subset, both regimes
    _t3("t3_prune_vs_memoryos_acc_oracle",
        "P-Mem with the provenance graph improves over MemoryOS retrieval ... accuracy by "
        "+10.2 pp on oracle",
        "pmem_turns_pruned", "chunk_retrieval", ACCURACY, ">", "oracle", "76.9 vs 66.7"),
    _t3("t3_prune_vs_memoryos_acc_s",
        "... and +5.1 pp on LongMemEval-s; the prune row is still above MemoryOS",
        "pmem_turns_pruned", "chunk_retrieval", ACCURACY, ">", "s", "65.4 vs 60.3"),
    _t3("t3_prune_vs_memoryos_stale_oracle",
        "... and the stale-answer rate from 22.6% to 5.4% on oracle",
        "pmem_turns_pruned", "chunk_retrieval", STALE, "<", "oracle", "5.4 vs 22.6"),
    _t3("t3_prune_vs_memoryos_stale_s",
        "... and from 19.4% to 10.9% on LongMemEval-s",
        "pmem_turns_pruned", "chunk_retrieval", STALE, "<", "s", "10.9 vs 19.4"),
    _t3("t3_prune_lowers_stale_oracle",
        "Pruning superseded turns via the graph lowers the stale rate from 19.6% to 5.4% "
        "(oracle)",
        "pmem_turns_pruned", "pmem_turns", STALE, "<", "oracle", "5.4 vs 19.6"),
    _t3("t3_prune_lowers_stale_s",
        "... and 23.6% to 10.9% (_s): eight fixed, none broken (McNemar 8-0, bootstrap "
        "p<0.001)",
        "pmem_turns_pruned", "pmem_turns", STALE, "<", "s", "10.9 vs 23.6; McNemar 8–0"),
    _t3("t3_prune_raises_acc_oracle",
        "... and on oracle also raises accuracy (75.6→76.9)",
        "pmem_turns_pruned", "pmem_turns", ACCURACY, ">", "oracle", "76.9 vs 75.6"),
    _t3("t3_prune_costs_acc_s",
        "On the larger _s haystack ... pruning removes some still-needed evidence, trading "
        "3.8 pp of accuracy (69.2→65.4)",
        "pmem_turns", "pmem_turns_pruned", ACCURACY, ">", "s", "69.2 vs 65.4"),
    # §4.1 Table 4: all LongMemEval-S questions, overall and by B.1 class
    Claim("t4_pmem_vs_hipporag_tie", "§4.1",
          "top accuracy is close and does not separate the methods: P-Mem's turn read reaches "
          "52.6% and HippoRAG-v2 50.8% (+1.8, [-2.8,+6.4], n.s.)",
          "table4", Side("pmem_turns"), Side("hipporag"), ACCURACY, "=", margin=5.0,
          command=COMMANDS["table4"], paper="52.6 vs 50.8"),
    Claim("t4_pmem_vs_memoryos_overall", "§4.1",
          "Against MemoryOS retrieval (45.8%) P-Mem gains +6.8 pp and leads overall (95% CI "
          "[+2.4,+11.2], p=0.001)",
          "table4", Side("pmem_turns"), Side("chunk_retrieval"), ACCURACY,
          command=COMMANDS["table4"], paper="52.6 vs 45.8"),
    Claim("t4_pmem_vs_memoryos_superseded", "§4.1",
          "P-Mem leads overall, superseded, and single (superseded)",
          "table4", Side("pmem_turns"), Side("chunk_retrieval"), ACCURACY,
          questions=superseded, subset="class superseded",
          command=COMMANDS["table4"], paper="62.7 vs 53.3"),
    Claim("t4_pmem_vs_memoryos_single", "§4.1",
          "P-Mem leads overall, superseded, and single (single)",
          "table4", Side("pmem_turns"), Side("chunk_retrieval"), ACCURACY,
          questions=single, subset="class single",
          command=COMMANDS["table4"], paper="56.8 vs 51.4"),
    Claim("t4_mem0_leads_aggregation", "§4.1",
          "Mem0 leads aggregation (35.9% vs 29.3%)",
          "table4", Side("mem0"), Side("pmem_turns"), ACCURACY,
          questions=aggregation, subset="class aggregation",
          command=COMMANDS["table4"], paper="35.9 vs 29.3"),
    Claim("t4_memory_beats_no_memory", "§4.1",
          "no-memory scores 4.0%, so the task requires stored history",
          "table4", Side("pmem_turns"), Side("no_memory"), ACCURACY,
          command=COMMANDS["table4"], paper="52.6 vs 4.0"),
    Claim("t4_memoryos_generic_key", "§4.1",
          "under its default key ... retrieval is content-blind ... and accuracy falls to "
          "11.2% (an indexing artifact)",
          "table4", Side("chunk_retrieval"), Side("chunk_retrieval_generic"), ACCURACY,
          command=COMMANDS["table4"], paper="45.8 vs 11.2"),
    Claim("t4_long_context_below_every_memory_arm", "§4.1.1",
          "The full ~106k-token history drops accuracy to 27.0, below every memory arm (the "
          "weakest: Mem0)",
          "table4", Side("mem0"), Side("long_context"), ACCURACY,
          command=COMMANDS["table4"], paper="39.4 vs 27.0"),
    Claim("t4_long_context_below_every_memory_arm_aggregation", "§4.1.1",
          "... below every memory arm, aggregation at 5.4",
          "table4", Side("mem0"), Side("long_context"), ACCURACY,
          questions=aggregation, subset="class aggregation",
          command=COMMANDS["table4"], paper="35.9 vs 5.4"),
    # §4.1.1 Table 5: read tokens, and B.1's budget sweep
    Claim("t5_pmem_fewer_tokens_than_memoryos", "§4.1.1",
          "P-Mem reads ~3k tokens per query against MemoryOS retrieval's ~11k while scoring "
          "higher",
          "table5", Side("pmem_turns"), Side("chunk_retrieval"), TOKENS, "<",
          command=COMMANDS["table5"], paper="~3k vs ~11k tokens"),
    Claim("t5_budget1k_pmem_beats_memoryos_full", "§4.1.1",
          "at a 1k budget P-Mem already scores 50.6, above MemoryOS retrieval at its full 11k "
          "(49.2)",
          "table5", Side("pmem_turns_b1000"), Side("chunk_retrieval_b11000"), ACCURACY,
          command=COMMANDS["table5"], paper="50.6 vs 49.2"),
    Claim("t5_memoryos_falls_under_1k_cap", "§4.1.1",
          "MemoryOS retrieval ... itself falls to 27.8 under the same cap",
          "table5", Side("chunk_retrieval_b11000"), Side("chunk_retrieval_b1000"), ACCURACY,
          command=COMMANDS["table5"], paper="49.2 vs 27.8"),
    Claim("t5_gap_widens_at_1k", "§4.1.1",
          "Under a fixed budget the gap widens where budgets are tightest",
          "table5", Side("pmem_turns_b1000"), Side("chunk_retrieval_b1000"), ACCURACY,
          command=COMMANDS["table5"], paper="50.6 vs 27.8"),
    # §4.1.1 haystack growth: read tokens at the released haystack (~48 sessions) against 8
    # sessions; "flat" within the paper's rounding to the thousand tokens
    Claim("hg_long_context_grows", "§4.1.1",
          "long-context grows linearly to ~106k",
          "haystack_growth", Side("long_context"), Side("long_context", {"sessions": 8.0}),
          tokens_at_largest_haystack, ">",
          subset="a: the released haystack (~48 sessions), b: 8 sessions",
          command=COMMANDS["haystack_growth"], paper="~106k at 48 sessions"),
    Claim("hg_pmem_turns_flat", "§4.1.1",
          "Both retrieval reads stay flat as the haystack grows from 8 to 48 sessions (P-Mem "
          "~3k)",
          "haystack_growth", Side("pmem_turns"), Side("pmem_turns", {"sessions": 8.0}),
          tokens_at_largest_haystack, "=", margin=1000.0,
          subset="a: the released haystack (~48 sessions), b: 8 sessions",
          command=COMMANDS["haystack_growth"], paper="~3k at every size"),
    Claim("hg_memoryos_flat", "§4.1.1",
          "Both retrieval reads stay flat as the haystack grows from 8 to 48 sessions "
          "(MemoryOS ~11k)",
          "haystack_growth", Side("chunk_retrieval"), Side("chunk_retrieval", {"sessions": 8.0}),
          tokens_at_largest_haystack, "=", margin=1000.0,
          subset="a: the released haystack (~48 sessions), b: 8 sessions",
          command=COMMANDS["haystack_growth"], paper="~11k at every size"),
    # App. C Table 9: gating the prune, all LongMemEval-S questions
    Claim("t9_prune_always_collapses_aggregation", "App. C",
          "Unconditional pruning collapses aggregation (29.3% to 15.2%)",
          "table9", Side("pmem_turns"), Side("pmem_turns_pruned"), ACCURACY,
          questions=aggregation, subset="class aggregation",
          command=COMMANDS["table9"], paper="29.3 vs 15.2"),
    Claim("t9_prune_always_costs_overall", "App. C",
          "... and costs 7.0 points overall, which is why the main-table P-Mem row is ungated",
          "table9", Side("pmem_turns"), Side("pmem_turns_pruned"), ACCURACY,
          command=COMMANDS["table9"], paper="52.6 vs 45.6"),
    Claim("t9_prune_always_lowers_superseded_stale", "§4.1",
          "the prune's stale effect recurs on the superseded class (n=75)",
          "table9", Side("pmem_turns_pruned"), Side("pmem_turns"), STALE, "<",
          questions=superseded, subset="class superseded, stale-scoreable",
          command=COMMANDS["table9"], paper="12.9 vs 27.4"),
    Claim("t9_router35b_holds_overall", "App. C",
          "a router deciding prune-vs-keep from the question text alone holds overall accuracy "
          "at 51.8% (vs 52.6% ungated), within 0.8 points of ungated",
          "table9", Side("pmem_turns_gate_router_judge"), Side("pmem_turns"), ACCURACY, "=",
          margin=0.8, command=COMMANDS["table9"], paper="51.8 vs 52.6"),
    Claim("t9_router35b_aggregation_untouched", "App. C",
          "... leaves aggregation untouched",
          "table9", Side("pmem_turns_gate_router_judge"), Side("pmem_turns"), ACCURACY, "=",
          margin=5.0, questions=aggregation, subset="class aggregation",
          command=COMMANDS["table9"], paper="29.3 vs 29.3"),
    Claim("t9_router35b_cuts_stale", "App. C",
          "... and cuts the superseded stale rate 27.4%→17.7% (one-sided: six fixed, none "
          "broken)",
          "table9", Side("pmem_turns_gate_router_judge"), Side("pmem_turns"), STALE, "<",
          questions=superseded, subset="class superseded, stale-scoreable",
          command=COMMANDS["table9"], paper="17.7 vs 27.4; 6–0"),
    Claim("t9_class_oracle_beats_router_stale", "App. C",
          "recovering about two thirds of the class-oracle reduction (12.9%)",
          "table9", Side("pmem_turns_gate_oracle"), Side("pmem_turns_gate_router_judge"), STALE,
          "<", questions=superseded, subset="class superseded, stale-scoreable",
          command=COMMANDS["table9"], paper="12.9 vs 17.7"),
    Claim("t9_router_quality_35b_vs_4b", "App. C",
          "Router quality matters: the 4B binary router prunes 68.8% and drops to 47.8% "
          "overall",
          "table9", Side("pmem_turns_gate_router_judge"), Side("pmem_turns_gate_router"),
          ACCURACY, command=COMMANDS["table9"], paper="51.8 vs 47.8"),
    Claim("t9_intent_gate_wrong_questions", "App. C",
          "the 4B intent gate protects accuracy (51.2%) but routes the wrong questions, "
          "leaving stale at 25.8%",
          "table9", Side("pmem_turns_gate_router_judge"), Side("pmem_turns_gate_intent"), STALE,
          "<", questions=superseded, subset="class superseded, stale-scoreable",
          command=COMMANDS["table9"], paper="17.7 vs 25.8"),
    Claim("t9_intent_gate_protects_accuracy", "App. C",
          "the 4B intent gate protects accuracy (51.2%)",
          "table9", Side("pmem_turns_gate_intent"), Side("pmem_turns_gate_router"), ACCURACY,
          command=COMMANDS["table9"], paper="51.2 vs 47.8"),
    # App. D Table 10: write-time materialization on the _s knowledge-update subset
    Claim("t10_materialized4b_behind_raw_acc", "App. D",
          "The 4B writer reaches 52.6% accuracy ... behind even the raw turn read on both axes "
          "(McNemar 9-22 against the raw read, p=0.03)",
          "table10", Side("pmem_turns"), Side("pmem_materialized_full"), ACCURACY,
          subset="knowledge-update", command=COMMANDS["table10"],
          paper="69.2 vs 52.6; McNemar 9–22"),
    Claim("t10_materialized4b_behind_raw_stale", "App. D",
          "... at a 33.3% stale rate, behind even the raw turn read on both axes",
          "table10", Side("pmem_turns"), Side("pmem_materialized_full"), STALE, "<",
          subset="knowledge-update, stale-scoreable", command=COMMANDS["table10"],
          paper="24.1 vs 33.3"),
    Claim("t10_35b_extractor_restores_acc", "App. D",
          "A 35B extractor restores coverage (61.5%), recovering 8.9 pp of accuracy",
          "table10", Side("pmem_materialized_full_35b"), Side("pmem_materialized_full"),
          ACCURACY, subset="knowledge-update", command=COMMANDS["table10"] + WRITER_35B,
          paper="61.5 vs 52.6"),
    Claim("t10_35b_extractor_stale_like_raw", "App. D",
          "... returning the stale rate to the raw read's level (no longer distinguishable "
          "from it, p=0.42)",
          "table10", Side("pmem_materialized_full_35b"), Side("pmem_turns"), STALE, "=",
          margin=5.0, subset="knowledge-update, stale-scoreable",
          command=COMMANDS["table10"] + WRITER_35B, paper="20.4 vs 24.1"),
    Claim("t10_merge070_cuts_stale", "App. D",
          "forcing merges (threshold 0.85→0.70) cuts the stale rate to 13.0%",
          "table10", Side("pmem_materialized_full_merge070_35b"),
          Side("pmem_materialized_full_35b"), STALE, "<",
          subset="knowledge-update, stale-scoreable", command=COMMANDS["table10"] + WRITER_35B,
          paper="13.0 vs 20.4"),
    Claim("t10_merge070_costs_acc", "App. D",
          "false merges take back 3.8 pp of accuracy",
          "table10", Side("pmem_materialized_full_35b"),
          Side("pmem_materialized_full_merge070_35b"), ACCURACY, subset="knowledge-update",
          command=COMMANDS["table10"] + WRITER_35B, paper="61.5 vs 57.7"),
    Claim("t10_prune_dominates_writetime_acc", "App. D",
          "No configuration dominates the read-time prune on both axes (accuracy, against the "
          "best write-time arm)",
          "table10", Side("pmem_turns_pruned"), Side("pmem_materialized_full_35b"), ACCURACY,
          subset="knowledge-update", command=COMMANDS["table10"] + WRITER_35B,
          paper="65.4 vs 61.5"),
    Claim("t10_prune_dominates_writetime_stale", "App. D",
          "No configuration dominates the read-time prune on both axes (stale, against the "
          "lowest-stale write-time arm)",
          "table10", Side("pmem_turns_pruned"), Side("pmem_materialized_full_merge070_35b"),
          STALE, "<", subset="knowledge-update, stale-scoreable",
          command=COMMANDS["table10"] + WRITER_35B, paper="9.3 vs 13.0"),
    Claim("t10_twelve_cell_merge070_behind_raw", "App. D",
          "A matched-budget read over the twelve cells ... 52.6%/16.7% at threshold 0.70; the "
          "last is behind the raw read at p=0.047 (writer not stated: the shared writer's run)",
          "table10", Side("pmem_turns"), Side("pmem_materialized_merge070"), ACCURACY,
          subset="knowledge-update", command=COMMANDS["table10"], paper="69.2 vs 52.6"),
    # App. E Table 11: the materialized path's read and write cost per history
    Claim("t11_twelve_cell_read_cheaper", "App. E",
          "a twelve-cell state read (~0.7k tokens) saves ~2.3k tokens against the twelve-turn "
          "read of Table 5 (~3k)",
          "table11", Side("pmem_materialized"), Side("pmem_turns"), TOKENS, "<",
          subset="knowledge-update", command=COMMANDS["table11"], paper="~0.7k vs ~3k tokens"),
    Claim("t11_35b_fewer_write_tokens", "App. E",
          "146-157k LLM tokens per history (Table 11: 35B extractor 146k, 4B writer 157k)",
          "table11", Side("pmem_materialized_full_35b"), Side("pmem_materialized_full"),
          write_tokens, "<", subset="knowledge-update histories, write tokens per history",
          command=COMMANDS["table11"] + WRITER_35B, paper="146k vs 157k"),
]  # fmt: skip
