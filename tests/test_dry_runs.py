"""Honest dry runs (issue 16, item 6): the scripted profile answers the paper benchmarks from the
context each arm built, so a dry run exercises the whole pipeline with scores above zero, and a
run whose replies mostly do not parse says so in its summary.

The rules are checked twice: on the benchmarks' and arms' own prompt builders with hand-made
contexts (an answer follows the context, whatever the gold says; a writer's reply fits the
schema it was asked for), and through `pmem-bench` runs on the scripted profile, as a user runs
them (a subprocess, as in tests/test_experiments.py).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from baselines.pmem_arms.commit import KEY_PROMPT, KEY_SCHEMA, PATCH_PROMPT
from baselines.reference.raw import RECON_PROMPT
from benchmarks.alfworld_revision.benchmark import AlfworldRevision
from benchmarks.factconsolidation import TEMPLATES as FACT_TEMPLATES
from benchmarks.factconsolidation.benchmark import FactConsolidation
from benchmarks.factconsolidation.scripted import TEMPLATES as SCRIPTED_TEMPLATES
from benchmarks.models.scripted import ScriptedServer
from benchmarks.runner.cli import CONFIG_DIR, report
from benchmarks.runner.types import Question
from pmem.revise import parse_revise, revise_schema
from pmem.write import EXTRACT_PROMPT, EXTRACT_SCHEMA, parse_facts
from tests.test_experiments import FIXTURE, SCRIPTED, composed

PROFILES = ("llm", "embedder", "judge")


def scripted_server() -> ScriptedServer:
    """The scripted profile's server as configured (not started: rules are called directly)."""
    spec = yaml.safe_load((CONFIG_DIR / "server" / "scripted.yaml").read_text())
    return ScriptedServer(rules=spec["rules"], default=spec["default"], models=spec["models"])


def ask(server: ScriptedServer, prompt: str | list[dict[str, str]], **body: Any) -> str:
    messages = [{"role": "user", "content": prompt}] if isinstance(prompt, str) else prompt
    return server.reply_for(messages, {"messages": messages, **body})


def json_schema_body(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": name, "schema": schema, "strict": True},
        }
    }


# -- the profile ---------------------------------------------------------------------------------


def test_the_three_scripted_profiles_share_one_server_and_its_rules() -> None:
    """The stack starts one server per distinct server block: llm, embedder and judge compose
    the same one (configs/server/scripted.yaml, so a judge is answered by the same rules), and
    every named rule must be registered (compiling them is what the server does at start)."""
    cfg = composed([f"{p}=scripted" for p in PROFILES])
    assert cfg["llm"]["server"] == cfg["embedder"]["server"] == cfg["judge"]["server"]
    assert len(scripted_server()._compiled) == len(cfg["llm"]["server"]["rules"])
    assert cfg["llm"]["revision"] == "scripted-rules-2"


def test_the_scripted_templates_are_the_benchmarks() -> None:
    """The scripted reader reads MQuAKE's templates as the benchmark states them, character for
    character."""
    ours = {
        (r, f.replace("{s}", "S").replace("{o}", "O"), q.replace("{s}", "S"))
        for r, f, q in SCRIPTED_TEMPLATES
    }
    theirs = {
        (t.relation, t.render("S", "O"), t.q_prefix + "S" + t.q_suffix) for t in FACT_TEMPLATES
    }
    assert ours == theirs


# -- the rules on the real prompts ---------------------------------------------------------------


def alfworld_question(obj: str, gold: str) -> Question:
    return Question(f"q-{obj}", f"where is the {obj} now?", (gold,))


@pytest.mark.parametrize(
    ("probe", "context", "expected"),
    [
        # the last move, in the order listed
        (
            "chains",
            "Earlier observation: mug was in shelf 1.\nUpdate: mug has been moved from shelf 1 "
            "to desk 2.\nUpdate: cup has been moved from desk 2 to sink 1.",
            "desk 2",
        ),
        # arrival tags are sorted before reading
        (
            "chains",
            "[t=9] Update: mug has been moved from desk 2 to drawer 4.\n"
            "[t=3] Update: mug has been moved from shelf 1 to desk 2.",
            "drawer 4",
        ),
        # a correction takes the erroneous move back
        (
            "retraction",
            "Earlier observation: mug was in shelf 1.\nUpdate: mug has been moved to desk 2.\n"
            "Correction: the report that mug was moved to desk 2 was an error.",
            "shelf 1",
        ),
        # a commit arm's cell, read as it stands
        ("chains", "[mug.location] cabinet 3", "cabinet 3"),
        (
            "conflict",
            "[mug.location] shelf 1 (contested) | alternatives: desk 2",
            "shelf 1 or desk 2",
        ),
        ("conflict", "Report: mug is in shelf 1.\nReport: mug is in desk 2.", "shelf 1 or desk 2"),
        (
            "conflict",
            "Report: mug is in shelf 1.\nReport: mug is in desk 2.\nCheck: mug is in desk 2.",
            "desk 2",
        ),
        ("chains", "[mug.location] (empty)", "I do not know."),
    ],
)
def test_the_alfworld_reader_answers_from_the_context(
    probe: str, context: str, expected: str
) -> None:
    """The gold in the question is a location the context never names: the answer is the
    context's, never the gold's."""
    bench = AlfworldRevision(probe=probe, d=0, cases=1)
    messages = bench.answer_messages(alfworld_question("mug", "nowhere 9"), context)
    assert ask(scripted_server(), messages) == expected


def test_the_reconstruction_links_the_chain_whatever_the_order() -> None:
    entries = (
        "Update: mug has been moved from desk 2 to drawer 4.\n"
        "Update: cup has been moved from drawer 4 to sink 1.\n"
        "Earlier observation: mug was in shelf 1.\n"
        "Update: mug has been moved from shelf 1 to desk 2."
    )
    prompt = RECON_PROMPT.format(evidence=entries, question="where is the mug now?")
    assert ask(scripted_server(), prompt) == "The mug is in drawer 4."


@pytest.mark.parametrize(
    ("cell", "observation", "resolvable", "want"),
    [
        ("(empty)", "Earlier observation: mug was in shelf 1.", False, ("revise", "superseded")),
        (
            "shelf 1",
            "Update: mug has been moved from shelf 1 to desk 2.",
            False,
            ("revise", "superseded"),
        ),
        ("shelf 1", "Report: mug is in desk 2.", False, ("revise", "contested")),
        (
            "desk 2",
            "Correction: the report that mug was moved to desk 2 was an error.",
            False,
            ("revise", "revoked"),
        ),
        (
            "shelf 1 (contested) | alternatives: desk 2",
            "Check: mug is in desk 2.",
            True,
            ("resolve", None),
        ),
        ("shelf 1", "Report: mug is in shelf 1.", False, ("noop", None)),
    ],
)
def test_the_patch_writer_replies_a_schema_valid_revise_object(
    cell: str, observation: str, resolvable: bool, want: tuple[str, str | None]
) -> None:
    schema = revise_schema(resolvable)
    prompt = PATCH_PROMPT.format(cell=f"mug.location = {cell}", observation=observation)
    obj = json.loads(ask(scripted_server(), prompt, **json_schema_body("revise", schema)))
    # the key call before it names the observed object's key
    key = ask(scripted_server(), KEY_PROMPT.format(observation=observation),
              **json_schema_body("key", KEY_SCHEMA))  # fmt: skip
    assert json.loads(key) == {"key": "mug.location"}
    assert set(obj) == set(schema["required"]) and obj["key"] == "mug.location"
    assert obj["op"] in schema["properties"]["op"]["enum"]
    assert obj["status"] in schema["properties"]["status"]["enum"]
    patch, named_another = parse_revise(obj, "mug.location")
    assert (patch.op, patch.status) == want and not named_another


def test_the_factconsolidation_reader_takes_the_newest_fact() -> None:
    bench = FactConsolidation()
    question = Question("q", "Which sport is goaltender associated with?", ("a gold",))
    context = (
        "310. goaltender is associated with the sport of pesäpallo.\n"
        "223. goaltender is associated with the sport of ice hockey.\n"
        "437. goalkeeper is associated with the sport of association football."
    )
    server = scripted_server()
    assert ask(server, bench.answer_messages(question, context)) == "pesäpallo"
    state = "Tracked state (current values):\ngoaltender | sport: bandy"
    assert ask(server, bench.answer_messages(question, state)) == "bandy"
    assert ask(server, bench.answer_messages(question, "nothing here")) == "I do not know."


def test_the_factconsolidation_writer_extracts_one_fact_per_line() -> None:
    text = "0. Thomas Kyd was born in the city of London.\n1. The capital of France is Paris."
    reply = ask(
        scripted_server(),
        EXTRACT_PROMPT.format(text=text),
        **json_schema_body("facts", EXTRACT_SCHEMA),
    )
    facts, dropped = parse_facts(json.loads(reply))
    assert dropped == 0
    assert [(f.key, f.value) for f in facts] == [
        ("thomas_kyd_place_of_birth", "London"),
        ("france_capital", "Paris"),
    ]


# -- dry runs through pmem-bench -----------------------------------------------------------------


def dry_run(tmp_path: Path, *overrides: str) -> tuple[subprocess.CompletedProcess, dict[str, Any]]:
    args = [*overrides, *SCRIPTED, "run.progress=false", f"run.root={tmp_path / 'runs'}"]
    out = subprocess.run(
        [sys.executable, "-m", "benchmarks.runner", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    (summary,) = (tmp_path / "runs").glob("*/*/summary.json")
    return out, json.loads(summary.read_text())


DRY_RUNS = {
    "table6-pmem_commit": (
        ["experiment=table6", "arm=pmem_commit", "benchmark.L=2", "benchmark.cases=3"],
        {"location": 3},
    ),
    "table6-raw_topk": (
        ["experiment=table6", "arm=raw_topk", "benchmark.L=2", "benchmark.cases=3"],
        {"location": 1},
    ),
    "table7": (["experiment=table7", "run.limit=3"], {"substring": 1}),
    "table8": (["experiment=table8", "benchmark.cases=2"], {"recovered": 1, "committed": 1}),
    "conflict": (["experiment=conflict", "benchmark.cases=2"], {"flagged": 1, "settled": 1}),
    "longmemeval-fixture": (["experiment=table5", f"benchmark.path={FIXTURE}"], {"judge": 1}),
}


@pytest.mark.parametrize("name", list(DRY_RUNS))
def test_a_scripted_dry_run_scores_above_zero(name: str, tmp_path: Path) -> None:
    """At least the given number of questions right per scorer, every writer and judge reply
    parsed, no parse-failure warning in the summary, and no commit arm's event fell back to
    noop."""
    overrides, at_least = DRY_RUNS[name]
    out, summary = dry_run(tmp_path, *overrides)
    for scorer, k in at_least.items():
        assert summary["scores"][scorer]["correct"] >= k, (scorer, summary["scores"])
    assert all(u["parse_failures"] == 0 for u in summary["usage"].values()), summary["usage"]
    assert "warning:" not in out.stdout
    meta = summary["read"]["meta"]
    if "noop_fallbacks" in meta:  # a commit arm: its cells are the scripted writer's patches
        assert meta["noop_fallbacks"] == 0 and meta["events_written"] > 0, meta


def test_a_run_whose_writer_replies_do_not_parse_says_so(tmp_path: Path) -> None:
    """With no rules the scripted writer answers every patch call with prose: the summary line
    names the failures beside the (meaningless) scores."""
    out, summary = dry_run(
        tmp_path,
        "experiment=table6",
        "arm=pmem_commit",
        "benchmark.L=2",
        "benchmark.cases=3",
        "llm.server.rules=[]",
    )
    assert summary["usage"]["writer"]["parse_failures"] == 9
    assert "warning: 9 of 9 writer replies failed to parse" in out.stdout
    assert "scores reflect unparsed output" in (Path(summary["run"]) / "run.log").read_text()


def summary_with(usage: dict[str, dict[str, int]]) -> dict[str, Any]:
    return {"n": 1, "expected": 1, "complete": True, "scores": {}, "usage": usage}


def test_the_warning_needs_more_than_half_of_a_roles_replies() -> None:
    """Cache hits are replies too; half or fewer failing is not flagged; each role on its own."""
    half = summary_with({"writer": {"calls": 2, "cache_hits": 2, "parse_failures": 2}})
    assert "warning" not in report(half)
    most = summary_with(
        {
            "writer": {"calls": 1, "cache_hits": 3, "parse_failures": 3},
            "judge": {"calls": 4, "cache_hits": 0, "parse_failures": 1},
        }
    )
    (line,) = [x for x in report(most).splitlines() if "warning" in x]
    assert line.startswith("  warning: 3 of 4 writer replies failed to parse")
