"""`gkeml render FILE` and `gkeml validate FILE`."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from gkeml_sdk import load_specs
from gkeml_sdk.errors import SpecError

FILE_HELP = (
    "a .yaml/.json spec, or a .py file defining TrainingJob/ServeModel objects (a .py file is "
    "executed: only pass files you trust)"
)
RUNS_PY = (
    "A .py spec file is run as Python code, with your permissions, to find the specs it "
    "defines at module level: only pass .py files you trust. YAML and JSON files are only read."
)

if TYPE_CHECKING:
    from gkeml_sdk import ServeModel


def register(commands: Any) -> None:
    """Add `render` and `validate` to the CLI."""
    render = commands.add_parser(
        "render", help="print the manifests a spec file compiles to", description=RUNS_PY
    )
    render.add_argument("file", help=FILE_HELP)
    render.add_argument("--cost", type=float, metavar="HOURS", help="also print the cost estimate")
    render.add_argument(
        "--plan",
        action="store_true",
        help="also print each ServeModel's serving plan table, without the cost (to stderr, as "
        "# comments, so stdout stays YAML)",
    )
    render.set_defaults(handler=_render)
    validate = commands.add_parser(
        "validate", help="check a spec file; non-zero exit if invalid", description=RUNS_PY
    )
    validate.add_argument("file", help=FILE_HELP)
    validate.set_defaults(handler=_validate)


def _render(args: argparse.Namespace) -> int:
    specs = load_specs(args.file)
    if args.plan and not any(_is_serving(spec) for spec in specs):
        raise SpecError(
            f"{args.file}: --plan shows the serving plan of a ServeModel, and it has none",
            fix=f"gkeml render {args.file} --cost HOURS for a TrainingJob's estimate",
        )
    for index, spec in enumerate(specs):
        manifests = spec.compile()
        if index:
            sys.stdout.write("---\n")
        sys.stdout.write(manifests.to_yaml())
        for note in manifests.notes:
            print(f"# note: {note}", file=sys.stderr)
        if _is_serving(spec):
            if args.plan or args.cost:
                print(_serving_plan(spec, args.cost), file=sys.stderr)
        elif args.cost:
            print(f"# {spec.name}:\n{spec.estimate_cost(hours=args.cost)}", file=sys.stderr)
    return 0


def _is_serving(spec: object) -> bool:
    # A ServeModel exists only once its module is loaded: a training render never imports it.
    serving = sys.modules.get("gkeml_sdk.serving.model")
    return serving is not None and isinstance(spec, serving.ServeModel)


def _serving_plan(svc: ServeModel, hours: float | None) -> str:
    plan = svc.plan()
    lines = [f"# {line}" for line in str(plan).splitlines()]
    if hours:
        low, high = plan.cost_per_hour(), plan.cost_per_hour(plan.max_replicas)
        if low is None or high is None:
            lines.append(f"# cost for {hours:g} h: no list price (set one with plan(prices=...))")
        else:
            spread = f"${low * hours:,.2f}" + (f"-${high * hours:,.2f}" if high != low else "")
            lines.append(
                f"# cost for {hours:g} h: {spread} ({plan.min_replicas}-{plan.max_replicas} "
                "replicas, accelerator component only)"
                if high != low
                else f"# cost for {hours:g} h: {spread} (accelerator component only)"
            )
    return "\n".join(lines)


def _validate(args: argparse.Namespace) -> int:
    for spec in load_specs(args.file):
        spec.compile()
        print(f"{type(spec).__name__} {spec.name}: valid")
    return 0
