"""`gkeml setup plan FILE` and `gkeml setup apply FILE`: Kueue queues, flavors and checks from
a ClusterSetup YAML file."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from gkeml_sdk import Client, ClusterSetup, KubernetesSettings


def register(commands: Any) -> None:
    """Add `setup plan` and `setup apply` to the CLI."""
    setup = commands.add_parser("setup", help="create Kueue queues and flavors from a file")
    verbs = setup.add_subparsers(title="verbs", metavar="VERB")
    plan = verbs.add_parser("plan", help="print the objects and what apply would change")
    plan.add_argument("--offline", action="store_true", help="print the objects only")
    plan.set_defaults(handler=_plan, without_cluster="print the objects only with --offline")
    apply = verbs.add_parser("apply", help="server-side apply the objects that differ")
    apply.set_defaults(
        handler=_apply, without_cluster="see the objects with `gkeml setup plan FILE --offline`"
    )
    for parser in (plan, apply):
        parser.add_argument("file", help="a ClusterSetup YAML file")
        parser.add_argument("--context")
        parser.add_argument("--kubeconfig")


def _client(args: argparse.Namespace) -> Client:
    return Client(kubernetes=KubernetesSettings(context=args.context, kubeconfig=args.kubeconfig))


def _plan(args: argparse.Namespace) -> int:
    setup = ClusterSetup.from_file(args.file)
    sys.stdout.write(setup.compile().to_yaml())
    if not args.offline:
        print(
            f"---\n# plan against the cluster (nothing written):\n{_client(args).plan_setup(setup)}"
        )
    return 0


def _apply(args: argparse.Namespace) -> int:
    plan = _client(args).apply_setup(ClusterSetup.from_file(args.file))
    print(plan)
    print(f"applied {len(plan.pending)} object(s)")
    return 0
