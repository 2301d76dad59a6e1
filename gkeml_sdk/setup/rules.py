"""The rules a `ClusterSetup` must meet: names that fit, quota that names real capacity, and
the Kueue webhooks' limits (https://kueue.sigs.k8s.io/docs/concepts/cluster_queue/)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gkeml_sdk.core.model import DNS1035_LABEL, DNS1123_SUBDOMAIN, fail
from gkeml_sdk.core.rules import check_name

if TYPE_CHECKING:
    from gkeml_sdk.setup.fields import ClusterSetupFields

_RECLAIM = ("Never", "LowerPriority", "Any")
_WITHIN = ("Never", "LowerPriority", "LowerOrNewerEqualPriority")
_BORROW = ("Never", "LowerPriority")


def check_setup(setup: ClusterSetupFields) -> None:
    """Raise `SpecError` for the first rule `setup` breaks."""
    _unique("capacity", [c.name for c in setup.capacity])
    _unique("team", [t.name for t in setup.teams])
    check_name("cohort", setup.cohort, DNS1123_SUBDOMAIN, 253)
    for name, value in (setup.priorities or {}).items():
        check_name("priority", name, DNS1123_SUBDOMAIN, 253)
        if not -(2**31) <= value < 2**31:
            raise fail(f"priority {name}={value}", rule="a priority is an int32", fix="1000")
    for field, choice, allowed in (
        ("reclaim_within_cohort", setup.reclaim_within_cohort, _RECLAIM),
        ("within_cluster_queue", setup.within_cluster_queue, _WITHIN),
        ("borrow_within_cohort", setup.borrow_within_cohort, _BORROW),
    ):
        if choice not in allowed:
            raise fail(f"{field}={choice!r}", fix=f"one of {', '.join(allowed)}", field=field)
    if setup.reclaim_within_cohort == "Never" and setup.borrow_within_cohort != "Never":
        raise fail(
            "borrow_within_cohort without reclaim_within_cohort",
            rule="Kueue refuses preemption while borrowing when reclaimWithinCohort is Never",
            fix="reclaim_within_cohort='LowerPriority' or borrow_within_cohort='Never'",
            field="borrow_within_cohort",
        )
    if setup.queued_retries < 0:
        raise fail(f"queued_retries={setup.queued_retries}", fix="0 or more")
    names = [c.name for c in setup.capacity]
    _check_gpudirect(setup)
    _check_topology(setup)
    namespaces: dict[str, str] = {}
    for team in setup.teams:
        for key in team.quota:
            if key not in names:
                raise fail(
                    f"team {team.name!r}: quota for unknown capacity {key!r}",
                    rule="quota is given per capacity of the setup",
                    fix=f"one of {', '.join(names)}",
                    field="quota",
                )
        if not team.quota:
            raise fail(
                f"team {team.name!r} has no quota",
                rule="a team's ClusterQueues hold the capacities it has quota of (0 to borrow)",
                fix=f"quota={{{names[0]!r}: 8}}",
                field="quota",
            )
        for namespace in team.namespaces:
            other = namespaces.setdefault(namespace, team.name)
            if other != team.name:
                raise fail(
                    f"namespace {namespace!r} belongs to teams {other!r} and {team.name!r}",
                    rule="LocalQueues are named per team and mode; two teams in one namespace "
                    "would need each other's queue names",
                    fix="give each team its own namespaces",
                    field="namespaces",
                )


def _unique(what: str, names: list[str]) -> None:
    seen = {n for n in names if names.count(n) > 1}
    if seen:
        raise fail(
            f"{what} names repeat: {', '.join(sorted(seen))}",
            rule=f"each {what} names its own Kueue objects",
            fix=f"give each {what} a distinct name=",
        )


def _check_gpudirect(setup: ClusterSetupFields) -> None:
    from gkeml_sdk.setup.gpudirect import capacity_stack, vpc_names

    networks: dict[str, tuple[str, str]] = {}
    for capacity in setup.capacity:
        stack = capacity_stack(capacity)
        if capacity.gpudirect_vpc is None:
            continue
        if stack is None:
            raise fail(
                f"capacity {capacity.name!r}: gpudirect_vpc={capacity.gpudirect_vpc!r}",
                rule=f"{capacity.accelerator} has no GPUDirect NICs to attach networks to",
                fix="drop gpudirect_vpc",
                field="gpudirect_vpc",
            )
        check_name("gpudirect_vpc", capacity.gpudirect_vpc, DNS1035_LABEL, 40)
        for name, vpc, subnet in vpc_names(stack, capacity.gpudirect_vpc):
            if networks.setdefault(name, (vpc, subnet)) != (vpc, subnet):
                raise fail(
                    f"GKE Network {name!r} names two VPCs: {networks[name][0]} and {vpc}",
                    rule="a Network object is cluster-wide: one VPC and subnet per name",
                    fix="give those capacities the same gpudirect_vpc",
                    field="gpudirect_vpc",
                )


def _check_topology(setup: ClusterSetupFields) -> None:
    from gkeml_sdk.hardware.gpus import GPUS, carries_topology

    for capacity in setup.capacity:
        machine = capacity.accelerator.pool_shape().machine_type
        # TPU machine types have no GPU row: which TPU nodes carry the labels is not checked.
        if capacity.topology and carries_topology(machine) is False:
            with_labels = [g.key for g in GPUS if any(m.topology for m in g.machine_types)]
            raise fail(
                f"capacity {capacity.name!r}: topology=True on {machine}",
                rule="a Topology-Aware Scheduling flavor needs nodes with GKE's gce-topology "
                "labels, which only A3-and-newer GPU nodes carry; Kueue would never admit a "
                "placed job there",
                fix="topology=False, or a capacity of " + ", ".join(with_labels),
                field="topology",
            )
