"""The one typed configuration (config/tables.py): each table is a stage library's dataclass
(its defaults), profiles are files holding only what differs, --set and flags go on top; types,
ranges and choices are checked where values enter; origins recorded; no default written twice."""
from __future__ import annotations

import dataclasses
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

from perfalign.config.tables import (
    DEFAULT_PROFILE,
    LINKS,
    PROFILES_DIR,
    TABLES,
    ConfigError,
    PerfalignConfig,
    defaults,
    flatten,
    load_config,
    settings,
)

ROOT = Path(__file__).resolve().parents[2]


def test_values_are_typed_and_remember_their_origin():
    cfg = load_config(profile="embedded", overrides=["perf.repeats=5", "eval.tasks=['pareval']"],
                      flags={"sandbox.workers": 3, "perf.source": None})
    assert cfg.perf.repeats == 5 and cfg.eval.tasks == ("pareval",) and cfg.sandbox.worker_count() == 3
    assert isinstance(cfg.perf.time_limit_factor, float)
    assert cfg.origins["perf.repeats"] == "--set" and cfg.origins["sandbox.workers"] == "--workers"
    assert cfg.origins["synth.n"] == "profile embedded" and "perf.batch_size" not in cfg.origins
    explained = cfg.explain()
    assert explained["perf"]["batch_size"] == {"value": 8, "from": "default"}
    # linked settings follow their source, for every stage alike
    assert explained["synth"]["repeats"] == {"value": 5, "from": "= perf.repeats"} and cfg.synth.repeats == 5
    assert "workers" not in settings("eval") and "verify_workers" not in settings("synth")  # one [sandbox]
    assert cfg.sft.model_name_or_path == cfg.reward.model_name_or_path == "embedded"
    # a relative flag path is the shell's; "none" unsets an optional setting
    assert load_config(flags={"perf.source": "rel/dir"}).perf.source == str(Path.cwd() / "rel" / "dir")
    assert load_config(overrides=["eval.max_prompts_per_task=none"]).eval.max_prompts_per_task is None
    # round trip through a flow parameter / the run state
    assert PerfalignConfig.from_dict(json.loads(json.dumps(cfg.to_dict()))) == cfg


@pytest.mark.parametrize("key", ["perf.source", "synth.seeds", "eval.pareval_dir", "eval.polybench_dir",
                                 "eval.kernelbench_dir", "grpo.polybench_dir"])
def test_a_path_resolves_alike_from_set_and_flag_against_the_current_directory(key, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mydata").mkdir()  # some settings are checked to exist
    by_set = load_config(overrides=[f"{key}=mydata"])
    by_flag = load_config(flags={key: "mydata"})
    table, name = key.split(".")
    assert getattr(getattr(by_set, table), name) == getattr(getattr(by_flag, table), name) == str(tmp_path / "mydata")


def test_set_takes_a_list_as_its_flag_does():
    assert load_config(overrides=["eval.tasks=pareval,polybench"]).eval.tasks == ("pareval", "polybench")
    assert load_config(overrides=["eval.tasks=['pareval']"]).eval.tasks == ("pareval",)
    with pytest.raises(ConfigError, match=r"a,b with --set"):
        load_config(overrides=["eval.tasks='pareval'"])  # a quoted string is a string


def test_the_bundled_profiles_name_the_bundled_data_relative_to_their_file():
    source = Path(load_config(profile="embedded").perf.source)
    assert source == ROOT / "data" / "codecontests_sample" / "data" and source.is_dir()


@pytest.mark.parametrize("override, message", [
    ("perf.repeats=three", "expected int"),
    ("perf.repeats=0", "repeats must be >= 1"),
    ("perf.repeats=-3", "repeats must be >= 1"),
    ("sandbox.backend=nonsense", "unknown sandbox backend"),
    ("sandbox.workers=-1", "workers must be >= 0"),
    ("eval.tasks=['no-such-suite']", "unknown or no tasks"),
    ("eval.top_p=1.5", "top_p in"),
    ("triplets.sft_fraction=1.5", r"must be in \[0, 1\]"),
    ("triplets.small_groups='drop'", "small_groups"),
    ("synth.backend='claude'", "backend must be one of"),
    ("align.stages=['sft','ppo']", "unknown or no stages"),
    ("rlpf.kl_estimator='k2'", "kl_estimator"),
    ("kernel.device='tpu'", "device must be cpu or cuda"),
    ("triplets.controlled_task=1", "expected bool"),
    ("eval.tasks='pareval'", "list of strs"),
    ("perf.nope=1", "unknown setting"),
    ("synth.repeats=2", r"set by perf\.repeats"),       # a linked setting has one home
    ("sft.output_dir='x'", "unknown setting"),           # a run's path is not a setting
    ("nope", "table.key=value"),
])
def test_bad_values_are_one_line_errors_where_they_enter(override, message):
    with pytest.raises(ConfigError, match=message) as e:
        load_config(overrides=[override])
    assert "\n" not in str(e.value)


def test_profiles_are_files_and_unknown_ones_are_refused(tmp_path):
    assert {"embedded", "production"} <= {p.stem for p in PROFILES_DIR.glob("*.toml")}
    with pytest.raises(ConfigError, match="unknown profile 'laptop'"):
        load_config(profile="laptop")
    mine = tmp_path / "mine.toml"
    mine.write_text("[perf]\nrepeats = 7\nsource = 'src'\n")
    cfg = load_config(mine)
    assert cfg.perf.repeats == 7 and cfg.origins["perf.repeats"] == str(mine)
    assert cfg.perf.source == str(tmp_path / "src")  # a file's relative path is the file's
    mine.write_text("[extra]\nx = 1\n")
    with pytest.raises(ConfigError, match="unknown table"):
        load_config(mine)


@pytest.mark.parametrize("profile", sorted(p.stem for p in PROFILES_DIR.glob("*.toml")))
def test_a_profile_holds_only_what_differs_from_the_dataclasses(profile):
    values = tomllib.loads((PROFILES_DIR / f"{profile}.toml").read_text())
    for table, kv in values.items():
        assert table in TABLES, table
        known, dflt = settings(table), defaults(table)
        for key, value in flatten(kv).items():
            assert key in known, f"{profile}: {table}.{key} is not a setting"
            if key in dflt:
                v = list(value) if isinstance(value, (list, tuple)) else value
                assert v != dflt[key], f"{profile}: {table}.{key} = {value!r} repeats the dataclass default"


def test_no_dataclass_repeats_a_default_it_inherits():
    """A default lives in one class: no table's dataclass (nor a base of one) re-declares a field
    with the default its nearest dataclass base already gives it (the profiles: tested above)."""
    classes = {c for t in TABLES.values() for c in t.__mro__ if dataclasses.is_dataclass(c)}
    repeated = []
    for cls in classes:
        base = next((b for b in cls.__mro__[1:] if dataclasses.is_dataclass(b)), None)
        inherited = {f.name: f.default for f in dataclasses.fields(base)} if base else {}
        for name in vars(cls).get("__annotations__", {}):
            mine = cls.__dataclass_fields__.get(name)
            if mine and inherited.get(name, dataclasses.MISSING) is not dataclasses.MISSING \
                    and inherited[name] == mine.default:
                repeated.append(f"{cls.__name__}.{name} = {mine.default!r} (as in {base.__name__})")
    assert not repeated, repeated


def test_production_is_the_library_defaults():
    prod = load_config(profile="production")
    from perfalign.alignment.sft import SFTStageConfig
    from perfalign.evaluation.config import EvalConfig

    assert prod.sft.learning_rate == SFTStageConfig.learning_rate and prod.sft.bf16 is None  # auto: bf16 on a GPU
    assert prod.eval.num_samples == EvalConfig.num_samples == 20 and prod.eval.omp_threads == 8
    assert all(o.startswith("profile production") for k, o in prod.origins.items())
    # only the paper's 10k Stack pairs differ (GRPO's defaults are its GPU run, as every table's)
    assert {k.split(".")[0] for k in prod.origins} == {"synth"}


def test_embedded_profile_keeps_the_values_the_python_presets_had():
    """The embedded profile (config/profiles/embedded.toml) holds the values sized for the
    10-minute main job (docs/results.md#the-main-job): 3 prompts per task, 16 synthetic pairs,
    5 tests per problem, stages and models side by side, batches by length."""
    cfg = load_config(profile="embedded")
    for s in ("sft", "reward", "rlpf", "dpa"):
        c = getattr(cfg, s)
        assert (c.use_bf16, c.use_cpu, c.activation_checkpointing, c.max_length, c.torch_threads) \
            == (False, True, False, 512, 1)
    assert (cfg.sft.learning_rate, cfg.sft.per_device_train_batch_size, cfg.sft.warmup_steps, cfg.sft.eval_before) \
        == (2e-3, 8, 0.05, True)
    assert (cfg.reward.learning_rate, cfg.reward.num_train_epochs) == (1e-3, 3.0)
    assert (cfg.rlpf.learning_rate, cfg.rlpf.num_mini_batches, cfg.rlpf.response_length,
            cfg.rlpf.per_device_eval_batch_size, cfg.rlpf.eval_samples_per_prompt) == (3e-5, 2, 96, 16, 4)
    assert (cfg.dpa.learning_rate, cfg.dpa.per_device_train_batch_size, cfg.dpa.beta) == (1e-4, 4, 0.6)
    e = cfg.eval
    assert (e.num_samples, e.max_prompts_per_task, e.max_new_tokens, e.omp_threads, e.probe.repeats,
            e.probe.max_repeats, e.problem_size) == (3, 3, 128, 2, 3, 5, "reduced")
    assert "controlled" in e.tasks and cfg.triplets.controlled_task and cfg.synth.n == 16 and cfg.synth.seeds is None
    assert (cfg.perf.max_tests, cfg.align.parallel_stages, e.parallel_models) == (5, 2, 2)
    assert {getattr(cfg, s).train_sampling_strategy for s in ("sft", "reward", "dpa")} == {"group_by_length"}


def test_repeats_has_one_default():
    """perf.repeats (runs per test, median kept) is written once: BuildSettings; everything that
    means the same refers to it. (Timed rounds of the harness are another setting.)"""
    # a default: an annotated field or parameter, a CLI option's default (not a call's argument)
    pattern = re.compile(r"\b(contest_)?repeats\s*:[^=]*=\s*\d|Option\(\d+,\s*\"--repeats\"")
    files = [p for top in ("flows", "perfdata", "alignment") for p in (ROOT / top).rglob("*.py")]
    files += [ROOT / "evaluation" / "config.py"]  # (profiles hold values, not defaults: tested above)
    hits = [f"{p.relative_to(ROOT)}:{i}" for p in files for i, line in enumerate(p.read_text().splitlines(), 1)
            if pattern.search(line.split("#")[0])]
    assert hits == ["perfdata/perf.py:" + hits[0].split(":")[1]] and len(hits) == 1, hits
    assert DEFAULT_PROFILE == "embedded"


# Names that more than one config dataclass declares, each a setting of its own table (name -> the
# declaring classes, a class and its subclasses counting once): a trained model's own training and
# sampling, a stage's own inputs, a measuring stage's own protocol and budget.
OWN_SETTINGS = {
    "learning_rate": {"StageConfig", "GrpoRunConfig"}, "bf16": {"StageConfig", "EvalConfig", "GrpoRunConfig"},
    "use_cpu": {"StageConfig", "GrpoRunConfig"}, "torch_threads": {"StageConfig", "EvalConfig", "GrpoRunConfig"},
    "seed": {"StageConfig", "EvalConfig", "SynthConfig", "TripletConfig"},
    "beta": {"DPAStageConfig", "GrpoRunConfig"}, "warmup_steps": {"SFTStageConfig", "GrpoRunConfig"},
    "eval_before": {"RLPFStageConfig", "SFTStageConfig"},
    "train_splits": {"DPAStageConfig", "RewardStageConfig", "RLPFStageConfig"},
    "eval_splits": {"DPAStageConfig", "RewardStageConfig", "RLPFStageConfig"},
    "temperature": {"EvalConfig", "SynthConfig", "RLPFStageConfig", "GrpoRunConfig"},
    "model": {"SynthConfig", "GrpoRunConfig"},                  # the LLM's; the policy's
    "backend": {"SandboxSettings", "SynthConfig"},              # the sandbox's; the LLM's
    "batch_size": {"BuildSettings", "EvalConfig"},              # submissions per task; sequences per generate()
    "languages": {"SynthConfig", "TripletConfig"}, "tasks": {"EvalConfig", "GrpoRunConfig"},
    "polybench_dir": {"EvalConfig", "GrpoRunConfig"}, "problem_size": {"EvalConfig", "GrpoRunConfig"},
    "max_margin": {"PreferenceStageConfig", "TripletConfig"},   # the loss's cap; the dataset's
    "time_limit_s": {"SynthConfig", "ScoreConfig"}, "target_s": {"ProbeSettings", "ScoreConfig"},
    "repeats": {"BuildSettings", "ProbeSettings"},              # runs per test; timed probe rounds
    "clock": {"BuildSettings", "ProbeSettings"},                # the dataset's labels'; evaluation's and GRPO's
    "max_rel_se": {"ProbeSettings", "NoiseGate"}, "target_rel_se": {"ProbeSettings", "NoiseGate"},  # probe; kernel
    "remeasure_above": {"SpeedupPolicy", "RLPFStageConfig"},
}


def _declarations() -> dict[str, set[type]]:
    """Every setting's name -> the dataclasses declaring it (nested ones too; linked fields and a
    run's fields are not settings)."""
    import typing

    out: dict[str, set[type]] = {}

    def walk(cls: type, prefix: str, known: dict) -> None:
        hints = typing.get_type_hints(cls)
        for f in dataclasses.fields(cls):
            if dataclasses.is_dataclass(hints.get(f.name)):
                walk(hints[f.name], f"{prefix}{f.name}.", known)
            elif prefix + f.name in known:
                owner = next(c for c in cls.__mro__ if f.name in vars(c).get("__annotations__", {}))
                out.setdefault(f.name, set()).add(owner)
    for table, cls in TABLES.items():
        walk(cls, "", settings(table))
    return out


def test_no_setting_is_declared_in_two_dataclasses():
    """One setting, one dataclass: a name declared by two config dataclasses (neither a subclass of
    the other) is one of a table's own settings listed above, never one setting written twice (the
    sandbox's backend once had six fields, the probe protocol three copies); and no setting keeps a
    name whose meaning now lives under another one (a synonym)."""
    def repeated(decl: dict[str, set[type]]) -> dict[str, list[str]]:
        out = {}
        for name, classes in decl.items():
            roots = {c.__name__ for c in classes if not any(o is not c and issubclass(c, o) for o in classes)}
            if len(roots) > 1 and roots != OWN_SETTINGS.get(name):
                out[name] = sorted(roots)
        return out

    decl = _declarations()
    assert not repeated(decl), f"settings declared in two dataclasses: {repeated(decl)}"
    from perfalign.evaluation.config import EvalConfig
    from perfalign.grpo.measure import MeasureSettings

    # the check sees a setting written twice (a field of its own in another table), not a subclass's default
    assert repeated({**decl, "backend": decl["backend"] | {EvalConfig}}) == {
        "backend": ["EvalConfig", "SandboxSettings", "SynthConfig"]}
    assert MeasureSettings in decl["repeats"] and not repeated({"repeats": decl["repeats"]})
    synonyms = {"sandbox_backend", "sandbox_workers", "verify_workers", "workers", "retries", "sandbox",
                "timing_repeats", "probe_max_repeats", "probe_target_s", "profile", "profile_name"}
    homes = {name: sorted(c.__name__ for c in cls) for name, cls in _declarations().items() if name in synonyms}
    assert homes == {"workers": ["SandboxSettings"], "retries": ["SandboxSettings"]}, homes


def test_sandbox_settings_reach_every_stage(tmp_path, monkeypatch):
    """Regression: the [sandbox] table never reached RLPF (its reward hard-coded "auto")."""
    from perfalign.flows.align import stage_configs

    cfg = load_config(overrides=["sandbox.backend='docker'", "sandbox.workers=3"])
    rlpf = stage_configs(cfg, str(tmp_path / "t"), str(tmp_path / "w"), None)["rlpf"]
    assert (rlpf.sandbox.backend, rlpf.sandbox.worker_count()) == ("docker", 3)
    import perfalign.flows.perf as perf_flow
    from perfalign.flows import pipeline

    got = {}
    monkeypatch.setattr(perf_flow, "run_build", lambda out, perf, sandbox, **kw: got.update(sandbox=sandbox) or {})

    class Run:  # the run state's stage call, without a run folder's records
        run_dir = tmp_path / "run"

        @staticmethod
        def run_stage(name, key, desc, go):
            return go()

    monkeypatch.setattr(pipeline, "perf_key", lambda cfg, run_dir: ("h", "d"))
    pipeline.stage_perf(cfg, Run())
    assert got["sandbox"] is cfg.sandbox  # perf, synth, eval and GRPO get the object itself
    assert all(LINKS[k][0].split(".")[0] in TABLES for k in LINKS)


def test_production_profile_with_the_embedded_model_trains_the_embedded_model(tmp_path):
    """Regression: flows/align.py dropped base_model="embedded", so the production profile
    silently trained Deepseek-Coder 6.7B."""
    from perfalign.alignment.models import EMBEDDED, PRODUCTION_BASE_MODEL
    from perfalign.flows.align import stage_configs

    cfg = load_config(profile="production", overrides=["align.base_model='embedded'"])
    configs = stage_configs(cfg, str(tmp_path / "t"), str(tmp_path / "w"), None)
    assert configs["sft"].model_name_or_path == EMBEDDED and configs["reward"].model_name_or_path == EMBEDDED
    prod = stage_configs(load_config(profile="production"), str(tmp_path / "t"), str(tmp_path / "w"), None)
    assert prod["sft"].model_name_or_path == PRODUCTION_BASE_MODEL
    assert prod["rlpf"].model_name_or_path == str(tmp_path / "w" / "sft")


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "perfalign.cli", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)


def test_config_command_shows_every_stage_and_refuses_bad_values():
    p = _cli("config", "--json", "--set", "perf.repeats=2")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["profile"] == "embedded"  # the same default profile as every command
    s = out["settings"]
    assert s["perf"]["repeats"] == {"value": 2, "from": "--set"}
    assert set(s) == set(TABLES) and s["sft"]["learning_rate"] == {"value": 2e-3, "from": "profile embedded"}
    assert s["dpa"]["beta"] == {"value": 0.6, "from": "default"} and "trials" in s["kernel"]
    for bad, msg in (("perf.repeats=x", "expected int"), ("perf.repeats=0", "repeats must be >= 1"),
                     ("sandbox.backend=nonsense", "unknown sandbox backend")):
        p = _cli("config", "--set", bad)
        assert p.returncode == 2 and msg in p.stderr and "Traceback" not in p.stderr, p.stderr


def test_a_config_error_is_one_line_in_a_narrow_terminal():
    """Rich would wrap a long error at 80 columns (the unknown-backend error in two lines); an
    error stays one line for a log or a grep, whatever the width."""
    import os

    p = subprocess.run([sys.executable, "-m", "perfalign.cli", "config", "--set", "sandbox.backend=nonsense"],
                       cwd=ROOT, capture_output=True, text=True, timeout=300, env=dict(os.environ, COLUMNS="60"))
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 2 and len(lines) == 1, lines
    assert lines[0].startswith("error: sandbox: unknown sandbox backend 'nonsense'; choose from auto, bwrap, docker")


def test_config_shows_each_settings_doc():
    """`perfalign config --docs`: every setting of every table (nested dataclasses' fields too) has
    a one-line doc from its dataclass field (its comment; for a stage's field that is its TRL
    config's, TRL's help; for a linked one, its source's)."""
    from typer.testing import CliRunner

    from perfalign.cli.main import app

    explained = load_config().explain(docs=True)
    assert set(explained) == set(TABLES)
    undocumented = [f"{t}.{k}" for t, values in explained.items() for k, v in values.items()
                    if not v["doc"] or "\n" in v["doc"]]
    assert not undocumented, f"settings without a one-line doc: {undocumented}"
    assert explained["dpa"]["beta"]["doc"].startswith("beta of Eq. 7")               # ours
    assert explained["kernel"]["gate.max_rel_se"]["doc"] and explained["grpo"]["tiers.format"]["doc"]  # nested
    assert "learning rate" in explained["sft"]["learning_rate"]["doc"]               # TRL's
    assert explained["eval"]["probe.repeats"]["doc"] and explained["grpo"]["measure.peak_n"]["doc"]
    res = CliRunner().invoke(app, ["config", "--docs", "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["settings"]["perf"]["repeats"]["doc"].startswith("runs per test")


def test_options_read_from_source_agree_with_the_dataclasses():
    """The CLI reads option types from the dataclasses' source (to start without torch); they must
    be the settings load_config accepts, with the same types."""
    import typing

    import perfalign.cli.main  # noqa: F401 - registers the commands' options
    from perfalign.cli.options import GENERATED
    from perfalign.config.fields import static_setting
    from perfalign.config.tables import _scalar

    assert {"perf.repeats", "sandbox.backend", "eval.tasks", "grpo.tiers.ok_reward", "kernel.trials"} <= GENERATED
    for key in GENERATED:
        table, name = key.split(".", 1)
        assert name in settings(table), key
        kind, optional = _scalar(settings(table)[name])
        static, static_optional, _ = static_setting(key)
        assert (tuple if typing.get_origin(kind) is tuple else kind) == static and optional == static_optional, key


def test_the_cli_starts_without_the_stage_libraries():
    code = ("import sys, perfalign.cli.main; "
            "print(sorted(m for m in ('torch', 'prefect', 'pyarrow') if m in sys.modules))")
    p = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0 and p.stdout.strip() == "[]", p.stdout + p.stderr


def test_cli_options_come_from_the_dataclasses_and_show_their_key():
    from typer.testing import CliRunner

    from perfalign.cli.main import app

    res = CliRunner().invoke(app, ["perf", "build", "--help"], env={"COLUMNS": "200"})
    assert res.exit_code == 0 and "[perf.repeats]" in res.output and "[sandbox.backend]" in res.output
    assert "--sandbox-backend" in res.output and not re.search(r"\s\.\s*│", res.output)
    res = CliRunner().invoke(app, ["synth", "generate", "--help"], env={"COLUMNS": "200"})
    assert "--sandbox-backend" in res.output and "--sandbox " not in res.output
