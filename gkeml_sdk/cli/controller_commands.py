"""`gkeml controller run|install`: the run controller that recovers runs with nobody
watching, as a process here or as a Deployment in the cluster."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from pathlib import Path
from typing import Any


def register(commands: Any) -> None:
    """Add `controller` and its verbs to the CLI."""
    controller = commands.add_parser("controller", help="the run controller: recovery unattended")
    verbs = controller.add_subparsers(title="controller commands", metavar="VERB")
    run = verbs.add_parser("run", help="reconcile the namespaces' runs until stopped")
    run.add_argument("--interval", type=float, default=2.0, metavar="SECONDS",
                     help="seconds between Lease renewals")  # fmt: skip
    run.add_argument("--resync", type=float, default=60.0, metavar="SECONDS",
                     help="seconds between full passes (watched in between)")  # fmt: skip
    run.add_argument("--identity", help="name in the Leases (default: $GKEML_CONTROLLER_ID)")
    run.set_defaults(
        handler=_run,
        without_cluster="see what it would install with `gkeml controller install -n NS --image "
        "IMAGE --dry-run`",
    )
    install = verbs.add_parser("install", help="apply the controller's Deployment and Roles")
    install.add_argument("--image", default="",
                         help="the controller image you built from the Dockerfile and pushed "
                         "(required)")  # fmt: skip
    install.add_argument("--replicas", type=int, default=2, help="1 to 10; one leads")
    install.add_argument("--dry-run", action="store_true", help="print the YAML, apply nothing")
    install.set_defaults(handler=_install, without_cluster="print the objects only with --dry-run")
    for parser in (run, install):
        parser.add_argument("-n", "--namespace", action="append", required=True,
                            help="a namespace whose runs it manages (repeatable)")  # fmt: skip
        parser.add_argument("--controller-namespace", default="gkeml-system",
                            help="the controller's own namespace (where its Lease is)")  # fmt: skip
        parser.add_argument("--tenants", metavar="FILE",
                            help="also run the tenants' standby manager")  # fmt: skip
        parser.add_argument("--no-rollouts", dest="rollouts", action="store_false",
                            help="leave serving rollouts to the clients that begin them "
                            "(and the controller without rights over the services' "
                            "objects)")  # fmt: skip
        parser.add_argument("--lease-namespace", default="default",
                            help="namespace of the standby manager's Lease")  # fmt: skip
        parser.add_argument("--context", help="kubeconfig context (default: the current one)")
        parser.add_argument(
            "--kubeconfig", help="kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)"
        )


def _run(args: argparse.Namespace) -> int:
    from gkeml_sdk import KubernetesSettings, StandbyManager, run_controller

    settings = KubernetesSettings(
        context=args.context,
        kubeconfig=args.kubeconfig,
        controller_namespace=args.controller_namespace,
    )
    identity = args.identity or os.environ.get("GKEML_CONTROLLER_ID") or None
    controller = run_controller(
        args.namespace,
        settings=settings,
        identity=identity,
        interval=args.interval,
        resync=args.resync,
        rollouts=args.rollouts,
    )
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    manager = None
    if args.tenants:
        manager = StandbyManager(
            _tenants(args.tenants),
            settings=settings,
            lease_namespace=args.lease_namespace,
            identity=controller.identity,
        )
        manager.start()
    print(f"run controller {controller.identity}: namespaces {', '.join(args.namespace)}",
          flush=True)  # fmt: skip
    try:
        controller.run(stop)
    except KeyboardInterrupt:
        pass
    finally:
        if manager is not None:
            manager.stop()
    return 0


def _install(args: argparse.Namespace) -> int:
    from gkeml_sdk import KubernetesSettings, controller_manifests, install_controller

    tenants_yaml = None
    tenants = []
    if args.tenants:
        # Parsed before anything is applied (a file, of a bounded size, that the manager can
        # read), then read once more as the text the manager gets.
        tenants = _tenants(args.tenants)
        tenants_yaml = Path(args.tenants).read_text(encoding="utf-8")
    manifests = controller_manifests(
        args.namespace,
        image=args.image,
        controller_namespace=args.controller_namespace,
        tenants=tenants,
        tenants_yaml=tenants_yaml,
        replicas=args.replicas,
        rollouts=args.rollouts,
    )
    if args.dry_run:
        sys.stdout.write(manifests.to_yaml())
        return 0
    settings = KubernetesSettings(context=args.context, kubeconfig=args.kubeconfig)
    for applied in install_controller(manifests, settings=settings):
        print(f"applied {applied}")
    return 0


def _tenants(file: str) -> list[Any]:
    from gkeml_sdk import SpecError, Tenant, load_specs

    tenants = [s for s in load_specs(file) if isinstance(s, Tenant)]
    if not tenants:
        raise SpecError(f"{file}: no Tenant", fix="add documents with `kind: Tenant`")
    return tenants
