"""``python -m benchmarks.longmemeval``: the LongMemEval command line (``cli``)."""

from benchmarks.longmemeval.cli import main

raise SystemExit(main())
