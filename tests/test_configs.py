"""Every config composes, every component target imports, and bad names get a did-you-mean."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hydra import compose, initialize_config_dir
from hydra.utils import get_class
from omegaconf import OmegaConf

from benchmarks.runner.cli import CONFIG_DIR, GROUPS, UsageError, check_overrides, choices


def compose_with(overrides: list[str]):
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        return compose(config_name="config", overrides=overrides, return_hydra_config=False)


@pytest.mark.parametrize(
    "override",
    [f"{g}={c}" for g in GROUPS for c in choices(g)] + ["hydra/launcher=slurm"],
)
def test_every_option_composes(override: str) -> None:
    cfg = compose_with([override])
    resolved = OmegaConf.to_container(cfg, resolve=False)
    assert {"arm", "benchmark", "llm", "scorers", "run"} <= set(resolved)
    for node in (cfg.arm, cfg.benchmark, *cfg.scorers.values()):
        assert get_class(node._target_)  # the target imports
    if cfg.llm.get("server"):
        assert get_class(cfg.llm.server._target_)


def test_experiment_smoke_sets_its_name() -> None:
    cfg = compose_with(["experiment=smoke"])
    assert (cfg.name, cfg.arm.name, cfg.benchmark.name) == ("smoke", "long_context", "smoke")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["arm=long_contxt"], "unknown arm 'long_contxt' (did you mean 'long_context'?)"),
        (["benchmark=smok"], "unknown benchmark 'smok' (did you mean 'smoke'?)"),
        (["llm=zzz"], "valid llm choices:"),
    ],
)
def test_unknown_names_list_the_valid_ones(argv: list[str], message: str) -> None:
    with pytest.raises(UsageError, match="valid") as info:
        check_overrides(argv)
    assert message in str(info.value)


def test_the_command_line_reports_an_unknown_arm_quickly() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "benchmarks.runner.cli", "arm=mem1"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 2
    assert "unknown arm 'mem1'" in out.stderr and "long_context" in out.stderr


def test_a_writer_profile_serves_the_writer_role_alone() -> None:
    """Appendix D/F's writer-scale runs: writer=<profile> builds the stores with its own model
    while the llm profile stays the reader; by default the llm profile serves both."""
    from benchmarks.runner.stack import role_group

    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        plain = OmegaConf.to_container(compose(config_name="config"), resolve=True)
        split = OmegaConf.to_container(
            compose(config_name="config", overrides=["writer=vllm35b"]), resolve=True
        )
    assert "writer" not in plain or plain["writer"] is None
    assert role_group(plain, "writer") == "llm" and role_group(plain, "reader") == "llm"
    assert role_group(split, "writer") == "writer" and role_group(split, "reader") == "llm"
    assert split["writer"]["model"] == "Qwen/Qwen3.6-35B-A3B-FP8"
