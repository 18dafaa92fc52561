"""The `perfalign` command line. Sub-commands live beside the code they drive and are
imported lazily, so `perfalign sandbox run` does not pay for Prefect or torch imports."""
from __future__ import annotations

import typer

from sandbox.cli import app as sandbox_app

app = typer.Typer(
    help="perfalign: teach code LLMs to write faster code (RLPF / DPA).",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
)
app.add_typer(sandbox_app, name="sandbox")


def main() -> None:
    app()


if __name__ == "__main__":
    main()
