"""What the paper fixes for ALFWorld-Revision (§4.2, Appendices B.2-B.3), in one place.

The sweep's parameters (L, d, case and distractor counts, the seed), the templated texts every
event and question is written from (B.2's verbatim, ours in the same style), the rewrite and
verify prompts of the single-revision variant, the labels recorded in ``record_source``, where
the shipped data lives, and the one error type for unusable ALFWorld input. The generator
(`cases`), the scene and game readers, the CLI, the harness adapter and P-Mem's commit arm all
read these names, so a text or a parameter is stated once.
"""

from __future__ import annotations

from pathlib import Path

from benchmarks.runner.types import InputError, Wording

DATA_DIR = Path(__file__).resolve().parents[1] / "data" / "alfworld"
SAMPLE_GAME_DIR = DATA_DIR / "sample_train_game"
OFFLINE_REWRITES = DATA_DIR / "single_revision_offline.jsonl"
# The paper's 140 valid_seen games (B.2) as derived records, one JSON line per game (SOURCES.md).
VALID_SEEN_RECORDS = DATA_DIR / "valid_seen" / "records.jsonl.gz"

SUPPORTED_L = (1, 2, 4, 8)  # B.2: L in {1, 2, 4, 8}
SUPPORTED_D = (0, 32)  # B.3: d in {0, 32}
DEFAULT_SEED = 42
DEFAULT_CASES = 140
DEFAULT_DISTRACTORS = 4
CONFLICT_DISTRACTOR_EVENTS = 8  # §4.2.3: "eight distractors follow"
RETRACTION_DISTRACTOR_EVENTS = max(SUPPORTED_D)  # one pool size for every d, so only d varies
# Scene-inventory casts need this many admissible locations per object, whatever the probe, so
# case k has the same scene, objects and starting locations at every L and in every probe.
SCENE_MIN_LOCATIONS = max(SUPPORTED_L) + 1

# Where a case's records come from: `source=` of the generator, --source of the CLI. The default
# is the paper's: the 140 valid_seen games; games folders (games_dir / --games) are the third.
SOURCES = ("valid_seen", "scenes")
DEFAULT_SOURCE = "valid_seen"
# ... and what each case's ``record_source`` says.
VALID_SEEN_SOURCE = "alfworld-valid_seen"
SCENE_SOURCE = "alfworld-scene-inventories"
GAMES_SOURCE_PREFIX = "alfworld-games:"

# B.2's templates, verbatim.
STALE_TEMPLATE = "Earlier observation: {obj} was in {loc}."
UPDATE_TEMPLATE = "Update: {obj} has been moved from {a} to {b}."
QUESTION_TEMPLATE = "where is the {obj} now?"
KEY_TEMPLATE = "{obj}.location"
# Ours, in the same style. B.3 requires that v1 appear nowhere but in the stale record, so the
# erroneous update names only its destination and the retraction names only v2.
ERRONEOUS_UPDATE_TEMPLATE = "Update: {obj} has been moved to {b}."
RETRACTION_TEMPLATE = "Correction: the report that {obj} was moved to {v2} was an error."
# §4.2.3: two reports with no recency or authority cue (the same template), then a check.
REPORT_TEMPLATE = "Report: {obj} is in {loc}."
SETTLE_TEMPLATE = "Check: {obj} is in {loc}."

# B.2 single-revision variant: a stronger model rewrites each templated update into a two-step
# move, and a temperature-0 verifier must recover the destination for the rewrite to be kept.
REWRITE_PROMPT = (
    "Rewrite the household update below as a two-step move: the object is first taken from its "
    "old location to some intermediate place, and only then put into its final location.\n"
    "Rules: keep the object name and every location name exactly as written (for example "
    '"cabinet 3"); mention the final location exactly once; do not reuse the wording "has been '
    'moved from ... to ..."; the final location must be clear to a careful reader. Reply with '
    'one line that starts with "Update:" and nothing else.\n\n'
    "{update}"
)  # .format(update=<the templated update>)
VERIFY_PROMPT = (
    "Read the update below.\n\n{rewrite}\n\n"
    "Question: where is the {obj} now?\n"
    "Reply with the location only, exactly as it is written in the update."
)  # .format(rewrite=<the candidate rewrite>, obj=<the object>); keep it if `verifier_accepts`


class AlfworldDataError(InputError, ValueError):
    """ALFWorld input that cannot be used; the message names the path and what was expected."""


#: the templates above as the runner hands them to arms that read labels
WORDING = Wording(
    key=KEY_TEMPLATE,
    question=QUESTION_TEMPLATE,
    events=(
        ("stale_record", STALE_TEMPLATE),
        ("update", UPDATE_TEMPLATE),
        ("erroneous_update", ERRONEOUS_UPDATE_TEMPLATE),
        ("retraction", RETRACTION_TEMPLATE),
        ("report", REPORT_TEMPLATE),
        ("settle", SETTLE_TEMPLATE),
    ),
)
