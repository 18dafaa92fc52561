"""`perfalign kernel score | eval`: the KernelBench kernel environment."""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import typer

from .app import (
    _fail,
    _failing,
    _fmt,
    _group,
    _load_config,
    _session,
    console,
)
from .options import ConfigArgs, config_options

kernel_app = _group("kernel", "Kernel environment: KernelBench problems, sandboxed candidates, speedups over eager "
                              "PyTorch and torch.compile.")


def _kernel_config(conf: ConfigArgs):
    """The [kernel] table (kernelenv.ScoreConfig; at most ``trials`` timed calls, at least
    min(min_trials, trials)) and the [sandbox] settings the scorer opens its sandbox with."""
    cfg = _load_config(conf)
    k = cfg.kernel
    return dataclasses.replace(k, min_trials=min(k.min_trials, k.trials)), cfg.sandbox


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

    cfg, sandbox = _kernel_config(conf)
    with _failing(ProblemError, KernelEnvError, OSError, UnicodeDecodeError):
        prob = load_problem(problem)
        source = candidate.read_text(encoding="utf-8")
        with Scorer(cfg, sandbox) as scorer:
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

    cfg, sandbox = _kernel_config(conf)
    if candidates != "reference" and not Path(candidates).is_dir():
        _fail(f"--candidates {candidates}: not a directory (or 'reference')")
    with _failing(ProblemError, KernelEnvError):
        Scorer(cfg, sandbox).close()  # fail before starting Prefect if torch cannot reach the sandbox
        from perfalign.flows.kernel import kernel_eval

        with _session(bars=not as_json):
            result = kernel_eval(str(problems), candidates, str(out), cfg, sandbox)
    if as_json:
        print(json.dumps(result["metrics"]))
    else:
        m = result["metrics"]
        console.print(f"{m['n']} problems: correct {m['correct_pct']:.1f}%, "
                      + ", ".join(f"{k} {v:.1f}%" for k, v in m["fast_p"].items())
                      + f", faster than torch.compile {_fmt(m['faster_than_compile_pct'])}%, geomean speedup "
                        f"eager {_fmt(m['geomean_speedup_eager'])}, compile {_fmt(m['geomean_speedup_compile'])}")
        console.print(f"report: {out / 'report.md'}")
