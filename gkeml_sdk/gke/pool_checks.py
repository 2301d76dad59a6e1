"""GKE's rules for a `NodePool`, checked at construction: what each provisioning mode allows,
placement, autoscaling bounds of multi-host slices, drivers and GPUDirect networks
(https://cloud.google.com/kubernetes-engine/docs/concepts/dws,
https://cloud.google.com/kubernetes-engine/docs/how-to/provisioningrequest,
https://cloud.google.com/kubernetes-engine/docs/concepts/tpus)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gkeml_sdk.catalog import gpus, tpus
from gkeml_sdk.catalog.node_pools import FLEX_START_MAX_RUN_SECONDS, POOL_NAME_MAX, networking
from gkeml_sdk.spec.base import DNS1035_LABEL, fail
from gkeml_sdk.spec.k8s_names import check_labels, check_name

if TYPE_CHECKING:
    from gkeml_sdk.gke.node_pool import NodePool


def check_pool(pool: NodePool) -> None:
    """Raise `SpecError` for a node pool GKE would refuse, or one that could never run."""
    shape = pool.shape
    suffix = len(f"-{shape.pools - 1}") if shape.pools > 1 else 0
    check_name("name", pool.name, DNS1035_LABEL, POOL_NAME_MAX - suffix)
    check_labels(pool.labels)
    if pool.machine_type is not None and pool.machine_type not in shape.machine_types:
        raise fail(
            f"{shape.display} does not run on machine type {pool.machine_type!r}",
            rule=f"its node pools use {', '.join(shape.machine_types)}",
            fix=f"machine_type={shape.machine_types[0]!r}, or leave it unset",
            field="machine_type",
        )
    _check_provisioning(pool)
    _check_bounds(pool)
    _check_placement(pool)
    if shape.accelerator_type is None and pool.gpu_driver is not None:
        raise fail(
            f"gpu_driver={pool.gpu_driver!r} on a {shape.display} pool",
            rule="GKE installs GPU drivers on GPU node pools only; TPU VMs need none",
            fix="drop gpu_driver",
            field="gpu_driver",
        )
    _check_networks(pool)


def pool_notes(pool: NodePool) -> list[str]:
    """What the pool needs beyond this request, in words an admin can act on."""
    notes = []
    need = networking(pool.node_machine_type)
    if need is not None and not pool.additional_networks:
        notes.append(
            f"{pool.node_machine_type} reaches full GPU-to-GPU bandwidth with {need.technology} "
            f"over {need.additional_networks} extra VPC networks: create them (cluster with "
            "multi-networking and Dataplane V2) and pass additional_networks=[NodeNetwork(...)]"
        )
    if pool.provisioning == "queued":
        notes.append(
            "GKE taints queued-provisioning nodes with cloud.google.com/gke-queued; only pods "
            "of an admitted ProvisioningRequest land there. Keep one pool without queued "
            "provisioning for system pods"
        )
    return notes


def _check_provisioning(pool: NodePool) -> None:
    shape, mode = pool.shape, pool.provisioning
    if mode == "standard":
        pool.hardware.check_provisioning(spot=pool.spot)
    elif pool.spot:
        raise fail(
            f"spot=True with provisioning={mode!r}",
            rule="flex-start (and queued provisioning) VMs are their own provisioning model, "
            "not Spot VMs",
            fix=f"spot=False with provisioning={mode!r}, or spot=True with provisioning='standard'",
            field="spot",
        )
    elif not shape.flex_start:
        raise fail(
            f"{shape.display} is not offered as flex-start capacity",
            rule="flex-start (Dynamic Workload Scheduler) serves A2, A3, A4 and G2 GPUs "
            "and TPU v5e, v5p and v6e",
            fix="provisioning='standard' (spot=True for cheaper capacity), or one of "
            + ", ".join(_flex_start_hardware()),
            field="provisioning",
        )
    elif mode == "flex-start" and shape.fixed_nodes:
        raise fail(
            f"flex-start alone for a multi-host {shape.display} slice",
            rule="flex-start VMs come one by one; a multi-host slice must come whole",
            fix="provisioning='queued' (flex-start with queued provisioning)",
            field="provisioning",
        )
    if mode != "standard" and pool.reservation is not None:
        raise fail(
            f"reservation={pool.reservation!r} with provisioning={mode!r}",
            rule="flex-start VMs never consume reservations (reservation affinity NONE)",
            fix="drop reservation, or provisioning='standard' to use the reservation",
            field="reservation",
        )
    seconds = pool.max_run_seconds
    if seconds is not None and (
        mode == "standard" or not 0 < seconds <= FLEX_START_MAX_RUN_SECONDS
    ):
        raise fail(
            f"max_run_seconds={seconds} with provisioning={mode!r}",
            rule=f"a run limit applies to flex-start VMs, at most {FLEX_START_MAX_RUN_SECONDS} s "
            "(7 days)",
            fix="provisioning='flex-start' with 0 < max_run_seconds <= 604800, or drop it",
            field="max_run_seconds",
        )


def _check_bounds(pool: NodePool) -> None:
    shape = pool.shape
    low, high = pool.node_bounds
    if low < 0 or high < max(low, 1) or not 0 <= pool.initial_nodes <= high:
        raise fail(
            f"min_nodes={low}, max_nodes={high}, initial_nodes={pool.initial_nodes}",
            rule="0 <= min_nodes <= max_nodes, max_nodes >= 1, initial_nodes <= max_nodes",
            fix="min_nodes=0 (scale to zero when idle), max_nodes>=1",
            field="max_nodes",
        )
    hosts = shape.fixed_nodes
    if hosts is not None and (
        high != hosts or low not in (0, hosts) or pool.initial_nodes not in (0, hosts)
    ):
        raise fail(
            f"a {shape.display} pool with min/max/initial nodes {low}/{high}/{pool.initial_nodes}",
            rule=f"a multi-host slice pool holds exactly its {hosts} VMs and scales "
            f"atomically between 0 and {hosts}",
            fix=f"max_nodes={hosts} (or unset) with min_nodes and initial_nodes 0 or {hosts}; "
            "more capacity is more slices (TpuSlice(..., slices=N))",
            field="max_nodes",
        )
    if pool.provisioning != "standard" and (low or pool.initial_nodes):
        raise fail(
            f"provisioning={pool.provisioning!r} with min_nodes={low}, "
            f"initial_nodes={pool.initial_nodes}",
            rule="flex-start pools start empty; the autoscaler adds nodes when pods "
            "(or a ProvisioningRequest) ask for them",
            fix="min_nodes=0, initial_nodes=0",
            field="min_nodes",
        )


def _check_placement(pool: NodePool) -> None:
    shape = pool.shape
    if pool.single_zone and len(pool.zones) > 1:
        raise fail(
            f"zones={list(pool.zones)} for a compactly placed pool",
            rule="compact placement and multi-host TPU slices keep all nodes in one zone",
            fix=f"zones=[{pool.zones[0]!r}]",
            field="zones",
        )
    if pool.compact and not shape.compact_placement:
        with_compact = [g.key for g in gpus.GPUS if g.compact_placement]
        raise fail(
            f"compact=True on a {shape.display} pool",
            rule="compact placement policies take A100, L4 and H100 GPU pools; a multi-host "
            "TPU slice is placed by its topology",
            fix="drop compact, or a GPU with compact placement: " + ", ".join(with_compact),
            field="compact",
        )
    if shape.workload_policy and pool.placement_policy is None:
        raise fail(
            f"a multi-host {shape.display} pool without placement_policy",
            rule="multi-host TPU7x slices are placed by a Compute Engine workload policy "
            "(High-throughput) instead of a TPU topology",
            fix="placement_policy='<workload policy>' (gcloud compute resource-policies "
            f"create workload-policy NAME --type=HIGH_THROUGHPUT "
            f"--accelerator-topology={shape.tpu_topology})",
            field="placement_policy",
        )
    if pool.placement_policy is not None and not (pool.compact or shape.workload_policy):
        raise fail(
            f"placement_policy={pool.placement_policy!r} on a pool without compact placement",
            rule="a resource policy name goes with a compact placement (or, on TPU7x, "
            "a multi-host slice's workload policy)",
            fix="compact=True with the policy, or drop placement_policy",
            field="placement_policy",
        )


def _check_networks(pool: NodePool) -> None:
    if not pool.additional_networks:
        return
    need = networking(pool.node_machine_type)
    given = len(pool.additional_networks)
    if need is None or need.additional_networks != given:
        wanted = need.additional_networks if need else 0
        raise fail(
            f"{given} additional networks on {pool.node_machine_type}",
            rule=f"{pool.node_machine_type} has {wanted} extra NICs for GPU traffic, one VPC "
            "network each",
            fix=f"{wanted} NodeNetwork entries" if wanted else "drop additional_networks",
            field="additional_networks",
        )


def _flex_start_hardware() -> list[str]:
    return [g.key for g in gpus.GPUS if g.flex_start] + [t.key for t in tpus.TPUS if t.flex_start]
