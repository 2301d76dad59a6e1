"""The nodes GKE makes from a node pool request (the GKE API's JSON of `NodePool.to_dict()`): the
labels and taints GKE puts on them and what their device plugins or DRA drivers offer pods
(https://cloud.google.com/kubernetes-engine/docs/how-to/gpus, .../concepts/timesharing-gpus,
.../how-to/gpus-multi, .../concepts/tpus, .../how-to/set-up-dra)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from gkeml_sdk.core.objects import ObjView
from gkeml_sdk.hardware import gpu_labels, gpus, tpus
from gkeml_sdk.hardware.dra import GPU_CLASS
from gkeml_sdk.hardware.network_stacks import machine_stack
from gkeml_sdk.hardware.pool_facts import (
    DRA_NODE_LABELS,
    DRIVER_LABEL,
    NO_DEVICE_PLUGIN_LABEL,
    NODE_POOL_LABEL,
)
from gkeml_sdk.scheduling.catalog import FLEX_START_LABEL, QUEUED_LABEL, QUEUED_TAINT_KEY
from gkeml_sdk.scheduling.node_storage import LOCAL_SSD_EPHEMERAL_LABEL, node_ephemeral_storage
from gkeml_sdk.scheduling.spot import SPOT_LABEL
from gkeml_sdk.scheduling.topology import LEVELS

HOSTNAME_LABEL = "kubernetes.io/hostname"  # every node carries its own name
NODE_OWN_VALUE = "(each node's own)"

# GKE's label values per GPUDriverInstallationConfig and GPUSharingConfig enum name (the
# how-to pages' lowercase spellings; see gpu_labels.SHARING_LABEL_VALUES for the other case).
_DRIVER_LABEL_VALUES = {"DEFAULT": "default", "LATEST": "latest"}
_SHARING_LABEL_VALUES = {"TIME_SHARING": "time-sharing", "MPS": "mps"}
_EFFECTS = {"NO_SCHEDULE": "NoSchedule", "PREFER_NO_SCHEDULE": "PreferNoSchedule",
            "NO_EXECUTE": "NoExecute"}  # fmt: skip


@dataclass(frozen=True)
class PoolNodes:
    """What every node of one GKE node pool looks like to the scheduler.

    `allocatable`: extended resources per node (GPUs, MIG slices or shared-GPU slots from
    GKE's device plugin, TPU chips); `devices`: DRA devices per node by DeviceClass;
    `driver`: GKE installs the GPU driver (False: only a driver-installer DaemonSet brings it);
    `ephemeral_storage`: bytes of local ephemeral storage pods may request on each node
    (`scheduling.node_storage`).

    Example:
        >>> pool = {"name": "l4", "config": {"machineType": "g2-standard-8", "accelerators": [
        ...     {"acceleratorCount": "1", "acceleratorType": "nvidia-l4",
        ...      "gpuDriverInstallationConfig": {"gpuDriverVersion": "LATEST"}}]}}
        >>> node = pool_nodes(pool)
        >>> node.labels["cloud.google.com/gke-accelerator"], node.allocatable
        ('nvidia-l4', {'nvidia.com/gpu': 1})
    """

    pool: str
    labels: dict[str, str]
    taints: tuple[ObjView, ...]
    allocatable: dict[str, int] = field(default_factory=dict)
    devices: dict[str, int] = field(default_factory=dict)
    driver: bool = True
    gpus: int = 0
    max_nodes: int = 1
    never: str = ""  # why GKE can never create these nodes, if it cannot
    ephemeral_storage: int = 0


def pool_nodes(pool: ObjView, workload_policies: Mapping[str, str] | None = None) -> PoolNodes:
    """The nodes of one `NodePool` message (one item of `NodePool.to_dict()["nodePools"]`).
    `workload_policies`: accelerator topology of each Compute Engine workload policy a TPU7x
    pool names (the request carries only the policy's name; without it the nodes' topology
    label is unknown and left out)."""
    config = pool.get("config") or {}
    machine = str(config.get("machineType") or "")
    labels = {NODE_POOL_LABEL: str(pool.get("name") or ""),
              gpu_labels.INSTANCE_TYPE_LABEL: machine}  # fmt: skip
    taints = [
        {"key": t.get("key", ""), "value": t.get("value", ""),
         "effect": _EFFECTS.get(str(t.get("effect")), "NoSchedule")}
        for t in config.get("taints") or []
    ]  # fmt: skip
    stack = machine_stack(machine)
    if stack is not None and stack.fast_socket and (config.get("fastSocket") or {}).get("enabled"):
        labels.update(stack.node_labels)  # GKE labels Fast Socket nodes (gke-facts section 0)
    if config.get("spot"):
        labels[SPOT_LABEL] = "true"
    if config.get("flexStart"):
        labels[FLEX_START_LABEL] = "true"
    if config.get("ephemeralStorageLocalSsdConfig") is not None:
        labels[LOCAL_SSD_EPHEMERAL_LABEL] = "true"
    if (pool.get("queuedProvisioning") or {}).get("enabled"):
        # GKE labels and taints queued-provisioning nodes itself.
        labels[QUEUED_LABEL] = "true"
        taints.append({"key": QUEUED_TAINT_KEY, "value": "true", "effect": "NoSchedule"})
    allocatable: dict[str, int] = {}
    devices: dict[str, int] = {}
    driver, count = True, 0
    never = ""
    for acc in config.get("accelerators") or []:
        row = gpus.gpu(str(acc.get("acceleratorType")))
        count = int(acc.get("acceleratorCount") or 0)
        sold = row.machine_named(machine, count)
        on_demand = not config.get("spot") and not config.get("flexStart")
        if sold is not None and not sold.on_demand and on_demand:
            never = f"{machine} is sold only as Spot or flex-start, and the pool is neither"
        labels[row.selector_label] = row.label
        labels.update(row.arch_labels)
        version = str((acc.get("gpuDriverInstallationConfig") or {}).get("gpuDriverVersion"))
        driver = version in _DRIVER_LABEL_VALUES
        if driver:
            labels[DRIVER_LABEL] = _DRIVER_LABEL_VALUES[version]
        units = count
        partition = acc.get("gpuPartitionSize")
        if partition:
            labels[gpu_labels.PARTITION_LABEL] = str(partition)
            units *= row.mig_instances(str(partition)) or 0
        sharing = acc.get("gpuSharingConfig") or {}
        if sharing:
            clients = int(sharing.get("maxSharedClientsPerGpu") or 0)
            labels[gpu_labels.SHARING_STRATEGY_LABEL] = _SHARING_LABEL_VALUES[
                str(sharing.get("gpuSharingStrategy"))
            ]
            labels[gpu_labels.MAX_SHARED_CLIENTS_LABEL] = str(clients)
            units *= clients
        allocatable[row.resource] = units
    if gpus.carries_topology(machine):
        # GKE labels A3-and-newer nodes with their block, sub-block and host; the values are
        # each node's own, so only their presence is known here.
        labels.update({label: NODE_OWN_VALUE for _, label in LEVELS})
    labels.setdefault(HOSTNAME_LABEL, NODE_OWN_VALUE)
    labels.update(config.get("labels") or {})
    if labels.get(NO_DEVICE_PLUGIN_LABEL) == "true":
        allocatable.pop(gpu_labels.GPU_RESOURCE, None)
    if count and all(labels.get(k) == v for k, v in DRA_NODE_LABELS.items()):
        devices[GPU_CLASS] = count
    policy = str((pool.get("placementPolicy") or {}).get("policyName") or "")
    _tpu_labels(pool, machine, (workload_policies or {}).get(policy, ""), labels, allocatable)
    most = int((pool.get("autoscaling") or {}).get("totalMaxNodeCount") or 0)
    return PoolNodes(str(pool.get("name") or ""), labels, tuple(taints), allocatable, devices,
                     driver, count, max(most, int(pool.get("initialNodeCount") or 0)),
                     never, node_ephemeral_storage(config))  # fmt: skip


def _tpu_labels(
    pool: ObjView, machine: str, policy: str, labels: dict[str, str], alloc: dict[str, int]
) -> None:
    placement = pool.get("placementPolicy") or {}
    topology = str(placement.get("tpuTopology") or (policy if placement.get("policyName") else ""))
    for row in tpus.TPUS:
        single = {m: (t, chips) for t, m, chips in row.single_host}
        if machine == row.multi_host_machine and placement.get("policyName") and not topology:
            labels[row.selector_label] = row.label  # the topology is the unknown policy's
            alloc[row.resource] = row.CHIPS_PER_MULTI_HOST_VM
            return
        if topology and machine == row.multi_host_machine:
            labels[row.topology_label] = topology
        elif machine in single:
            labels[row.topology_label] = single[machine][0]
        else:
            continue
        labels[row.selector_label] = row.label
        alloc[row.resource] = row.chips_per_host(labels[row.topology_label])
        return
