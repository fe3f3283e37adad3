"""Response-cache dumps: a long run resumed on another machine pays nothing twice. A real
client against the scripted server over HTTP fills one machine's cache; its dump, loaded into a
fresh cache, answers the same requests with no HTTP request."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from benchmarks.models.cache import BadDump, ResponseCache
from benchmarks.models.client import ChatModel, Embedder, Endpoint, run_sync
from benchmarks.models.scripted import ScriptedServer

RULES = [(r"capital of (\w+)", r"The capital of \1 is X.")]


def test_a_run_resumed_from_a_dump_on_a_fresh_machine_pays_nothing(tmp_path: Path) -> None:
    questions = [f"capital of {c}" for c in ("Peru", "Chile", "Laos")]
    with ScriptedServer(RULES, models=["chat", "embed"]) as server:
        with ResponseCache(tmp_path / "here.sqlite") as here:
            chat = ChatModel(Endpoint(server.base_url, "chat"), "reader", here)
            first = [run_sync(chat.complete(q)).text for q in questions]
            embed = Embedder(Endpoint(server.base_url, "embed"), "embedder", here)
            vectors = run_sync(embed.embed(questions, "passage"))
            assert here.dump(tmp_path / "dump.jsonl.gz") == len(here) == 6
        paid = server.count()
        with ResponseCache(tmp_path / "elsewhere.sqlite") as elsewhere:
            assert elsewhere.load(tmp_path / "dump.jsonl.gz") == (6, 0)
            chat = ChatModel(Endpoint(server.base_url, "chat"), "reader", elsewhere)
            again = [run_sync(chat.complete(q)) for q in questions]
            embed = Embedder(Endpoint(server.base_url, "embed"), "embedder", elsewhere)
            assert np.array_equal(run_sync(embed.embed(questions, "passage")), vectors)
            assert server.count() == paid, "the resumed run made HTTP requests"
            assert [r.text for r in again] == first and all(r.cached for r in again)
            # loading it twice adds nothing; the dump of the loaded cache is the same bytes
            assert elsewhere.load(tmp_path / "dump.jsonl.gz") == (0, 6)
            elsewhere.dump(tmp_path / "again.jsonl.gz")
    assert (tmp_path / "again.jsonl.gz").read_bytes() == (tmp_path / "dump.jsonl.gz").read_bytes()


def test_an_imported_entry_never_replaces_one_the_cache_holds(tmp_path: Path) -> None:
    key = "a" * 64
    with ResponseCache(tmp_path / "a.sqlite") as a:
        a.put(key, {"text": "theirs"}, kind="chat", model="m")
        a.put("b" * 64, {"text": "new"}, kind="chat", model="m")
        a.dump(tmp_path / "d.jsonl.gz")
    with ResponseCache(tmp_path / "b.sqlite") as b:
        b.put(key, {"text": "ours"}, kind="chat", model="m")
        assert b.load(tmp_path / "d.jsonl.gz") == (1, 1)
        assert b.get(key) == {"text": "ours"} and b.get("b" * 64) == {"text": "new"}


def test_since_keeps_only_the_newer_entries(tmp_path: Path) -> None:
    with ResponseCache(tmp_path / "c.sqlite") as c:
        c.put("a" * 64, 1, kind="chat", model="m")
        time.sleep(0.01)
        cut = time.time()
        c.put("b" * 64, 2, kind="chat", model="m")
        assert c.dump(tmp_path / "d.jsonl.gz", since=cut) == 1
        c.put("e" * 64, [0.5], kind="embedding", model="e")
        assert c.dump(tmp_path / "k.jsonl.gz", kinds=["chat"]) == 2
        assert c.dump(tmp_path / "k.jsonl.gz", kinds=["embedding", "tokenize"]) == 1
    lines = gzip.decompress((tmp_path / "d.jsonl.gz").read_bytes()).decode().splitlines()
    assert [json.loads(line)["key"] for line in lines] == ["b" * 64]


def _entry(**change: object) -> bytes:
    """A gzipped dump of one entry, good but for `change`."""
    entry = {"key": "f" * 64, "kind": "chat", "model": "m", "request": None, "response": "1",
             "created": 0.0, **change}  # fmt: skip
    return gzip.compress(json.dumps(entry).encode() + b"\n")


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (b"not gzip at all", "not a gzipped cache dump"),
        (gzip.compress(b'{"key": "x"}\n'), "line 1: not a cache entry (needs key, kind, model"),
        (gzip.compress(b"[1, 2]\n"), "line 1: not a cache entry"),
        (_entry(key="g" * 64), "line 1: key must be a sha256 hex digest"),
        (_entry(kind=None), "line 1: kind, model and response must be texts"),
        (_entry(request={"body": 1}), "line 1: request must be a JSON text or null"),
        (_entry(created="now"), "line 1: created must be a unix time"),
        (
            gzip.compress(
                json.dumps(
                    {
                        "key": "short",
                        "kind": "",
                        "model": "",
                        "request": None,
                        "response": "1",
                        "created": 0.0,
                    }
                ).encode()
            ),
            "line 1: key must be a sha256 hex",
        ),
    ],
)
def test_a_bad_dump_adds_nothing_and_says_which_line(tmp_path: Path, content: bytes,
                                                     says: str) -> None:  # fmt: skip
    good = json.dumps({"key": "c" * 64, "kind": "chat", "model": "m", "request": None,
                       "response": "2", "created": 0.0})  # fmt: skip
    bad = tmp_path / "bad.jsonl.gz"
    if content.startswith(b"\x1f\x8b"):  # a good line first: it must not be added either
        content = gzip.compress(good.encode() + b"\n" + gzip.decompress(content))
        says = says.replace("line 1", "line 2")
    bad.write_bytes(content)
    with ResponseCache(tmp_path / "c.sqlite") as c:
        with pytest.raises(BadDump, match=says.replace("(", r"\(")):
            c.load(bad)
        assert len(c) == 0
        c.put("e" * 64, 1, kind="chat", model="m")  # the cache still takes writes, and keeps them
    with ResponseCache(tmp_path / "c.sqlite") as c:
        assert c.get("e" * 64) == 1 and len(c) == 1
    out = subprocess.run(
        [sys.executable, "-m", "benchmarks.models.cache", "import", str(bad), "--cache",
         str(tmp_path / "c.sqlite")], capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert out.stderr.count("\n") == 1 and "nothing of it was added" in out.stderr


def test_a_dump_refreshed_and_stopped_mid_write_leaves_the_previous_one_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stage script rewrites its dump while a run goes on: a rewrite stopped before its
    file is in place (Ctrl-C here) leaves the last good dump and no stray file behind."""
    out = tmp_path / "d.jsonl.gz"
    with ResponseCache(tmp_path / "c.sqlite") as c:
        c.put("a" * 64, {"x": 1}, kind="chat", model="m", request={"body": 1})
        assert c.dump(out) == 1
        good = out.read_bytes()
        c.put("b" * 64, {"x": 2}, kind="chat", model="m", request={"body": 2})

        def stopped(*_: object) -> None:
            raise KeyboardInterrupt

        with monkeypatch.context() as m:
            m.setattr("os.replace", stopped)
            with pytest.raises(KeyboardInterrupt):
                c.dump(out)
        assert out.read_bytes() == good
        assert [p.name for p in tmp_path.glob("*d.jsonl.gz*")] == ["d.jsonl.gz"], "no stray file"
        assert c.dump(out) == 2
    assert len(gzip.decompress(out.read_bytes()).splitlines()) == 2
    assert oct(out.stat().st_mode & 0o777) == oct(0o644)


def test_the_command_line_round_trip(tmp_path: Path) -> None:
    with ResponseCache(tmp_path / "c.sqlite") as c:
        c.put("d" * 64, {"x": 1}, kind="chat", model="m", request={"body": 1})

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "benchmarks.models.cache", *args],
                              capture_output=True, text=True, timeout=60)  # fmt: skip

    out = cli(
        "export",
        str(tmp_path / "d.jsonl.gz"),
        "--cache",
        str(tmp_path / "c.sqlite"),
        "--kind",
        "chat",
    )
    assert out.returncode == 0 and out.stdout.startswith("wrote 1 entries to"), out.stderr
    out = cli("import", str(tmp_path / "d.jsonl.gz"), "--cache", str(tmp_path / "n.sqlite"))
    assert out.returncode == 0 and "1 entries added" in out.stdout, out.stderr
    with ResponseCache(tmp_path / "n.sqlite") as n:
        assert n.get("d" * 64) == {"x": 1}
    out = cli("export", str(tmp_path / "e.jsonl.gz"), "--cache", str(tmp_path / "none.sqlite"))
    assert out.returncode == 2 and "no such cache" in out.stderr
    assert not (tmp_path / "none.sqlite").exists()
    out = cli("export", str(tmp_path / "e.jsonl.gz"), "--cache", str(tmp_path / "c.sqlite"),
              "--since", "yesterday")  # fmt: skip
    assert out.returncode == 2 and "not an ISO 8601 time" in out.stderr


def test_kind_chat_carries_the_peer_packages_chat_calls_too(tmp_path: Path) -> None:
    """A peer's ingest (Graphiti, MemoryOS: hours here) is paid through its gateway, which
    stores its calls as gateway-chat and gateway-embeddings; `--kind chat`, the dump a session
    leaves for a run still going, must carry them, or the next machine pays them again."""
    import httpx2 as httpx

    from baselines.peers.gateway import Gateway
    from benchmarks.models.usage import UsageMeter

    peru = {"model": "chat", "messages": [{"role": "user", "content": "capital of Peru"}]}
    with (
        ScriptedServer(RULES, models=["chat", "embed"]) as server,
        ResponseCache(tmp_path / "c.sqlite") as cache,
    ):
        meter = UsageMeter()
        writer = ChatModel(Endpoint(server.base_url, "chat"), "writer", cache, meter)
        embedder = Embedder(Endpoint(server.base_url, "embed"), "embedder", cache, meter)
        with Gateway(writer, embedder) as gw:
            assert httpx.post(f"{gw.base_url}/chat/completions", json=peru).status_code == 200
            emb = {"model": "embed", "input": ["a b"]}
            assert httpx.post(f"{gw.base_url}/embeddings", json=emb).status_code == 200
        run_sync(writer.complete("capital of Chile"))  # and one of the harness's own
    dumped = {}
    for kind in ("chat", "embedding"):
        out = tmp_path / f"{kind}.jsonl.gz"
        done = subprocess.run(
            [sys.executable, "-m", "benchmarks.models.cache", "export", str(out),
             "--cache", str(tmp_path / "c.sqlite"), "--kind", kind],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        lines = gzip.decompress(out.read_bytes()).decode().split("\n")
        dumped[kind] = sorted(json.loads(x)["kind"] for x in lines if x)
    assert dumped == {"chat": ["chat", "gateway-chat"], "embedding": ["gateway-embeddings"]}


@settings(max_examples=30, deadline=None)
@given(st.dictionaries(st.text(min_size=1, max_size=8), st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                               max_size=3), max_leaves=10),
    max_size=6))  # fmt: skip
@example({"line separators": "a\u2028b\u2029c\x85d"})  # JSON leaves these unescaped
def test_any_response_survives_a_dump_and_load(tmp_path_factory, responses: dict) -> None:
    folder = tmp_path_factory.mktemp("dump")
    keys = {f"{i:064x}": value for i, value in enumerate(responses.values())}
    with ResponseCache(folder / "a.sqlite") as a:
        for key, value in keys.items():
            a.put(key, value, kind="chat", model="m", request={"k": key})
        a.dump(folder / "d.jsonl.gz")
    with ResponseCache(folder / "b.sqlite") as b:
        assert b.load(folder / "d.jsonl.gz") == (len(keys), 0)
        assert {key: b.get(key) for key in keys} == keys


def test_a_stored_request_is_the_request_as_sent_its_schema_order_kept(tmp_path: Path) -> None:
    """A grammar-constrained server writes a json_schema's fields in property order, and the
    order changes what the model writes (seen: a replay of a key-sorted copy turned a `revise`
    into a `noop`). The cache keeps the body the server got, so a dump replays the same
    request; the key stays the canonical one, so existing caches still hit."""
    schema = {
        "type": "object",
        "properties": {"op": {"type": "string"}, "key": {"type": "string"}},
        "required": ["op", "key"],
    }
    rules = [(r"route (\w+)", r'{"op": "revise", "key": "\1"}')]
    with ScriptedServer(rules, models=["chat"]) as server, ResponseCache(tmp_path / "c.db") as c:
        chat = ChatModel(Endpoint(server.base_url, "chat"), "writer", c)
        reply = run_sync(chat.complete("route mug", schema=schema))
        assert reply.parsed == {"op": "revise", "key": "mug"}
        sent = server.last_body()
        c.dump(tmp_path / "d.jsonl.gz")
    (line,) = gzip.decompress((tmp_path / "d.jsonl.gz").read_bytes()).decode().splitlines()
    stored = json.loads(json.loads(line)["request"])
    assert stored == sent
    properties = stored["response_format"]["json_schema"]["schema"]["properties"]
    assert (
        list(properties)
        == ["op", "key"]
        == list(sent["response_format"]["json_schema"]["schema"]["properties"])
    )
