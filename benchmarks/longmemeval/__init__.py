"""LongMemEval (Wu et al., ICLR 2025), the benchmark of the paper's §4.1 and Appendix B.1.

One question per instance over that instance's own chat history, read as dated turns. The
package holds the official schema and its checks (``schema``), loading a file (``loader``), the
pinned official files and their download (``hub``), the instance as a harness episode
(``episodes``), the official reading and judge prompts (``prompts``), a file's figures
(``stats``), the generated fixture (``fixture``), the benchmark a config names (``benchmark``)
and the command line (``cli``):

    python -m benchmarks.longmemeval fetch [--variant s|oracle|s_cleaned] [--dest DIR]
    python -m benchmarks.longmemeval stats [--path FILE] [--json]

The judges that score it live in ``benchmarks/scoring/judge.py``; choices the paper leaves open
are listed in ``docs/longmemeval.md``.
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
from benchmarks.longmemeval.stats import format_stats, instance_stats

__all__ = [
    "DATA_DIR",
    "DATA_FILE",
    "DATA_ORIGIN",
    "DATA_SHA256",
    "FIXTURE_FILE",
    "HF_PATH",
    "JUDGE_TEMPLATES",
    "KNOWLEDGE_UPDATE",
    "PAPER_KNOWLEDGE_UPDATE_COUNT",
    "QUESTION_TYPES",
    "READING_TEMPLATES",
    "SHIPPED_SOURCE",
    "VARIANTS",
    "DownloadError",
    "Instance",
    "LoadedFile",
    "LongMemEval",
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
    "evidence_turns",
    "fetch",
    "fetch_hint",
    "fixture_instances",
    "flatten",
    "format_stats",
    "instance_stats",
    "is_abstention",
    "judge_prompt",
    "judge_template_name",
    "load",
    "main",
    "normalize_date",
    "parse_file",
    "parse_instance",
    "read_keys",
    "select",
    "sha256_file",
    "subsample",
    "to_episode",
    "write_fixture",
]
