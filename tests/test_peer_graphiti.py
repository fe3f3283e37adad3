"""The Graphiti/Zep arm end to end: the real graphiti-core package over an embedded Kuzu database,
every model call answered by the scripted server on 127.0.0.1 (the network guard in conftest fails
any other connection).

The script answers Graphiti's own prompts (entity extraction, fact extraction, edge
deduplication and contradiction, timestamps, summaries) the way a careful model would, from the
episode text with simple rules, and checks every reply against the JSON schema the request asked
for, so the graph the package builds is a real one: two entities, facts as clauses, and the
contradicted fact invalidated by the later one.
"""

from __future__ import annotations

import ast
import asyncio
import json
import re
import time
from pathlib import Path
from typing import Any

import pytest

from baselines.peers.base import PEER_DIR
from benchmarks.models.client import ChatModel, Embedder, Endpoint
from benchmarks.models.scripted import ScriptedServer
from benchmarks.runner.arm import Services
from benchmarks.runner.types import Event, Question

pytestmark = pytest.mark.peers

graphiti_arm = pytest.importorskip("baselines.peers.graphiti_arm")
pytest.importorskip("graphiti_core")

GraphitiArm = graphiti_arm.GraphitiArm

LLM, EMBED, DIM = "scripted", "scripted-embed", 64
EPISODES = ["Alice lives in Paris.", "Alice moved to Rome; she no longer lives in Paris."]
NOT_NAMES = {"She", "He", "They", "It", "The", "A", "An", "Her", "His", "Their"}


# -- a minimal JSON-schema check (the subset pydantic emits: $ref, anyOf, type, required) -------


def schema_errors(value: Any, schema: dict[str, Any], root: dict[str, Any], at: str = "$") -> list:
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return schema_errors(value, root["$defs"][name], root, at)
    if "anyOf" in schema:
        options = [schema_errors(value, s, root, at) for s in schema["anyOf"]]
        return [] if any(not o for o in options) else [f"{at}: matches no anyOf branch"]
    kind = schema.get("type")
    checks = {
        "object": lambda v: isinstance(v, dict),
        "array": lambda v: isinstance(v, list),
        "string": lambda v: isinstance(v, str),
        "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
        "boolean": lambda v: isinstance(v, bool),
        "null": lambda v: v is None,
    }
    if kind is not None and not checks[kind](value):
        return [f"{at}: {value!r} is not {kind}"]
    errors: list[str] = []
    if kind == "object":
        errors += [f"{at}: missing {k}" for k in schema.get("required", []) if k not in value]
        for key, sub in schema.get("properties", {}).items():
            if key in value:
                errors += schema_errors(value[key], sub, root, f"{at}.{key}")
    if kind == "array" and "items" in schema:
        for i, item in enumerate(value):
            errors += schema_errors(item, schema["items"], root, f"{at}[{i}]")
    return errors


# -- the scripted model: Graphiti's prompts answered by rules over the episode text ------------


def block(text: str, *tags: str) -> str:
    """The content between <TAG> and </TAG> for the first tag present."""
    for tag in tags:
        found = re.search(rf"<{tag}>\s*(.*?)\s*</{tag}>", text, re.S)
        if found:
            return found.group(1)
    raise AssertionError(f"none of {tags} in the prompt")


def literal(text: str) -> Any:
    """A list printed in a prompt, as JSON or as a Python repr."""
    try:
        return json.loads(text)
    except ValueError:
        return ast.literal_eval(text)


def names_in(text: str) -> list[str]:
    """Entity names: runs of capitalized words, pronouns and articles excepted."""
    runs = re.findall(r"\b[A-Z][a-z]+(?:\s+[A-Z][a-z]+)*\b", text)
    return [r for r in dict.fromkeys(runs) if r not in NOT_NAMES]


def clause_facts(text: str, entities: list[str]) -> list[dict[str, Any]]:
    """One edge per (sentence subject, other entity in a clause); the fact is the clause, its
    leading pronoun replaced by the subject."""
    edges = []
    for sentence in re.split(r"(?<=[.!?])\s+", text.strip()):
        present = [e for e in entities if e in sentence]
        if not present:
            continue
        subject = min(present, key=sentence.index)
        for clause in re.split(r";\s*|,\s*and\s+", sentence.rstrip(".!? ")):
            fact = re.sub(r"^(she|he|they)\b", subject, clause.strip(), flags=re.I)
            for target in (e for e in entities if e in clause and e != subject):
                verbs = [w.upper() for w in fact.split()[1:] if w.islower()]
                edges.append(
                    {
                        "source_entity_name": subject,
                        "target_entity_name": target,
                        "relation_type": "_".join(verbs) or "RELATES_TO",
                        "fact": fact + ".",
                        "valid_at": None,
                        "invalid_at": None,
                        "episode_indices": [0],
                    }
                )
    return edges


def contradicts(new: str, old: str) -> bool:
    """A later fact about the same subject that ends or replaces an earlier one."""
    new, old = new.lower().rstrip("."), old.lower().rstrip(".")
    if new.split()[0] != old.split()[0] or "no longer" in old:
        return False
    ended = re.search(r"no longer (.+)$", new)
    if ended and ended.group(1) in old:
        return True
    moved = re.search(r"moved to (\w+)", new)
    place = re.search(r"(?:lives in|moved to) (\w+)", old)
    return bool(moved and place and moved.group(1) != place.group(1))


def iso_z(text: str) -> str:
    return text.strip().split("  ")[0].replace("+00:00", "Z").replace(" ", "T")


class GraphitiModel:
    """The `script` of the scripted server: a reply per Graphiti prompt, schema-checked."""

    def __init__(self) -> None:
        self.kinds: list[str] = []
        self.prompts: list[str] = []
        self.errors: list[str] = []

    def __call__(self, body: dict[str, Any]) -> str:
        assert body["model"] == LLM
        fmt = body.get("response_format") or {}
        user = body["messages"][-1]["content"]
        if fmt.get("type") == "json_schema":
            schema = fmt["json_schema"]["schema"]
        else:  # json_object: Graphiti appends the schema to the prompt
            schema = json.loads(user.rsplit("in the following format:", 1)[1])
        kind = schema.get("title", "?")
        self.kinds.append(kind)
        self.prompts.append(user)
        reply = self.answer(kind, user)
        errors = schema_errors(reply, schema, schema)
        if errors:
            self.errors += [f"{kind}: {e}" for e in errors]
            raise AssertionError(errors)
        return json.dumps(reply)

    def answer(self, kind: str, user: str) -> dict[str, Any]:
        if kind == "ExtractedEntities":
            text = block(user, "TEXT", "CURRENT MESSAGE", "CURRENT_MESSAGE")
            entities = [{"name": n, "entity_type_id": 0} for n in names_in(text)]
            return {"extracted_entities": entities}
        if kind == "ExtractedEdges":
            text = block(user, "CURRENT_MESSAGE", "CURRENT MESSAGE")
            entities = [e["name"] for e in literal(block(user, "ENTITIES"))]
            return {"edges": clause_facts(text, entities)}
        if kind == "NodeResolutions":
            existing = literal(block(user, "EXISTING ENTITIES"))
            by_name = {e["name"].lower(): e["candidate_id"] for e in existing}
            return {
                "entity_resolutions": [
                    {
                        "id": e["id"],
                        "name": e["name"],
                        "duplicate_candidate_id": by_name.get(e["name"].lower(), -1),
                    }
                    for e in literal(block(user, "ENTITIES"))
                ]
            }
        if kind == "EdgeDuplicate":
            existing = literal(block(user, "EXISTING FACTS"))
            candidates = literal(block(user, "FACT INVALIDATION CANDIDATES"))
            new = block(user, "NEW FACT")
            same = [f["idx"] for f in existing if f["fact"].lower() == new.lower()]
            ended = [f["idx"] for f in existing + candidates if contradicts(new, f["fact"])]
            return {"duplicate_facts": same, "contradicted_facts": ended}
        if kind == "EdgeTimestamps":  # present tense: valid from the reference time
            return {"valid_at": iso_z(block(user, "REFERENCE TIME")), "invalid_at": None}
        if kind == "BatchEdgeTimestamps":
            facts = literal(block(user, "FACTS"))
            stamps = [{"valid_at": iso_z(f["reference_time"]), "invalid_at": None} for f in facts]
            return {"timestamps": stamps}
        if kind == "SummarizedEntities":
            messages = block(user, "MESSAGES")
            sentences = re.findall(r"[A-Z][^.;\"]*[.;]", messages)
            summaries = []
            for entity in literal(block(user, "ENTITIES")):
                about = [s for s in sentences if entity["name"] in s]
                if about:
                    summaries.append({"name": entity["name"], "summary": " ".join(about)[:900]})
            return {"summaries": summaries}
        if kind in ("Summary", "SummaryDescription"):
            key = "summary" if kind == "Summary" else "description"
            return {key: " ".join(user.split()[-40:])}
        raise AssertionError(f"unexpected Graphiti prompt kind {kind!r}")


# -- the round trip ---------------------------------------------------------------------------


@pytest.fixture
def arms() -> Any:
    """Arms made by a test, closed and their gateways stopped at teardown, pass or fail (a
    gateway left to the garbage collector at interpreter exit can hang the run)."""
    made: list[Any] = []

    def make(server: ScriptedServer, workdir: Path, **options: Any) -> Any:
        arm = GraphitiArm(services(server), workdir=str(workdir), **options)
        made.append(arm)
        return arm

    yield make
    for arm in made:
        arm.close()
        if arm.gateway is not None:
            arm.gateway.stop()


def services(server: ScriptedServer) -> Services:
    return Services(
        writer=ChatModel(Endpoint(server.base_url, LLM), role="writer"),
        embedder=Embedder(Endpoint(server.base_url, EMBED), role="embedder"),
    )


def question(text: str) -> Question:
    return Question(id="q", text=text, golds=("Rome",))


def test_graphiti_round_trip_invalidates_and_survives_a_snapshot(tmp_path: Path, arms) -> None:
    model = GraphitiModel()
    events = [
        Event(id=f"e{i}", text=text, at=f"2024-01-0{i + 1}") for i, text in enumerate(EPISODES)
    ]
    with ScriptedServer(script=model, models=[LLM, EMBED], embedding_dim=DIM) as server:
        arm = arms(server, tmp_path / "a", k=5)
        assert asyncio.run(arm.endpoints()).embedding_dim == DIM

        async def ingest_and_read() -> tuple[list[dict[str, Any]], Any]:
            seen = []
            for event in events:  # one at a time, to count the calls each episode makes
                chat_before = server.count("/chat/completions")
                start = time.perf_counter()
                await arm.ingest([event])
                seen.append(
                    {
                        "seconds": time.perf_counter() - start,
                        "chat": server.count("/chat/completions") - chat_before,
                        "stats": dict(arm.stats),
                    }
                )
            return seen, await arm.read(question("Where does Alice live now?"))

        steps, context = asyncio.run(ingest_and_read())
        assert not model.errors
        first, second = steps[0]["stats"], steps[1]["stats"]
        # one episode: Alice, Paris and the fact between them
        assert (first["episodes"], first["entity_nodes"], first["edges"]) == (1, 2, 1)
        assert first["invalidated_edges"] == 0
        # the second adds Rome (Alice and Paris are resolved to the existing nodes), two facts,
        # and invalidates "Alice lives in Paris." (kept, not deleted)
        assert (second["episodes"], second["entity_nodes"], second["edges"]) == (2, 3, 3)
        assert second["invalidated_edges"] == 1
        assert {"ExtractedEntities", "ExtractedEdges", "EdgeDuplicate"} <= set(model.kinds)
        assert second["ingest_calls"]["llm:ExtractedEntities"] == 2
        assert second["dated_items"] == 2

        lines = context.text.split("\n")
        facts = [line.split("] ", 1)[-1] for line in lines]
        assert "Alice moved to Rome." in facts and "Alice no longer lives in Paris." in facts
        assert "Alice lives in Paris." not in facts  # current state only
        assert lines[facts.index("Alice moved to Rome.")].startswith("[from 2024-01-02]")
        assert context.meta["shown"] == len(lines) == 2

        # save -> a fresh arm -> load -> search answers from the copied graph
        snapshot = tmp_path / "snapshot"
        snapshot.mkdir()
        assert arm.save(snapshot)
        assert (snapshot / PEER_DIR / graphiti_arm.DB_FILE).exists()
        chat_before = server.count("/chat/completions")
        fresh = arms(server, tmp_path / "b", k=5)
        assert fresh.load(snapshot) and fresh.stats == arm.stats
        again = asyncio.run(fresh.read(question("Where does Alice live now?")))
        assert again.text == context.text
        assert server.count("/chat/completions") == chat_before  # no LLM at search time

        # the same graph read with invalidated edges kept: the superseded fact, dated
        history = arms(server, tmp_path / "c", k=5, current_only=False)
        assert history.load(snapshot)
        old = asyncio.run(history.read(question("Where does Alice live?"))).text
        assert "[from 2024-01-01 until 2024-01-02] Alice lives in Paris." in old.split("\n")

    chat = [s["chat"] for s in steps]
    seconds = [round(s["seconds"], 2) for s in steps]
    print(f"\ngraphiti scripted round trip: chat calls per episode {chat}, seconds {seconds}")
    print(f"calls by kind: {second['ingest_calls']}")


def test_graphiti_json_object_mode_and_undated_items(tmp_path: Path, arms) -> None:
    """The json_object fallback (schema in the prompt) and the message episode type build the
    same graph; undated items get strictly increasing times, so the later fact still
    invalidates the earlier one."""
    model = GraphitiModel()
    events = [Event(id=f"e{i}", text=text) for i, text in enumerate(EPISODES)]
    with ScriptedServer(script=model, models=[LLM, EMBED], embedding_dim=DIM) as server:
        arm = arms(server, tmp_path / "a", structured_output="json_object", source="message")
        asyncio.run(arm.ingest(events))
        assert server.last_body()["response_format"] == {"type": "json_object"}
        context = asyncio.run(arm.read(question("Where does Alice live now?")))
    assert not model.errors
    extraction = model.prompts[model.kinds.index("ExtractedEntities")]
    assert "<CURRENT MESSAGE>" in extraction and "<TEXT>" not in extraction  # source=message
    assert (arm.stats["edges"], arm.stats["invalidated_edges"]) == (3, 1)
    assert "dated_items" not in arm.stats
    assert "Alice moved to Rome." in context.text.split("\n")  # undated: no date prefix
    assert "Alice lives in Paris." not in context.text


def test_graphiti_skips_a_failed_item_but_not_a_configuration_error(tmp_path: Path, arms) -> None:
    model = GraphitiModel()

    def broken_for_bob(body: dict[str, Any]) -> str:
        user = body["messages"][-1]["content"]
        if "<TEXT>" in user and "Bob" in block(user, "TEXT"):  # its entity extraction
            return json.dumps({"extracted_entities": "not a list"})  # JSON, but off-schema
        return model(body)

    events = [Event(id="e0", text="Bob works in Oslo."), Event(id="e1", text=EPISODES[0])]
    with ScriptedServer(script=broken_for_bob, models=[LLM, EMBED], embedding_dim=DIM) as server:
        arm = arms(server, tmp_path / "a")
        asyncio.run(arm.ingest(events))
        assert arm.stats["failed_items"] == {"ValidationError": 1}
        assert (arm.stats["episodes"], arm.stats["edges"]) == (1, 1)  # the good item is in
        # a model the server does not serve is a configuration error: it stops the run
        wrong = Services(
            writer=ChatModel(Endpoint(server.base_url, "no-such-model"), role="writer"),
            embedder=Embedder(Endpoint(server.base_url, EMBED), role="embedder"),
        )
        bad = arms(server, tmp_path / "b")
        bad.services = wrong
        with pytest.raises(Exception, match="no-such-model"):
            asyncio.run(bad.ingest(events[1:]))


def test_graphiti_rejects_unknown_options() -> None:
    with pytest.raises(ValueError, match=r"arm\.source"):
        GraphitiArm(source="json")
    with pytest.raises(ValueError, match=r"arm\.structured_output"):
        GraphitiArm(structured_output="xml")


# -- ALFWorld-Revision: the retraction and conflict probes, with store introspection -----------

# The generator's sentences (benchmarks/alfworld_revision/spec.py) -> (object, locations, fact);
# the fact is what a careful extractor writes: the claim, without the "Update:" label.
HOUSEHOLD = (
    (r"^Earlier observation: (?P<obj>.+?) was in (?P<loc>.+?)\.$", "{obj} was in {loc}."),
    (
        r"^Update: (?P<obj>.+?) has been moved from (?P<a>.+?) to (?P<loc>.+?)\.$",
        "{obj} has been moved from {a} to {loc}.",
    ),
    (r"^Update: (?P<obj>.+?) has been moved to (?P<loc>.+?)\.$", "{obj} has been moved to {loc}."),
    (
        r"^Correction: the report that (?P<obj>.+?) was moved to (?P<loc>.+?) was an error\.$",
        "The report that {obj} was moved to {loc} was an error.",
    ),
    (r"^Report: (?P<obj>.+?) is in (?P<loc>.+?)\.$", "{obj} is in {loc}."),
    (r"^Check: (?P<obj>.+?) is in (?P<loc>.+?)\.$", "A check found {obj} in {loc}."),
)
CLAIMS = (  # a fact -> (kind, object, location)
    (r"^the report that (?P<obj>.+?) was moved to (?P<loc>.+?) was an error", "retracts"),
    (r"^a check found (?P<obj>.+?) in (?P<loc>.+?)$", "checked"),
    (r"^(?P<obj>.+?) is in (?P<loc>.+?)$", "reported"),
    (r"^(?P<obj>.+?) (?:was in|has been moved (?:from .+? )?to) (?P<loc>.+?)$", "at"),
)


def household(sentence: str) -> tuple[list[str], dict[str, Any]] | None:
    """A generator sentence's entities and its one fact edge (object -> location)."""
    for pattern, fact in HOUSEHOLD:
        m = re.match(pattern, sentence.strip())
        if m:
            names = list(dict.fromkeys(v for k, v in m.groupdict().items()))
            edge = {
                "source_entity_name": m["obj"],
                "target_entity_name": m["loc"],
                "relation_type": "LOCATED_IN",
                "fact": fact.format(**m.groupdict()),
                "valid_at": None,
                "invalid_at": None,
                "episode_indices": [0],
            }
            return names, edge
    return None


def claim(fact: str) -> tuple[str, str, str] | None:
    text = fact.strip().rstrip(".").lower()
    for pattern, kind in CLAIMS:
        m = re.match(pattern, text)
        if m:
            return kind, m["obj"], m["loc"]
    return None


class HouseholdModel(GraphitiModel):
    """Graphiti's prompts on ALFWorld-Revision sentences, answered as a careful model would: a
    new location of an object contradicts its earlier one (Graphiti then invalidates the old
    edge and keeps it), a correction contradicts the move it names. `reports_coexist`: two
    uncued reports of one object are both left standing (neither contradicts the other), as a
    model that sees "cannot both be true" only for a move would; the check still settles it."""

    def __init__(self, reports_coexist: bool = False) -> None:
        super().__init__()
        self.reports_coexist = reports_coexist

    def answer(self, kind: str, user: str) -> dict[str, Any]:
        if kind == "ExtractedEntities":
            text = block(user, "TEXT", "CURRENT MESSAGE", "CURRENT_MESSAGE")
            found = household(text)
            names = found[0] if found else []
            return {"extracted_entities": [{"name": n, "entity_type_id": 0} for n in names]}
        if kind == "ExtractedEdges":
            found = household(block(user, "CURRENT_MESSAGE", "CURRENT MESSAGE"))
            return {"edges": [found[1]] if found else []}
        if kind == "EdgeDuplicate":
            existing = literal(block(user, "EXISTING FACTS"))
            candidates = literal(block(user, "FACT INVALIDATION CANDIDATES"))
            new = block(user, "NEW FACT")
            same = [f["idx"] for f in existing if f["fact"].lower() == new.lower()]
            ended = [f["idx"] for f in existing + candidates if self.contradicts(new, f["fact"])]
            return {"duplicate_facts": same, "contradicted_facts": ended}
        if kind == "SummarizedEntities":  # lower-case names: the base rule looks for capitals
            messages = block(user, "MESSAGES")
            summaries = []
            for entity in literal(block(user, "ENTITIES")):
                about = [s for s in re.split(r"(?<=\.)\s+", messages) if entity["name"] in s]
                if about:
                    summaries.append({"name": entity["name"], "summary": " ".join(about)[:300]})
            return {"summaries": summaries}
        return super().answer(kind, user)

    def contradicts(self, new: str, old: str) -> bool:
        a, b = claim(new), claim(old)
        if a is None or b is None or a[1] != b[1] or b[0] == "retracts":
            return False
        if a[0] == "retracts":  # "the report that X was moved to v2 was an error"
            return b[2] == a[2]
        if a[2] == b[2]:
            return False
        return not (self.reports_coexist and a[0] == b[0] == "reported")


def probe_case(probe: str, **options: Any) -> tuple[Any, Any]:
    """The generator's first case of a probe: its final episode and its "-pre" episode."""
    from benchmarks.alfworld_revision import AlfworldRevision

    final, pre = AlfworldRevision(probe=probe, cases=1, **options).episodes()
    assert pre.id == f"{final.id}-pre"
    return final, pre


def test_graphiti_introspection_finds_v1_invalidated_after_a_retraction(tmp_path, arms) -> None:
    """A real retraction case (B.3, d=0) through Graphiti: the erroneous move invalidates v1's
    edge, the correction invalidates v2's; the reader sees neither, but the store still holds
    v1 as an invalidated edge, which the introspection (Kuzu itself) reports and the Table 8
    rule counts as "v1 in store"."""
    from benchmarks.alfworld_revision.tables import store_names

    final, pre = probe_case("retraction", d=0)
    question_pre, question_final = pre.questions[0], final.questions[0]
    v1, v2 = question_final.golds[0], question_pre.golds[0]
    subject = question_final.meta["object"]
    model = HouseholdModel()
    with ScriptedServer(script=model, models=[LLM, EMBED], embedding_dim=DIM) as server:
        arm = arms(server, tmp_path / "a", chunk_size=None, introspect=True)

        async def run() -> tuple[Any, Any]:
            await arm.ingest(pre.events)  # the state the "-pre" question is asked on
            before = await arm.read(question_pre)
            await arm.ingest(final.events[len(pre.events) :])  # the retraction
            return before, await arm.read(question_final)

        before, after = asyncio.run(run())
    assert not model.errors
    assert arm.stats["episodes"] == len(final.events) and "failed_items" not in arm.stats
    store = after.meta["introspection"]
    assert store["store"] == "graphiti" and store["subject"] == subject
    assert store["facts"] and all(subject in " ".join(f["entities"]) for f in store["facts"])
    by_text = {f["text"]: f for f in store["facts"]}
    v1_edge = by_text[f"{subject} was in {v1}."]
    assert not v1_edge["valid"] and v1_edge["invalid_at"] and v1_edge["expired_at"]
    assert not by_text[f"{subject} has been moved to {v2}."]["valid"]  # the correction ended it
    assert store_names(store, v1) is True  # v1 in store: kept as an invalidated edge
    assert store_names(store, v1, valid_only=True) is False  # ... but not current
    # before the retraction the error was committed in the store, v1 already invalidated
    assert store_names(before.meta["introspection"], v2, valid_only=True) is True
    assert store_names(before.meta["introspection"], v1, valid_only=True) is False
    # the reader's context is the current view only: no v1, no introspection in the text
    assert v1 not in after.text and "introspection" not in after.text
    assert store["matched"] == len(store["facts"]) and store["left_out"] == 0


@pytest.mark.parametrize("coexist", [True, False])
def test_graphiti_both_reports_valid_only_when_neither_is_invalidated(
    tmp_path, arms, coexist: bool
) -> None:
    """The conflict probe's "-pre" state (§4.2.3): two uncued reports. When the model leaves
    both standing, both are valid edges ("both reports valid"); when it lets the later one
    contradict the earlier (Graphiti's timestamp arbitration), only one is."""
    from benchmarks.alfworld_revision.tables import store_names

    _, pre = probe_case("conflict")
    question = pre.questions[0]
    first, second = question.meta["candidates"]
    model = HouseholdModel(reports_coexist=coexist)
    with ScriptedServer(script=model, models=[LLM, EMBED], embedding_dim=DIM) as server:
        arm = arms(server, tmp_path / "a", chunk_size=None, introspect=True)
        asyncio.run(arm.ingest(pre.events))
        store = asyncio.run(arm.read(question)).meta["introspection"]
    assert not model.errors
    valid = [store_names(store, c, valid_only=True) for c in (first, second)]
    assert valid == ([True, True] if coexist else [False, True])
    assert store_names(store, first) is True  # invalidated, not deleted
    # the object's edges: its two reports, one invalidated unless they coexist
    assert [f["valid"] for f in store["facts"]] == [coexist, True]


def test_graphiti_introspection_is_refused_by_an_arm_that_cannot_list_its_store() -> None:
    from baselines.peers.base import PeerArm

    class Blind(PeerArm):
        module, extra = "json", "blind"

    with pytest.raises(ValueError, match=r"arm\.introspect"):
        Blind(introspect=True)


def test_graphiti_on_the_conflict_probe_end_to_end(tmp_path: Path) -> None:
    """`pmem-bench experiment=conflict arm=graphiti_alfrev` on one case, then the conflict
    table: the Graphiti row has "both reports valid" from the store (here the model lets both
    reports stand), the paper's 10.7 / 50.0 / 39.3 beside ours, and no "flagged" paper figure
    (the paper's 10.7% is about graphs, not answers)."""
    from tests.peer_runs import build_table, run_probe, table_row, with_reader

    model = HouseholdModel(reports_coexist=True)
    root = tmp_path / "runs"
    script = with_reader(model)
    with ScriptedServer(script=script, models=[LLM, EMBED], embedding_dim=DIM) as server:
        folder = run_probe(
            root, server, "experiment=conflict", "arm=graphiti_alfrev", "benchmark.cases=1"
        )
    assert not model.errors
    lines = (folder / "predictions.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines]
    assert len(records) == 2  # the "-pre" question, on the state before the check; the final
    by_phase = {r["meta"]["phase"]: r for r in records}
    pre = by_phase["pre_resolution"]["context_meta"]
    assert pre["episodes"] == 10 and by_phase["final"]["context_meta"]["episodes"] == 11
    assert pre["introspection"]["subject"] == by_phase["final"]["meta"]["object"]
    row = table_row(build_table(root, "conflict", tmp_path / "out"), "graphiti")
    assert row["both reports valid"] == "100.0 (n=1)"
    assert row["both reports valid (paper)"] == "10.7"
    assert row["pre matches eventual gold (paper)"] == "50.0"
    assert row["settled after (paper)"] == "39.3"
    assert row["flagged before (paper)"] == "–"
    assert row["settled after (ours)"] == "100.0 (n=1)"  # the check settles it: one valid edge


def answers(folder: Path) -> dict[str, Any]:
    """Each question's answer and the store's facts with their validity (no clock fields)."""
    out = {}
    for line in (folder / "predictions.jsonl").read_text().splitlines():
        r = json.loads(line)
        facts = r["context_meta"]["introspection"]["facts"]
        out[r["id"]] = (r["prediction"], sorted((f["text"], f["valid"]) for f in facts))
    return out


def test_a_lost_graphiti_ingest_is_rebuilt_from_the_cache_paying_nothing(tmp_path: Path) -> None:
    """Graphiti's ingest is hours on 2 cores: a run killed before its snapshot was saved must
    rebuild the graph from the response cache. Its requests carry no clock or random id, so
    the rerun's every call is a cache hit, and the graph it rebuilds answers the same."""
    import shutil

    from tests.peer_runs import run_probe, with_reader

    root = tmp_path / "runs"
    model = HouseholdModel(reports_coexist=True)
    args = ("experiment=conflict", "arm=graphiti_alfrev", "benchmark.cases=1")
    with ScriptedServer(script=with_reader(model), models=[LLM, EMBED], embedding_dim=DIM) as s:
        folder = run_probe(root, s, *args)
        first = answers(folder)
        calls = ("/chat/completions", "/embeddings")
        paid = [s.count(c) for c in calls]
        shutil.rmtree(folder)  # nothing of the run survives but the shared response cache
        again = run_probe(root, s, *args)
        # not one chat or embedding request reached the model again (the start-up probe's
        # /models listing is asked anew: it is not a model call)
        assert [s.count(c) for c in calls] == paid and paid[0] > 0
    assert again == folder and answers(again) == first
    ingests = [json.loads(p.read_text()) for p in again.glob("snapshots/*/ingest.json")]
    usage = [u for i in ingests for u in i["usage"].values()]
    assert usage and all(u["calls"] == 0 for u in usage)  # paid nothing: every call a cache hit
    assert sum(u["cache_hits"] for u in usage) > 0
