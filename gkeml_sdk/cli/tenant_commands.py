"""`gkeml tenant plan|apply|status|manage|drill FILE`: tenants with isolation tiers, their
standbys and failover drills."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from gkeml_sdk import (
    ConfigError,
    KubernetesSettings,
    SpecError,
    StandbyManager,
    Tenant,
    compile_tenants,
    load_specs,
)


def register(commands: Any) -> None:
    """Add `tenant` and its subcommands to the CLI."""
    tenant = commands.add_parser("tenant", help="tenants: tiers, standbys, failover drills")
    verbs = tenant.add_subparsers(title="tenant commands", metavar="VERB")
    plan = verbs.add_parser("plan", help="what the tenants get, and the objects they compile to")
    plan.add_argument("--yaml", action="store_true", help="print every object as YAML")
    plan.set_defaults(handler=_plan)
    apply = verbs.add_parser("apply", help="apply the tenants' objects to the cluster")
    apply.set_defaults(handler=_apply)
    status = verbs.add_parser("status", help="failovers and GPU allocations per tenant")
    status.set_defaults(handler=_status)
    manage = verbs.add_parser("manage", help="run the standby manager until interrupted")
    manage.set_defaults(handler=_manage)
    drill = verbs.add_parser("drill", help="take a primary down and measure the recovery")
    drill.add_argument("--tenant", required=True, help="the tenant whose primary to take down")
    drill.add_argument("--model", help="one model (default: each of the tenant's models)")
    drill.add_argument("--timeout", type=float, default=600.0, metavar="SECONDS",
                       help="give up waiting for recovery after this long")  # fmt: skip
    drill.set_defaults(handler=_drill)
    for parser in (plan, apply, status, manage, drill):
        parser.add_argument("file", help="a YAML file of `kind: Tenant` documents")
    for parser in (apply, status, manage, drill):
        parser.set_defaults(without_cluster="see their objects with `gkeml tenant plan FILE`")
        parser.add_argument("--context", help="kubeconfig context (default: the current one)")
        parser.add_argument(
            "--kubeconfig", help="kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)"
        )
        parser.add_argument("--lease-namespace", default="default",
                            help="namespace of the managers' Lease")  # fmt: skip
    tenant.set_defaults(handler=lambda args: tenant.print_help() or 2)


def _tenants(file: str) -> list[Tenant]:
    tenants = [s for s in load_specs(file) if isinstance(s, Tenant)]
    if not tenants:
        raise SpecError(f"{file}: no Tenant", fix="add documents with `kind: Tenant`")
    return tenants


def _manager(args: argparse.Namespace) -> StandbyManager:
    settings = KubernetesSettings(context=args.context, kubeconfig=args.kubeconfig)
    return StandbyManager(
        _tenants(args.file), settings=settings, lease_namespace=args.lease_namespace
    )


def _plan(args: argparse.Namespace) -> int:
    tenants = _tenants(args.file)
    manifests = compile_tenants(tenants)
    if args.yaml:
        sys.stdout.write(manifests.to_yaml())
        return 0
    for t in tenants:
        tier = t.tier
        standbys = f"{tier.standbys} {tier.standby_level} standby(s) per model"
        if tier.standby_level == "cold":
            standbys = f"a cold standby per model (created on failover, {t.standby_pods} held)"
        print(
            f"{t.name} (namespace {t.namespace}): tier {tier.name}, {tier.isolation} GPUs, "
            f"{standbys}, recovery objective {tier.rto_seconds:g} s, "
            f"GPUs {t.reserved_gpus} held of quota {t.gpu_quota}"
        )
        for m in t.models:
            print(
                f"  {m.name}: {m.model.model} weight {m.weight}, replicas "
                f"{m.min_replicas}-{m.max_replicas}, {m.gpus_per_replica} GPU(s) each"
            )
    kinds: dict[str, int] = {}
    for obj in manifests.objects:
        kinds[obj["kind"]] = kinds.get(obj["kind"], 0) + 1
    print("objects: " + ", ".join(f"{n} {k}" for k, n in kinds.items()))
    return 0


def _apply(args: argparse.Namespace) -> int:
    for name in _manager(args).apply():
        print(f"applied {name}")
    return 0


def _status(args: argparse.Namespace) -> int:
    manager = _manager(args)
    refused = 0
    for tenant in manager.tenants:
        try:
            s = manager.status(tenant)
        except ConfigError as exc:  # one damaged status: said on its row, the others go on
            print(f"{tenant.name}: tier {tenant.tier.name}, UNREADABLE: {exc}")
            refused += 1
            continue
        failing = ", ".join(sorted(s.failing_over)) or "none"
        print(
            f"{tenant.name}: tier {tenant.tier.name}, failovers {s.failover_count}, last "
            f"{s.last_failover or 'never'}, failed over now: {failing}"
        )
        for row in s.allocations:
            print(
                f"  {row['pod']}: {row['model']} ({row['role']}) {row['gpus']} x {row['gpu']} "
                f"on {row['node'] or '-'}, {row['memory_gb'] or '-'} GB, {row['status']}"
            )
    return 1 if refused else 0


def _manage(args: argparse.Namespace) -> int:
    manager = _manager(args)
    print(f"standby manager {manager.identity}: {len(manager.tenants)} tenant(s); Ctrl-C stops")
    try:
        manager.run()
    finally:
        manager.stop()
    return 0


def _drill(args: argparse.Namespace) -> int:
    manager = _manager(args).start()
    try:
        report = manager.drill(args.tenant, args.model, timeout=args.timeout)
    finally:
        manager.stop()
    print(report.table())
    return 0 if all(row.met for row in report.rows) else 1
