"""`gkeml setup plan FILE` and `gkeml setup apply FILE`: Kueue queues, flavors and checks from
a ClusterSetup YAML file."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from gkeml_sdk import Client, ClusterSetup, KubernetesSettings, python_objects
from gkeml_sdk.errors import SpecError


def register(commands: Any) -> None:
    """Add `setup plan` and `setup apply` to the CLI."""
    setup = commands.add_parser("setup", help="create Kueue queues and flavors from a file")
    verbs = setup.add_subparsers(title="verbs", metavar="VERB")
    plan = verbs.add_parser("plan", help="print the objects and what apply would change")
    plan.add_argument("--offline", action="store_true", help="print the objects only")
    plan.add_argument(
        "--project", help="with --region: check the capacities against the project's quotas"
    )
    plan.add_argument(
        "--region", help="the cluster's region (or zone): where the capacities must be offered"
    )
    plan.add_argument("--compute-endpoint", help=argparse.SUPPRESS)  # a test's fake Compute API
    plan.set_defaults(handler=_plan, without_cluster="print the objects only with --offline")
    apply = verbs.add_parser("apply", help="server-side apply the objects that differ")
    apply.set_defaults(
        handler=_apply, without_cluster="see the objects with `gkeml setup plan FILE --offline`"
    )
    apply.add_argument(
        "--worker-kubeconfig",
        action="append",
        default=[],
        metavar="NAME=PATH",
        help="MultiKueue: write worker NAME's kubeconfig file as the Secret the manager reads",
    )
    for parser in (plan, apply):
        parser.add_argument("file", help="a ClusterSetup YAML file, or a .py file that defines one")
        parser.add_argument(
            "--side",
            choices=("manager", "worker"),
            default="manager",
            help="MultiKueue: the manager's objects (default) or a worker cluster's",
        )
        parser.add_argument("--context", help="kubeconfig context (default: the current one)")
        parser.add_argument(
            "--kubeconfig", help="kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)"
        )


def _client(args: argparse.Namespace) -> Client:
    return Client(kubernetes=KubernetesSettings(context=args.context, kubeconfig=args.kubeconfig))


def _setup(args: argparse.Namespace) -> ClusterSetup:
    if args.file.endswith(".py"):  # a Python file that defines one, as the examples do
        setup, *more = python_objects(args.file, ClusterSetup)
        if more:
            raise SpecError(
                f"{args.file}: defines {len(more) + 1} ClusterSetup objects",
                rule="a cluster has one setup",
                fix="keep one ClusterSetup at module level",
            )
    else:
        setup = ClusterSetup.from_file(args.file)
    return setup.for_worker() if args.side == "worker" else setup


def _plan(args: argparse.Namespace) -> int:
    if args.project and not args.region:
        args.command_parser.error("--project needs --region: the quotas are regional")
    setup = _setup(args)
    if args.region:
        setup.check_region(args.region)
    sys.stdout.write(setup.compile().to_yaml())
    if args.project and args.region:
        from gkeml_sdk.cli.nodepool_commands import quota_check, quota_sentences

        check = quota_check(args.project, args.region, args.compute_endpoint)
        for sentence in quota_sentences(lambda: check.for_setup(setup)):
            print(f"# quota: {sentence}")
    if not args.offline:
        print(
            f"---\n# plan against the cluster (nothing written):\n{_client(args).plan_setup(setup)}"
        )
    return 0


def _apply(args: argparse.Namespace) -> int:
    kubeconfigs = {}
    for pair in args.worker_kubeconfig:
        name, _, path = pair.partition("=")
        if not path:
            raise SpecError(
                f"--worker-kubeconfig {pair!r}",
                rule="each worker's kubeconfig is given as NAME=PATH",
                fix="--worker-kubeconfig worker-1=~/.kube/worker-1.yaml",
            )
        kubeconfigs[name] = Path(path).expanduser().read_text()
    plan = _client(args).apply_setup(_setup(args), worker_kubeconfigs=kubeconfigs)
    print(plan)
    print(f"applied {len(plan.pending)} object(s)")
    return 0
