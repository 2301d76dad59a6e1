"""The GKE API's JSON for a `NodePool`: plain dicts shaped like a `ListNodePoolsResponse`
(`{"nodePools": [...]}`), in the protobuf JSON mapping the REST API and `gcloud ...
--format=json` use: camelCase names, fields at their default (false, 0, "", empty) left out,
enums by name, int64 numbers as strings, durations as "Ns". Keys come in the proto's field
order, as `json_format.MessageToDict` writes them; labels sorted by key.

Nothing here imports the GKE client library: `gkeml_sdk.backends.gke.messages` parses this
JSON into `google.cloud.container_v1` messages when a pool is created."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gkeml_sdk.core.objects import Obj
from gkeml_sdk.hardware.pool_facts import (
    ACCELERATOR_TAINT_VALUE,
    CRITICAL_PODS_SHUTDOWN_SECONDS,
    GPU_DRIVER_ENUM,
    RESERVATION_KEY,
)
from gkeml_sdk.scheduling.reservation import reservation_of

if TYPE_CHECKING:
    from gkeml_sdk.nodepools.fields import NodePoolFields

# Enum value names of container.v1 (NodePoolAutoscaling.LocationPolicy, ...).
_ANY_ZONE, _BALANCED = "ANY", "BALANCED"
_COMPACT = "COMPACT"
_NO_SCHEDULE = "NO_SCHEDULE"
_EFFECTS = {
    "NoSchedule": _NO_SCHEDULE,
    "PreferNoSchedule": "PREFER_NO_SCHEDULE",
    "NoExecute": "NO_EXECUTE",
}
_SPECIFIC, _NO_RESERVATION = "SPECIFIC_RESERVATION", "NO_RESERVATION"


def pools_json(pool: NodePoolFields) -> Obj:
    """`{"nodePools": [...]}`: one pool request per pool name (per slice of a multislice).

    Example:
        >>> from gkeml_sdk.hardware.tpu_slice import TpuSlice
        >>> from gkeml_sdk.nodepools.model import NodePool
        >>> pools = pools_json(NodePool(name="v5e", hardware=TpuSlice("v5e", "4x4", slices=2)))
        >>> [(p["name"], p["placementPolicy"]["tpuTopology"]) for p in pools["nodePools"]]
        [('v5e-0', '4x4'), ('v5e-1', '4x4')]
    """
    return {"nodePools": [node_pool_json(pool, name) for name in pool.pool_names]}


def node_pool_json(pool: NodePoolFields, name: str) -> Obj:
    """The JSON of one `NodePool` message of `pool`, named `name`.

    Example:
        >>> from gkeml_sdk.hardware.accelerator import Accelerator
        >>> from gkeml_sdk.nodepools.model import NodePool
        >>> request = node_pool_json(NodePool(name="l4", hardware=Accelerator("l4")), "l4")
        >>> request["config"]["accelerators"][0]["acceleratorCount"], request["autoscaling"]
        ('1', {'enabled': True, 'locationPolicy': 'BALANCED', 'totalMaxNodeCount': 1})
    """
    low, high = pool.node_bounds
    flex = pool.provisioning != "standard"
    networks = [
        _fields({"network": n.network, "subnetwork": n.subnetwork})
        for n in pool.additional_networks
    ]
    return _fields(
        {
            "name": name,
            "config": _config(pool),
            "initialNodeCount": pool.initial_nodes,
            "autoscaling": _fields(
                {
                    "enabled": True,
                    # ANY takes capacity from whichever zone has it: what Spot and flex-start
                    # need.
                    "locationPolicy": _ANY_ZONE if pool.spot or flex else _BALANCED,
                    "totalMinNodeCount": low,
                    "totalMaxNodeCount": high,
                }
            ),
            # Auto-repair would recreate flex-start VMs outside their ProvisioningRequest.
            "management": _fields({"autoUpgrade": True, "autoRepair": not flex}),
            "locations": list(pool.zones),
            "networkConfig": _network_config(pool, networks),
            "placementPolicy": _placement(pool),
            "queuedProvisioning": {"enabled": True} if pool.provisioning == "queued" else None,
        }
    )


def _config(pool: NodePoolFields) -> Obj:
    shape = pool.shape
    # CPU machines carry no accelerator taint (their shape names none).
    taints = [_taint(shape.taint_key, ACCELERATOR_TAINT_VALUE)] if shape.taint_key else []
    row = pool.capacity_mode
    if row.taint_key is not None and not row.gke_taints:
        taints.append(_taint(row.taint_key, row.taint_value or ""))
    taints += [_taint(t.key, t.value, _EFFECTS[t.effect]) for t in pool.taints]
    stack = pool.network_stack
    strategy = stack.gpu_direct_strategy if stack is not None else None
    seconds = pool.max_run_seconds
    return _fields(
        {
            "machineType": pool.node_machine_type,
            "diskSizeGb": pool.boot_disk_gb,
            "labels": dict(sorted(pool.node_labels.items())) or None,
            "accelerators": [_accelerator(pool)] if shape.accelerator_type is not None else [],
            "taints": taints,
            "reservationAffinity": _reservation(pool),
            "gvnic": {"enabled": True} if stack is not None else None,
            "spot": pool.spot,
            "fastSocket": {"enabled": True} if stack is not None and stack.fast_socket else None,
            "ephemeralStorageLocalSsdConfig": (
                {"localSsdCount": pool.local_ssds} if pool.local_ssds else None
            ),
            "gpuDirectConfig": {"gpuDirectStrategy": strategy} if strategy else None,
            "maxRunDuration": f"{seconds}s" if seconds is not None else None,
            "kubeletConfig": _kubelet(pool),
            "flexStart": pool.provisioning != "standard",
        }
    )


def _kubelet(pool: NodePoolFields) -> Obj | None:
    grace = pool.shutdown_grace_seconds
    if grace is None:
        return None
    return {
        "shutdownGracePeriodSeconds": grace,
        "shutdownGracePeriodCriticalPodsSeconds": CRITICAL_PODS_SHUTDOWN_SECONDS,
    }


def _accelerator(pool: NodePoolFields) -> Obj:
    shape = pool.shape
    sharing = None
    if shape.sharing_strategy:
        sharing = _fields(
            {
                "maxSharedClientsPerGpu": _int64(shape.clients_per_gpu),
                "gpuSharingStrategy": shape.sharing_strategy,
            }
        )
    driver = GPU_DRIVER_ENUM[pool.driver]
    return _fields(
        {
            "acceleratorCount": _int64(shape.accelerator_count),
            "acceleratorType": shape.accelerator_type,
            "gpuPartitionSize": shape.gpu_partition_size,
            "gpuSharingConfig": sharing,
            "gpuDriverInstallationConfig": {"gpuDriverVersion": driver},
        }
    )


def _placement(pool: NodePoolFields) -> Obj | None:
    shape = pool.shape
    if shape.workload_policy:
        # TPU7x: the workload policy replaces both the COMPACT type and the topology.
        return _fields({"policyName": pool.placement_policy})
    if shape.tpu_topology is not None:
        return {"type": _COMPACT, "tpuTopology": shape.tpu_topology}
    if pool.compact:
        return _fields({"type": _COMPACT, "policyName": pool.placement_policy})
    return None


def _reservation(pool: NodePoolFields) -> Obj | None:
    if pool.reservation is not None:
        return {
            "consumeReservationType": _SPECIFIC,
            "key": RESERVATION_KEY,
            "values": [reservation_of(pool.reservation).affinity_value],
        }
    if pool.provisioning != "standard":
        return {"consumeReservationType": _NO_RESERVATION}
    return None  # GKE's default: any matching reservation, else on-demand (or Spot)


def _network_config(pool: NodePoolFields, networks: list[Obj]) -> Obj | None:
    if pool.network_profile == "auto":
        return {"acceleratorNetworkProfile": "auto"}
    return {"additionalNodeNetworkConfigs": networks} if networks else None


def _taint(key: str, value: str, effect: str = _NO_SCHEDULE) -> Obj:
    return _fields({"key": key, "value": value, "effect": effect})


def _int64(number: int) -> str | None:
    """Protobuf JSON writes int64 fields as strings (and leaves out 0)."""
    return str(number) if number else None


def _fields(message: Obj) -> Obj:
    """`message` without its unset fields: None (a message or optional field not set) and,
    as proto3 JSON leaves them out, false, 0, "" and empty lists. A dict value is a set
    message (or a non-empty map) and stays, even when empty."""
    return {
        key: value
        for key, value in message.items()
        if value is not None and (isinstance(value, dict) or value not in (False, 0, "", []))
    }
