"""Every `perfalign` command answers --help (the README documents each one)."""
import os
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from perfalign.cli.main import app

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
    """Rich markup eats "[sft]" or "[perf.repeats]" written in a help text (`perfalign --help`
    would read "the stages' hyperparameters: , , ,  in `perfalign config`"). Every bracketed
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


def test_one_option_name_for_a_directory_written_and_for_a_language():
    """`--out` is the directory a command writes (align and train said --workdir) and `--language`
    the program's language (sandbox run said --lang); the old names stay as hidden aliases."""
    shown: dict[str, set[str]] = {}
    for path, cmd in _click_commands():
        for p in cmd.params:
            if not getattr(p, "hidden", False):
                for opt in getattr(p, "opts", []):
                    shown.setdefault(opt, set()).add(" ".join(path))
    assert not {"--workdir", "--run-dir", "--lang"} & set(shown), {o: shown.get(o) for o in ("--workdir", "--lang")}
    assert {"align", "train sft", "train rlpf", "perf build", "eval"} <= shown["--out"]
    assert {"sandbox run", "eval score"} <= shown["--language"] and "eval" in shown["--align"]
    # the old names still reach the command
    for name in ("--workdir", "--out"):
        res = CliRunner().invoke(app, ["align", "--triplets", "nowhere", name, "w"])
        assert res.exit_code == 2 and "No such option" not in res.output and "nowhere" in res.output, res.output
    assert "missing option --out" in CliRunner().invoke(app, ["align", "--triplets", "nowhere"]).output


def test_flags_show_no_value_placeholder():
    out = CliRunner().invoke(app, ["perf", "build", "--help"], env={"COLUMNS": "200"}).output
    assert "<bool>" not in out and "--json" in out and "<int>" in out


def test_publish_defaults_to_the_pipeline_layout_and_names_its_token_option(tmp_path):
    from perfalign.config.fields import DEFAULT_PROFILE

    out = " ".join(CliRunner().invoke(app, ["publish", "--help"], env={"COLUMNS": "200"}).output.split())
    assert f"runs/{DEFAULT_PROFILE}/codecontests_perf" in out
    folder = tmp_path / "ds"
    folder.mkdir()
    (folder / "README.md").write_text("---\nconfigs: []\n---\n")
    (folder / "t").mkdir()
    (folder / "t" / "t.parquet").write_bytes(b"PAR1")  # never read: the token is checked first
    res = CliRunner().invoke(app, ["publish", "--repo-id", "me/x", "--path", str(folder)],
                             env={"HF_TOKEN": None, "HF_HOME": str(tmp_path / "hf"), "HF_ENDPOINT": None})
    assert res.exit_code == 2 and "--token" in res.output and "HF_TOKEN" in res.output, res.output


def test_a_table_printed_to_a_file_is_not_cut_to_80_columns():
    import subprocess
    import sys

    long_dir = Path("runs", "a-run-directory-with-a-long-name-" * 2)  # a table of ~150 columns
    code = ("from pathlib import Path; from perfalign.cli.app import console; "
            "from perfalign.cli.status import closing_table; "
            f"console.print(closing_table({{'states': {{'codecontests_perf': 'done'}}, 'seconds': {{}}, "
            "'headlines': {'codecontests_perf': '12 problems, 340 submissions measured'}}, "
            f"Path({str(long_dir)!r})))")
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert res.returncode == 0, res.stderr
    assert str(long_dir / "codecontests_perf") in res.stdout and "12 problems, 340 submissions measured" in res.stdout


@pytest.mark.parametrize("module", ["perfalign", "perfalign.cli"])
def test_python_m_runs_the_console_scripts_main(module, tmp_path):
    """`python -m perfalign`, `python -m perfalign.cli` and pyproject's console script run one `main`;
    --help lists the groups in their order and leaves no Prefect state in the working directory."""
    import importlib
    import subprocess
    import sys

    import tomllib

    target = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())
    mod, attr = target["project"]["scripts"]["perfalign"].split(":")
    assert getattr(importlib.import_module(mod), attr) is importlib.import_module("perfalign.cli.main").main
    env = {k: v for k, v in os.environ.items() if k not in ("PERFALIGN_HOME", "PREFECT_HOME")}
    res = subprocess.run([sys.executable, "-m", module, "--help"], cwd=tmp_path, env=dict(env, COLUMNS="120"),
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    groups = [line.split()[1] for line in res.stdout.splitlines() if line.startswith("│ ") and len(line.split()) > 1]
    order = ["sandbox", "perf", "synth", "triplets", "train", "eval", "kernel"]
    assert [g for g in groups if g in order] == order, groups
    assert not (tmp_path / ".perfalign").exists()


def test_a_controlled_folder_is_checked_before_anything_runs(tmp_path):
    """`--controlled` (triplets build, align, eval) names the controlled stage's folder; a folder
    that is not one fails with one line, exit code 2, before Prefect starts or a model loads."""
    res = CliRunner().invoke(app, ["triplets", "build", "--synthetic", str(tmp_path), "--out", str(tmp_path / "o"),
                                   "--controlled", str(tmp_path / "none")])
    assert res.exit_code == 2 and f"{tmp_path / 'none'} is not a directory" in " ".join(res.output.split())
    res = CliRunner().invoke(app, ["align", "--triplets", str(tmp_path), "--out", str(tmp_path / "w"),
                                   "--controlled", str(tmp_path)])
    assert res.exit_code == 2 and "controlled_task.json" in res.output, res.output
