"""LongMemEval through `pmem-bench` end to end (a subprocess, as a user runs it) against one
scripted server on 127.0.0.1 that plays the 4B reader and writer, the embedder and the 35B
judge: the Table 3, 5 and 9 experiments on the generated fixture plus the shipped real S
instance, then the table builders on the run folders.

Why scripted and what it scripts: the point is the plumbing the paper's numbers pass through
(the official reading prompt, the turn read, pruning and its gate, session retrieval, the
token budget, the official judge, B.1's class and stale judges, the run records and the
tables), so every model reply is a deterministic function of its prompt:

* the reader answers a "which city" question with the first city its history names (a
  stale-prone reader: an unpruned read that shows the Boston turn before the Denver one
  answers the superseded value), counts the appointments it is shown, and reads the degree;
* the pruning query says yes for the city pair and, like a confused 4B, for the two
  appointment turns (aggregation resembles an update, §4.1); the router keeps "how many";
* the judge matches the gold in the response, classifies by the question's wording, and
  extracts Boston -> Denver as the knowledge update's superseded and current values.

Embeddings are concept vectors (as in tests/test_turn_arms.py), so the paper's 0.55 pair
threshold applies unchanged and retrieval finds the evidence in the 550-turn real instance.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from baselines.pmem_arms.materialized import EXTRACT_SESSION_PROMPT
from benchmarks.longmemeval import DATA_FILE, EXTRA_FILES, OFFICIAL_TYPES, fixture_instances
from benchmarks.models import scripted
from benchmarks.models.scripted import ScriptedServer, embed_text
from benchmarks.reports import tables as tables_longmemeval
from benchmarks.reports.names import display_name
from tests.peer_runs import table_row

CONCEPTS = {
    "home": {"boston", "denver", "moved", "move", "relocated", "city", "live", "flat"},
    "doctor": {"doctor", "dentist", "gp", "appointment", "appointments", "check"},
    "degree": {"degree", "graduate", "graduated", "business", "administration"},
    "run": {"marathon", "shoes", "running"},
    "pet": {"cat", "dog", "biscuit"},
}
DIM = 64
KU = "fx_ku_1"
MULTI = "fx_multi_1"
REAL = "e47becba"
WRITER_35B = "Qwen/Qwen3.6-35B-A3B-FP8"  # configs/writer/vllm35b.yaml, played by the script
EXTRACT_HEAD = EXTRACT_SESSION_PROMPT.split("{{", 1)[0]


def concept_vector(text: str) -> list[float]:
    words = set(re.findall(r"[a-z]+", text.lower()))
    vec = 0.35 * np.asarray(embed_text(text, DIM), dtype=np.float64)
    for axis, names in enumerate(CONCEPTS.values()):
        if words & names:
            vec[axis] += 1.0
    return (vec / np.linalg.norm(vec)).tolist()


class ConceptServer(ScriptedServer):
    """The scripted server with concept embeddings instead of pure word hashes."""

    def _embeddings(self, body: dict[str, Any]) -> Any:
        inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
        data = [
            {"object": "embedding", "index": i, "embedding": concept_vector(t)}
            for i, t in enumerate(inputs)
        ]
        n = sum(len(t.split()) for t in inputs)
        usage = {"prompt_tokens": n, "total_tokens": n}
        return scripted._json_reply(
            200, {"object": "list", "data": data, "model": body.get("model"), "usage": usage}
        )


def field(text: str, name: str, end: str) -> str:
    match = re.search(rf"{name}(.*?){end}", text, re.S)
    assert match, (name, text[:300])
    return match.group(1).strip()


def read_answer(prompt: str) -> str:
    history = field(prompt, "History Chats:\n", "\n\nCurrent Date:")
    question = field(prompt, "\nQuestion: ", "\nAnswer:")
    if "city" in question:
        found = [(history.find(c), c) for c in ("Boston", "Denver") if c in history]
        return min(found)[1] if found else "I don't know."
    if "appointments" in question:
        seen = sum(w in history for w in ("GP", "dentist"))
        return str(seen) if seen else "I don't know."
    if "degree" in question:
        return "Business Administration" if "Business Administration" in history else "No idea."
    if "marathon" in question:
        both = "running shoes today" in history and "marathon today" in history
        return "10 days" if both else "I don't know."
    return "The information provided is not enough."


def judge(prompt: str) -> str:
    if "Classify the question" in prompt:
        question = field(prompt, "Question: ", "\n")
        if "now" in question:
            return "superseded"
        return "aggregation" if question.startswith("How many") else "single"
    if "Reply with JSON only" in prompt:
        question, gold = field(prompt, "Question: ", "\n"), field(prompt, "Correct Answer: ", "\n")
        if "city" in question:
            return json.dumps({"superseded": "Boston", "current": "Denver"})
        return json.dumps({"superseded": None, "current": gold})
    response = field(prompt, "Model Response: ", "\n\n").lower()
    if "Superseded Answer:" in prompt:
        return "yes" if field(prompt, "Superseded Answer: ", "\n").lower() in response else "no"
    if "unanswerable" in prompt:
        return "yes" if "not enough" in response else "no"
    gold = field(prompt, "(?:Correct Answer|Rubric): ", "\n\n").lower()
    return "yes" if gold.split(".")[0] in response or response in gold.split(".")[0] else "no"


class Models:
    """One script for every role, told apart by the prompt (and the judge by its model)."""

    def __init__(self) -> None:
        self.calls: dict[str, int] = {}

    def count(self, kind: str) -> None:
        self.calls[kind] = self.calls.get(kind, 0) + 1

    def __call__(self, body: dict[str, Any]) -> str:
        text = str(body["messages"][-1]["content"])
        if body.get("model") == "scripted-judge":
            self.count("judge")
            return judge(text)
        if text.startswith(EXTRACT_HEAD):  # Appendix D's extraction, counted per writer model
            self.count(f"extract:{body.get('model')}")
            conversation = text.split("Conversation:\n", 1)[1]
            cities = re.findall(r"\b(Boston|Denver)\b", conversation)
            facts = [{"key": "user_home_city", "value": c, "status": "asserted"} for c in cities]
            return json.dumps(facts)
        if text.startswith("I will give you several history chats"):
            self.count("reader")
            return read_answer(text)
        if "Message A:" in text:
            self.count("prune")
            a = field(text, "Message A: ", "\n\nMessage B:")
            b = field(text, "Message B: ", "\n\nDo messages")
            city = all(c in a + b for c in ("Boston", "Denver"))
            doctor = all(any(w in m for w in ("GP", "dentist")) for m in (a, b))
            return "yes" if city or doctor else "no"
        question = field(text, "Question: ", "\n")
        self.count("gate")
        counting = question.lower().startswith("how many")
        if "prune or keep" in text:
            return "keep" if counting else "prune"
        return "no" if counting else "yes"


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[ConceptServer, Models]]:
    models = Models()
    names = ["scripted", "scripted-embed", "scripted-judge", WRITER_35B]
    with ConceptServer(script=models, models=names, embedding_dim=DIM) as s:
        yield s, models


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A working folder with the fixture and the real instance in one official-schema file."""
    root = tmp_path_factory.mktemp("lme")
    real = json.loads(DATA_FILE.read_text())
    (root / "data.json").write_text(json.dumps(fixture_instances() + real))
    return root


def bench(root: Path, server: ScriptedServer, *overrides: str) -> list[Path]:
    """Run pmem-bench (several arms in one process with `-m`); the run folders it reports.
    `writer=vllm35b` among the overrides points D's 35B writer at the scripted server too."""
    if "writer=vllm35b" in overrides:
        overrides = (*overrides, f"writer.base_url={server.base_url}")
    return _bench(root, server, *overrides)


def _bench(
    root: Path, server: ScriptedServer, *overrides: str, data: Path | str | None = None
) -> list[Path]:
    """Run pmem-bench (several arms in one process with `-m`); the run folders it reports.
    `data`: the file to read (the workspace's `data.json` unless given; "default": none named,
    `benchmark.path=null`, so the benchmark reads its shipped file)."""
    path = "null" if data == "default" else (data or root / "data.json")
    cmd = [
        sys.executable,
        "-m",
        "benchmarks.runner.cli",
        *overrides,
        f"run.root={root / 'runs'}",
        "run.progress=false",
        "run.episode_concurrency=8",
        f"benchmark.path={path}",
        "llm=openai",
        "llm.model=scripted",
        f"llm.base_url={server.base_url}",
        "embedder=scripted",
        f"embedder.base_url={server.base_url}",
        "judge=vllm",
        "judge.model=scripted-judge",
        f"judge.base_url={server.base_url}",
    ]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=root)
    assert out.returncode == 0, out.stderr[-3000:]
    return [Path(p.split()[0]) for p in out.stdout.split("run folder: ")[1:]]


def jsonl(path: Path) -> dict[str, dict[str, Any]]:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line]
    return {r["id"]: r for r in rows}


def load(folder: Path) -> dict[str, Any]:
    return {
        "summary": json.loads((folder / "summary.json").read_text()),
        "manifest": json.loads((folder / "manifest.json").read_text()),
        "predictions": jsonl(folder / "predictions.jsonl"),
        "scores": jsonl(folder / "scores.jsonl"),
    }


@pytest.fixture(scope="module")
def runs(workspace: Path, server: tuple[ConceptServer, Models]) -> dict[str, dict[str, Any]]:
    s, _ = server
    folders = [
        *bench(
            workspace,
            s,
            "-m",
            "experiment=table3",
            "benchmark.variant=s",
            "arm=pmem_turns,pmem_turns_pruned",
        ),
        *bench(
            workspace,
            s,
            "experiment=table3",
            "benchmark.variant=s",
            "arm=chunk_retrieval",
            "arm.chunk_size=null",
        ),
        *bench(
            workspace,
            s,
            "-m",
            "experiment=table9",
            "arm=pmem_turns,pmem_turns_pruned,pmem_turns_gate_router",
        ),
        *bench(
            workspace,
            s,
            "-m",
            "experiment=table5",
            "arm=pmem_turns_budget,chunk_retrieval_budget,long_context_budget",
            "++arm.budget=300",
        ),
        *bench(workspace, s, "experiment=table5", "arm=pmem_turns"),
    ]
    return {f"{f.parent.name}/{f.name.split('__')[0]}": load(f) for f in folders}


def test_pruning_drops_the_superseded_turn_on_the_update(runs) -> None:
    plain = runs["table3/pmem_turns"]
    pruned = runs["table3/pmem_turns_pruned"]
    assert plain["summary"]["n"] == pruned["summary"]["n"] == 1  # the knowledge-update subset
    boston = f"{KU}-s0-t0"  # "I just moved into a flat in Boston" (Denver comes in s2)
    assert plain["predictions"][KU]["context_items"] == 8  # the episode's every turn
    meta = pruned["predictions"][KU]["context_meta"]
    assert boston in meta["pruned_ids"] and meta["pruned_read"] is True
    assert f"{KU}-s2-t0" not in meta["pruned_ids"]  # the update survives
    assert pruned["predictions"][KU]["context_items"] == 8 - len(meta["pruned_ids"])
    assert plain["predictions"][KU]["prediction"] == "Boston"
    assert pruned["predictions"][KU]["prediction"] == "Denver"
    # accuracy from the official judge, the stale rate from B.1's judge, both in the summary
    assert plain["summary"]["scores"]["judge"]["accuracy"] == 0.0
    assert pruned["summary"]["scores"]["judge"]["accuracy"] == 1.0
    assert plain["summary"]["rates"]["stale.stale"]["rate"] == 1.0
    assert pruned["summary"]["rates"]["stale.stale"]["rate"] == 0.0
    stale = plain["scores"][KU]["stale"]
    assert stale["verdict"] == "stale" and stale["superseded"] == "Boston"


def test_the_gate_keeps_aggregation_evidence_that_ungated_pruning_drops(runs) -> None:
    ungated = runs["table9/pmem_turns_pruned"]["predictions"][MULTI]
    gated = runs["table9/pmem_turns_gate_router"]["predictions"][MULTI]
    plain = runs["table9/pmem_turns"]["predictions"][MULTI]
    # the earlier appointment (the GP, s2) is pruned as if superseded by the dentist (s0)
    assert ungated["context_meta"]["pruned_ids"] == [f"{MULTI}-s2-t0"]
    assert gated["context_meta"]["pruned_read"] is False and gated["context_meta"]["pruned"] == 0
    assert gated["context_items"] == plain["context_items"] == ungated["context_items"] + 1
    assert gated["prediction"] == "2" and ungated["prediction"] == "1"
    routed = runs["table9/pmem_turns_gate_router"]["predictions"][KU]["context_meta"]
    assert routed["pruned_read"] is True and f"{KU}-s0-t0" in routed["pruned_ids"]
    scores = runs["table9/pmem_turns_gate_router"]["scores"]
    assert scores[MULTI]["class"]["class"] == "aggregation"
    assert scores[KU]["stale"]["verdict"] == "correct"  # subset=superseded: the class store


def test_judge_replies_and_prompt_hashes_are_recorded(runs, workspace: Path) -> None:
    run = runs["table9/pmem_turns"]
    prompts = run["manifest"]["prompts"]
    for name in ("answer", "judge.default", "judge.knowledge-update", "judge.abstention"):
        assert re.fullmatch(r"[0-9a-f]{64}", prompts[name])
    assert re.fullmatch(
        r"[0-9a-f]{64}", runs["table9/pmem_turns_pruned"]["manifest"]["prompts"]["arm.prune_pair"]
    )
    assert len(run["scores"]) == 5  # four fixture questions and the real instance
    for score in run["scores"].values():
        assert score["judge"]["reply"] in ("yes", "no") and score["judge"]["template"]
        assert score["class"]["reply"]
    assert run["scores"][REAL]["judge"]["correct"] is True  # the real instance, answered
    assert run["scores"][KU]["stale"]["verdict"] == "stale"
    # the verdicts in the official eval-results shape, and the official figures in the summary
    folder = Path(run["summary"]["run"])
    lines = [json.loads(x) for x in (folder / "eval-results.jsonl").read_text().splitlines()]
    assert [x["question_id"] for x in lines] == sorted(run["scores"])
    for x in lines:
        label = run["scores"][x["question_id"]]["judge"]["correct"]
        assert x["autoeval_label"] == {"model": "scripted-judge", "label": label}
        assert x["hypothesis"] == run["predictions"][x["question_id"]]["prediction"]
    official = run["summary"]["longmemeval"]
    assert official["n"] == 5 and official["eval_results"] == "eval-results.jsonl"
    assert official["overall"] == round(run["summary"]["scores"]["judge"]["accuracy"], 4)
    assert official["task_averaged"] is None  # the fixture lacks some of the six types
    # a scripted run keeps the shared class store under its run root, never in results/
    assert not (workspace / "results" / "longmemeval_classes.jsonl").exists()
    store = workspace / "runs" / "dry-run" / "longmemeval_classes.jsonl"
    assert {json.loads(line)["id"] for line in store.read_text().splitlines()} >= {KU, MULTI}


def test_the_budget_caps_the_read_by_the_readers_tokens(runs) -> None:
    full = runs["table5/pmem_turns"]["predictions"]
    budget = runs["table5/pmem_turns_b300"]["predictions"]
    assert full[REAL]["context_tokens"] > 300 >= budget[REAL]["context_tokens"] > 250
    meta = budget[REAL]["context_meta"]
    assert meta["budget"] == 300 and meta["budget_truncated"] == 1
    assert budget[KU]["context_meta"]["budget_truncated"] == 0  # it fits: the same read
    assert budget[KU]["context_tokens"] == full[KU]["context_tokens"]
    long = runs["table5/long_context_b300"]["predictions"][REAL]
    assert long["context_tokens"] <= 300 and long["context_meta"]["budget_tokens_before"] > 10_000


def test_tables_render_from_the_run_folders(runs, workspace: Path) -> None:
    root, out = workspace / "runs", workspace / "results"
    for name in ("table3", "table5", "table9"):
        md = tables_longmemeval.build(name, root, out, include_scripted=True)
        assert md.startswith("# Table") and "paper" in md
        assert (out / "tables" / f"{name}.md").exists()
    table3 = (out / "tables" / "table3.md").read_text()
    assert "65.4" in table3 and "P-Mem, turn read + prune" in table3
    table9 = (out / "tables" / "table9.md").read_text()
    assert "Question-only router (reader model)" in table9
    assert "LongMemEval's official metrics" in table9 and "task-averaged" in table9
    assert (out / "figures" / "table5_accuracy_vs_tokens.png").exists()
    assert (out / "figures" / "table3_stale_by_arm.png").exists()


# ------------------------------------------------------------------ §4.1.1 haystack growth


@pytest.fixture(scope="module")
def growth(workspace: Path, server: tuple[ConceptServer, Models]) -> dict[tuple[str, Any], dict]:
    """The read-only growth sweep on the real instance: 8, 24 and all 53 sessions."""
    s, models = server
    answers_before = models.calls.get("reader", 0)
    only_real = f"benchmark.ids=[{REAL}]"
    folders = [
        *bench(workspace, s, "-m", "experiment=haystack_growth", only_real,
               "benchmark.sessions=8,24,null", "arm=pmem_turns"),
        *bench(workspace, s, "-m", "experiment=haystack_growth", only_real,
               "benchmark.sessions=8,24,null", "arm=long_context_budget", "arm.budget=128000",
               "arm.name=long_context"),
    ]  # fmt: skip
    assert models.calls.get("reader", 0) == answers_before  # read only: no answer was asked for
    out = {}
    for f in folders:
        manifest = json.loads((f / "manifest.json").read_text())
        key = (manifest["config"]["arm"]["name"], manifest["config"]["benchmark"]["sessions"])
        out[key] = {
            "summary": json.loads((f / "summary.json").read_text()),
            "predictions": jsonl(f / "predictions.jsonl"),
        }
    return out


def test_growth_reads_without_answering(growth) -> None:
    assert len(growth) == 6
    for run in growth.values():
        (record,) = run["predictions"].values()
        assert record["prediction"] is None and record["context_tokens"] > 0
        assert run["summary"]["read_only"] is True and run["summary"]["scores"] == {}
    sizes = {k: r["predictions"][REAL]["meta"]["haystack_sessions"] for k, r in growth.items()}
    assert sizes[("pmem_turns", 8)] == 8 and sizes[("pmem_turns", None)] == 53
    long = [growth[("long_context", n)]["summary"]["read"]["mean_tokens"] for n in (8, 24, None)]
    turns = [growth[("pmem_turns", n)]["summary"]["read"]["mean_tokens"] for n in (8, 24, None)]
    assert long[0] < long[1] < long[2] and long[2] > 10 * long[0] / 2  # grows with the haystack
    assert all(r["predictions"][REAL]["context_items"] == 12 for k, r in growth.items()
               if k[0] == "pmem_turns")  # fmt: skip
    assert max(turns) < long[0]  # twelve turns: flat, and below the smallest haystack


def test_growth_table_renders(growth, workspace: Path) -> None:
    root, out = workspace / "runs", workspace / "results"
    md = tables_longmemeval.build("haystack_growth", root, out, include_scripted=True)
    assert "§4.1.1" in md and "tokens / added session" in md and "~106k" in md
    assert "53 sessions" in md and "8 sessions" in md
    assert (out / "figures" / "haystack_growth.png").exists()


# ------------------------------------------------------------------ D's 35B-extractor rows


@pytest.fixture(scope="module")
def writer_runs(workspace: Path, server: tuple[ConceptServer, Models]) -> Path:
    """Tables 10 and 11 with the reader's own write path and with writer=vllm35b."""
    s, _ = server
    for experiment in ("table10", "table11"):
        bench(
            workspace, s, "-m", f"experiment={experiment}", "arm=pmem_turns,pmem_materialized_full"
        )
        bench(
            workspace, s, f"experiment={experiment}", "writer=vllm35b", "arm=pmem_materialized_full"
        )
    return workspace / "runs"


def test_a_writer_of_its_own_is_a_row_of_its_own(writer_runs: Path, server, workspace) -> None:
    _, models = server
    # the 35B writer extracted; the reader's model extracted for the other run
    assert models.calls.get(f"extract:{WRITER_35B}", 0) >= 1
    assert models.calls.get("extract:scripted", 0) >= 1
    out = workspace / "results"
    table10 = tables_longmemeval.build("table10", writer_runs, out, include_scripted=True)
    rows = {line.split("|")[1].strip(): line for line in table10.splitlines() if "|" in line}
    assert "not run" not in rows["35B extractor"]  # our run sits in the paper's 35B row
    assert "not run" not in rows["Materialized state"]
    assert "not run" in rows["Twelve-cell read, 35B extractor"]  # a paper row without a run
    # App. D's "52.6%/16.7% at threshold 0.70" names no writer: never the 35B row, and marked
    assert "52.6" not in rows.get("Twelve-cell read, 35B extractor, merge 0.70", "")
    merged = rows["Twelve-cell read, merge 0.70"]
    assert "not run / 52.6†" in merged and "not run / 16.7†" in merged
    assert "† App. D's twelve-cell read at threshold 0.70 (52.6/16.7): writer not stated" in table10
    table11 = tables_longmemeval.build("table11", writer_runs, out, include_scripted=True)
    header = next(line for line in table11.splitlines() if line.startswith("| per history"))
    assert f"writer {WRITER_35B}" in header and "the reader's model writes" in header


def test_the_local_all_arms_table_renders(workspace: Path, server) -> None:
    s, _ = server
    bench(workspace, s, "-m", "experiment=longmemeval_local", f"benchmark.ids=[{REAL}]",
          "arm=no_memory,pmem_turns,pmem_turns_pruned")  # fmt: skip
    md = tables_longmemeval.build(
        "longmemeval_local", workspace / "runs", workspace / "results", include_scripted=True
    )
    first = md.split("## Every arm on every shipped instance")[0]
    rows = {line.split("|")[1].strip(): line for line in first.splitlines() if line.count("|") > 5}
    assert "correct" in rows["P-Mem, turn read"] and "wrong" in rows["No memory"]
    assert "What degree did I graduate with?" in md
    assert rows["P-Mem, turn read"].split("|")[2].strip() == "53"  # the whole haystack was read


def test_the_local_table_counts_every_arm_over_every_shipped_file(tmp_path: Path, server) -> None:
    """Runs of one arm on two files are two results (the file is part of the cell), and the
    every-instance section sums them per arm with n, the types and the files it covers."""
    s, _ = server
    oracle, _ = EXTRA_FILES["oracle"]
    arms = "arm=no_memory,pmem_turns"
    # the shipped file as the script reads it: by default, no path named (`data` is empty)
    _bench(tmp_path, s, "-m", "experiment=longmemeval_local", arms, data="default")
    _bench(tmp_path, s, "-m", "experiment=longmemeval_local", arms, "benchmark.variant=oracle",
           data=oracle)  # fmt: skip
    md = tables_longmemeval.build(
        "longmemeval_local", tmp_path / "runs", tmp_path / "results", include_scripted=True
    )
    first, every = md.split("## Every arm on every shipped instance")
    assert "What degree did I graduate with?" in first  # the one-question runs only
    assert [line.split("|")[1].strip() for line in first.splitlines() if line.startswith("| ")][
        1:
    ] == ["No memory", "P-Mem, turn read"]  # one row each: the oracle file's runs are not in it
    row = table_row(every, "pmem_turns")
    assert row["n"] == "9" and row["files"] == f"{oracle.name}, {DATA_FILE.name}"
    assert row["single-session-user"].endswith("/1") and row["temporal-reasoning"].endswith("/3")
    assert row["multi-session"].endswith("/3") and row["abstention"].endswith("/1")
    judged = sum(int(row[t].split("/")[0]) for t in row if t in OFFICIAL_TYPES)
    assert judged == int(row["correct"].split("/")[0])
    assert table_row(every, "no_memory")["n"] == "9"
    every, answered = every.split("## What each arm answered")
    answered = answered.split("\n## ")[0]  # the stages' section follows
    # rows of equal n in arm order, so a run added later moves only its own row
    arms = [line.split("|")[1].strip() for line in every.splitlines() if line.startswith("| ")]
    assert arms[1:] == ["No memory", "P-Mem, turn read"]
    # the answers section: every verdict above is one arm in one of its rows, under its own
    # file and question, so a reader can check each against the gold
    lines = [line for line in answered.splitlines() if line.startswith("| ")]
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    assert header == ["file", "question", "gold", "judge", "by hand", "why (by hand)", "answer",
                      "arms"]  # fmt: skip
    rows = [dict(zip(header, (c.strip() for c in line.strip("|").split("|")), strict=True))
            for line in lines[1:]]  # fmt: skip
    given: dict[tuple[str, str], list[str]] = {}
    for r in rows:
        given.setdefault((r["file"], r["question"].split()[0]), []).extend(r["arms"].split("; "))
    assert len(given) == 9  # the oracle file's 8 questions and the shipped one
    assert all(sorted(a) == ["No memory", "P-Mem, turn read"] for a in given.values())
    for arm in ("no_memory", "pmem_turns"):
        name = display_name(arm)
        credited = sum(r["arms"].split("; ").count(name) for r in rows if r["judge"] == "correct")
        assert f"{credited}/" in table_row(every, arm)["correct"]


def test_an_answer_cell_is_one_markdown_safe_line() -> None:
    from benchmarks.longmemeval.tables.shipped import _cell

    assert _cell("a | b\n\n  c", 20) == "a \\| b c"
    assert _cell("x" * 30, 10) == "x" * 8 + " …"
    # a long worked answer keeps its result
    worked = "Let's assume the current year is 2022. " * 5 + "Therefore, you will be 3 years old."
    cell = _cell(worked, 80, 30)
    assert len(cell) <= 80 and cell.startswith("Let's assume") and cell.endswith("3 years old.")
