"""Compiles a `NodePool` to `google.cloud.container_v1` messages, and messages to the API's
JSON for review. Imported only when a pool is compiled: `container_v1` is heavy."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gkeml_sdk.backends.gke.library import container_v1, duration_pb2, json_format
from gkeml_sdk.hardware.pool_facts import ACCELERATOR_TAINT_VALUE, GPU_DRIVER_ENUM, RESERVATION_KEY

if TYPE_CHECKING:
    from gkeml_sdk.nodepools.model import NodePool

_c = container_v1


def node_pool_messages(pool: NodePool) -> list[container_v1.NodePool]:
    """One `NodePool` message per pool name (per slice of a multislice).

    Example:
        >>> from gkeml_sdk import Accelerator
        >>> from gkeml_sdk import NodePool
        >>> msg = node_pool_messages(NodePool(name="l4", hardware=Accelerator("l4")))[0]
        >>> msg.config.accelerators[0].accelerator_type, msg.autoscaling.total_max_node_count
        ('nvidia-l4', 1)
    """
    return [_message(pool, name) for name in pool.pool_names]


def pools_dict(messages: list[container_v1.NodePool]) -> dict[str, Any]:
    """`{"nodePools": [...]}` in the API's camelCase JSON, as a `ListNodePoolsResponse`."""
    response = _c.ListNodePoolsResponse(node_pools=messages)
    as_json: dict[str, Any] = json_format.MessageToDict(_c.ListNodePoolsResponse.pb(response))
    return as_json


def pools_from_dict(data: dict[str, Any]) -> list[container_v1.NodePool]:
    """Messages back from `pools_dict` output (or a `nodePools.list` answer)."""
    response = _c.ListNodePoolsResponse.pb(_c.ListNodePoolsResponse())
    json_format.ParseDict(data, response)
    return list(_c.ListNodePoolsResponse.wrap(response).node_pools)


def _message(pool: NodePool, name: str) -> container_v1.NodePool:
    low, high = pool.node_bounds
    queued = pool.provisioning == "queued"
    flex = pool.provisioning != "standard"
    message = _c.NodePool(
        name=name,
        config=_config(pool),
        initial_node_count=pool.initial_nodes,
        locations=list(pool.zones),
        autoscaling=_c.NodePoolAutoscaling(
            enabled=True,
            total_min_node_count=low,
            total_max_node_count=high,
            # ANY takes capacity from whichever zone has it: what Spot and flex-start need.
            location_policy=(
                _c.NodePoolAutoscaling.LocationPolicy.ANY
                if pool.spot or flex
                else _c.NodePoolAutoscaling.LocationPolicy.BALANCED
            ),
        ),
        # Auto-repair would recreate flex-start VMs outside their ProvisioningRequest.
        management=_c.NodeManagement(auto_upgrade=True, auto_repair=not flex),
    )
    if queued:
        message.queued_provisioning = _c.NodePool.QueuedProvisioning(enabled=True)
    policy = _placement(pool)
    if policy is not None:
        message.placement_policy = policy
    if pool.additional_networks:
        message.network_config = _c.NodeNetworkConfig(
            additional_node_network_configs=[
                _c.AdditionalNodeNetworkConfig(network=n.network, subnetwork=n.subnetwork)
                for n in pool.additional_networks
            ]
        )
    return message


def _config(pool: NodePool) -> container_v1.NodeConfig:
    shape = pool.shape
    taints = [_taint(shape.taint_key, ACCELERATOR_TAINT_VALUE)]
    row = pool.capacity_mode
    if row.taint_key is not None and not row.gke_taints:
        taints.append(_taint(row.taint_key, row.taint_value or ""))
    config = _c.NodeConfig(
        machine_type=pool.node_machine_type,
        labels=dict(pool.labels),
        taints=taints,
        spot=pool.spot,
    )
    if pool.provisioning != "standard":
        config.flex_start = True
    reservation = _reservation(pool)
    if reservation is not None:
        config.reservation_affinity = reservation
    if shape.accelerator_type is not None:
        config.accelerators = [_accelerator(pool)]
    if pool.max_run_seconds is not None:
        config.max_run_duration = duration_pb2.Duration(seconds=pool.max_run_seconds)
    stack = pool.network_stack
    if stack is not None:
        config.gvnic = _c.VirtualNIC(enabled=True)
        if stack.fast_socket:
            config.fast_socket = _c.FastSocket(enabled=True)
        if stack.gpu_direct_strategy:
            strategy = _c.GPUDirectConfig.GPUDirectStrategy.__members__[stack.gpu_direct_strategy]
            config.gpu_direct_config = _c.GPUDirectConfig(gpu_direct_strategy=strategy)
    return config


def _accelerator(pool: NodePool) -> container_v1.AcceleratorConfig:
    shape = pool.shape
    driver = GPU_DRIVER_ENUM[pool.gpu_driver or "latest"]
    config = _c.AcceleratorConfig(
        accelerator_type=shape.accelerator_type,
        accelerator_count=shape.accelerator_count,
        gpu_driver_installation_config=_c.GPUDriverInstallationConfig(
            gpu_driver_version=_c.GPUDriverInstallationConfig.GPUDriverVersion.__members__[driver]
        ),
    )
    if shape.gpu_partition_size:
        config.gpu_partition_size = shape.gpu_partition_size
    if shape.sharing_strategy:
        config.gpu_sharing_config = _c.GPUSharingConfig(
            gpu_sharing_strategy=_c.GPUSharingConfig.GPUSharingStrategy.__members__[
                shape.sharing_strategy
            ],
            max_shared_clients_per_gpu=shape.clients_per_gpu,
        )
    return config


def _placement(pool: NodePool) -> container_v1.NodePool.PlacementPolicy | None:
    shape = pool.shape
    compact = _c.NodePool.PlacementPolicy.Type.COMPACT
    if shape.workload_policy:
        # TPU7x: the workload policy replaces both the COMPACT type and the topology.
        return _c.NodePool.PlacementPolicy(policy_name=pool.placement_policy)
    if shape.tpu_topology is not None:
        return _c.NodePool.PlacementPolicy(type_=compact, tpu_topology=shape.tpu_topology)
    if pool.compact:
        return _c.NodePool.PlacementPolicy(type_=compact, policy_name=pool.placement_policy or "")
    return None


def _reservation(pool: NodePool) -> container_v1.ReservationAffinity | None:
    kind = _c.ReservationAffinity.Type
    if pool.reservation is not None:
        return _c.ReservationAffinity(
            consume_reservation_type=kind.SPECIFIC_RESERVATION,
            key=RESERVATION_KEY,
            values=[pool.reservation],
        )
    if pool.provisioning != "standard":
        return _c.ReservationAffinity(consume_reservation_type=kind.NO_RESERVATION)
    return None  # GKE's default: any matching reservation, else on-demand (or Spot)


def _taint(key: str, value: str) -> container_v1.NodeTaint:
    return _c.NodeTaint(key=key, value=value, effect=_c.NodeTaint.Effect.NO_SCHEDULE)
