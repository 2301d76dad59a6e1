"""Every GPU and TPU catalog row x provisioning mode (standard, Spot, flex-start, queued):
the node pool it compiles to, or the SpecError that says why GKE has none. The table is
written out by hand from GKE's docs, so a catalog or rule change that moves a cell fails here.
Every compiled pool round-trips through `container_v1` message types."""

from __future__ import annotations

from typing import Any

import pytest
from google.cloud import container_v1

from gkeml_sdk import Accelerator, NodePool, SpecError, TpuSlice, gpu_models, tpu_generations
from gkeml_sdk.backends.gke.messages import node_pool_messages, pools_dict, pools_from_dict

MODES = ("standard", "spot", "flex-start", "queued")
OK, NO = True, False
# hardware -> (machine type, accelerator type or None, count, pools, nodes per pool or None,
#              {mode: compiles?})
ALL = dict.fromkeys(MODES, OK)
NO_FLEX = {"standard": OK, "spot": OK, "flex-start": NO, "queued": NO}
MULTI_HOST = {"standard": OK, "spot": OK, "flex-start": NO, "queued": OK}
ONLY_SPOT_OR_FLEX = {"standard": NO, "spot": OK, "flex-start": OK, "queued": OK}
GPU_TABLE: dict[str, tuple[str, int, dict[str, bool]]] = {
    # key: (machine type of its largest shape, GPUs per node, outcome per mode)
    "t4": ("n1-standard-32", 4, NO_FLEX),
    "p4": ("n1-standard-32", 4, NO_FLEX),
    "v100": ("n1-standard-64", 8, NO_FLEX),
    "p100": ("n1-standard-32", 4, NO_FLEX),
    "l4": ("g2-standard-96", 8, ALL),
    "a100-40gb": ("a2-megagpu-16g", 16, ALL),
    "a100-80gb": ("a2-ultragpu-8g", 8, ALL),
    "h100": ("a3-highgpu-8g", 8, ALL),
    "h100-mega": ("a3-megagpu-8g", 8, ALL),
    "h200": ("a3-ultragpu-8g", 8, ALL),
    "b200": ("a4-highgpu-8g", 8, ALL),
    "gb200": ("a4x-highgpu-4g", 4, NO_FLEX),
    "gb300": ("a4x-maxgpu-4g-metal", 4, NO_FLEX),
    "rtx-pro-6000": ("g4-standard-384", 8, NO_FLEX),
}
TPU_TABLE: dict[tuple[str, str], tuple[str, int | None, dict[str, bool]]] = {
    # (generation, topology): (machine type, VMs of a multi-host slice, outcome per mode)
    ("v4", "2x2x1"): ("ct4p-hightpu-4t", None, NO_FLEX),
    ("v4", "4x4x4"): ("ct4p-hightpu-4t", 16, NO_FLEX),
    ("v5e", "2x2"): ("ct5lp-hightpu-4t", None, ALL),
    ("v5e", "4x4"): ("ct5lp-hightpu-4t", 4, MULTI_HOST),
    ("v5p", "2x2x1"): ("ct5p-hightpu-4t", None, ALL),
    ("v5p", "2x2x2"): ("ct5p-hightpu-4t", 2, MULTI_HOST),
    ("v6e", "2x4"): ("ct6e-standard-8t", None, ALL),
    ("v6e", "8x8"): ("ct6e-standard-4t", 16, MULTI_HOST),
    ("tpu7x", "2x2x1"): ("tpu7x-standard-4t", None, NO_FLEX),
    ("tpu7x", "4x4x4"): ("tpu7x-standard-4t", 16, NO_FLEX),
}


def _options(mode: str) -> dict[str, Any]:
    if mode == "spot":
        return {"spot": True}
    return {"provisioning": mode}


def _pool(hardware: Accelerator | TpuSlice, mode: str, **extra: Any) -> NodePool:
    return NodePool.for_accelerator(hardware, name="pool", **_options(mode), **extra)


def test_every_catalog_row_has_a_table_row() -> None:
    assert set(GPU_TABLE) == {g.key for g in gpu_models()}
    assert {gen for gen, _ in TPU_TABLE} == {t.key for t in tpu_generations()}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("key", GPU_TABLE)
def test_gpu_row_by_mode(key: str, mode: str) -> None:
    machine, count, outcome = GPU_TABLE[key]
    hardware = Accelerator(key, count=count)
    if not outcome[mode]:
        with pytest.raises(SpecError, match="flex-start"):
            _pool(hardware, mode)
        return
    pool = _pool(hardware, mode)
    (message,) = node_pool_messages(pool)
    config = message.config
    assert config.machine_type == machine
    (accelerator,) = config.accelerators
    assert accelerator.accelerator_type == hardware.label
    assert accelerator.accelerator_count == count
    driver = accelerator.gpu_driver_installation_config.gpu_driver_version
    assert driver == container_v1.GPUDriverInstallationConfig.GPUDriverVersion.LATEST
    _check_mode(message, mode)
    taints = {(t.key, t.value) for t in config.taints}
    assert ("nvidia.com/gpu", "present") in taints
    _round_trip(pool)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("slice_key", TPU_TABLE)
def test_tpu_row_by_mode(slice_key: tuple[str, str], mode: str) -> None:
    machine, hosts, outcome = TPU_TABLE[slice_key]
    hardware = TpuSlice(*slice_key)
    # TPU7x multi-host slices are placed by a workload policy the admin names.
    extra = {"placement_policy": "ironwood-4x4x4"} if slice_key == ("tpu7x", "4x4x4") else {}
    if not outcome[mode]:
        with pytest.raises(SpecError, match="flex-start"):
            _pool(hardware, mode, **extra)
        return
    pool = _pool(hardware, mode, **extra)
    (message,) = node_pool_messages(pool)
    assert message.config.machine_type == machine
    assert list(message.config.accelerators) == []  # the machine type implies the TPU
    assert message.autoscaling.total_max_node_count == (hosts or 1)
    assert message.autoscaling.total_min_node_count == 0  # nothing runs while idle
    placement = message.placement_policy
    if extra:
        assert (placement.policy_name, placement.tpu_topology) == ("ironwood-4x4x4", "")
    elif hosts:
        assert placement.type_ == container_v1.NodePool.PlacementPolicy.Type.COMPACT
        assert placement.tpu_topology == slice_key[1]
    else:
        assert "placement_policy" not in container_v1.NodePool.to_dict(message)
    _check_mode(message, mode)
    assert ("google.com/tpu", "present") in {(t.key, t.value) for t in message.config.taints}
    _round_trip(pool)


def _check_mode(message: container_v1.NodePool, mode: str) -> None:
    config = message.config
    spot_taint = ("cloud.google.com/gke-spot", "true") in {(t.key, t.value) for t in config.taints}
    assert (config.spot, spot_taint) == (mode == "spot", mode == "spot")
    assert config.flex_start == (mode in ("flex-start", "queued"))
    assert message.queued_provisioning.enabled == (mode == "queued")
    assert message.autoscaling.enabled
    assert message.initial_node_count == 0
    any_zone = container_v1.NodePoolAutoscaling.LocationPolicy.ANY
    assert (message.autoscaling.location_policy == any_zone) == (mode != "standard")
    none = container_v1.ReservationAffinity.Type.NO_RESERVATION
    flex = mode in ("flex-start", "queued")
    assert (config.reservation_affinity.consume_reservation_type == none) == flex
    assert message.management.auto_repair == (not flex)


def _round_trip(pool: NodePool) -> None:
    messages = node_pool_messages(pool)
    as_dict = pool.to_dict()
    assert pools_from_dict(as_dict) == messages
    assert pools_dict(messages) == as_dict
    # The proto-plus mapping agrees with the JSON one, and the spec round-trips as YAML.
    assert [
        container_v1.NodePool.from_json(container_v1.NodePool.to_json(m)) for m in messages
    ] == messages
    assert NodePool.from_yaml(pool.to_yaml()) == pool
