"""Scoring: the benchmarks' own rules (MemoryAgentBench's answer normalization and matching,
`rules`), the scorers a run applies (`scorers`) and LongMemEval's judges (`judge`). The
statistics every summary and table reports are `benchmarks.stats`, below both the runner and
the reports.

The rules are re-exported here: the design contract names them `benchmarks.scoring.<rule>`.
"""

from benchmarks.scoring.rules import (
    exact_match,
    memoryagentbench_score,
    normalize_answer,
    parse_output,
    substring_exact_match,
    token_f1,
)

__all__ = [
    "exact_match",
    "memoryagentbench_score",
    "normalize_answer",
    "parse_output",
    "substring_exact_match",
    "token_f1",
]
