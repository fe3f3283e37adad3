"""LongMemEval (Wu et al., ICLR 2025), the benchmark of the paper's §4.1 and Appendix B.1.

One question per instance over that instance's own chat history, read as dated turns. Choices
the paper leaves open are listed in ``docs/longmemeval.md``.

    python -m benchmarks.longmemeval fetch [--variant s|oracle|s_cleaned] [--dest DIR]
    python -m benchmarks.longmemeval stats [--path FILE] [--json]
    python -m benchmarks.longmemeval export RUN_DIR [--out DIR] [--json]
    python -m benchmarks.longmemeval metrics EVAL_RESULTS REF_FILE [--json]
"""

from benchmarks.longmemeval.benchmark import LongMemEval
from benchmarks.longmemeval.cli import build_parser, main
from benchmarks.longmemeval.episodes import (
    arrival_order,
    evidence_turns,
    flatten,
    subsample,
    to_episode,
)
from benchmarks.longmemeval.export import (
    EVAL_RESULTS,
    REFERENCES,
    ExportError,
    eval_results,
    export_run,
    references,
)
from benchmarks.longmemeval.fixture import fixture_instances, write_fixture
from benchmarks.longmemeval.hub import (
    VARIANTS,
    DownloadError,
    Variant,
    check_hash,
    default_dest,
    download,
    fetch,
    fetch_hint,
    sha256_file,
)
from benchmarks.longmemeval.loader import (
    DATA_DIR,
    DATA_FILE,
    DATA_ORIGIN,
    DATA_SHA256,
    EXTRA_FILES,
    FIXTURE_FILE,
    HF_PATH,
    SHIPPED_SOURCE,
    LoadedFile,
    UnknownQuestion,
    load,
    parse_file,
    read_keys,
    select,
)
from benchmarks.longmemeval.prompts import (
    JUDGE_TEMPLATES,
    READING_TEMPLATES,
    judge_prompt,
    judge_template_name,
)
from benchmarks.longmemeval.schema import (
    KNOWLEDGE_UPDATE,
    PAPER_KNOWLEDGE_UPDATE_COUNT,
    QUESTION_TYPES,
    Instance,
    SchemaError,
    Session,
    Turn,
    is_abstention,
    normalize_date,
    parse_instance,
)
from benchmarks.longmemeval.stats import (
    OFFICIAL_TYPES,
    OfficialMetrics,
    format_metrics,
    format_stats,
    instance_stats,
    metrics_from_files,
    official_metrics,
)

__all__ = [
    "DATA_DIR",
    "DATA_FILE",
    "DATA_ORIGIN",
    "DATA_SHA256",
    "EVAL_RESULTS",
    "EXTRA_FILES",
    "FIXTURE_FILE",
    "HF_PATH",
    "JUDGE_TEMPLATES",
    "KNOWLEDGE_UPDATE",
    "OFFICIAL_TYPES",
    "PAPER_KNOWLEDGE_UPDATE_COUNT",
    "QUESTION_TYPES",
    "READING_TEMPLATES",
    "REFERENCES",
    "SHIPPED_SOURCE",
    "VARIANTS",
    "DownloadError",
    "ExportError",
    "Instance",
    "LoadedFile",
    "LongMemEval",
    "OfficialMetrics",
    "SchemaError",
    "Session",
    "Turn",
    "UnknownQuestion",
    "Variant",
    "arrival_order",
    "build_parser",
    "check_hash",
    "default_dest",
    "download",
    "eval_results",
    "evidence_turns",
    "export_run",
    "fetch",
    "fetch_hint",
    "fixture_instances",
    "flatten",
    "format_metrics",
    "format_stats",
    "instance_stats",
    "is_abstention",
    "judge_prompt",
    "judge_template_name",
    "load",
    "main",
    "metrics_from_files",
    "normalize_date",
    "official_metrics",
    "parse_file",
    "parse_instance",
    "read_keys",
    "references",
    "select",
    "sha256_file",
    "subsample",
    "to_episode",
    "write_fixture",
]
