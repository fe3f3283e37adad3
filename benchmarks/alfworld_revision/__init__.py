"""ALFWorld-Revision: the revision-pressure variant of ALFWorld (paper §4.2, Appendices B.2-B.3).

Standard ALFWorld never invalidates a stored fact, so the paper adds revisions: an object's
stated location is changed by one or more updates and the agent must report where it is now.
This package builds those histories deterministically, as plain JSON (`Case.to_json`, the CLI)
and as harness episodes (`to_episodes`):

* `generate(L)` - revision chains (B.2): the target object and four distractor objects each get
  a stale record and an L-move chain; the five chains merge into one arrival order.
* `retraction_probe(d)` - reversibility (B.3): v1 stated once, an erroneous move to v2, d
  distractor events, then a retraction that names v2 and never restates v1.
* `conflict_probe()` - contest and resolve (§4.2.3): two reports with no recency or authority
  cue, eight distractor events, then a settling check.
* `single_revision(cases, rewrites)` - the single-revision variant (B.2): L=1 cases whose update
  was rewritten into a two-step move (the LLM rewrite/verify step lives elsewhere; its prompts
  are `REWRITE_PROMPT` and `VERIFY_PROMPT`, and a hand-written offline set ships for tests).

Records (object-location facts keyed ``{object}.location``) come by default from the paper's
140 valid_seen games (B.2), shipped as derived records in ``benchmarks/data/alfworld/valid_seen``
(see SOURCES.md there): case k is game k in sorted order, its task object at its real initial
placement. ``source="scenes"`` uses the per-FloorPlan scene inventories instead, and
``games_dir`` / ``--games`` real ALFWorld game folders (the ``inReceptacle`` atoms of the PDDL
problem). Every case says which in ``record_source``.

Modules: ``spec`` (parameters, templates, prompts, data paths), ``scenes`` (ALFWorld's
vocabulary and names, `Inventory`, scene inventories), ``games`` (harvesting game folders),
``records`` (the shipped valid_seen records),
``casting`` (per-case RNG, arrival order, casting), ``cases`` (`Case` and the generators),
``episodes`` (harness episodes, JSON lines), ``benchmark`` (`AlfworldRevision`), ``cli``:

    python -m benchmarks.alfworld_revision --L 8 --out alfrev_L8.jsonl
"""

from benchmarks.alfworld_revision.benchmark import AlfworldRevision
from benchmarks.alfworld_revision.cases import (
    Case,
    chain_case,
    check_L,
    conflict_probe,
    generate,
    load_rewrite_rows,
    load_rewrites,
    retraction_probe,
    single_revision,
    verifier_accepts,
)
from benchmarks.alfworld_revision.casting import (
    case_rng,
    check_case_count,
    merge_queues,
    resolve_source,
)
from benchmarks.alfworld_revision.cli import EPILOG, build_parser, main
from benchmarks.alfworld_revision.episodes import dumps, read_cases, to_episodes
from benchmarks.alfworld_revision.games import (
    GAME_FILES,
    GAME_PROBLEM_FILES,
    GameFacts,
    facts_by_instance,
    find_games,
    harvest_game,
)
from benchmarks.alfworld_revision.records import (
    record_facts,
    valid_seen_inventories,
    valid_seen_records,
)
from benchmarks.alfworld_revision.scenes import (
    LOCATION_RULES,
    TABLE_ALIASES,
    Inventory,
    alfworld_names,
    eligible_scenes,
    mangle,
    receptacle_rules,
    scene_inventories,
)
from benchmarks.alfworld_revision.spec import (
    CONFLICT_DISTRACTOR_EVENTS,
    DATA_DIR,
    DEFAULT_CASES,
    DEFAULT_DISTRACTORS,
    DEFAULT_SEED,
    DEFAULT_SOURCE,
    ERRONEOUS_UPDATE_TEMPLATE,
    GAMES_SOURCE_PREFIX,
    KEY_TEMPLATE,
    OFFLINE_REWRITES,
    QUESTION_TEMPLATE,
    REPORT_TEMPLATE,
    RETRACTION_DISTRACTOR_EVENTS,
    RETRACTION_TEMPLATE,
    REWRITE_PROMPT,
    SAMPLE_GAME_DIR,
    SCENE_MIN_LOCATIONS,
    SCENE_SOURCE,
    SETTLE_TEMPLATE,
    SOURCES,
    STALE_TEMPLATE,
    SUPPORTED_D,
    SUPPORTED_L,
    UPDATE_TEMPLATE,
    VALID_SEEN_RECORDS,
    VALID_SEEN_SOURCE,
    VERIFY_PROMPT,
    WORDING,
    AlfworldDataError,
)

__all__ = [
    "CONFLICT_DISTRACTOR_EVENTS",
    "DATA_DIR",
    "DEFAULT_CASES",
    "DEFAULT_DISTRACTORS",
    "DEFAULT_SEED",
    "DEFAULT_SOURCE",
    "EPILOG",
    "ERRONEOUS_UPDATE_TEMPLATE",
    "GAMES_SOURCE_PREFIX",
    "GAME_FILES",
    "GAME_PROBLEM_FILES",
    "KEY_TEMPLATE",
    "LOCATION_RULES",
    "OFFLINE_REWRITES",
    "QUESTION_TEMPLATE",
    "REPORT_TEMPLATE",
    "RETRACTION_DISTRACTOR_EVENTS",
    "RETRACTION_TEMPLATE",
    "REWRITE_PROMPT",
    "SAMPLE_GAME_DIR",
    "SCENE_MIN_LOCATIONS",
    "SCENE_SOURCE",
    "SETTLE_TEMPLATE",
    "SOURCES",
    "STALE_TEMPLATE",
    "SUPPORTED_D",
    "SUPPORTED_L",
    "TABLE_ALIASES",
    "UPDATE_TEMPLATE",
    "VALID_SEEN_RECORDS",
    "VALID_SEEN_SOURCE",
    "VERIFY_PROMPT",
    "WORDING",
    "AlfworldDataError",
    "AlfworldRevision",
    "Case",
    "GameFacts",
    "Inventory",
    "alfworld_names",
    "build_parser",
    "case_rng",
    "chain_case",
    "check_L",
    "check_case_count",
    "conflict_probe",
    "dumps",
    "eligible_scenes",
    "facts_by_instance",
    "find_games",
    "generate",
    "harvest_game",
    "load_rewrite_rows",
    "load_rewrites",
    "main",
    "mangle",
    "merge_queues",
    "read_cases",
    "receptacle_rules",
    "record_facts",
    "resolve_source",
    "retraction_probe",
    "scene_inventories",
    "single_revision",
    "to_episodes",
    "valid_seen_inventories",
    "valid_seen_records",
    "verifier_accepts",
]
