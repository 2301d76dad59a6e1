"""`NodePool.to_dict()` is built from plain dicts (`gkeml_sdk.nodepools.manifests`), without
the GKE client library. Every pool the pool tests build, and a sweep of the catalog x modes x
options, goes through `container_v1` and back unchanged, key order included: ParseDict
refuses an unknown field or enum name, and MessageToDict writes back exactly what the
protobuf JSON mapping writes (defaults left out, int64 as strings, fields in proto order)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import pytest
from google.protobuf import json_format

from gkeml_sdk import (
    Accelerator,
    NodeNetwork,
    NodePool,
    SpecError,
    TpuSlice,
    gpu_models,
    tpu_generations,
)
from gkeml_sdk.backends.gke.messages import node_pool_messages, pools_dict, pools_from_dict
from tests.unit.nodepools import test_pool_flavor_table as flavor_table
from tests.unit.nodepools.test_pool_table import GPU_TABLE, MODES, TPU_TABLE

NETWORKS = tuple(NodeNetwork(network=f"net-{i}", subnetwork=f"sub-{i}") for i in range(8))


def _options(mode: str) -> dict[str, Any]:
    return {"spot": True} if mode == "spot" else {"provisioning": mode}


def _table_pools() -> Iterator[tuple[str, NodePool]]:
    """The pools of test_pool_table and test_pool_flavor_table."""
    for key, (_, count, outcome) in GPU_TABLE.items():
        for mode in (m for m in MODES if outcome[m]):
            gpu = Accelerator(key, count=count)
            yield f"{key}-{mode}", NodePool.for_accelerator(gpu, name="pool", **_options(mode))
    for (gen, topology), (_, _, outcome) in TPU_TABLE.items():
        extra = (
            {"placement_policy": "ironwood-4x4x4"} if (gen, topology) == ("tpu7x", "4x4x4") else {}
        )
        for mode in (m for m in MODES if outcome[m]):
            tpu = TpuSlice(gen, topology)
            pool = NodePool.for_accelerator(tpu, name="pool", **_options(mode), **extra)
            yield f"{gen}-{topology}-{mode}", pool
    for what, hardware, mode in flavor_table.CASES:
        yield f"flavor-{what}", flavor_table._pool(hardware, mode)


def _feature_pools() -> Iterator[tuple[str, NodePool]]:
    """The pools of the NodePool model tests, the docs page, the CLI's pool file and the
    GkeClient tests."""
    yield "mig", NodePool(name="mig", hardware=Accelerator("a100-40gb", count=3, mig="1g.5gb"))
    yield "mps", NodePool(name="mps", hardware=Accelerator("l4", sharing="mps", clients_per_gpu=4))
    shared = Accelerator("t4", sharing="time-sharing", clients_per_gpu=8)
    yield "time-sharing", NodePool(name="ts", hardware=shared)
    yield "driver-reservation", NodePool(
        name="h100", hardware=Accelerator("h100", count=8), gpu_driver="default",
        reservation="projects/owner-proj/reservations/h100-res",
    )  # fmt: skip
    yield "compact", NodePool(
        name="a100", hardware=Accelerator("a100-80gb", count=8), compact=True,
        placement_policy="a100-compact", zones=("us-central1-a",),
    )  # fmt: skip
    for key, count in (("h200", 8), ("gb200", 4), ("l4", 1)):
        yield key, NodePool(name=key, hardware=Accelerator(key, count=count))
    yield "v5e", NodePool(name="v5e", hardware=TpuSlice("v5e", "2x2"))
    mega = Accelerator("h100-mega", count=8)
    yield "no-networks", NodePool(name="mega", hardware=mega)
    yield "networks", NodePool(name="mega", hardware=mega, additional_networks=NETWORKS)
    multislice = TpuSlice("v5p", "4x4x4", slices=3)
    yield "multislice", NodePool(name="v5p", hardware=multislice, spot=True)
    yield "warm", NodePool(name="v5p", hardware=TpuSlice("v5p", "4x4x4"), initial_nodes=16)
    for what, labels in (("flex", {"team": "vision"}), ("labels", {"team": "a", "app": "b"})):
        yield what, NodePool(
            name="l4", hardware=Accelerator("l4"), provisioning="flex-start",
            max_run_seconds=3600, labels=labels, max_nodes=4,
        )  # fmt: skip
    h100 = Accelerator("h100", count=8)
    for name in ("h100-dws", "h100"):
        yield name, NodePool(name=name, hardware=h100, provisioning="queued", max_nodes=4)
    yield "v5e-spot", NodePool(
        name="v5e-spot", hardware=TpuSlice("v5e", "4x4", slices=2), spot=True,
        zones=("us-central1-a",),
    )  # fmt: skip


POOLS = [*_table_pools(), *_feature_pools()]


def _ordered(value: Any, key: str = "") -> Any:
    """`value` with every dict as its list of items: key order counts, except in the labels
    map, which protobuf keeps in an order of its own."""
    if isinstance(value, dict):
        items = sorted(value.items()) if key == "labels" else value.items()
        return [(k, _ordered(v, k)) for k, v in items]
    if isinstance(value, list):
        return [_ordered(v) for v in value]
    return value


def _through_protobuf(pool: NodePool) -> dict[str, Any]:
    return pools_dict(node_pool_messages(pool))


@pytest.mark.parametrize(("what", "pool"), POOLS, ids=[p[0] for p in POOLS])
def test_the_pool_json_goes_through_protobuf_unchanged(what: str, pool: NodePool) -> None:
    assert _ordered(_through_protobuf(pool)) == _ordered(pool.to_dict())


def _hardware() -> Iterator[Accelerator | TpuSlice]:
    for gpu in gpu_models():
        for count in sorted({m.gpus for m in gpu.machine_types}):
            yield Accelerator(gpu.key, count=count)
        for profile, _ in gpu.mig_profiles:
            yield from _made(gpu.key, mig=profile)
        for sharing in ("time-sharing", "mps"):
            yield from _made(gpu.key, sharing=sharing, clients_per_gpu=4)
    for tpu in tpu_generations():
        for topology, _, _ in tpu.single_host:
            yield TpuSlice(tpu.key, topology)
        for topology in tpu.multi_host_fixed:
            yield TpuSlice(tpu.key, topology)
            yield TpuSlice(tpu.key, topology, slices=2)


def _made(model: str, **options: Any) -> list[Accelerator]:
    """The GPU with `options` (MIG, sharing), or nothing where GKE cannot select it."""
    try:
        return [Accelerator(model, **options)]
    except SpecError:
        return []


VARIANTS: list[dict[str, Any]] = [
    {},
    {"reservation": "projects/owner-proj/reservations/r"},
    {"compact": True, "placement_policy": "compact-1", "zones": ("us-central1-a",)},
    {"placement_policy": "ironwood"},
    {"zones": ("us-central1-a", "us-central1-b"), "gpu_driver": "default"},
    {"gpu_driver": "disabled", "labels": {"team": "a", "app": "b"}},
    {"max_run_seconds": 3600},
    {"min_nodes": 1, "max_nodes": 3, "initial_nodes": 2},
]


def _sweep() -> Iterator[NodePool]:
    for hardware, mode, variant in itertools.product(_hardware(), MODES, VARIANTS):
        try:
            pool = NodePool(name="pool", hardware=hardware, **_options(mode), **variant)
        except SpecError:
            continue
        yield pool
        stack = pool.network_stack
        if stack is not None and stack.pool_networks:
            networks = NETWORKS[: stack.pool_networks]
            yield pool.model_copy(update={"additional_networks": networks})


def test_a_sweep_of_catalog_modes_and_options_goes_through_protobuf_unchanged() -> None:
    pools = list(_sweep())
    assert len(pools) > 1000  # the sweep still reaches most of the catalog
    changed = [p for p in pools if _ordered(_through_protobuf(p)) != _ordered(p.to_dict())]
    assert changed == []


def test_the_round_trip_catches_what_protobuf_would_not_write() -> None:
    (pool,) = NodePool(name="l4", hardware=Accelerator("l4")).to_dict()["nodePools"]
    (accelerator,) = pool["config"]["accelerators"]
    for unknown in (
        {**pool, "autoScaling": {}},  # a misspelled field
        {**pool, "config": {**pool["config"], "taints": [{"key": "k", "effect": "NOSCHEDULE"}]}},
    ):
        with pytest.raises(json_format.ParseError):
            pools_from_dict({"nodePools": [unknown]})
    for unlike in (
        {**pool, "initialNodeCount": 0},  # a default, which the JSON mapping leaves out
        {**pool, "config": {**pool["config"], "accelerators": [{**accelerator,
                                                               "acceleratorCount": 1}]}},
    ):  # fmt: skip
        assert pools_dict(pools_from_dict({"nodePools": [unlike]})) != {"nodePools": [unlike]}
    backwards = {"nodePools": [dict(reversed(pool.items()))]}  # equal, but in another order
    assert _ordered(pools_dict(pools_from_dict(backwards))) != _ordered(backwards)
