"""`python -m benchmarks.factconsolidation ...` runs the dataset's CLI (``cli.main``)."""

from benchmarks.factconsolidation.cli import main

raise SystemExit(main())
