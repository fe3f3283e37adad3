"""Benchmark loaders and generators, scorers, statistics and the runner."""
