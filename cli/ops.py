"""Running and watching the main job: `perfalign pipeline`, `config`, `status`, `ui`, `deploy`."""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Optional

import typer
from rich.table import Table

from perfalign.config.defaults import DEFAULT_PORT, NIGHTLY_PERF_CRON, RUNS_ROOT, WEEKLY_PIPELINE_CRON

from .app import (
    _check_backend,
    _fail,
    _failing,
    _load_config,
    _preflight,
    _session,
    _str,
    app,
    console,
)
from .eval import print_eval_scores
from .options import ConfigArgs, config_options
from .perf import print_perf_summary
from .synth import print_synth_summary


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
    from perfalign.flows.runstate import RunDirConflict, StageFailed, check_run_dir, default_run_dir

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
    from .status import closing_table

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
    from perfalign.flows.runstate import list_runs

    from .status import status_table

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
    from perfalign.flows.env import project_dir
    from perfalign.flows.runstate import orphans_in_local_db

    home = Path(os.environ.get("PREFECT_HOME") or project_dir() / "prefect")
    if not os.environ.get("PREFECT_API_URL") and not orphans_in_local_db(home / "prefect.db"):
        return
    from perfalign.flows.server import local_api

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
