"""The GKE API JSON of representative node pools, written out from what the protobuf builder
(`container_v1` messages through `json_format.MessageToDict`) produced before
`gkeml_sdk.nodepools.manifests` replaced it: `NodePool.to_dict()` must keep producing it,
keys in the same order (the order `gkeml nodepool plan` prints)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from gkeml_sdk import Accelerator, NodeNetwork, NodePool, TpuSlice

NETWORKS = tuple(
    NodeNetwork(network=f"gpu-net-{i}", subnetwork=f"gpu-sub-{i}") for i in range(1, 5)
)
CASES: list[tuple[str, NodePool, dict[str, Any]]] = [
    (
        "h100_spot_networks",
        NodePool(
            name="h100",
            hardware=Accelerator("h100", count=8),
            spot=True,
            max_nodes=2,
            zones=("us-central1-a", "us-central1-b"),
            additional_networks=NETWORKS,
            labels={"team": "vision"},
        ),
        {
            "nodePools": [
                {
                    "name": "h100",
                    "config": {
                        "machineType": "a3-highgpu-8g",
                        "labels": {"team": "vision"},
                        "accelerators": [
                            {
                                "acceleratorCount": "8",
                                "acceleratorType": "nvidia-h100-80gb",
                                "gpuDriverInstallationConfig": {"gpuDriverVersion": "LATEST"},
                            }
                        ],
                        "taints": [
                            {"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"},
                            {
                                "key": "cloud.google.com/gke-spot",
                                "value": "true",
                                "effect": "NO_SCHEDULE",
                            },
                        ],
                        "gvnic": {"enabled": True},
                        "spot": True,
                        "ephemeralStorageLocalSsdConfig": {"localSsdCount": 16},
                    },
                    "autoscaling": {
                        "enabled": True,
                        "locationPolicy": "ANY",
                        "totalMaxNodeCount": 2,
                    },
                    "management": {"autoUpgrade": True, "autoRepair": True},
                    "locations": ["us-central1-a", "us-central1-b"],
                    "networkConfig": {
                        "additionalNodeNetworkConfigs": [
                            {"network": "gpu-net-1", "subnetwork": "gpu-sub-1"},
                            {"network": "gpu-net-2", "subnetwork": "gpu-sub-2"},
                            {"network": "gpu-net-3", "subnetwork": "gpu-sub-3"},
                            {"network": "gpu-net-4", "subnetwork": "gpu-sub-4"},
                        ]
                    },
                }
            ]
        },
    ),
    (
        "v5e_multislice",
        NodePool(
            name="v5e",
            hardware=TpuSlice("v5e", "4x4", slices=2),
            provisioning="queued",
            zones=("us-central1-a",),
        ),
        {
            "nodePools": [
                {
                    "name": "v5e-0",
                    "config": {
                        "machineType": "ct5lp-hightpu-4t",
                        "taints": [
                            {"key": "google.com/tpu", "value": "present", "effect": "NO_SCHEDULE"}
                        ],
                        "reservationAffinity": {"consumeReservationType": "NO_RESERVATION"},
                        "flexStart": True,
                    },
                    "autoscaling": {
                        "enabled": True,
                        "locationPolicy": "ANY",
                        "totalMaxNodeCount": 4,
                    },
                    "management": {"autoUpgrade": True},
                    "locations": ["us-central1-a"],
                    "placementPolicy": {"type": "COMPACT", "tpuTopology": "4x4"},
                    "queuedProvisioning": {"enabled": True},
                },
                {
                    "name": "v5e-1",
                    "config": {
                        "machineType": "ct5lp-hightpu-4t",
                        "taints": [
                            {"key": "google.com/tpu", "value": "present", "effect": "NO_SCHEDULE"}
                        ],
                        "reservationAffinity": {"consumeReservationType": "NO_RESERVATION"},
                        "flexStart": True,
                    },
                    "autoscaling": {
                        "enabled": True,
                        "locationPolicy": "ANY",
                        "totalMaxNodeCount": 4,
                    },
                    "management": {"autoUpgrade": True},
                    "locations": ["us-central1-a"],
                    "placementPolicy": {"type": "COMPACT", "tpuTopology": "4x4"},
                    "queuedProvisioning": {"enabled": True},
                },
            ]
        },
    ),
    (
        "a100_mig",
        NodePool(
            name="mig",
            hardware=Accelerator("a100-40gb", count=3, mig="1g.5gb"),
            gpu_driver="default",
            reservation="projects/owner-proj/reservations/a100",
            initial_nodes=1,
            min_nodes=1,
            max_nodes=2,
        ),
        {
            "nodePools": [
                {
                    "name": "mig",
                    "config": {
                        "machineType": "a2-highgpu-1g",
                        # The labels the reservation's pods and Kueue flavor select.
                        "labels": {
                            "cloud.google.com/reservation-affinity": "specific",
                            "cloud.google.com/reservation-name": "a100",
                            "cloud.google.com/reservation-project": "owner-proj",
                        },
                        "accelerators": [
                            {
                                "acceleratorCount": "1",
                                "acceleratorType": "nvidia-tesla-a100",
                                "gpuPartitionSize": "1g.5gb",
                                "gpuDriverInstallationConfig": {"gpuDriverVersion": "DEFAULT"},
                            }
                        ],
                        "taints": [
                            {"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"}
                        ],
                        "reservationAffinity": {
                            "consumeReservationType": "SPECIFIC_RESERVATION",
                            "key": "compute.googleapis.com/reservation-name",
                            "values": ["projects/owner-proj/reservations/a100"],
                        },
                        "gvnic": {"enabled": True},
                        "fastSocket": {"enabled": True},
                    },
                    "initialNodeCount": 1,
                    "autoscaling": {
                        "enabled": True,
                        "locationPolicy": "BALANCED",
                        "totalMinNodeCount": 1,
                        "totalMaxNodeCount": 2,
                    },
                    "management": {"autoUpgrade": True, "autoRepair": True},
                }
            ]
        },
    ),
    (
        "l4_flex_start",
        NodePool(
            name="l4",
            hardware=Accelerator("l4"),
            provisioning="flex-start",
            max_run_seconds=3600,
            max_nodes=4,
        ),
        {
            "nodePools": [
                {
                    "name": "l4",
                    "config": {
                        "machineType": "g2-standard-4",
                        "accelerators": [
                            {
                                "acceleratorCount": "1",
                                "acceleratorType": "nvidia-l4",
                                "gpuDriverInstallationConfig": {"gpuDriverVersion": "LATEST"},
                            }
                        ],
                        "taints": [
                            {"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"}
                        ],
                        "reservationAffinity": {"consumeReservationType": "NO_RESERVATION"},
                        "gvnic": {"enabled": True},
                        "fastSocket": {"enabled": True},
                        "maxRunDuration": "3600s",
                        "flexStart": True,
                    },
                    "autoscaling": {
                        "enabled": True,
                        "locationPolicy": "ANY",
                        "totalMaxNodeCount": 4,
                    },
                    "management": {"autoUpgrade": True},
                }
            ]
        },
    ),
    (
        "h100_queued",
        NodePool(
            name="h100-dws",
            hardware=Accelerator("h100", count=8),
            provisioning="queued",
            max_nodes=4,
        ),
        {
            "nodePools": [
                {
                    "name": "h100-dws",
                    "config": {
                        "machineType": "a3-highgpu-8g",
                        "accelerators": [
                            {
                                "acceleratorCount": "8",
                                "acceleratorType": "nvidia-h100-80gb",
                                "gpuDriverInstallationConfig": {"gpuDriverVersion": "LATEST"},
                            }
                        ],
                        "taints": [
                            {"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"}
                        ],
                        "reservationAffinity": {"consumeReservationType": "NO_RESERVATION"},
                        "gvnic": {"enabled": True},
                        "ephemeralStorageLocalSsdConfig": {"localSsdCount": 16},
                        "flexStart": True,
                    },
                    "autoscaling": {
                        "enabled": True,
                        "locationPolicy": "ANY",
                        "totalMaxNodeCount": 4,
                    },
                    "management": {"autoUpgrade": True},
                    # A3 High: GKE brings up the GPUDirect-TCPX networks by default.
                    "networkConfig": {"acceleratorNetworkProfile": "auto"},
                    "queuedProvisioning": {"enabled": True},
                }
            ]
        },
    ),
    (
        "tpu7x_workload_policy",
        NodePool(
            name="ironwood",
            hardware=TpuSlice("tpu7x", "4x4x4"),
            placement_policy="ironwood-4x4x4",
            spot=True,
        ),
        {
            "nodePools": [
                {
                    "name": "ironwood",
                    "config": {
                        "machineType": "tpu7x-standard-4t",
                        "taints": [
                            {"key": "google.com/tpu", "value": "present", "effect": "NO_SCHEDULE"},
                            {
                                "key": "cloud.google.com/gke-spot",
                                "value": "true",
                                "effect": "NO_SCHEDULE",
                            },
                        ],
                        "spot": True,
                    },
                    "autoscaling": {
                        "enabled": True,
                        "locationPolicy": "ANY",
                        "totalMaxNodeCount": 16,
                    },
                    "management": {"autoUpgrade": True, "autoRepair": True},
                    "placementPolicy": {"policyName": "ironwood-4x4x4"},
                }
            ]
        },
    ),
]


@pytest.mark.parametrize(("what", "pool", "expected"), CASES, ids=[c[0] for c in CASES])
def test_the_pool_compiles_to_what_the_protobuf_builder_did(
    what: str, pool: NodePool, expected: dict[str, Any]
) -> None:
    # json.dumps keeps the key order: the same keys in another order would fail too.
    assert json.dumps(pool.to_dict()) == json.dumps(expected)
