"""`python -m benchmarks.models.local [--check]`: serve the local profile (see `cli`)."""

import sys

from benchmarks.models.local.cli import main

if __name__ == "__main__":
    sys.exit(main())
