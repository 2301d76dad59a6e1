"""What a NodePool compiles to beyond the table (MIG, sharing, reservations, placement,
GPUDirect, labels), and the combinations GKE refuses, each with the fix in its message."""

from __future__ import annotations

from typing import Any

import pytest
from google.cloud import container_v1

from gkeml_sdk import Accelerator, NodeNetwork, NodePool, SpecError, TpuSlice
from gkeml_sdk.backends.gke.messages import node_pool_messages

c = container_v1


def _one(pool: NodePool) -> container_v1.NodePool:
    (message,) = node_pool_messages(pool)
    return message


def test_mig_partition_size_is_on_the_accelerator_config() -> None:
    pool = NodePool.for_accelerator(Accelerator("a100-40gb", count=3, mig="1g.5gb"), name="mig")
    accelerator = _one(pool).config.accelerators[0]
    assert accelerator.gpu_partition_size == "1g.5gb"
    assert (accelerator.accelerator_type, accelerator.accelerator_count) == (
        "nvidia-tesla-a100",
        1,
    )
    assert pool.to_dict()["nodePools"][0]["config"]["accelerators"][0]["gpuPartitionSize"] == (
        "1g.5gb"
    )


def test_gpu_sharing_compiles_strategy_and_clients() -> None:
    hardware = Accelerator("l4", sharing="mps", clients_per_gpu=4)
    sharing = _one(NodePool(name="mps", hardware=hardware)).config.accelerators[0]
    assert (
        sharing.gpu_sharing_config.gpu_sharing_strategy == c.GPUSharingConfig.GPUSharingStrategy.MPS
    )
    assert sharing.gpu_sharing_config.max_shared_clients_per_gpu == 4
    timeshared = Accelerator("t4", sharing="time-sharing", clients_per_gpu=8)
    config = _one(NodePool(name="ts", hardware=timeshared)).config.accelerators[0]
    assert config.gpu_sharing_config.gpu_sharing_strategy.name == "TIME_SHARING"


def test_driver_choice_and_specific_reservation() -> None:
    pool = NodePool(
        name="h100",
        hardware=Accelerator("h100", count=8),
        gpu_driver="default",
        reservation="projects/owner-proj/reservations/h100-res",
    )
    config = _one(pool).config
    assert config.accelerators[0].gpu_driver_installation_config.gpu_driver_version.name == (
        "DEFAULT"
    )
    affinity = config.reservation_affinity
    assert affinity.consume_reservation_type == c.ReservationAffinity.Type.SPECIFIC_RESERVATION
    assert (affinity.key, list(affinity.values)) == (
        "compute.googleapis.com/reservation-name",
        ["projects/owner-proj/reservations/h100-res"],
    )


def test_compact_placement_with_a_named_policy_in_one_zone() -> None:
    pool = NodePool(
        name="a100",
        hardware=Accelerator("a100-80gb", count=8),
        compact=True,
        placement_policy="a100-compact",
        zones=("us-central1-a",),
    )
    message = _one(pool)
    assert message.placement_policy.type_ == c.NodePool.PlacementPolicy.Type.COMPACT
    assert message.placement_policy.policy_name == "a100-compact"
    assert list(message.locations) == ["us-central1-a"]


def test_gpudirect_settings_come_from_the_machine_type() -> None:
    ultra = _one(NodePool(name="h200", hardware=Accelerator("h200", count=8))).config
    assert ultra.gvnic.enabled
    assert ultra.gpu_direct_config.gpu_direct_strategy == c.GPUDirectConfig.GPUDirectStrategy.RDMA
    # A4X attaches its RDMA networks without GKE's RDMA strategy (A3 Ultra and A4 only).
    a4x = _one(NodePool(name="gb200", hardware=Accelerator("gb200", count=4))).config
    assert a4x.gvnic.enabled and not c.NodeConfig.pb(a4x).HasField("gpu_direct_config")
    # G2 offers NCCL Fast Socket, which jobs select by its node label: the pool enables it.
    socket = _one(NodePool(name="l4", hardware=Accelerator("l4"))).config
    assert socket.gvnic.enabled and socket.fast_socket.enabled
    plain = _one(NodePool(name="v5e", hardware=TpuSlice("v5e", "2x2"))).config
    assert not c.NodeConfig.pb(plain).HasField("gvnic")
    networks = tuple(NodeNetwork(network=f"net-{i}", subnetwork=f"sub-{i}") for i in range(8))
    mega = NodePool(
        name="mega", hardware=Accelerator("h100-mega", count=8), additional_networks=networks
    )
    extra = _one(mega).network_config.additional_node_network_configs
    assert (extra[0].network, extra[0].subnetwork) == ("net-0", "sub-0")
    # With its networks given, what remains are the stack's cluster prerequisites.
    assert len(extra) == 8 and mega.notes == list(mega.network_stack.prerequisites)


def test_an_a3_mega_pool_is_gpudirect_ready_by_default() -> None:
    pool = NodePool(name="mega", hardware=Accelerator("h100-mega", count=8))
    assert pool.network_profile == "auto"
    message = _one(pool)
    assert message.network_config.accelerator_network_profile == "auto"
    assert list(message.network_config.additional_node_network_configs) == []
    assert message.config.gvnic.enabled
    assert "GKE creates and attaches a3-megagpu-8g's 8 GPUDirect-TCPXO networks" in pool.notes[0]


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"accelerator_network_profile": "none"}, r"without its 8 GPUDirect networks.*'auto'"),
        ({"accelerator_network_profile": "auto", "additional_networks": [
            NodeNetwork(network=f"n{i}", subnetwork=f"s{i}") for i in range(8)]},
         r"GKE creates and attaches the networks itself"),
    ],
)  # fmt: skip
def test_gpudirect_networks_come_from_gke_or_from_the_pool(
    fields: dict[str, Any], message: str
) -> None:
    with pytest.raises(SpecError, match=message):
        NodePool(name="mega", hardware=Accelerator("h100-mega", count=8), **fields)
    with pytest.raises(SpecError, match="brings up GPUDirect networks on A3"):
        NodePool(name="l4", hardware=Accelerator("l4"), accelerator_network_profile="auto")


def test_multislice_is_one_pool_per_slice_each_of_the_slice_vms() -> None:
    pool = NodePool(name="v5p", hardware=TpuSlice("v5p", "4x4x4", slices=3), spot=True)
    messages = node_pool_messages(pool)
    assert [m.name for m in messages] == ["v5p-0", "v5p-1", "v5p-2"]
    assert {m.autoscaling.total_max_node_count for m in messages} == {16}
    warm = NodePool(name="v5p", hardware=TpuSlice("v5p", "4x4x4"), initial_nodes=16)
    assert _one(warm).initial_node_count == 16


def test_labels_and_flex_start_run_limit() -> None:
    pool = NodePool(
        name="l4",
        hardware=Accelerator("l4"),
        provisioning="flex-start",
        max_run_seconds=3600,
        labels={"team": "vision"},
        max_nodes=4,
    )
    config = _one(pool).config
    assert dict(config.labels) == {"team": "vision"}
    assert config.max_run_duration.total_seconds() == 3600
    assert config.flex_start and not config.spot


REFUSED: list[tuple[str, dict[str, Any], str]] = [
    # (what, NodePool fields, a piece of the fix the message must name)
    ("queued + spot", {"hardware": Accelerator("h100", count=8), "spot": True,
                       "provisioning": "queued"}, "spot=False"),
    ("flex-start + spot", {"hardware": Accelerator("l4"), "spot": True,
                           "provisioning": "flex-start"}, "spot=False"),
    ("flex-start alone for a multi-host slice", {"hardware": TpuSlice("v6e", "4x4"),
                                                 "provisioning": "flex-start"},
     "provisioning='queued'"),
    ("on-demand A3 High 1g", {"hardware": Accelerator("h100", count=1)}, "spot=True"),
    ("TPU topology vs machine type", {"hardware": TpuSlice("v5e", "4x4"),
                                      "machine_type": "ct5lp-hightpu-8t"},
     "machine_type='ct5lp-hightpu-4t'"),
    ("GPU machine of another count", {"hardware": Accelerator("l4"),
                                      "machine_type": "g2-standard-24"}, "g2-standard-4"),
    ("driver on a TPU pool", {"hardware": TpuSlice("v5e", "2x2"), "gpu_driver": "latest"},
     "drop gpu_driver"),
    ("compact on a GPU without it", {"hardware": Accelerator("v100"), "compact": True},
     "drop compact"),
    ("compact across zones", {"hardware": Accelerator("l4"), "compact": True,
                              "zones": ("us-central1-a", "us-central1-b")},
     "zones=['us-central1-a']"),
    ("policy without compact", {"hardware": Accelerator("l4"), "placement_policy": "p"},
     "compact=True"),
    ("TPU7x multi-host without its workload policy", {"hardware": TpuSlice("tpu7x", "4x4x4")},
     "workload-policy"),
    ("multi-host slice pool of other size", {"hardware": TpuSlice("v5e", "4x4"),
                                             "max_nodes": 8}, "slices=N"),
    ("reservation with flex-start", {"hardware": Accelerator("l4"), "reservation": "r",
                                     "provisioning": "flex-start"}, "drop reservation"),
    ("queued pool that starts with nodes", {"hardware": Accelerator("l4"), "max_nodes": 2,
                                            "initial_nodes": 1, "provisioning": "queued"},
     "initial_nodes=0"),
    ("min above max", {"hardware": Accelerator("l4"), "min_nodes": 3, "max_nodes": 2},
     "min_nodes=0"),
    ("run limit on standard", {"hardware": Accelerator("l4"), "max_run_seconds": 60},
     "provisioning='flex-start'"),
    ("run limit above 7 days", {"hardware": Accelerator("l4"), "provisioning": "flex-start",
                                "max_run_seconds": 8 * 86400}, "604800"),
    ("networks on a machine without GPUDirect", {"hardware": Accelerator("l4"),
     "additional_networks": (NodeNetwork(network="n", subnetwork="s"),)},
     "drop additional_networks"),
    ("too few networks", {"hardware": Accelerator("h200", count=8),
     "additional_networks": (NodeNetwork(network="n", subnetwork="s"),)}, "9 NodeNetwork"),
    ("bad label", {"hardware": Accelerator("l4"), "labels": {"team": "a b"}}, "shorten"),
]  # fmt: skip


@pytest.mark.parametrize(("what", "fields", "fix"), REFUSED, ids=[r[0] for r in REFUSED])
def test_refused_with_the_fix(what: str, fields: dict[str, Any], fix: str) -> None:
    with pytest.raises(SpecError) as caught:
        NodePool(name="pool", **fields)
    assert fix in caught.value.fix, str(caught.value)
    assert caught.value.rule


def test_hardware_gke_cannot_build_is_refused_before_the_pool() -> None:
    # MIG on a GPU without MIG, and GPU sharing on a TPU slice, fail as the pool is read.
    with pytest.raises(SpecError, match="no Multi-Instance GPU support"):
        NodePool.model_validate({"name": "p", "hardware": {"model": "l4", "mig": "1g.5gb"}})
    with pytest.raises(SpecError, match="sharing"):
        NodePool.model_validate(
            {"name": "p", "hardware": {"generation": "v5e", "topology": "2x2", "sharing": "mps"}}
        )


def test_pool_names_fit_gke_with_the_slice_suffix() -> None:
    NodePool(name="a" * 40, hardware=Accelerator("l4"))
    with pytest.raises(SpecError, match="at most 38"):
        NodePool(name="a" * 39, hardware=TpuSlice("v5e", "4x4", slices=10))
    with pytest.raises(SpecError, match="not a valid"):
        NodePool(name="9pool", hardware=Accelerator("l4"))


def test_compiling_needs_the_gke_extra_only_for_messages() -> None:
    import subprocess
    import sys

    code = (
        "import sys; from gkeml_sdk import NodePool, Accelerator, node_pool_messages;"
        "p = NodePool(name='x', hardware=Accelerator('l4')); p.notes; p.to_dict();"
        "assert not any(m.startswith('google') for m in sys.modules), 'google imported';"
        "node_pool_messages(p); assert 'google.cloud.container_v1' in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_docs_page_shows_what_the_example_compiles_to() -> None:
    import re
    from pathlib import Path

    import yaml

    page = (Path(__file__).resolve().parents[3] / "docs" / "node-pools.md").read_text()
    shown = re.search(r"```yaml\n(nodePools:.*?)```", page, flags=re.DOTALL)
    assert shown is not None
    pool = NodePool.for_accelerator(
        Accelerator("h100", count=8), name="h100-dws", provisioning="queued", max_nodes=4
    )
    assert shown.group(1) == yaml.safe_dump(pool.to_dict(), sort_keys=False)


def test_without_the_gke_extra_messages_say_how_to_get_it() -> None:
    import subprocess
    import sys

    code = (
        "import sys; sys.modules['google.cloud.container_v1'] = None\n"
        "from gkeml_sdk import NodePool, Accelerator, node_pool_messages\n"
        "pool = NodePool(name='x', hardware=Accelerator('l4')); print(pool.notes)\n"
        "print(pool.to_dict()['nodePools'][0]['name'])\n"
        "node_pool_messages(pool)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 1 and done.stdout == "[]\nx\n"
    assert "ImportError: gkeml node pools need the GKE client library" in done.stderr
    assert "pip install 'gkeml[gke]'" in done.stderr


def test_a_spot_pool_may_extend_graceful_node_shutdown() -> None:
    pool = NodePool(name="l4", hardware=Accelerator("l4"), spot=True, shutdown_grace_seconds=120)
    (request,) = pool.to_dict()["nodePools"]
    assert request["config"]["kubeletConfig"] == {
        "shutdownGracePeriodSeconds": 120,
        "shutdownGracePeriodCriticalPodsSeconds": 15,
    }
    assert any("gives its pods up to 105 s" in n for n in pool.notes)
    with pytest.raises(SpecError, match="spot=True, or drop shutdown_grace_seconds"):
        NodePool(name="l4", hardware=Accelerator("l4"), shutdown_grace_seconds=120)
    with pytest.raises(SpecError):
        NodePool(name="l4", hardware=Accelerator("l4"), spot=True, shutdown_grace_seconds=60)


def test_a_pool_without_gkes_driver_says_to_apply_the_installer() -> None:
    pool = NodePool(name="l4", hardware=Accelerator("l4"), gpu_driver="disabled")
    (request,) = pool.to_dict()["nodePools"]
    config = request["config"]["accelerators"][0]["gpuDriverInstallationConfig"]
    assert config == {"gpuDriverVersion": "INSTALLATION_DISABLED"}
    assert any("nvidia-driver-installer" in n for n in pool.notes)
    assert not any("driver" in n for n in NodePool(name="l4", hardware=Accelerator("l4")).notes)
