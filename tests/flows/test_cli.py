"""Every `perfalign` command answers --help (the README documents each one)."""
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from perfalign.flows.cli import app

README = (Path(__file__).resolve().parents[2] / "README.md").read_text()


def _commands(group: typer.Typer, prefix=()):
    for cmd in group.registered_commands:
        yield (*prefix, cmd.name or cmd.callback.__name__)
    for sub in group.registered_groups:
        yield (*prefix, sub.name)
        yield from _commands(sub.typer_instance, (*prefix, sub.name))


COMMANDS = list(_commands(app))


def test_command_set():
    assert {" ".join(c) for c in COMMANDS} >= {
        "sandbox run", "sandbox doctor", "perf build", "publish", "synth generate", "triplets build",
        "train sft", "train reward", "train rlpf", "train dpa", "align", "eval", "pipeline", "config",
        "status", "ui", "deploy"}


@pytest.mark.parametrize("cmd", COMMANDS, ids=lambda c: " ".join(c))
def test_help_and_readme(cmd):
    res = CliRunner().invoke(app, [*cmd, "--help"])
    assert res.exit_code == 0, res.output
    assert "Usage" in res.output
    assert f"perfalign {' '.join(cmd)}" in README, f"README does not document `perfalign {' '.join(cmd)}`"
