"""`perfalign sandbox ...`: run one submission, or check what this host supports.

The JSON printed by `run --json` is a contract other tools drive: keep it stable.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import List, Optional

import typer
from rich.console import Console
from rich.table import Table

from .clock import DEFAULT_CLOCK, check_clock
from .settings import SandboxSettings

app = typer.Typer(help="Run untrusted C++ / Python 3 / Java programs, isolated and measured.", no_args_is_help=True)
err = Console(stderr=True)


@app.command("run")
def run_cmd(
    source: Path = typer.Argument(..., exists=True, dir_okay=False, readable=True, help="Source file to run."),
    lang: Optional[str] = typer.Option(None, "--language", help="Language: cpp, python3, java or python2 (aliases "
                                                                "such as c++, py, py3, or a CodeContests id 1-4)."),
    input: Optional[List[Path]] = typer.Option(None, "--input", exists=True, dir_okay=False,
                                               help="Test input file (repeatable)."),
    expected: Optional[List[Path]] = typer.Option(None, "--expected", exists=True, dir_okay=False,
                                                  help="Expected output for the --input at the same position "
                                                       "(repeatable)."),
    time_limit: float = typer.Option(2.0, "--time-limit", min=0.01,
                                     help="CPU-time limit per test (every process and thread), seconds; "
                                          "the wall clock is a guard at 3x + 1 s."),
    memory_limit: int = typer.Option(256, "--memory-limit", min=8, help="Memory limit, MB."),
    repeats: int = typer.Option(1, "--repeats", min=1, help="Runs per test; all kept, median reported."),
    backend: str = typer.Option(SandboxSettings.backend, "--backend",
                                help="auto, bwrap, docker or local-unsafe (NOT isolated)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object (the stable contract)."),
    keep_output: bool = typer.Option(False, "--show-output", help="Include each test's stdout."),
    clock: str = typer.Option(DEFAULT_CLOCK, "--clock",
                              help="What measures it: cpu (CPU time), instructions (valgrind's exact count, "
                                   "every process) or cycles (instructions + weighted cache misses); the "
                                   "deterministic clocks run ~40-80x slower, time limits scaled to match."),
    old_lang: Optional[str] = typer.Option(None, "--lang", hidden=True, help="Old name of --language."),
) -> None:
    """Compile SOURCE once and run it on each --input; exit 0 whenever the run happened."""
    from . import BackendUnavailable, Language, Limits, Sandbox, TestCase, Verdict

    lang = lang or old_lang
    if lang is None:
        raise typer.BadParameter("missing: the program's language", param_hint="--language")
    try:
        lang = Language.parse(lang).value
    except ValueError as e:
        raise typer.BadParameter(str(e), param_hint="--language") from None
    try:
        check_clock(clock)
    except ValueError as e:
        raise typer.BadParameter(str(e), param_hint="--clock") from None
    inputs, expecteds = list(input or []), list(expected or [])
    if expecteds and len(expecteds) != len(inputs):
        raise typer.BadParameter("give one --expected per --input (they pair up in order)", param_hint="--expected")
    tests = [TestCase(p.read_text(errors="surrogateescape"),
                      expecteds[i].read_text(errors="surrogateescape") if expecteds else None)
             for i, p in enumerate(inputs)]
    try:
        sb = Sandbox(backend=backend)
    except (BackendUnavailable, ValueError) as e:
        err.print(f"[red]error:[/red] {e}")
        raise typer.Exit(2)
    with sb:
        result = sb.run(source.read_text(errors="surrogateescape"), lang, tests or None,
                        Limits(time_s=time_limit, memory_mb=memory_limit), repeats=repeats, keep_output=keep_output,
                        clock=clock)
    if as_json:
        print(json.dumps(result.to_dict()))
    else:
        _print_result(result)
    if result.verdict is Verdict.SANDBOX_ERROR:
        raise typer.Exit(3)  # infrastructure fault: callers may retry


def _print_result(result) -> None:
    out = Console()
    colour = "green" if result.ok else "red"
    iso = "" if result.isolated else " [bold yellow](NOT ISOLATED)[/bold yellow]"
    out.print(f"[{colour}]{result.verdict.value}[/{colour}] backend={result.backend}{iso} "
              f"compile={'ok' if result.compile.ok else 'failed'} ({result.compile.seconds:.2f}s"
              f"{', cached' if result.compile.cached else ''})")
    if result.compile.message and not result.compile.ok:
        out.print(result.compile.message)
    clock = result.clock
    counted = clock != "cpu"
    t = Table("test", "verdict", "cpu s (median)", "wall s", "max rss KB", "cpu s (all)",
              *((clock, f"{clock} (all)") if counted else ()))
    for i, r in enumerate(result.tests):
        vals = r.cycles_runs if clock == "cycles" else r.instructions_runs
        t.add_row(str(i), r.verdict.value, _f(r.cpu_time_s), _f(r.wall_time_s), str(r.max_rss_kb),
                  " ".join(f"{x:.4f}" for x in r.cpu_times_s),
                  *((_n(r.cycles if clock == "cycles" else r.instructions), " ".join(_n(v) for v in vals))
                    if counted else ()))
    out.print(t)
    if result.flags:
        out.print("flags: " + " ".join(result.flags))
    for i, r in enumerate(result.tests):
        if r.message:
            out.print(f"test {i}: {r.message}")
        if r.output is not None:
            out.print(f"test {i} stdout:\n{r.output}")


def _f(x) -> str:
    return "-" if x is None else f"{x:.4f}"


def _n(x) -> str:
    return "-" if x is None else f"{x:,.0f}"


@app.command("doctor")
def doctor_cmd(
    calibrate: bool = typer.Option(True, "--calibrate/--no-calibrate",
                                   help="Also measure the host calibration figure."),
) -> None:
    """Show which backends and cgroup controls work on this host."""
    from . import available_backends, detect_backend
    from .cgroups import probe

    out = Console()
    t = Table("backend", "status")
    for name, reason in available_backends().items():
        t.add_row(name, "[green]available[/green]" if reason is None else f"[red]unavailable[/red]: {reason}")
    out.print(t)
    layout = probe()
    out.print(f"cgroups: {'v%d (memory, pids)' % layout.version if layout else 'not writable: rlimits only'}")
    _print_environments(out)
    try:
        best = detect_backend()
        out.print(f"auto-detected backend: [bold]{best}[/bold]")
    except Exception as e:
        out.print(f"[red]{e}[/red]")
        raise typer.Exit(2)
    if calibrate:
        from . import Sandbox

        with Sandbox(backend=best) as sb:
            cal = sb.calibration()
        out.print(f"calibration: reference program {cal.get('reference_cpu_s')} s CPU on {cal.get('cpu_model')}")


def _print_environments(out: Console) -> None:
    """The judge environments (sandbox.environments) and the Docker engine and image."""
    from . import environments
    from .backends.docker import engine_status

    libs = environments.python3_libs()
    if libs.dir is not None:
        out.print(f"python3 judge libraries: {libs.dir} (for Python {libs.python}): "
                  + ", ".join(f"{n}=={v}" for n, v in libs.libraries))
    else:
        out.print(f"python3 judge libraries: [red]missing[/red]: {libs.reason}")
    py2 = environments.python2()
    if py2.root is not None:
        out.print(f"python2: Python {py2.version} from the Debian bullseye root {py2.root}")
    else:
        out.print(f"python2: [red]unsupported[/red]: {py2.reason}")
    docker = engine_status()
    out.print("docker: " + ", ".join(f"{k} {v}" for k, v in docker.items()))
