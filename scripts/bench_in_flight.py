"""How many requests the vllm profile keeps in flight on one server, at its defaults.

Starts a scripted OpenAI-compatible server with a fixed latency on 127.0.0.1, points the vllm
profile's chat model at it, runs Table 6's long-context read over 300 generated cases, and
prints the most requests the server held at once. Pass overrides to compare other settings:

    python scripts/bench_in_flight.py                                   # the defaults
    python scripts/bench_in_flight.py run.episode_concurrency=4 llm.concurrency=20   # earlier
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.models.scripted import ScriptedServer

CASES = 300


def main(argv: list[str]) -> int:
    with ScriptedServer(latency_s=0.5) as server, tempfile.TemporaryDirectory() as tmp:
        command = [
            sys.executable, "-m", "benchmarks.runner", "experiment=table6", "arm=long_context",
            "llm=vllm", f"llm.base_url={server.base_url}", "llm.model=scripted",
            "llm.probe.structured=false", "embedder=none", "benchmark.source=scenes",
            f"benchmark.cases={CASES}", "run.progress=false", f"run.root={Path(tmp) / 'runs'}",
            *argv,
        ]  # fmt: skip
        out = subprocess.run(command, capture_output=True, text=True)
        if out.returncode:
            print(out.stderr[-2000:], file=sys.stderr)
            return out.returncode
        print(f"most requests in flight at once: {server.max_in_flight} ({CASES} questions)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
