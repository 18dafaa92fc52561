"""`perfalign perf build` and `perfalign publish`: CodeContests-Perf and its summary."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer
from rich.markup import escape
from rich.table import Table

from perfalign.config.defaults import RUNS_ROOT
from perfalign.config.fields import DEFAULT_PROFILE

from .app import (
    _check_backend,
    _fail,
    _failing,
    _group,
    _load_config,
    _preflight,
    _session,
    app,
    console,
    err,
)
from .options import ConfigArgs, config_options

perf_app = _group("perf", "CodeContests-Perf: measure every submission, build the dataset.")


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
    from perfalign.perfdata.codecontests import SourceUnreadable
    from perfalign.sandbox.clock import ClockMismatch

    with _failing(SourceUnreadable, ClockMismatch, code=1):  # as the flow fails on them
        summary = already_built(str(out), cfg.perf, remeasure_rejects)
    if summary is None:
        with _session(bars=not as_json), _failing(FailedRun, code=1):  # e.g. a source file found damaged
            summary = run_build(str(out), cfg.perf, cfg.sandbox, workers=cfg.sandbox.workers or None,
                                dask_address=dask_address,
                                remeasure_rejects=remeasure_rejects)
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

def print_perf_summary(summary: dict, out: Path) -> None:
    from perfalign.perfdata.summary import error_lines

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
    path: Path = typer.Option(RUNS_ROOT / DEFAULT_PROFILE / "codecontests_perf", "--path",
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
