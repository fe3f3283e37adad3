"""``python -m benchmarks.alfworld_revision``: ALFWorld-Revision cases as JSON lines.

    python -m benchmarks.alfworld_revision --L 8 --out alfrev_L8.jsonl   # 140 valid_seen games

Errors (bad arguments, unusable game folders) are one ``alfworld_revision: error:`` line on
stderr and exit status 2; the same arguments always give byte-identical output.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from benchmarks.alfworld_revision.cases import (
    Case,
    check_L,
    conflict_probe,
    generate,
    load_rewrite_rows,
    retraction_probe,
    single_revision,
)
from benchmarks.alfworld_revision.episodes import dumps
from benchmarks.alfworld_revision.spec import (
    DEFAULT_CASES,
    DEFAULT_DISTRACTORS,
    DEFAULT_SEED,
    OFFLINE_REWRITES,
    SOURCES,
    SUPPORTED_D,
    AlfworldDataError,
)

EPILOG = """\
examples:
  python -m benchmarks.alfworld_revision --L 8 --out alfrev_L8.jsonl
  python -m benchmarks.alfworld_revision --probe retraction --d 32 --out retract_d32.jsonl
  python -m benchmarks.alfworld_revision --probe conflict --out conflict.jsonl
  python -m benchmarks.alfworld_revision --probe single --out single.jsonl   # offline rewrites
  python -m benchmarks.alfworld_revision --L 4 --source scenes --seed 7 --out x.jsonl
  python -m benchmarks.alfworld_revision --L 4 --games ~/alfworld/json_2.1.1/valid_seen --out x

By default records come from the paper's 140 valid_seen games, shipped as derived records in
benchmarks/data/alfworld/valid_seen (one case per game, in sorted game order; --cases N takes
the first N, at most 140). --source scenes builds them from the per-FloorPlan scene inventories
instead; --games DIR from the inReceptacle facts of the game folders found there (ALFWorld's
own selection: 140 games on valid_seen; more cases than games wrap around). Each line records
which in "record_source". The same arguments always give byte-identical output.
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.alfworld_revision",
        description="Generate ALFWorld-Revision cases (paper §4.2, Appendices B.2-B.3) as JSON "
        "lines, one case per line.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--probe",
        choices=("chains", "retraction", "conflict", "single"),
        default="chains",
        help="chains: B.2 revision chains (Table 6); retraction: B.3 (Table 8); conflict: "
        "§4.2.3 contest/resolve; single: the single-revision variant (default: chains)",
    )
    parser.add_argument(
        "--L", type=int, metavar="L", help="moves per chain for --probe chains: 1, 2, 4 or 8"
    )
    parser.add_argument(
        "--d",
        type=int,
        metavar="D",
        help="distractor events between the erroneous update and the retraction "
        "for --probe retraction: 0 or 32",
    )
    parser.add_argument(
        "--cases",
        type=int,
        default=DEFAULT_CASES,
        metavar="N",
        help=f"cases to generate (default {DEFAULT_CASES})",
    )
    parser.add_argument(
        "--seed", type=int, default=DEFAULT_SEED, help=f"generation seed (default {DEFAULT_SEED})"
    )
    parser.add_argument(
        "--distractors",
        type=int,
        default=DEFAULT_DISTRACTORS,
        metavar="N",
        help=f"distractor objects per case (default {DEFAULT_DISTRACTORS})",
    )
    parser.add_argument(
        "--source",
        choices=SOURCES,
        help="where records come from: valid_seen (the paper's 140 games, the default) or "
        "scenes (scene inventories); not with --games",
    )
    parser.add_argument(
        "--games",
        metavar="DIR",
        help="ALFWorld game folder(s) to harvest records from (e.g. valid_seen)",
    )
    parser.add_argument(
        "--rewrites",
        metavar="FILE",
        help="JSONL of {case_id, rewrite} for --probe single (default: the "
        "hand-written offline set)",
    )
    parser.add_argument(
        "--out", metavar="FILE", required=True, help="output JSONL file ('-' for stdout)"
    )
    return parser


def _cases_from_args(args: argparse.Namespace) -> list[Case]:
    common = {
        "seed": args.seed,
        "distractors": args.distractors,
        "games_dir": args.games,
        "source": args.source,
    }
    if args.games is not None and args.source is not None:
        raise ValueError("--source and --games exclude each other (a games folder is a source)")
    if args.probe != "retraction" and args.d is not None:
        raise ValueError("--d applies to --probe retraction only")
    if args.probe in ("retraction", "conflict") and args.L is not None:
        raise ValueError(f"--L applies to --probe chains and single only, not {args.probe}")
    if args.probe == "chains":
        if args.L is None:
            raise ValueError("--L is required for --probe chains (one of 1, 2, 4, 8)")
        return generate(check_L(args.L), cases=args.cases, **common)
    if args.probe == "single":
        if args.L not in (None, 1):
            raise ValueError(f"L={args.L} is not supported by --probe single; it uses L=1")
        rewrites = load_rewrite_rows(args.rewrites or OFFLINE_REWRITES)
        return single_revision(generate(1, cases=args.cases, **common), rewrites)
    if args.probe == "retraction":
        if args.d is None:
            raise ValueError("--d is required for --probe retraction (0 or 32)")
        if args.d not in SUPPORTED_D:
            raise ValueError(
                f"d={args.d} is not supported; --probe retraction needs --d 0 or --d 32"
            )
        return retraction_probe(args.d, cases=args.cases, **common)
    return conflict_probe(cases=args.cases, **common)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.games is not None and not Path(args.games).is_dir():
        print(
            f"alfworld_revision: error: --games {args.games}: not a folder (expected an ALFWorld "
            "game folder or a folder of them)",
            file=sys.stderr,
        )
        return 2
    try:
        cases = _cases_from_args(args)
    except (AlfworldDataError, ValueError, OSError) as err:
        print(f"alfworld_revision: error: {err}", file=sys.stderr)
        return 2
    text = dumps(cases)
    if args.out == "-":
        sys.stdout.write(text)
    else:
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8", newline="\n")
    source = cases[0].record_source if cases else "-"
    print(
        f"alfworld_revision: {len(cases)} {args.probe} cases ({source}) -> {args.out}",
        file=sys.stderr,
    )
    return 0
