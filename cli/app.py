"""The root command `perfalign` and what every command group shares: the consoles, one-line
failures, loading the configuration, the flow session. Groups live in their own modules
(cli.main assembles them); heavy libraries are imported inside the commands, so
`perfalign sandbox run` does not pay for Prefect or torch."""
from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path
from typing import Iterator, NoReturn, Optional

import typer
from rich.console import Console
from rich.markup import escape

from perfalign.sandbox.cli import app as sandbox_app

from . import preflight
from .options import ConfigArgs


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
    """The one typed configuration (config.tables), or a clear error and exit code 2."""
    from perfalign.config.tables import ConfigError, load_config

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
    """cli.session.flow_session, imported only by a command that runs flows (it imports Prefect)."""
    from .session import flow_session

    return flow_session(bars=bars)


def _preflight(check: str, *args) -> None:
    """A cli.preflight check, before Prefect starts: its failure is one line and exit code 2."""
    with _failing(preflight.PreflightError):
        getattr(preflight, check)(*args)


_OLD_NAME = {"hidden": True, "help": "Old name of the option above."}  # kept so old scripts still run
_CONTROLLED_HELP = "The controlled task's folder (a pipeline run's controlled/)"  # the --controlled options


def _renamed(value, old_value, name: str):
    """An option's value given under its name or its old (hidden) one; missing: one line, exit 2."""
    if value is None and old_value is None:
        _fail(f"missing option {name}")
    return value if value is not None else old_value


def _fmt(x) -> str:
    return "-" if x is None else f"{x:.3f}"
