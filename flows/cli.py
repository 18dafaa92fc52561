"""The `perfalign` command line. Sub-commands live beside the code they drive and import
heavy libraries lazily, so `perfalign sandbox run` does not pay for Prefect or torch."""
from __future__ import annotations

import json
from pathlib import Path
from typing import List, Optional

import typer
from rich.console import Console
from rich.table import Table

from sandbox.cli import app as sandbox_app

app = typer.Typer(
    help="perfalign: teach code LLMs to write faster code (RLPF / DPA).",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
)
app.add_typer(sandbox_app, name="sandbox")
perf_app = typer.Typer(help="CodeContests-Perf: measure every submission, build the dataset.", no_args_is_help=True)
app.add_typer(perf_app, name="perf")

synth_app = typer.Typer(help="Synthetic fast/slow pairs from Stack seeds, verified by execution.", no_args_is_help=True)
app.add_typer(synth_app, name="synth")

triplets_app = typer.Typer(help="Stratified (problem, fast, slow) triplets and SFT prompts (paper §VII-B).", no_args_is_help=True)
app.add_typer(triplets_app, name="triplets")
train_app = typer.Typer(help="Train one alignment stage: sft, reward, rlpf or dpa.", no_args_is_help=True)
app.add_typer(train_app, name="train")

console = Console()
err = Console(stderr=True)
EMBEDDED_SAMPLE = Path(__file__).resolve().parents[1] / "data" / "codecontests_sample" / "data"


@perf_app.command("build")
def perf_build(
    source: str = typer.Option(str(EMBEDDED_SAMPLE), "--source",
                               help="hf:deepmind/code_contests[:split] or a path to Parquet/JSONL in the same schema. "
                                    "Default: the bundled sample."),
    out: Path = typer.Option(..., "--out", help="Output directory (Parquet tables + dataset card)."),
    limit_problems: Optional[int] = typer.Option(None, "--limit-problems", min=1, help="Only the first N problems."),
    repeats: int = typer.Option(3, "--repeats", min=1, help="Runs per test (median kept, all stored)."),
    workers: Optional[int] = typer.Option(None, "--workers", min=1, help="Parallel batches (default: one per core)."),
    backend: str = typer.Option("auto", "--backend", help="Sandbox backend: auto, bwrap, docker, local-unsafe."),
    dask_address: Optional[str] = typer.Option(None, "--dask-address", help="Run tasks on an existing Dask cluster (tcp://host:port)."),
    time_limit_factor: float = typer.Option(1.0, "--time-limit-factor", min=0.01, help="Multiply each problem's time limit."),
    max_tests: Optional[int] = typer.Option(None, "--max-tests", min=1, help="Cap tests per problem (default: all)."),
    batch_size: int = typer.Option(8, "--batch-size", min=1, help="Submissions per Prefect task."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
) -> None:
    """Run every correct submission on all tests in the sandbox; resumable and incremental."""
    from perfdata.perf import BuildSettings
    from sandbox import BackendUnavailable
    from sandbox.backends import make_backend

    _check_source(source)
    try:
        BuildSettings(repeats=repeats, time_limit_factor=time_limit_factor, batch_size=batch_size)
        make_backend(backend)  # fail before starting Prefect if the sandbox cannot run here
    except (BackendUnavailable, ValueError) as e:
        err.print(f"[red]error:[/red] {e}")
        raise typer.Exit(2)
    from flows.perf import run_build

    from .progress import progress_bar

    with progress_bar("measuring submissions", enabled=not as_json) as update:
        summary = run_build(source=source, out=str(out), workers=workers, dask_address=dask_address,
                            limit_problems=limit_problems, repeats=repeats, backend=backend,
                            time_limit_factor=time_limit_factor, max_tests=max_tests, batch_size=batch_size,
                            progress=update)
    if as_json:
        print(json.dumps(summary))
    else:
        print_perf_summary(summary, out)
    if summary.get("failed_batches"):
        raise typer.Exit(1)


def _check_source(source: str) -> None:
    if not source.startswith("hf:") and not Path(source).exists():
        err.print(f"[red]error:[/red] source {source!r} does not exist (expected hf:NAME[:split] or a path)")
        raise typer.Exit(2)


def print_perf_summary(summary: dict, out: Path) -> None:
    st = summary.get("status", {})
    console.print(f"[bold]CodeContests-Perf[/bold] -> {out}")
    console.print(f"problems: {summary['problems']} ({summary['held_out_problems']} held out), "
                  f"malformed rows/items: {summary['errors']}, submissions: {summary['submissions']}")
    t = Table("language", "measured", "rejected", "unsupported", "not run (incorrect)")
    for lang, d in sorted(summary.get("by_language", {}).items()):
        t.add_row(lang, *(str(d.get(k, 0)) for k in ("measured", "rejected", "unsupported", "not_run")))
    t.add_row("[bold]all[/bold]", *(str(st.get(k, 0)) for k in ("measured", "rejected", "unsupported", "not_run")))
    console.print(t)
    console.print(f"test executions: {summary['test_executions']}, skipped (already measured): "
                  f"{summary.get('resumed_skipped', 0)}, wall time: {summary.get('wall_seconds', 0):.1f} s")
    if summary.get("failed_batches"):
        console.print(f"[red]{summary['failed_batches']} batch(es) failed[/red] (rerun to retry): {summary['failures'][:3]}")


@app.command("publish")
def publish_cmd(
    repo_id: str = typer.Option(..., "--repo-id", help="Hub dataset repo: ORG/NAME or NAME."),
    path: Path = typer.Option(Path("runs/codecontests_perf"), "--path", help="Dataset folder to push (with README.md card)."),
    private: bool = typer.Option(False, "--private", help="Create the repo as private."),
    token: Optional[str] = typer.Option(None, "--token", envvar="HF_TOKEN", help="Hub token (default: HF_TOKEN or the stored login)."),
    endpoint: Optional[str] = typer.Option(None, "--endpoint", envvar="HF_ENDPOINT", help="Hub endpoint (default: huggingface.co)."),
) -> None:
    """Push a dataset folder (Parquet + card) to the Hugging Face Hub."""
    from perfdata.publish import PublishError, publish_dataset

    try:
        url = publish_dataset(path, repo_id, private=private, token=token, endpoint=endpoint)
    except PublishError as e:
        err.print(f"[red]error:[/red] {e}")
        raise typer.Exit(2)
    console.print(f"published {path} -> {url}")


@synth_app.command("generate")
def synth_generate(
    out: Path = typer.Option(..., "--out", help="Output directory (Parquet tables `synthetic`, `synthetic_rejects`)."),
    n: int = typer.Option(100, "--n", min=1, help="Number of pairs to generate (the paper: 10k)."),
    backend: str = typer.Option("gemini", "--backend", help="gemini, openai (any OpenAI-compatible endpoint) or sample."),
    model: Optional[str] = typer.Option(None, "--model", help="Model name (default: the backend's default)."),
    seeds: Optional[str] = typer.Option(None, "--seeds", help="hf:DATASET (e.g. hf:bigcode/the-stack-smol) or a directory of source files. Default: the bundled seeds."),
    base_url: Optional[str] = typer.Option(None, "--base-url", help="Endpoint for --backend openai (e.g. http://localhost:8000/v1)."),
    concurrency: int = typer.Option(4, "--concurrency", min=1, help="Requests in flight."),
    rpm: Optional[float] = typer.Option(60.0, "--requests-per-minute", help="Request-rate limit."),
    min_speedup: float = typer.Option(1.2, "--min-speedup", help="Keep a pair only if fast is at least this much faster (CPU time)."),
    repeats: int = typer.Option(3, "--repeats", min=1, help="Runs per input when verifying."),
    sandbox_backend: str = typer.Option("auto", "--sandbox", help="Sandbox backend for verification."),
    seed: int = typer.Option(0, "--seed", help="Random seed (seed selection, language alternation)."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
) -> None:
    """Generate fast/slow pairs with an LLM (or the bundled sample without a key) and verify them."""
    from perfdata.synth import AuthError, SynthConfig

    try:
        config = SynthConfig(n=n, backend=backend, model=model, seeds=seeds, base_url=base_url, concurrency=concurrency,
                             requests_per_minute=rpm, min_speedup=min_speedup, repeats=repeats,
                             sandbox=sandbox_backend, seed=seed)
        config.validate()
    except ValueError as e:
        err.print(f"[red]error:[/red] {e}")
        raise typer.Exit(2)
    from flows.synth import run_synth

    from .progress import progress_bar

    try:
        with progress_bar("synthetic pairs", enabled=not as_json) as update:
            summary = run_synth(config, str(out), progress=lambda p: update(p.done, p.total))
    except AuthError as e:
        err.print(f"[red]error:[/red] {e}")
        raise typer.Exit(2)
    if as_json:
        print(json.dumps(summary, default=str))
    else:
        print_synth_summary(summary)


def print_synth_summary(summary: dict) -> None:
    for note in summary.get("notes", []):
        console.print(f"[yellow]{note}[/yellow]")
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
def triplets_build(
    out: Path = typer.Option(..., "--out", help="Output directory (triplets, sft_prompts, stats.json)."),
    codecontests: Optional[Path] = typer.Option(None, "--codecontests", help="A CodeContests-Perf directory."),
    synthetic: Optional[Path] = typer.Option(None, "--synthetic", help="A synthetic-pairs directory."),
    seed: int = typer.Option(0, "--seed", help="Random seed (splits, choices)."),
    max_margin: float = typer.Option(3.0, "--max-margin", help="lambda of Eq. 3."),
    held_out_count: int = typer.Option(0, "--held-out-count", min=0, help="Problems held out for evaluation (0: the held-out split)."),
) -> None:
    """Build triplets with the adaptive margin and the SFT prompts; no problem crosses splits."""
    if not codecontests and not synthetic:
        err.print("[red]error:[/red] give --codecontests, --synthetic, or both")
        raise typer.Exit(2)
    for p in (codecontests, synthetic):
        if p and not p.is_dir():
            err.print(f"[red]error:[/red] {p} is not a directory")
            raise typer.Exit(2)
    from flows.align import build_triplets_flow

    try:
        res = build_triplets_flow(str(codecontests) if codecontests else None, str(synthetic) if synthetic else None,
                                  str(out), seed, max_margin, held_out_count)
    except ValueError as e:
        err.print(f"[red]error:[/red] {e}")
        raise typer.Exit(2)
    console.print(json.dumps({k: v for k, v in res["stats"].items() if k in ("totals", "triplets", "margin", "languages")}))
    console.print(f"triplets -> {out}")


def _run_align(triplets: Path, workdir: Path, codecontests: Optional[Path], profile: str, base_model: Optional[str],
               stages: list[str], overwrite: bool) -> None:
    from flows.align import align, preflight, stage_configs

    try:  # bad inputs fail here, before Prefect starts or any model loads
        cc = str(codecontests) if codecontests else None
        preflight(stage_configs(profile, str(triplets), str(workdir), cc, base_model, overwrite), stages,
                  str(triplets), cc, str(workdir))
    except (ValueError, FileNotFoundError, FileExistsError) as e:
        err.print(f"[red]error:[/red] {e}")
        raise typer.Exit(2)
    try:
        results = align(str(triplets), str(workdir), str(codecontests) if codecontests else None, profile,
                        base_model, stages, overwrite)
    except (ValueError, FileNotFoundError, FileExistsError) as e:
        err.print(f"[red]error:[/red] {e}")
        raise typer.Exit(2)
    t = Table("stage", "metrics", "run directory")
    for stage, r in results.items():
        m = {k: round(v, 4) if isinstance(v, float) else v for k, v in r["metrics"].items() if k.startswith("eval_")}
        t.add_row(stage, json.dumps(m), r["run_dir"])
    console.print(t)


_TRIPLETS_OPT = typer.Option(..., "--triplets", help="Triplets directory (perfalign triplets build).")
_WORKDIR_OPT = typer.Option(..., "--workdir", help="Run directory: one subdirectory per stage.")
_CC_OPT = typer.Option(None, "--codecontests", help="CodeContests-Perf directory (RLPF executes contest problems' tests).")
_PROFILE_OPT = typer.Option("embedded", "--profile", help="embedded (tiny local model, CPU) or production (paper §VII-C).")
_BASE_OPT = typer.Option(None, "--base-model", help="HF model name or path (default: the profile's).")
_OVERWRITE_OPT = typer.Option(False, "--overwrite", help="Replace a finished stage directory.")


_TRAIN_HELP = {
    "sft": "Supervised fine-tuning on the instruction/optimization prompts; reports perplexity (Eq. 1).",
    "reward": "Reward model with the adaptive-margin loss (Eq. 2); reports accuracy (Eq. 5).",
    "rlpf": "PPO from the SFT model with the performance reward (Eq. 4, KL 0.1); needs sft and reward in --workdir.",
    "dpa": "Direct performance alignment: DPO with the adaptive margin (Eq. 7, beta 0.6); needs sft in --workdir.",
}


def _train_command(stage: str):
    def command(triplets: Path = _TRIPLETS_OPT, workdir: Path = _WORKDIR_OPT, codecontests: Optional[Path] = _CC_OPT,
                profile: str = _PROFILE_OPT, base_model: Optional[str] = _BASE_OPT,
                overwrite: bool = _OVERWRITE_OPT) -> None:
        _run_align(triplets, workdir, codecontests, profile, base_model, [stage], overwrite)

    return command


for _stage, _help in _TRAIN_HELP.items():
    train_app.command(_stage, help=_help)(_train_command(_stage))


@app.command("align")
def align_cmd(triplets: Path = _TRIPLETS_OPT, workdir: Path = _WORKDIR_OPT, codecontests: Optional[Path] = _CC_OPT,
              profile: str = _PROFILE_OPT, base_model: Optional[str] = _BASE_OPT, overwrite: bool = _OVERWRITE_OPT,
              stages: str = typer.Option("sft,reward,rlpf,dpa", "--stages", help="Comma-separated subset.")) -> None:
    """The flow `align`: SFT -> RM -> RLPF, and SFT -> DPA."""
    _run_align(triplets, workdir, codecontests, profile, base_model, [s.strip() for s in stages.split(",") if s.strip()],
               overwrite)


@app.command("eval")
def eval_cmd(
    out: Path = typer.Option(..., "--out", help="Report directory (report.md, report.json, figures, samples)."),
    models: Optional[List[str]] = typer.Option(None, "--models", help="LABEL=REF (HF name, model dir, embedded, oracle:reference|slow|fast); repeatable."),
    run_dir: Optional[Path] = typer.Option(None, "--run-dir", help="An alignment run directory: evaluate its base, +SFT, +RLPF, +DPA."),
    tasks: str = typer.Option("codecontests,pareval,polybench", "--tasks", help="Comma-separated: codecontests, pareval, polybench."),
    codecontests: Optional[Path] = typer.Option(None, "--codecontests", help="CodeContests-Perf directory (held-out problems and baselines)."),
    profile: str = typer.Option("embedded", "--profile", help="embedded (few prompts, 2 samples) or production (paper: 20 samples, T 0.2, top-p 0.95)."),
    num_samples: Optional[int] = typer.Option(None, "--n-samples", min=1, help="Samples per prompt."),
    threads: Optional[int] = typer.Option(None, "--threads", min=1, help="OpenMP threads for ParEval OpenMP tasks."),
    max_prompts: Optional[int] = typer.Option(None, "--max-prompts", min=1, help="Prompts per task (default: the profile's)."),
) -> None:
    """Evaluate models: pass@1 and speedup_n@1 on generation and optimization tasks, with plots."""
    specs = list(models or [])
    if run_dir:
        from evaluation import models_from_run_dir

        try:
            specs += [f"{m.label}={m.ref}" for m in models_from_run_dir(run_dir, prefix="base")]
        except FileNotFoundError as e:
            err.print(f"[red]error:[/red] {e}")
            raise typer.Exit(2)
    from flows.evaluate import eval_config

    task_list = [t.strip() for t in tasks.split(",") if t.strip()]
    try:
        cfg = eval_config(profile, specs, task_list, str(codecontests) if codecontests else None,
                          num_samples=num_samples, omp_threads=threads, max_prompts_per_task=max_prompts)
    except (ValueError, FileNotFoundError) as e:
        err.print(f"[red]error:[/red] {e}")
        raise typer.Exit(2)
    from flows.evaluate import evaluate

    res = evaluate(cfg, str(out))
    console.print(Path(res["report"]).read_text()[:3000])
    console.print(f"evaluation report: [bold]{res['report']}[/bold]")


@app.command("pipeline")
def pipeline_cmd(
    out: Path = typer.Option(Path("runs/embedded"), "--out", help="Run directory: every stage's output, logs and states."),
    profile: str = typer.Option("embedded", "--profile", help="Config profile: embedded (bundled sample, tiny model) or production (paper defaults)."),
    config: Optional[Path] = typer.Option(None, "--config", help="Config file (default: flows/perfalign.toml)."),
    set_: Optional[List[str]] = typer.Option(None, "--set", help="Override one setting: table.key=value (repeatable)."),
    source: Optional[str] = typer.Option(None, "--source", help="CodeContests source (overrides perf.source)."),
    repeats: Optional[int] = typer.Option(None, "--repeats", min=1, help="Runs per test (overrides perf.repeats)."),
    workers: Optional[int] = typer.Option(None, "--workers", min=1, help="Parallel sandbox workers (overrides sandbox.workers)."),
) -> None:
    """The main job: run the whole pipeline; unchanged stages are skipped, a crashed run resumes."""
    from flows.config import ConfigError, load_config
    from sandbox import BackendUnavailable
    from sandbox.backends import make_backend

    overrides = list(set_ or [])
    try:
        cfg = load_config(config, profile, overrides)
    except ConfigError as e:
        err.print(f"[red]error:[/red] {e}")
        raise typer.Exit(2)
    _check_source(source or cfg["perf"]["source"])
    try:
        make_backend(cfg["sandbox"]["backend"])
    except (BackendUnavailable, ValueError) as e:
        err.print(f"[red]error:[/red] {e}")
        raise typer.Exit(2)
    import flows.perf
    import flows.synth
    from flows.pipeline import pipeline
    from flows.runstate import StageFailed

    from .progress import progress_bars

    console.print(f"[bold]perfalign pipeline[/bold] profile={profile} -> {out}")
    try:
        with progress_bars("CodeContests-Perf", "synthetic pairs") as (perf_update, synth_update):
            flows.perf._progress_hook = perf_update
            flows.synth._progress_hook = lambda p: synth_update(p.done, p.total)
            try:
                result = pipeline(out=str(out), profile=profile, config_path=str(config) if config else None,
                                      overrides=overrides, source=source, repeats=repeats, workers=workers)
            finally:
                flows.perf._progress_hook = flows.synth._progress_hook = None
    except StageFailed as e:
        err.print(f"[red]pipeline failed:[/red] {e}")
        raise typer.Exit(1)
    print_pipeline_summary(result, out)


def print_pipeline_summary(result: dict, out: Path) -> None:
    stages = result["stages"]
    if "codecontests_perf" in stages:
        print_perf_summary(stages["codecontests_perf"], out / "codecontests_perf")
    if "synthetic" in stages:
        print_synth_summary(stages["synthetic"])
    t = Table("stage", "state", "output")
    for name, state in result["states"].items():
        t.add_row(name, state, str(out / name))
    console.print(t)
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
def config_cmd(
    profile: str = typer.Option("production", "--profile", help="Profile to apply."),
    config: Optional[Path] = typer.Option(None, "--config", help="Config file (default: flows/perfalign.toml)."),
    set_: Optional[List[str]] = typer.Option(None, "--set", help="Override: table.key=value (repeatable)."),
) -> None:
    """Print the effective configuration (defaults + profile + overrides) as JSON."""
    from flows.config import ConfigError, load_config

    try:
        print(json.dumps(load_config(config, profile, list(set_ or [])), indent=1))
    except ConfigError as e:
        err.print(f"[red]error:[/red] {e}")
        raise typer.Exit(2)


@app.command("status")
def status_cmd(
    root: Path = typer.Option(Path("runs"), "--root", help="Directory holding run directories."),
    limit: int = typer.Option(10, "--limit", min=1, help="How many recent runs to show."),
) -> None:
    """List recent pipeline runs with the state of each stage."""
    from flows.runstate import list_runs

    runs = list_runs(root)[:limit]
    if not runs:
        console.print(f"no runs under {root}")
        return
    colour = {"completed": "green", "skipped": "cyan", "running": "yellow", "failed": "red"}
    t = Table("run", "updated", "stages", "path")
    for r in runs:
        st = " ".join(f"[{colour.get(v.get('state'), 'white')}]{k}:{v.get('state')}[/]" for k, v in r.get("stages", {}).items())
        t.add_row(r.get("run", "?"), r.get("updated", r.get("created", "")), st, r["path"])
    console.print(t)
    for r in runs:
        for k, v in r.get("stages", {}).items():
            if v.get("state") == "failed":
                console.print(f"[red]{r['run']}/{k} failed[/red] on {v.get('input')}: {v.get('error')} (log: {v.get('log')})")


@app.command("ui")
def ui_cmd(
    port: int = typer.Option(4200, "--port", help="Port of the Prefect API and UI."),
    host: str = typer.Option("127.0.0.1", "--host", help="Bind address (loopback by default)."),
) -> None:
    """Start a local Prefect server and UI (analytics off, state under ./.perfalign/prefect)."""
    import os
    import subprocess

    from flows.deploy import server_command

    console.print(f"Prefect UI: http://{host}:{port}  (state: {os.environ['PREFECT_HOME']})\n"
                  f"Point other commands at it: export PREFECT_API_URL=http://{host}:{port}/api")
    try:
        raise typer.Exit(subprocess.call(server_command(host, port)))
    except KeyboardInterrupt:
        raise typer.Exit(0)


@app.command("deploy")
def deploy_cmd(
    out_root: Optional[Path] = typer.Option(None, "--out-root", help="Where scheduled runs write (default: ./.perfalign/scheduled)."),
    source: str = typer.Option(str(EMBEDDED_SAMPLE), "--source", help="CodeContests source for the scheduled builds."),
    perf_cron: str = typer.Option("0 2 * * *", "--perf-cron", help="Schedule of the incremental CodeContests-Perf rebuild."),
    pipeline_cron: str = typer.Option("0 3 * * 0", "--pipeline-cron", help="Schedule of the full pipeline run."),
    limit_problems: Optional[int] = typer.Option(None, "--limit-problems", min=1, help="Only the first N problems."),
    max_tests: Optional[int] = typer.Option(None, "--max-tests", min=1, help="Cap tests per problem."),
    repeats: int = typer.Option(3, "--repeats", min=1, help="Runs per test."),
) -> None:
    """Serve the flows as scheduled deployments (blocks; Ctrl-C stops and pauses the schedules)."""
    from flows.deploy import api_url_or_none, default_out_root, serve_deployments

    url = api_url_or_none()
    if not url:
        err.print("[red]error:[/red] no Prefect server answers: start one with `perfalign ui` (or set PREFECT_API_URL)")
        raise typer.Exit(2)
    import os

    os.environ["PREFECT_API_URL"] = url
    console.print(f"serving deployments on {url}: build_codecontests_perf/nightly-incremental ({perf_cron}), "
                  f"pipeline/weekly ({pipeline_cron})")
    serve_deployments(out_root=str(out_root or default_out_root()), source=source, perf_cron=perf_cron,
                      pipeline_cron=pipeline_cron, limit_problems=limit_problems, max_tests=max_tests, repeats=repeats)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
