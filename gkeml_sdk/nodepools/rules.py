"""GKE's rules for a `NodePool`, checked at construction: what each provisioning mode allows,
placement, autoscaling bounds of multi-host slices, drivers and GPUDirect networks
(https://cloud.google.com/kubernetes-engine/docs/concepts/dws,
https://cloud.google.com/kubernetes-engine/docs/how-to/provisioningrequest,
https://cloud.google.com/kubernetes-engine/docs/concepts/tpus)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gkeml_sdk.core.model import DNS1035_LABEL, fail
from gkeml_sdk.core.quantity import check_quantity, parse_quantity
from gkeml_sdk.core.rules import check_int32, check_labels, check_name
from gkeml_sdk.hardware import gpus
from gkeml_sdk.hardware.availability import check_zones
from gkeml_sdk.hardware.machines import MACHINES
from gkeml_sdk.hardware.pool_facts import (
    CRITICAL_PODS_SHUTDOWN_SECONDS,
    DRIVER_LABEL,
    POOL_NAME_MAX,
)
from gkeml_sdk.scheduling.catalog import DWS_MAX_RUN_SECONDS
from gkeml_sdk.scheduling.node_storage import (
    GIB,
    MAX_BOOT_DISK_GB,
    MIN_BOOT_DISK_GB,
    boot_disk_allocatable,
    boot_disk_for,
)
from gkeml_sdk.scheduling.reservation import reservation_of
from gkeml_sdk.scheduling.rules import check_capacity_mode, check_run_limit

if TYPE_CHECKING:
    from gkeml_sdk.nodepools.fields import NodePoolFields


def check_pool(pool: NodePoolFields) -> None:
    """Raise `SpecError` for a node pool GKE would refuse, or one that could never run."""
    shape = pool.shape
    suffix = len(f"-{shape.pools - 1}") if shape.pools > 1 else 0
    check_name("name", pool.name, DNS1035_LABEL, POOL_NAME_MAX - suffix)
    check_labels(pool.labels)
    # The GKE API's autoscaling bounds, counts and durations are int32 (protobuf).
    for field in ("min_nodes", "max_nodes", "initial_nodes", "max_run_seconds"):
        check_int32(field, getattr(pool, field), api="the GKE API")
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
    # Rows are keyed by machine type or by the catalog key the price book bills under.
    keys = (pool.node_machine_type, pool.hardware.billing(1).key)
    check_zones(keys, shape.display, pool.zones)
    if shape.accelerator_type is None and pool.gpu_driver is not None:
        raise fail(
            f"gpu_driver={pool.gpu_driver!r} on a {shape.display} pool",
            rule="GKE installs GPU drivers on GPU node pools only; TPU VMs need none",
            fix="drop gpu_driver",
            field="gpu_driver",
        )
    if pool.shutdown_grace_seconds is not None and not pool.spot:
        raise fail(
            f"shutdown_grace_seconds={pool.shutdown_grace_seconds} on a pool without Spot VMs",
            rule="GKE sets the kubelet's graceful node shutdown period on Spot VMs only",
            fix="spot=True, or drop shutdown_grace_seconds",
            field="shutdown_grace_seconds",
        )
    if pool.hardware.device_requests() and pool.driver != "disabled":
        raise fail(
            f"gpu_driver={pool.gpu_driver!r} on a pool for {pool.hardware} (DRA)",
            rule="GKE does not support its automatic GPU driver installation on DRA node "
            "pools; NVIDIA's driver installer DaemonSet brings the driver there",
            fix="gpu_driver='disabled' (or leave it unset)",
            field="gpu_driver",
        )
    _check_networks(pool)
    _check_storage(pool)


def room_for(pool: NodePoolFields, ephemeral_storage: str) -> dict[str, object]:
    """The fields `pool` needs changed so that each node offers pods `ephemeral_storage`
    (a Kubernetes quantity: what one pod requests), empty when it already does: a boot disk
    large enough, instead of Local SSDs that are too small. Raise `SpecError` when the user's
    own storage fields, or any boot disk at all, cannot hold it.

    Example:
        >>> from gkeml_sdk import Accelerator, NodePool
        >>> room_for(NodePool(name="l4", hardware=Accelerator("l4", count=8)), "832Gi")
        {'boot_disk_gb': 1057}
    """
    check_quantity("ephemeral_storage", ephemeral_storage)
    needed = int(parse_quantity(ephemeral_storage))
    offered = pool.node_ephemeral_storage
    if offered >= needed:
        return {}
    gib = f"{offered / GIB:.0f} GiB"
    # A boot disk the user sized, or Local SSDs they asked for, are theirs: never overridden.
    if pool.boot_disk_gb is not None or pool.local_ssd_ephemeral:
        field = "boot_disk_gb" if pool.boot_disk_gb is not None else "local_ssd_ephemeral"
        raise fail(
            f"ephemeral_storage={ephemeral_storage!r} on a pool whose nodes offer {gib} "
            f"({field}={getattr(pool, field)!r})",
            rule="a pod's ephemeral-storage request must fit one node's allocatable, or the "
            "pod never schedules (Insufficient ephemeral-storage)",
            fix=f"drop {field}: the pool then gets a boot disk large enough",
            field=field,
        )
    disk_gb = boot_disk_for(needed)
    if disk_gb is None:
        largest = max(boot_disk_allocatable(MAX_BOOT_DISK_GB), pool.node_ephemeral_storage)
        raise fail(
            f"ephemeral_storage={ephemeral_storage!r} on {pool.node_machine_type}",
            rule=f"the largest node storage GKE gives it offers {largest / GIB:.0f} GiB "
            f"(a {MAX_BOOT_DISK_GB} GB boot disk, or the machine's Local SSDs)",
            fix="read the weights from a volume instead of downloading them to each node: "
            "ServeModel(weights=HyperdiskML(...)) or weights=GcsFuse(...)",
            field="ephemeral_storage",
        )
    room: dict[str, object] = {"boot_disk_gb": disk_gb}
    if pool.local_ssds:  # too few: the boot disk holds ephemeral storage instead
        room["local_ssd_ephemeral"] = False
    return room


def _check_storage(pool: NodePoolFields) -> None:
    disk = pool.boot_disk_gb
    if disk is not None and not MIN_BOOT_DISK_GB <= disk <= MAX_BOOT_DISK_GB:
        raise fail(
            f"boot_disk_gb={disk}",
            rule=f"GKE boot disks hold {MIN_BOOT_DISK_GB} to {MAX_BOOT_DISK_GB} GB",
            fix=f"boot_disk_gb between {MIN_BOOT_DISK_GB} and {MAX_BOOT_DISK_GB}",
            field="boot_disk_gb",
        )
    if pool.local_ssd_ephemeral and not pool.local_ssds:
        with_ssd = sorted({m.name.split("-")[0] for m in MACHINES if m.local_ssd_gb})
        raise fail(
            f"local_ssd_ephemeral=True on {pool.node_machine_type}",
            rule="GKE backs ephemeral storage with the Local SSDs a machine comes with, and "
            f"{pool.node_machine_type} comes with none",
            fix=f"drop local_ssd_ephemeral (boot_disk_gb sizes the boot disk), or a machine "
            f"with Local SSDs ({', '.join(with_ssd)})",
            field="local_ssd_ephemeral",
        )


def pool_notes(pool: NodePoolFields) -> list[str]:
    """What the pool needs beyond this request, in words an admin can act on: the network
    stack's prerequisites (`NetworkStack.prerequisites`), and the queued-provisioning taint."""
    notes = []
    stack = pool.network_stack
    if stack is not None and stack.gpudirect:
        machine = pool.node_machine_type
        if pool.network_profile == "auto":
            notes.append(
                f"GKE creates and attaches {machine}'s {stack.pool_networks} {stack.display} "
                "networks (accelerator_network_profile='auto'); `gkeml setup` with "
                "networks=... installs the NCCL plugin"
            )
        notes += stack.prerequisites
    if pool.shape.accelerator_type is not None and pool.driver == "disabled":
        notes.append(
            "gpu_driver='disabled': GKE installs no GPU driver and its nodes carry no "
            f"{DRIVER_LABEL} label; apply NVIDIA's driver installer DaemonSet, which targets "
            "exactly those nodes (kubectl apply -f https://raw.githubusercontent.com/"
            "GoogleCloudPlatform/container-engine-accelerators/master/nvidia-driver-installer/"
            "cos/daemonset-preloaded.yaml), or no pod can use the GPUs"
        )
    if pool.shutdown_grace_seconds is not None:
        pods = pool.shutdown_grace_seconds - CRITICAL_PODS_SHUTDOWN_SECONDS
        notes.append(
            f"a reclaimed Spot node gives its pods up to {pods} s to stop "
            f"(terminationGracePeriodSeconds above that is cut short); GKE applies the "
            "setting from control plane 1.35.0-gke.1171000"
        )
    if pool.capacity_mode.gke_taints:
        notes.append(
            f"GKE taints queued-provisioning nodes with {pool.capacity_mode.taint_key}; only "
            "pods of an admitted ProvisioningRequest land there. Keep one pool without queued "
            "provisioning for system pods"
        )
    return notes


def _check_provisioning(pool: NodePoolFields) -> None:
    mode = pool.provisioning
    if pool.reservation is not None:
        reservation_of(pool.reservation)  # a name Compute Engine refuses raises here
    # The same rules as a job's: a pool is refused exactly where a job could not run.
    check_capacity_mode(pool.hardware, mode, spot=pool.spot)
    if mode != "standard" and pool.reservation is not None:
        raise fail(
            f"reservation={pool.reservation!r} with provisioning={mode!r}",
            rule="flex-start VMs never consume reservations (reservation affinity NONE)",
            fix="drop reservation, or provisioning='standard' to use the reservation",
            field="reservation",
        )
    seconds = pool.max_run_seconds
    if seconds is not None and mode == "standard":
        raise fail(
            f"max_run_seconds={seconds} with provisioning={mode!r}",
            rule="a run limit applies to flex-start VMs",
            fix="provisioning='flex-start' with max_run_seconds, or drop it",
            field="max_run_seconds",
        )
    check_run_limit(seconds, mode, field="max_run_seconds", most=str(DWS_MAX_RUN_SECONDS))


def _check_bounds(pool: NodePoolFields) -> None:
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


def _check_placement(pool: NodePoolFields) -> None:
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


def _check_networks(pool: NodePoolFields) -> None:
    stack = pool.network_stack
    machine = pool.node_machine_type
    if pool.accelerator_network_profile == "auto":
        if stack is None or not stack.network_profile:
            raise fail(
                f"accelerator_network_profile='auto' on {machine}",
                rule="GKE's accelerator network profile brings up GPUDirect networks on A3 "
                "High/Mega/Ultra, A4 and A4X machines",
                fix="drop accelerator_network_profile",
                field="accelerator_network_profile",
            )
        if pool.additional_networks:
            raise fail(
                "accelerator_network_profile='auto' with additional_networks",
                rule="with the profile GKE creates and attaches the networks itself",
                fix="drop additional_networks, or accelerator_network_profile='none'",
                field="additional_networks",
            )
    given = len(pool.additional_networks)
    wanted = stack.pool_networks if stack else 0
    if stack is not None and stack.gpudirect and pool.network_profile != "auto" and not given:
        raise fail(
            f"a {machine} pool without its {wanted} GPUDirect networks",
            rule=f"{stack.display} moves GPU traffic over {wanted} extra NICs, one VPC network "
            "each; without them the pool's nodes are not GPUDirect-ready",
            fix="accelerator_network_profile='auto' (GKE brings the networks up)"
            + (", or " if stack.network_profile else "; or ")
            + f"additional_networks=[NodeNetwork(network=..., subnetwork=...)] x {wanted}",
            field="additional_networks",
        )
    if given and wanted != given:
        raise fail(
            f"{given} additional networks on {machine}",
            rule=f"{machine} has {wanted} extra NICs for GPU traffic, one VPC network each",
            fix=f"{wanted} NodeNetwork entries" if wanted else "drop additional_networks",
            field="additional_networks",
        )
