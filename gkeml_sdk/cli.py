"""The `gkeml` command: render, validate and browse the catalog (and, with a cluster,
submit and follow runs). Prints and exits here only; the library raises."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from gkeml_sdk.errors import GkemlError


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `gkeml` console script.

    Example:
        >>> main(["catalog", "tpus"])  # doctest: +ELLIPSIS
        name ...
        0
    """
    parser = _parser()
    args = parser.parse_args(argv)
    if not hasattr(args, "handler"):
        parser.print_help()
        return 2
    try:
        return int(args.handler(args))
    except GkemlError as exc:
        print(f"gkeml: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


def _parser() -> argparse.ArgumentParser:
    from gkeml_sdk.commands import catalog, render, runs

    parser = argparse.ArgumentParser(
        prog="gkeml", description="GPU/TPU training and serving on GKE through Kueue."
    )
    commands = parser.add_subparsers(title="commands", metavar="COMMAND")
    for module in (render, catalog, runs):
        module.register(commands)
    return parser


if __name__ == "__main__":
    sys.exit(main())
