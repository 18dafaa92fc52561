"""`perfalign synth generate`: synthetic fast/slow pairs and their summary."""
from __future__ import annotations

import json
from pathlib import Path

import typer

from .app import (
    _failing,
    _group,
    _load_config,
    _preflight,
    _session,
    console,
)
from .options import ConfigArgs, config_options

synth_app = _group("synth", "Synthetic fast/slow pairs from Stack seeds, verified by execution.")


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
