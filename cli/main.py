"""The `perfalign` command: the root app with every command group registered."""
from __future__ import annotations

from .app import app

# isort: off
from . import perf, synth, triplets, align, eval, ops, grpo, kernel  # noqa: F401 - each registers its commands (--help keeps this order)
# isort: on


def main() -> None:
    app()


if __name__ == "__main__":
    main()
