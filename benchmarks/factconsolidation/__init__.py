"""MemoryAgentBench FactConsolidation: loader, template parser, gold state and B.4 chunking.

The Conflict_Resolution split of MemoryAgentBench (paper §4.3, Appendix B.4): eight sources
(``sh`` / ``mh`` at 6k, 32k, 64k, 262k tokens; a length's two rows share one list), each a
numbered list of counterfactual facts ``N. <fact>`` where a higher serial overrides a lower one,
plus 100 questions. The facts are MQuAKE relation templates, so the gold state is mechanical:
key ``(subject, relation)``, value the object of the highest serial.

    python -m benchmarks.factconsolidation stats [--json] [--source sh_6k]
"""

from benchmarks.factconsolidation.benchmark import FactConsolidation
from benchmarks.factconsolidation.cli import build_parser, main
from benchmarks.factconsolidation.facts import (
    HEADER,
    RELATIONS,
    TEMPLATE_BY_RELATION,
    TEMPLATES,
    Fact,
    NotAFactLine,
    Template,
    UnparsedFact,
    fact_candidates,
    parse_context,
    parse_fact,
    render_fact,
    split_serial,
)
from benchmarks.factconsolidation.gold import (
    KeyHistory,
    QuestionInfo,
    gold_state,
    is_stale,
    match_question,
    question_infos,
)
from benchmarks.factconsolidation.load import (
    DATA_DIR,
    DATA_FILE,
    DATA_GZ_SHA256,
    DATA_ORIGIN,
    DATA_SHA256,
    HF_DATASET,
    HF_PATH,
    HF_SPLIT,
    HOPS,
    LENGTHS,
    SOURCE_PREFIX,
    SOURCES,
    SourceData,
    UnknownSource,
    load,
    normalize_source,
)
from benchmarks.factconsolidation.prompts import (
    MEMORIZE_TEMPLATE,
    QUERY_AGENTIC_TEMPLATE,
    QUERY_TEMPLATE,
    SYSTEM_MESSAGE,
    TIME_STAMP,
)
from benchmarks.factconsolidation.stats import (
    PAPER_FIGURES,
    PaperFigures,
    SourceStats,
    format_table,
    source_stats,
)
from benchmarks.runner.chunking import CHUNK_SIZE, chunks

__all__ = [
    "CHUNK_SIZE",
    "DATA_DIR",
    "DATA_FILE",
    "DATA_GZ_SHA256",
    "DATA_ORIGIN",
    "DATA_SHA256",
    "HEADER",
    "HF_DATASET",
    "HF_PATH",
    "HF_SPLIT",
    "HOPS",
    "LENGTHS",
    "MEMORIZE_TEMPLATE",
    "PAPER_FIGURES",
    "QUERY_AGENTIC_TEMPLATE",
    "QUERY_TEMPLATE",
    "RELATIONS",
    "SOURCES",
    "SOURCE_PREFIX",
    "SYSTEM_MESSAGE",
    "TEMPLATES",
    "TEMPLATE_BY_RELATION",
    "TIME_STAMP",
    "Fact",
    "FactConsolidation",
    "KeyHistory",
    "NotAFactLine",
    "PaperFigures",
    "QuestionInfo",
    "SourceData",
    "SourceStats",
    "Template",
    "UnknownSource",
    "UnparsedFact",
    "build_parser",
    "chunks",
    "fact_candidates",
    "format_table",
    "gold_state",
    "is_stale",
    "load",
    "main",
    "match_question",
    "normalize_source",
    "parse_context",
    "parse_fact",
    "question_infos",
    "render_fact",
    "source_stats",
    "split_serial",
]
