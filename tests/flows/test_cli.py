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


def _click_commands():
    def walk(cmd, path):
        yield path, cmd
        for name, sub in getattr(cmd, "commands", {}).items():  # a group
            yield from walk(sub, (*path, name))

    yield from walk(typer.main.get_command(app), ())


def test_help_keeps_every_bracketed_word():
    """Rich markup eats "[sft]" or "[perf.repeats]" written in a help text (issue 24: `perfalign
    --help` read "the stages' hyperparameters: , , ,  in `perfalign config`"). Every bracketed
    word of a command's or option's help must show in its --help."""
    import re

    lost = []
    for path, cmd in _click_commands():
        texts = [cmd.help or ""] + [p.help or "" for p in cmd.params if getattr(p, "help", None)]
        words = {w.replace("\\[", "[") for t in texts for w in re.findall(r"\\?\[[A-Za-z_][\w.]*\]", t)}
        if not words:
            continue
        out = " ".join(CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "250"}).output.split())
        lost += [f"perfalign {' '.join(path)}: {w}" for w in sorted(words) if w not in out]
    assert not lost, lost


def test_one_name_per_concept_across_commands():
    """Issue 24: `--backend` was the sandbox in `sandbox run` but the LLM in `synth generate`;
    `--model` the model trained (grpo), the LLM (synth) and ParEval's execution model (eval score);
    `--seeds` random seeds (grpo) and the seed code's source (synth). Each name now holds one
    meaning wherever it appears."""
    meaning = {"--backend": "bwrap", "--sandbox-backend": "bwrap", "--llm-backend": "gemini",
               "--base-model": "Hub id", "--seeds": "seeds", "--seed-source": "hf:DATASET",
               "--execution-model": "omp"}
    uses: dict[str, list[tuple[str, str]]] = {}
    for path, cmd in _click_commands():
        for p in cmd.params:
            for opt in getattr(p, "opts", []):
                uses.setdefault(opt, []).append((" ".join(path), p.help or ""))
    assert "--model" not in uses and "--sandbox" not in uses, {o: uses.get(o) for o in ("--model", "--sandbox")}
    wrong = [(opt, cmd, text) for opt, word in meaning.items() for cmd, text in uses.get(opt, []) if word not in text]
    assert not wrong, wrong
    assert {c for c, _ in uses["--sandbox-backend"]} >= {"perf build", "synth generate", "eval score"}
    assert [c for c, _ in uses["--backend"]] == ["sandbox run"]


def test_an_error_message_is_printed_as_text_not_markup(tmp_path):
    """A message naming a config table ("[eval]") or a path with brackets keeps its brackets."""
    odd = tmp_path / "[red]x"
    res = CliRunner().invoke(app, ["triplets", "build", "--codecontests", str(odd), "--out", str(tmp_path / "o")])
    assert res.exit_code == 2
    assert f"error: {odd} is not a directory" in " ".join(res.output.split())
