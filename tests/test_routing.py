"""The routing measurement (docs/routing.md): the key variants a small writer names, where each
event of a pool went, and the script that runs the commit arm on the pool route with them."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pandas as pd
from hypothesis import given
from hypothesis import strategies as st

from benchmarks.alfworld_revision.routing import (
    KINDS,
    SYNONYMS,
    classify,
    corrupt,
    key_of,
    plural,
    table,
)

REPO = Path(__file__).resolve().parents[1]


@given(st.sampled_from(sorted(SYNONYMS)), st.integers(0, 10_000))
def test_every_corruption_changes_the_name_it_applies_to(name: str, seed: int) -> None:
    for kind in KINDS[1:]:
        bent = corrupt(name, kind, random.Random(seed))
        assert bent is None or bent != name, (kind, name)
    assert corrupt(name, "exact", random.Random(seed)) == name


def test_the_corruptions_are_the_ones_a_small_writer_makes() -> None:
    rng = random.Random(0)
    assert plural("box") == "boxes" and plural("watch") == "watches" and plural("mug") == "mugs"
    assert corrupt("mug", "synonym", rng) == "cup"
    assert corrupt("mug", "split compound", rng) is None
    assert corrupt("alarmclock", "split compound", rng) == "alarm clock"
    assert corrupt("mug", "numbered", rng).startswith("mug ")
    assert corrupt("mug", "added word", rng).endswith(" mug")
    assert key_of("red mug") == "red_mug.location"


def test_classify_follows_the_commit_arms_audit() -> None:
    routes = [
        ("mug", "mug.location"),  # creates the mug's cell
        ("pen", "pen.location"),
        ("mug", "mug.location"),  # its own cell
        ("mug", "cup.location"),  # a fork: a new cell of its own
        ("mug", "pen.location"),  # into the pen's cell
        ("pen", None),  # not routed
    ]
    assert classify(routes) == [
        "own cell", "own cell", "own cell", "new cell", "other object's cell", None,
    ]  # fmt: skip


def test_the_table_gives_shares_that_sum_to_the_routed_events() -> None:
    rows = [
        {"check": "perfect", "kind": "typo", "outcome": "own cell"},
        {"check": "perfect", "kind": "typo", "outcome": "new cell"},
        {"check": "perfect", "kind": "exact", "outcome": "own cell"},
    ]
    df = table(rows)
    assert list(df["corruption"]) == ["exact", "typo"]
    typo = df[df["corruption"] == "typo"].iloc[0]
    assert (typo["own cell"], typo["new cell"], typo["n"]) == (50.0, 50.0, 2)


def test_the_script_runs_the_commit_arm_on_the_pool(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "scripts/measure_routing.py", "--embedder", "scripted", "--cases", "2",
         "--out", str(tmp_path / "routing"), "--cache", str(tmp_path / "cache.sqlite")],
        capture_output=True, text=True, timeout=300, cwd=REPO,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    df = pd.read_csv(tmp_path / "routing" / "routing.csv")
    assert set(df["corruption"]) == set(KINDS)
    assert set(df["check"]) == {"perfect", "gate alone"}
    perfect = df[df["check"] == "perfect"]
    # a perfect same/different check never merges two objects: only forks remain
    assert (perfect["other object's cell"] == 0).all()
    shares = df[["own cell", "other object's cell", "new cell"]].sum(axis=1)
    assert ((shares - 100).abs() < 0.2).all()
    assert (tmp_path / "routing" / "routing.json").exists()
