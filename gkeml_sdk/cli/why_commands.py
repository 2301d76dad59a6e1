"""`gkeml why NAME`: why a run is where it is, in one sentence, with the evidence behind it."""

from __future__ import annotations

import argparse
from typing import Any

from gkeml_sdk.cli.run_commands import add_connection_options, run_named


def register(commands: Any) -> None:
    """Add `why` to the CLI."""
    why = commands.add_parser("why", help="why a run is where it is: cause, next action, evidence")
    why.add_argument("name", help="run name")
    why.add_argument("-q", "--quiet", action="store_true", help="the sentence only")
    add_connection_options(why)
    why.set_defaults(handler=_why)


def _why(args: argparse.Namespace) -> int:
    run = run_named(args)
    explanation = run.explain()
    logs = f"gkeml logs {args.name}" + (" --local" if args.local else "")
    print(f"{args.name}: {explanation.sentence.replace('run.logs()', logs)}")
    if not args.quiet:
        print(f"  category: {explanation.category.value}")
        if explanation.evidence:
            print("  evidence:")
        for fact in explanation.evidence:
            print(f"    {fact}")
    return 0
