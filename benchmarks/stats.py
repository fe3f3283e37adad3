"""The design contract's name for the statistics: `benchmarks.stats` is
`benchmarks.scoring.stats`."""

from benchmarks.scoring.stats import *  # noqa: F403
from benchmarks.scoring.stats import __all__  # noqa: F401
