"""`perfalign eval`: a report over models, one candidate's score, the suites' problems."""
from __future__ import annotations

import json
from pathlib import Path
from typing import List, Optional

import typer
from rich.markup import escape
from rich.table import Table

from .app import (
    _CONTROLLED_HELP,
    _OLD_NAME,
    _fail,
    _failing,
    _fmt,
    _group,
    _load_config,
    _session,
    _str,
    console,
    err,
)
from .options import ConfigArgs, config_options

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
                                              help=_CONTROLLED_HELP + ": its held-out prompts."),
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
    from perfalign.evaluation.config import DEFAULT_PAREVAL_DIR, DEFAULT_POLYBENCH_DIR
    from perfalign.evaluation.score_one import ProblemUnusable, ScoreInputError, read_code, score_candidate

    cfg = _load_config(conf)
    e = cfg.eval
    # the bundled samples (the pipeline's default) are no checkout: a problem needs the suite's own
    pareval_dir, polybench_dir = (None if Path(d).resolve() == sample.resolve() else d for d, sample in
                                  ((e.pareval_dir, DEFAULT_PAREVAL_DIR), (e.polybench_dir, DEFAULT_POLYBENCH_DIR)))
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
