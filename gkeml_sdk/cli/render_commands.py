"""`gkeml render FILE` and `gkeml validate FILE`."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from gkeml_sdk import load_specs

FILE_HELP = (
    "a .yaml/.json spec, or a .py file defining TrainingJob/ServeModel objects (a .py file is "
    "executed: only pass files you trust)"
)
RUNS_PY = (
    "A .py spec file is run as Python code, with your permissions, to find the specs it "
    "defines at module level: only pass .py files you trust. YAML and JSON files are only read."
)


def register(commands: Any) -> None:
    """Add `render` and `validate` to the CLI."""
    render = commands.add_parser(
        "render", help="print the manifests a spec file compiles to", description=RUNS_PY
    )
    render.add_argument("file", help=FILE_HELP)
    render.add_argument("--cost", type=float, metavar="HOURS", help="also print the cost estimate")
    render.set_defaults(handler=_render)
    validate = commands.add_parser(
        "validate", help="check a spec file; non-zero exit if invalid", description=RUNS_PY
    )
    validate.add_argument("file", help=FILE_HELP)
    validate.set_defaults(handler=_validate)


def _render(args: argparse.Namespace) -> int:
    specs = load_specs(args.file)
    for index, spec in enumerate(specs):
        manifests = spec.compile()
        if index:
            sys.stdout.write("---\n")
        sys.stdout.write(manifests.to_yaml())
        for note in manifests.notes:
            print(f"# note: {note}", file=sys.stderr)
        if args.cost:
            print(f"# {spec.name}:\n{spec.estimate_cost(hours=args.cost)}", file=sys.stderr)
    return 0


def _validate(args: argparse.Namespace) -> int:
    for spec in load_specs(args.file):
        spec.compile()
        print(f"{type(spec).__name__} {spec.name}: valid")
    return 0
