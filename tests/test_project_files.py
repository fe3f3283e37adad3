"""The repository's licence and citation files agree with pyproject.toml: LICENSE is the MIT
licence pyproject names, and CITATION.cff (Citation File Format 1.2.0) parses, has the keys the
format requires, cites this version and licence, and prefers the paper it reproduces."""

from __future__ import annotations

import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def test_the_licence_is_the_mit_licence_pyproject_names() -> None:
    text = (ROOT / "LICENSE").read_text()
    assert PROJECT["license"] == "MIT"
    assert text.startswith("MIT License\n")
    assert "Copyright (c) 2026 The P-Mem authors" in text
    assert "Permission is hereby granted, free of charge, to any person obtaining a copy" in text
    assert 'THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND' in text


def test_the_citation_file_cites_this_version_and_prefers_the_paper() -> None:
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert cff["cff-version"] == "1.2.0"
    assert {"cff-version", "message", "title", "authors"} <= cff.keys()
    assert cff["message"].strip() and cff["title"].strip() and cff["authors"]
    assert cff["type"] == "software"
    assert cff["version"] == PROJECT["version"]
    assert cff["license"] == PROJECT["license"]
    paper = cff["preferred-citation"]
    assert paper["type"] == "article" and paper["title"] == "Memory of Memory"
    assert [a["family-names"] for a in paper["authors"]] == ["Qin", "Lu"]
    assert paper["year"] == 2026
