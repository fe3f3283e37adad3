"""`python -m benchmarks.alfworld_revision ...` runs the generator's CLI (``cli.main``)."""

from benchmarks.alfworld_revision.cli import main

raise SystemExit(main())
