"""ALFWorld-Revision as a harness benchmark (paper §4.2, Appendices B.2-B.3).

Picks the probe, turns the generator's cases into episodes (with ``{id}-pre`` episodes asking
the question on the state before the retraction or settling check), gives the scorers
`target_locations` and `gold_final`, and owns the one answer prompt every arm is read with (§4).

    AlfworldRevision(probe="chains", L=8)       # Table 6; probe="single" its variant
    AlfworldRevision(probe="retraction", d=32)  # Table 8; probe="conflict" is §4.2.3
"""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path
from typing import Any

from benchmarks.alfworld_revision.cases import (
    Case,
    check_L,
    conflict_probe,
    generate,
    load_rewrite_rows,
    retraction_probe,
    single_revision,
)
from benchmarks.alfworld_revision.episodes import dumps, to_episodes
from benchmarks.alfworld_revision.spec import (
    DEFAULT_CASES,
    DEFAULT_DISTRACTORS,
    DEFAULT_SEED,
    OFFLINE_REWRITES,
    SOURCES,
    SUPPORTED_D,
    WORDING,
    AlfworldDataError,
)
from benchmarks.alfworld_revision.stages import failure_stage
from benchmarks.runner.types import Episode, Question

PROBES = ("chains", "single", "retraction", "conflict")

# One answer prompt for every arm and every probe of a run: only the context differs (Eq. 1).
# The reader is told nothing about how the context was built (cell, similarity-ranked lines,
# a reconstruction), so the prompt cannot favour an arm. It names no example location: a small
# reader copies one ("cabinet 3") into its answer. The conflict probe adds one sentence: before
# the settling check the desired behaviour is to surface the conflict, not to pick a side
# (§4.2.3), and a reader allowed only one location could never do that.
ANSWER_PROMPT = (
    "You are given entries from a household agent's memory.\n\n"
    "Memory:\n{context}\n\n"
    "Question: {question}\n"
    "Answer with the object's current location only, written exactly as in the memory, and "
    "nothing else."
)
CONFLICT_CLAUSE = (
    " If the memory marks the location as contested, or holds two conflicting reports and "
    'nothing after them settles which one is right, give both locations joined by " or "; if '
    "later evidence settles it, give only the settled location."
)
CONFLICT_ANSWER_PROMPT = ANSWER_PROMPT + CONFLICT_CLAUSE


class AlfworldRevision:
    """The Benchmark protocol over one ALFWorld-Revision probe.

    `probe`: chains (B.2, Table 6), single (B.2's single-revision variant, L=1), retraction
    (B.3, Table 8), conflict (§4.2.3). `L` applies to chains, `d` to retraction; `rewrites` is
    the single-revision JSONL (default: the offline set shipped with the generator, which
    covers only the cases it lists); `source` is valid_seen (None: the paper's 140 games, unless
    `games_dir` is set) or scenes, `games_dir` a folder of games; `pre_queries` adds the
    ``-pre`` questions of the retraction and conflict probes.
    """

    name = "alfworld_revision"
    wording = WORDING

    def __init__(
        self,
        probe: str = "chains",
        L: int = 1,
        d: int = 0,
        cases: int = DEFAULT_CASES,
        seed: int = DEFAULT_SEED,
        distractors: int = DEFAULT_DISTRACTORS,
        games_dir: str | None = None,
        rewrites: str | None = None,
        pre_queries: bool = True,
        source: str | None = None,
    ) -> None:
        if probe not in PROBES:
            raise ValueError(f"benchmark.probe={probe!r}; choose one of {', '.join(PROBES)}")
        if probe == "chains":
            check_L(L)
        if probe == "retraction" and d not in SUPPORTED_D:
            raise ValueError(
                f"benchmark.d={d!r} is not supported; the retraction probe uses "
                f"{' or '.join(map(str, SUPPORTED_D))} (Appendix B.3)"
            )
        if games_dir is not None and not Path(games_dir).is_dir():
            raise AlfworldDataError(
                f"benchmark.games_dir={games_dir}: not a folder (expected an ALFWorld game "
                "folder or a folder of them)"
            )
        if source is not None and source not in SOURCES:
            raise ValueError(f"benchmark.source={source!r}; choose one of {', '.join(SOURCES)}")
        if source is not None and games_dir is not None:
            raise ValueError(
                f"benchmark.source={source} and benchmark.games_dir={games_dir} exclude each "
                "other; set one (a games folder is its own source)"
            )
        self.probe = probe
        self.source = source
        self.L = L if probe == "chains" else 1
        self.d = d if probe == "retraction" else None
        self.n_cases = cases
        self.seed = seed
        self.distractors = distractors
        self.games_dir = games_dir
        self.rewrites = Path(rewrites) if rewrites else OFFLINE_REWRITES
        self.pre_queries = pre_queries
        self._cases: list[Case] | None = None

    # -- the cases ------------------------------------------------------------------------------

    def cases(self) -> list[Case]:
        """The generated cases (once per instance: episodes and fingerprint share them)."""
        if self._cases is None:
            common = {
                "cases": self.n_cases,
                "seed": self.seed,
                "distractors": self.distractors,
                "games_dir": self.games_dir,
                "source": self.source,
            }
            if self.probe == "chains":
                self._cases = generate(self.L, **common)
            elif self.probe == "single":
                rewrites = load_rewrite_rows(self.rewrites)
                self._cases = single_revision(generate(1, **common), rewrites)
            elif self.probe == "retraction":
                assert self.d is not None
                self._cases = retraction_probe(self.d, **common)
            else:
                self._cases = conflict_probe(**common)
        return self._cases

    def episodes(self) -> list[Episode]:
        by_id = {c.id: c for c in self.cases()}
        out = []
        for ep in to_episodes(self.cases(), pre_queries=self.pre_queries):
            case = by_id[ep.id.removesuffix("-pre")]
            out.append(replace(ep, questions=tuple(_scoring_meta(q, case) for q in ep.questions)))
        return out

    # -- the reader's prompt ----------------------------------------------------------------------

    @property
    def answer_prompt(self) -> str:
        return CONFLICT_ANSWER_PROMPT if self.probe == "conflict" else ANSWER_PROMPT

    def answer_messages(self, question: Question, context: str) -> list[dict[str, str]]:
        text = self.answer_prompt.format(context=context, question=question.text)
        return [{"role": "user", "content": text}]

    def prompts(self) -> dict[str, str]:
        return {"answer": self.answer_prompt}

    #: where a wrong answer was lost, from the object's chain (a static rule: exported runs are
    #: attributed from their files, without building the benchmark)
    failure_stage = staticmethod(failure_stage)

    def fingerprint(self) -> dict[str, Any]:
        cases = self.cases()
        sources = sorted({c.record_source for c in cases})
        out: dict[str, Any] = {
            "source": f"generated: benchmarks.alfworld_revision probe={self.probe}",
            "record_source": sources[0] if len(sources) == 1 else sources,
            "probe": self.probe,
            "L": self.L,
            "d": self.d,
            "cases": len(cases),
            "seed": self.seed,
            "distractors": self.distractors,
            "sha256": hashlib.sha256(dumps(cases).encode()).hexdigest(),
        }
        if self.probe == "single":
            out["rewrites"] = str(self.rewrites)
            out["rewrites_sha256"] = hashlib.sha256(self.rewrites.read_bytes()).hexdigest()
        return out


def _scoring_meta(question: Question, case: Case) -> Question:
    """Every location the target held (start, hops, gold) and the case's final gold, so a
    scorer can tell an answer naming an earlier location of the target (stale) from one naming
    a distractor's, for the final and the ``-pre`` question alike."""
    held = [case.record["location"], *case.intermediate_locations, case.gold, *case.candidates]
    meta = {
        **question.meta,
        "target_locations": list(dict.fromkeys(held)),
        "gold_final": case.gold,
    }
    return replace(question, meta=meta)
