"""The `perfalign` command line. Sub-commands live beside the code they drive and import
heavy libraries lazily, so `perfalign sandbox run` does not pay for Prefect or torch."""
from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import sys
from pathlib import Path
from typing import Iterator, List, NoReturn, Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from perfalign.sandbox.cli import app as sandbox_app

from . import preflight
from .defaults import DEFAULT_PORT, GRPO_RUN_DIR, NIGHTLY_PERF_CRON, RUNS_ROOT, WEEKLY_PIPELINE_CRON
from .options import DEFAULT_PROFILE, ConfigArgs, config_options
from .runstate import RunDirConflict, StageFailed, check_run_dir, default_run_dir, list_runs, orphans_in_local_db
from .status import closing_table, status_table


def _flags_without_placeholder() -> None:
    """A flag takes no value: show none (typer 0.29 prints `--json <bool>`)."""
    from typer.core import TyperOption

    shown = TyperOption.display_type_rich
    TyperOption.display_type_rich = lambda self, ctx: None if self.is_flag else shown(self, ctx)


_flags_without_placeholder()
app = typer.Typer(
    help="perfalign: teach code LLMs to write faster code (RLPF / DPA).",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
)
app.add_typer(sandbox_app, name="sandbox")


def _group(name: str, help: str, **kwargs) -> typer.Typer:
    """A sub-command group of ``app`` (groups list in --help in the order they are made)."""
    group = typer.Typer(help=help, **(kwargs or {"no_args_is_help": True}))
    app.add_typer(group, name=name)
    return group


perf_app = _group("perf", "CodeContests-Perf: measure every submission, build the dataset.")
synth_app = _group("synth", "Synthetic fast/slow pairs from Stack seeds, verified by execution.")
triplets_app = _group("triplets", "Stratified (problem, fast, slow) triplets and SFT prompts (paper §VII-B).")
train_app = _group("train", "Train one alignment stage: sft, reward, rlpf or dpa.")

# Output to a file or pipe: tables at their full width (Rich would cut them to 80 columns).
console = Console(width=None if sys.stdout.isatty() or os.environ.get("COLUMNS") else 250)
err = Console(stderr=True, soft_wrap=True)  # an error is one line, however narrow the terminal


def _fail(e: object, what: str = "error", code: int = 2) -> NoReturn:
    """One line on stderr, ``what:`` in red and the message as plain text (a message such as
    "[eval] has: ..." is not Rich markup); then exit with ``code``."""
    err.print(f"[red]{what}:[/red] {escape(str(e))}", soft_wrap=True)
    raise typer.Exit(code)


@contextlib.contextmanager
def _failing(*errors: type[BaseException], what: str = "error", code: int = 2) -> Iterator[None]:
    """``errors`` raised in the block end the command through ``_fail``."""
    try:
        yield
    except errors as e:
        _fail(e, what, code)


def _load_config(conf: ConfigArgs):
    """The one typed configuration (flows.config), or a clear error and exit code 2."""
    from perfalign.flows.config import ConfigError, load_config

    with _failing(ConfigError):
        return load_config(conf.config, conf.profile, conf.sets, flags=conf.flags)


def _check_backend(backend: str) -> None:
    """Fail before starting Prefect if the sandbox cannot run here."""
    from perfalign.sandbox import BackendUnavailable
    from perfalign.sandbox.backends import make_backend

    with _failing(BackendUnavailable, ValueError):
        make_backend(backend)


def _str(path: Optional[Path]) -> Optional[str]:
    return str(path) if path else None


def _session(bars: bool = True):
    """flows.session.flow_session, imported only by a command that runs flows (it imports Prefect)."""
    from .session import flow_session

    return flow_session(bars=bars)


@perf_app.command("build")
@config_options("perf.source", "perf.limit_problems", "perf.repeats", "sandbox.workers", "sandbox.backend",
                "perf.time_limit_factor", "perf.max_tests", "perf.batch_size", "perf.allow_partial", "perf.clock",
                "perf.limit_cap")
def perf_build(
    out: Path = typer.Option(..., "--out", help="Output directory (Parquet tables + dataset card)."),
    conf: ConfigArgs = None,
    dask_address: Optional[str] = typer.Option(None, "--dask-address", help="Run tasks on an existing Dask cluster (tcp://host:port)."),
    remeasure_rejects: bool = typer.Option(False, "--remeasure-rejects",
                                           help="Measure again the rejects of earlier runs caused by time (TLE); "
                                                "those that now pass move to the measured submissions."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
) -> None:
    """Run every correct submission on all tests in the sandbox; resumable and incremental.
    Unset options take the profile's values (`perfalign config` shows them)."""
    cfg = _load_config(conf)
    _preflight("check_sources", [("source", cfg.perf.source)])
    _check_source_files(cfg.perf.source, cfg.perf.allow_partial)
    _check_backend(cfg.sandbox.backend)
    from prefect.exceptions import FailedRun

    from perfalign.flows.perf import already_built, run_build
    from perfalign.flows.pipeline import perf_parameters
    from perfalign.perfdata.perf import SourceUnreadable
    from perfalign.sandbox.clock import ClockMismatch

    params = perf_parameters(cfg)
    params.pop("max_in_flight")  # run_build's, from the task runner it picks
    with _failing(SourceUnreadable, ClockMismatch, code=1):  # as the flow fails on them
        summary = already_built(out=str(out), remeasure_rejects=remeasure_rejects, **params)
    if summary is None:
        with _session(bars=not as_json), _failing(FailedRun, code=1):  # e.g. a source file found damaged
            summary = run_build(out=str(out), workers=cfg.sandbox.workers or None, dask_address=dask_address,
                                remeasure_rejects=remeasure_rejects, **params)
    if as_json:
        print(json.dumps(summary))
    else:
        print_perf_summary(summary, out)
    if summary.get("failed_batches"):
        raise typer.Exit(1)


def _check_source_files(source: str, allow_partial: bool) -> None:
    """Source files that cannot be read: one line and exit code 2 before Prefect starts, or,
    with --allow-partial, a warning for each (the build goes on without them)."""
    from perfalign.perfdata.codecontests import SourceUnreadable, check_source_files

    bad = check_source_files(source)
    if bad and not allow_partial:
        _fail(SourceUnreadable(bad))
    for line in bad:
        err.print(f"[bold yellow]SKIPPED (--allow-partial):[/bold yellow] {escape(line)}", soft_wrap=True)


def _preflight(check: str, *args) -> None:
    """A flows.preflight check, before Prefect starts: its failure is one line and exit code 2."""
    with _failing(preflight.PreflightError):
        getattr(preflight, check)(*args)


def print_perf_summary(summary: dict, out: Path) -> None:
    from perfalign.perfdata.perf import error_lines

    st = summary.get("status", {})
    console.print(f"[bold]CodeContests-Perf[/bold] -> {out}")
    console.print(f"problems: {summary['problems']} ({summary['held_out_problems']} held out), "
                  f"malformed rows/items: {summary['errors']}, submissions: {summary['submissions']}")
    for line in error_lines(summary.get("error_reasons", []), summary.get("unreadable_files", [])):
        style = "bold yellow" if line.startswith("SKIPPED") else "yellow"
        console.print(f"  [{style}]{escape(line)}[/{style}]", soft_wrap=True)
    t = Table("language", "measured", "rejected", "unsupported", "not run (incorrect)")
    for lang, d in sorted(summary.get("by_language", {}).items()):
        t.add_row(lang, *(str(d.get(k, 0)) for k in ("measured", "rejected", "unsupported", "not_run")))
    t.add_row("[bold]all[/bold]", *(str(st.get(k, 0)) for k in ("measured", "rejected", "unsupported", "not_run")))
    console.print(t)
    console.print(f"test executions: {summary['test_executions']}, skipped (already measured): "
                  f"{summary.get('resumed_skipped', 0)}, wall time: {summary.get('wall_seconds', 0):.1f} s")
    console.print(f"unsupported languages: {summary.get('unsupported_share', 0):.1%} "
                  "of the correct-labelled submissions"
                  + "".join(f"\n  {n} x {r}" for r, n in sorted(summary.get("unsupported_reasons", {}).items(),
                                                                 key=lambda kv: -kv[1])[:5]))
    if summary.get("reject_causes"):
        console.print("reject causes: " + ", ".join(f"{c} {n}" for c, n in sorted(summary["reject_causes"].items()))
                      + f" (re-measured: {summary.get('remeasured', 0)})")
    if tail := summary.get("slow_tail"):
        console.print(f"past the time limit (labelled, past_limit) / past the cap ({summary.get('limit_cap')}x, "
                      "rejected): " + ", ".join(f"{lang} {c['past_limit']} / {c['past_cap']}"
                                                for lang, c in sorted(tail.items())))
    for msg in summary.get("quarantined", []):
        console.print(f"[yellow]{msg}[/yellow]")
    if summary.get("failed_batches"):
        console.print(f"[red]{summary['failed_batches']} batch(es) failed[/red] (rerun to retry): "
                      f"{summary['failures'][:3]}")


@app.command("publish")
def publish_cmd(
    repo_id: str = typer.Option(..., "--repo-id", help="Hub dataset repo: ORG/NAME or NAME."),
    path: Path = typer.Option(default_run_dir(DEFAULT_PROFILE) / "codecontests_perf", "--path",
                              help="Dataset folder to push (with README.md card)."),
    private: bool = typer.Option(False, "--private", help="Create the repo as private."),
    token: Optional[str] = typer.Option(None, "--token", envvar="HF_TOKEN",
                                        help="Hub token (default: HF_TOKEN or the stored login)."),
    endpoint: Optional[str] = typer.Option(None, "--endpoint", envvar="HF_ENDPOINT",
                                           help="Hub endpoint (default: huggingface.co)."),
) -> None:
    """Push a dataset folder (Parquet + card) to the Hugging Face Hub."""
    from perfalign.perfdata.publish import PublishError, publish_dataset

    with _failing(PublishError):
        url = publish_dataset(path, repo_id, private=private, token=token, endpoint=endpoint)
    console.print(f"published {path} -> {url}")


@synth_app.command("generate")
@config_options("synth.n", "synth.backend", "synth.model", "synth.seeds", "synth.base_url", "synth.concurrency",
                "synth.requests_per_minute", "synth.min_speedup", "perf.repeats", "sandbox.backend", "synth.seed",
                help={"perf.repeats": "Runs per input when verifying"})
def synth_generate(
    out: Path = typer.Option(..., "--out", help="Output directory (Parquet tables `synthetic`, `synthetic_rejects`)."),
    conf: ConfigArgs = None,
    as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
) -> None:
    """Generate fast/slow pairs with an LLM (or the bundled sample without a key) and verify them.
    Unset options take the profile's values (`perfalign config` shows them)."""
    from perfalign.perfdata.synth import AuthError

    cfg = _load_config(conf)
    config = cfg.synth
    _preflight("check_synth", config)
    from perfalign.flows.synth import generate_synthetic

    with _failing(AuthError), _session(bars=not as_json):
        summary = generate_synthetic(config, str(out), cfg.sandbox)
    if as_json:
        print(json.dumps(summary, default=str))
    else:
        print_synth_summary(summary)


def print_synth_summary(summary: dict) -> None:  # its notes were logged (warnings) as they arose
    console.print(f"[bold]synthetic pairs[/bold] ({summary['backend']}/{summary['model']}): "
                  f"{summary['kept']} kept, {summary['rejected']} rejected, {summary['failed']} failed "
                  f"of {summary['attempted']} new ({summary['skipped_existing']} already done); "
                  f"tables hold {summary['total_kept']} kept / {summary['total_rejected']} rejected")
    if summary.get("reject_reasons"):
        console.print("rejects: " + ", ".join(f"{k} {v}" for k, v in sorted(summary["reject_reasons"].items())))
    if not summary.get("using_sample"):
        console.print(f"{summary['requests']} requests ({summary['cache_hits']} cached, {summary['retries']} retries), "
                      f"{summary['prompt_tokens']} prompt + {summary['output_tokens']} output tokens, "
                      f"cost ${summary['cost_usd']:.4f}")


@triplets_app.command("build")
@config_options("triplets.seed", "triplets.max_margin", "triplets.held_out_count", "triplets.small_groups",
                "triplets.min_group_solutions", "triplets.controlled_task")
def triplets_build(
    out: Path = typer.Option(..., "--out", help="Output directory (triplets, sft_prompts, stats.json)."),
    codecontests: Optional[Path] = typer.Option(None, "--codecontests", help="A CodeContests-Perf directory."),
    synthetic: Optional[Path] = typer.Option(None, "--synthetic", help="A synthetic-pairs directory."),
    conf: ConfigArgs = None,
) -> None:
    """Build triplets with the adaptive margin and the SFT prompts; no problem crosses splits.
    Unset options take the profile's values from the config file."""
    if not codecontests and not synthetic:
        _fail("give --codecontests, --synthetic, or both")
    for p in (codecontests, synthetic):
        if p and not p.is_dir():
            _fail(f"{p} is not a directory")
    settings = _load_config(conf).triplets
    from perfalign.flows.align import build_triplets_flow

    with _failing(ValueError), _session():
        res = build_triplets_flow(_str(codecontests), _str(synthetic), str(out), settings)
    console.print(json.dumps({k: v for k, v in res["stats"].items()
                              if k in ("totals", "triplets", "margin", "languages")}))
    console.print(f"triplets -> {out}")


_TRIPLETS_OPT = typer.Option(..., "--triplets", help="Triplets directory (perfalign triplets build).")
_ALIGN_OUT_OPT = typer.Option(None, "--out", help="Output directory: one subdirectory per stage.")
_OLD_NAME = {"hidden": True, "help": "Old name of the option above."}  # kept so old scripts still run


def _renamed(value, old_value, name: str):
    """An option's value given under its name or its old (hidden) one; missing: one line, exit 2."""
    if value is None and old_value is None:
        _fail(f"missing option {name}")
    return value if value is not None else old_value
_CC_OPT = typer.Option(None, "--codecontests",
                       help="CodeContests-Perf directory (RLPF executes contest problems' tests).")
_OVERWRITE_OPT = typer.Option(False, "--overwrite", help="Replace a finished stage directory.")


def _align_command(stages: Optional[list[str]], *keys: str):
    """`perfalign align` (``stages`` None: the configured ones) or `perfalign train STAGE`."""
    @config_options(*keys)
    def command(triplets: Path = _TRIPLETS_OPT, out: Optional[Path] = _ALIGN_OUT_OPT,
                codecontests: Optional[Path] = _CC_OPT, conf: ConfigArgs = None, overwrite: bool = _OVERWRITE_OPT,
                workdir: Optional[Path] = typer.Option(None, "--workdir", **_OLD_NAME)) -> None:
        from perfalign.flows.align import align, preflight, stage_configs

        workdir = _renamed(out, workdir, "--out")
        cfg = _load_config(conf)
        wanted = stages or list(cfg.align.stages)
        cc = _str(codecontests)
        bad_input = (ValueError, FileNotFoundError, FileExistsError)
        with _failing(*bad_input):  # bad inputs fail here, before Prefect starts or any model loads (and only here)
            configs = stage_configs(cfg, str(triplets), str(workdir), cc, overwrite)
            preflight(configs, wanted, str(triplets), cc, str(workdir))
        with _failing(*bad_input), _session():
            results = align(cfg, str(triplets), str(workdir), cc, wanted, overwrite, configs=configs)
        t = Table("stage", "metrics", "run directory")
        for stage, r in results.items():
            m = {k: round(v, 4) if isinstance(v, float) else v for k, v in r["metrics"].items()
                 if k.startswith("eval_")}
            t.add_row(stage, json.dumps(m), r["run_dir"])
        console.print(t)

    return command


_TRAIN_HELP = {
    "sft": "Supervised fine-tuning on the instruction/optimization prompts; reports perplexity (Eq. 1).",
    "reward": "Reward model with the adaptive-margin loss (Eq. 2); reports accuracy (Eq. 5).",
    "rlpf": "PPO from the SFT model with the performance reward (Eq. 4, KL 0.1); needs sft and reward in --out.",
    "dpa": "Direct performance alignment: DPO with the adaptive margin (Eq. 7, beta 0.6); needs sft in --out.",
}
for _stage, _help in _TRAIN_HELP.items():
    train_app.command(_stage, help=_help)(_align_command([_stage], "align.base_model"))
app.command("align", help="The flow `align`: SFT -> RM -> RLPF, and SFT -> DPA (the stages' hyperparameters: the sft,\n"
                          "reward, rlpf and dpa tables of `perfalign config`).")(
    _align_command(None, "align.base_model", "align.stages", "align.parallel_stages"))


eval_app = _group("eval", "Evaluate models (report), score one candidate, list the suites' problems.",
                  invoke_without_command=True)


@eval_app.callback()
@config_options("eval.tasks", "eval.num_samples", "eval.omp_threads", "eval.max_prompts_per_task", "eval.pareval_dir",
                "eval.polybench_dir", "eval.kernelbench_dir")
def eval_cmd(
    ctx: typer.Context,
    out: Optional[Path] = typer.Option(None, "--out",
                                       help="Report directory (report.md, report.json, figures, samples)."),
    models: Optional[List[str]] = typer.Option(None, "--models",
                                               help="LABEL=REF (HF name, model dir, embedded, "
                                                    "oracle:reference|slow|fast); repeatable."),
    align_dir: Optional[Path] = typer.Option(None, "--align",
                                             help="An alignment output directory (perfalign align --out): evaluate "
                                                  "its base, +SFT, +RLPF, +DPA."),
    codecontests: Optional[Path] = typer.Option(None, "--codecontests",
                                                help="CodeContests-Perf directory (held-out problems and baselines)."),
    controlled: Optional[Path] = typer.Option(None, "--controlled",
                                              help="The controlled task's folder (a pipeline run's "
                                                   "triplets/controlled): its held-out prompts."),
    conf: ConfigArgs = None,
    run_dir: Optional[Path] = typer.Option(None, "--run-dir", **_OLD_NAME),
) -> None:
    """Evaluate models: pass@1 and speedup_n@1 on generation and optimization tasks, with plots.
    Unset options take the profile's values (`perfalign config` shows them)."""
    if ctx.invoked_subcommand is not None:
        return
    if out is None:
        _fail("give --out DIR for a report, or a subcommand (score, tasks); see --help")
    from perfalign.evaluation import ModelSpec, models_from_run_dir

    cfg = _load_config(conf)
    with _failing(ValueError, FileNotFoundError):
        specs = [ModelSpec.parse(m) for m in models or []]
        if align_dir or run_dir:
            specs += models_from_run_dir(align_dir or run_dir, prefix="base")
        from perfalign.flows.pipeline import eval_config_from

        chosen = list(cfg.eval.tasks)
        # the profile's groups whose inputs this command has (the pipeline has all)
        if conf.flags["eval.tasks"] is None:
            missing = {"controlled": not controlled, "codecontests": not codecontests}
            dropped = [t for t in chosen if missing.get(t)]
            chosen = [t for t in chosen if t not in dropped]
            if dropped:
                err.print(f"[dim]not evaluated: {', '.join(dropped)} (give --codecontests / --controlled, "
                          "or --tasks)[/dim]")
        ecfg = eval_config_from(cfg, specs, _str(codecontests), chosen, controlled_dir=_str(controlled))
    from perfalign.flows.evaluate import evaluate

    with _session():  # bars for generation and execution
        res = evaluate(ecfg, str(out), cfg.sandbox)
    console.print(Path(res["report"]).read_text()[:3000])
    console.print(f"evaluation report: [bold]{res['report']}[/bold]")


# the real suites' checkouts, the same two options wherever a command reads them
_PAREVAL_DIR_OPT = typer.Option(None, "--pareval-dir", envvar="PERFALIGN_PAREVAL_DIR",
                                help="A ParEval checkout (or $PERFALIGN_PAREVAL_DIR).")
_POLYBENCH_DIR_OPT = typer.Option(None, "--polybench-dir", envvar="PERFALIGN_POLYBENCH_DIR",
                                  help="A PolyBench/C 4.2.1 checkout (or $PERFALIGN_POLYBENCH_DIR).")


@eval_app.command("score")
@config_options("eval.pareval_dir", "eval.polybench_dir", "eval.omp_threads", "eval.mpi_ranks", "eval.probe.repeats",
                "sandbox.backend", "eval.probe.clock", "eval.probe.max_rel_se")
def eval_score_cmd(
    suite: str = typer.Option(..., "--suite", help="pareval, polybench, codecontests or humaneval."),
    problem: str = typer.Option(..., "--problem", help="Problem name (`perfalign eval tasks` lists them)."),
    code: Path = typer.Option(..., "--code", help="The candidate's source file (ParEval: the function or its body)."),
    model: str = typer.Option("serial", "--execution-model",
                              help="serial, omp or mpi (ParEval; PolyBench: serial or omp)."),
    codecontests: Optional[Path] = typer.Option(None, "--codecontests",
                                                help="CodeContests-Perf folder or raw CodeContests source "
                                                     "(default: the bundled sample)."),
    language: str = typer.Option("cpp", "--language", help="Contest solution language: cpp, python3, java."),
    lang: Optional[str] = typer.Option(None, "--lang", **_OLD_NAME),
    conf: ConfigArgs = None,
    as_json: bool = typer.Option(False, "--json",
                                 help="Print {verdict, correct, speedup, runtime_s, baseline_s, clock, flags}."),
) -> None:
    """Score one candidate against the suite's baseline measured in the same run (exit 0 whenever scoring happened).
    Problem sizes, threads, ranks and rounds: the eval table of the profile (`perfalign config`)."""
    from perfalign.evaluation.score_one import ProblemUnusable, ScoreInputError, read_code, score_candidate
    from perfalign.evaluation.tasks.bundled import PAREVAL_SAMPLE, POLYBENCH_SAMPLE

    cfg = _load_config(conf)
    e = cfg.eval
    # the bundled samples (the pipeline's default) are no checkout: a problem needs the suite's own
    pareval_dir, polybench_dir = (None if Path(d).resolve() == sample.resolve() else d for d, sample in
                                  ((e.pareval_dir, PAREVAL_SAMPLE), (e.polybench_dir, POLYBENCH_SAMPLE)))
    with _failing(ScoreInputError), _failing(ProblemUnusable, what="cannot score here", code=1):
        score, info = score_candidate(suite, problem, read_code(code), model=model, pareval_dir=pareval_dir,
                                      polybench_dir=polybench_dir, codecontests=_str(codecontests),
                                      language=lang or language, problem_size=e.problem_size, threads=e.omp_threads,
                                      ranks=e.mpi_ranks, probe=e.probe, sandbox=cfg.sandbox)
    if as_json:
        print(json.dumps(score.contract()))
        return
    console.print(f"{suite}/{problem} ({model}): [bold]{score.verdict}[/bold] correct={score.correct} "
                  f"speedup={score.speedup} runtime_s={score.runtime_s} baseline_s={score.baseline_s} "
                  f"clock={score.clock} flags={score.flags}")
    if score.message:
        console.print(score.message)
    console.print(json.dumps(info))


@eval_app.command("tasks")
def eval_tasks_cmd(
    pareval_dir: Optional[Path] = _PAREVAL_DIR_OPT,
    polybench_dir: Optional[Path] = _POLYBENCH_DIR_OPT,
    codecontests: Optional[Path] = typer.Option(None, "--codecontests",
                                                help="CodeContests-Perf folder or raw source (default: the bundled "
                                                     "sample)."),
    as_json: bool = typer.Option(False, "--json", help="Print the lists as JSON."),
) -> None:
    """List each suite's problems: a checkout's (what `perfalign eval score` scores) or, without one, the
    bundled sample's (what the pipeline evaluates)."""
    from perfalign.evaluation.score_one import list_tasks

    with _failing(FileNotFoundError, ValueError):
        tasks = list_tasks(_str(pareval_dir), _str(polybench_dir), _str(codecontests))
    if as_json:
        print(json.dumps(tasks))
        return
    for suite, rows in tasks.items():
        if isinstance(rows, str):
            console.print(f"[dim]{escape(rows)}[/dim]")
            continue
        bundled = ", the bundled sample: what the pipeline evaluates; `eval score` needs a checkout" \
            if any(r.get("bundled") for r in rows) else ""
        console.print(f"[bold]{suite}[/bold] ({len(rows)}{escape(bundled)})")
        for r in rows:
            console.print(escape(f"  {r['problem']}  [{', '.join(r['models'])}]"))


@app.command("pipeline")
@config_options("perf.source", "perf.repeats", "sandbox.workers")
def pipeline_cmd(
    out: Optional[Path] = typer.Option(None, "--out", show_default="runs/<profile>",
                                       help="Run directory: every stage's output, logs and states."),
    conf: ConfigArgs = None,
    reuse_run_dir: bool = typer.Option(False, "--reuse-run-dir",
                                       help="Run in an --out directory made by another profile (its stages rerun "
                                            "under this one); refused without it."),
) -> None:
    """The main job: run the whole pipeline; unchanged stages are skipped, a crashed run resumes."""
    cfg = _load_config(conf)
    out = out or default_run_dir(cfg.profile)
    with _failing(RunDirConflict):
        check_run_dir(out, cfg.profile, reuse_run_dir)
    from perfalign.flows.stagekeys import unchanged_run

    console.print(f"[bold]perfalign pipeline[/bold] profile={cfg.profile} -> {out}")
    result = unchanged_run(cfg, out)  # every stage done with these inputs: no flow, no server
    if result is None:
        _preflight("check_pipeline", cfg)  # the Hub, a GPU, the judge environments: one line each
        _check_backend(cfg.sandbox.backend)
        from perfalign.flows.pipeline import pipeline

        with _failing(StageFailed, what="pipeline failed", code=1), _session():
            result = pipeline(out=str(out), config=cfg, reuse_run_dir=reuse_run_dir)
    print_pipeline_summary(result, out)


def print_pipeline_summary(result: dict, out: Path) -> None:
    stages = result["stages"]
    if "codecontests_perf" in stages:
        print_perf_summary(stages["codecontests_perf"], out / "codecontests_perf")
    if "synthetic" in stages:
        print_synth_summary(stages["synthetic"])
    console.print(closing_table(result, out))  # each stage's state, time and result
    report = stages.get("evaluate", {}).get("report")
    if report:
        print_eval_scores(Path(report).with_name("report.json"))
        console.print(f"evaluation report: [bold]{report}[/bold]")
    console.print(f"pipeline finished in {result['wall_seconds']:.0f} s; run directory {out}")


def print_eval_scores(report_json: Path) -> None:
    try:
        scores = json.loads(report_json.read_text())["scores"]
    except (OSError, ValueError, KeyError):
        return
    t = Table("model", "task", "pass@1", "speedup_n@1")
    for sc in scores:
        t.add_row(str(sc.get("model")), str(sc.get("task")), _fmt(sc.get("pass_at", {}).get("1")),
                  _fmt(sc.get("speedup_at", {}).get("1")))
    console.print(t)


def _fmt(x) -> str:
    return "-" if x is None else f"{x:.3f}"


@app.command("config")
@config_options()
def config_cmd(
    conf: ConfigArgs = None,
    as_json: bool = typer.Option(False, "--json", help="Print {table: {key: {value, from}}} as JSON."),
    docs: bool = typer.Option(False, "--docs", help="Also show each setting's one-line doc (its dataclass field's)."),
) -> None:
    """Show every effective setting of every stage (the dataclasses' defaults, the profile, your
    file, --set), each with where it came from; the same default profile as every command."""
    cfg = _load_config(conf)
    explained = cfg.explain(docs=docs)
    if as_json:
        print(json.dumps({"config_file": cfg.config_file, "profile": cfg.profile, "settings": explained}, indent=1))
        return
    t = Table(title=f"profile {cfg.profile}" + (f" + {cfg.config_file}" if cfg.config_file else ""))
    for column in ("setting", "from", "value", "doc")[:4 if docs else 3]:
        t.add_column(column, overflow="fold")
    for table, values in explained.items():
        for key, v in values.items():
            t.add_row(f"{table}.{key}", v["from"], json.dumps(v["value"]), *([v["doc"]] if docs else []))
    console.print(t)


@app.command("status")
def status_cmd(
    root: Path = typer.Option(RUNS_ROOT, "--root", help="Directory holding run directories."),
    limit: int = typer.Option(10, "--limit", min=1, help="How many recent runs to show."),
) -> None:
    """List recent pipeline runs: profile, last update, and each stage's state, time and result.
    A stage whose process is gone shows as interrupted; Prefect flow runs of such processes are
    marked Crashed."""
    _crash_orphaned_flow_runs()
    runs = list_runs(root)[:limit]
    if not runs:
        console.print(f"no runs under {root}")
        return
    console.print(status_table(runs))
    for r in runs:
        for k, v in r.get("stages", {}).items():
            if v.get("state") == "failed":
                console.print(f"[red]{r['run']}/{k} failed[/red] on {v.get('input')}: {v.get('error')} "
                              f"(log: {v.get('log')})")


def _crash_orphaned_flow_runs() -> None:
    """Flow runs of processes that are gone, marked Crashed: through PREFECT_API_URL when set, else
    only when the local database holds some (checked without starting a server)."""
    from .env import project_dir

    home = Path(os.environ.get("PREFECT_HOME") or project_dir() / "prefect")
    if not os.environ.get("PREFECT_API_URL") and not orphans_in_local_db(home / "prefect.db"):
        return
    from .server import local_api
    from .session import crash_orphaned_runs

    with local_api():
        n = crash_orphaned_runs()
    if n:
        console.print(f"{n} flow run(s) of processes that are gone marked Crashed")


@app.command("ui")
def ui_cmd(
    port: int = typer.Option(DEFAULT_PORT, "--port", help="Port of the Prefect API and UI."),
    host: str = typer.Option("127.0.0.1", "--host", help="Bind address (loopback by default)."),
) -> None:
    """Start a local Prefect server and UI (analytics off, state under ./.perfalign/prefect)."""
    from perfalign.flows.server import run_server

    console.print(f"Prefect UI: http://{host}:{port}  (state: {os.environ['PREFECT_HOME']})\n"
                  f"Point other commands at it: export PREFECT_API_URL=http://{host}:{port}/api")
    raise typer.Exit(run_server(host, port))  # SIGTERM / SIGINT stop the server too


@app.command("deploy")
@config_options("perf.source", "perf.limit_problems", "perf.max_tests", "perf.repeats")
def deploy_cmd(
    out_root: Optional[Path] = typer.Option(None, "--out-root",
                                            help="Where scheduled runs write (default: ./.perfalign/scheduled)."),
    perf_cron: str = typer.Option(NIGHTLY_PERF_CRON, "--perf-cron",
                                  help="Schedule of the incremental CodeContests-Perf rebuild."),
    pipeline_cron: str = typer.Option(WEEKLY_PIPELINE_CRON, "--pipeline-cron",
                                      help="Schedule of the full pipeline run."),
    conf: ConfigArgs = None,
) -> None:
    """Serve the flows as scheduled deployments (blocks; Ctrl-C stops and pauses the schedules).
    The scheduled runs use the same configuration as `perfalign pipeline` with these options."""
    from perfalign.flows.deploy import api_url_or_none, default_out_root, serve_deployments

    cfg = _load_config(conf)
    url = api_url_or_none()
    if not url:
        _fail("no Prefect server answers: start one with `perfalign ui` (or set PREFECT_API_URL)")
    os.environ["PREFECT_API_URL"] = url
    console.print(f"serving deployments on {url}: build_codecontests_perf/nightly-incremental ({perf_cron}), "
                  f"pipeline/weekly ({pipeline_cron})")
    sets = conf.sets + [f"{k}={json.dumps(cfg.values(k.split('.')[0])[k.split('.')[1]])}"
                        for k, v in conf.flags.items() if v is not None]
    serve_deployments(cfg, out_root=str(out_root or default_out_root()), perf_cron=perf_cron,
                      pipeline_cron=pipeline_cron, profile=conf.profile, config_path=_str(conf.config),
                      overrides=sets)


@app.command("grpo")
@config_options("grpo.steps_per_stage", "grpo.steps", "grpo.schedule", "grpo.num_generations", "grpo.n_workers",
                "grpo.cpus_per_worker", "grpo.dask_address", "grpo.polybench_dir", "grpo.tasks", "grpo.model",
                "grpo.learning_rate", "grpo.warmup_steps", "grpo.warmup_prior", "grpo.tiers.ok_reward",
                "grpo.reuse_measurements")
def grpo_cmd(
    out: Path = typer.Option(GRPO_RUN_DIR, "--out",
                             help="Run directory: per-arm rollouts (Parquet), archive, report, figures."),
    conf: ConfigArgs = None,
    seeds: str = typer.Option("0", "--seeds", help="Comma-separated seeds (each arm runs once per seed)."),
    arms: Optional[str] = typer.Option(None, "--arms", help="Comma-separated: sqd, grpo, control (default: all)."),
) -> None:
    """Online GRPO with rewards measured in GFLOPS on Dask benchmark workers, and staged
    quality-diversity (docs/grpo.md). Settings: the grpo table of `perfalign config`."""
    from perfalign.flows.grpo import grpo_command

    try:
        seed_list = [int(x) for x in seeds.split(",") if x.strip()]
    except ValueError:
        _fail(f"--seeds {seeds!r}: expected comma-separated integers")
    with _failing(ValueError, FileNotFoundError):
        result = grpo_command(out=str(out), seeds=seed_list, arms=[x.strip() for x in arms.split(",") if x.strip()]
                              if arms else None, profile=conf.profile, config=_str(conf.config), overrides=conf.sets,
                              **{k.split(".", 1)[1]: v for k, v in conf.flags.items()})
    console.print(json.dumps(result, indent=1, default=str)[:4000])


kernel_app = _group("kernel", "Kernel environment: KernelBench problems, sandboxed candidates, speedups over eager "
                              "PyTorch and torch.compile.")


def _kernel_config(conf: ConfigArgs):
    """The [kernel] table (kernelenv.ScoreConfig); at most ``trials`` timed calls, at least min(min_trials, trials)."""
    k = _load_config(conf).kernel
    return dataclasses.replace(k, min_trials=min(k.min_trials, k.trials))


_KERNEL_KEYS = ("kernel.device", "kernel.trials", "kernel.scale", "kernel.threads", "kernel.compile_baseline",
                "kernel.allow_reference_ops")


@kernel_app.command("score")
@config_options(*_KERNEL_KEYS, "kernel.interpret")
def kernel_score_cmd(
    problem: Path = typer.Option(..., "--problem",
                                 help="A KernelBench problem file (Model, get_inputs, get_init_inputs)."),
    candidate: Path = typer.Option(..., "--candidate", help="A module defining ModelNew."),
    conf: ConfigArgs = None,
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    """Score one candidate: correctness over fresh inputs, then speedups (exit 0 whenever scoring happened)."""
    from perfalign.kernelenv import KernelEnvError, ProblemError, Scorer, load_problem

    cfg = _kernel_config(conf)
    with _failing(ProblemError, KernelEnvError, OSError, UnicodeDecodeError):
        prob = load_problem(problem)
        source = candidate.read_text(encoding="utf-8")
        with Scorer(cfg) as scorer:
            res = scorer.score(prob, source, str(candidate))
    d = res.to_dict()
    head = {k: d[k] for k in ("verdict", "correct", "speedup_eager", "speedup_compile", "runtime_s", "flags")}
    if as_json:
        print(json.dumps({**head, **{k: v for k, v in d.items() if k not in head}}))
    else:
        console.print(f"{prob.name}: [bold]{res.verdict}[/bold]  speedup vs eager {_fmt(res.speedup_eager)}, "
                      f"vs torch.compile {_fmt(res.speedup_compile)}, runtime {_fmt(res.runtime_s)} s, "
                      f"scale {res.scale}, reward {_fmt(res.reward)}")
        if res.message:
            console.print(res.message)
        if res.flags:
            console.print("flags: " + ", ".join(res.flags))
    raise typer.Exit(3 if res.verdict == "sandbox_error" else 0)


@kernel_app.command("eval")
@config_options(*_KERNEL_KEYS)
def kernel_eval_cmd(
    problems: Path = typer.Option(..., "--problems",
                                  help="A directory of KernelBench problems (e.g. .../kernelbench/level1)."),
    candidates: str = typer.Option(..., "--candidates", help="A directory of candidates named like the problems, or "
                                                             "'reference' (the reference-as-candidate oracle)."),
    out: Path = typer.Option(..., "--out", help="Report directory (report.md, report.json, scores.jsonl)."),
    conf: ConfigArgs = None,
    as_json: bool = typer.Option(False, "--json", help="Print the metrics as JSON."),
) -> None:
    """Score a directory of candidates: correct %, fast_p, % faster than torch.compile, geometric means."""
    from perfalign.kernelenv import KernelEnvError, ProblemError, Scorer

    cfg = _kernel_config(conf)
    if candidates != "reference" and not Path(candidates).is_dir():
        _fail(f"--candidates {candidates}: not a directory (or 'reference')")
    with _failing(ProblemError, KernelEnvError):
        Scorer(cfg).close()  # fail before starting Prefect if torch cannot reach the sandbox
        from perfalign.flows.kernel import kernel_eval

        with _session(bars=not as_json):
            result = kernel_eval(str(problems), candidates, str(out), cfg)
    if as_json:
        print(json.dumps(result["metrics"]))
    else:
        m = result["metrics"]
        console.print(f"{m['n']} problems: correct {m['correct_pct']:.1f}%, "
                      + ", ".join(f"{k} {v:.1f}%" for k, v in m["fast_p"].items())
                      + f", faster than torch.compile {_fmt(m['faster_than_compile_pct'])}%, geomean speedup "
                        f"eager {_fmt(m['geomean_speedup_eager'])}, compile {_fmt(m['geomean_speedup_compile'])}")
        console.print(f"report: {out / 'report.md'}")


def main() -> None:
    app()


if __name__ == "__main__":
    main()
