"""One pod against one pool's nodes (`runs.explain.node_fit`): ephemeral storage counted as
kube-scheduler's NodeResourcesFit counts it, against the node model's allocatable."""

from __future__ import annotations

from typing import Any

import pytest

from gkeml_sdk.runs.explain.node_fit import fits
from gkeml_sdk.scheduling.gke_nodes import PoolNodes, pool_nodes

BOOT = 47060071478  # GKE's default 100 GB boot disk


def _pod(*containers: dict[str, Any], init: tuple[dict[str, Any], ...] = ()) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [{"name": f"c{i}", **c} for i, c in enumerate(containers)]
    }
    if init:
        spec["initContainers"] = [{"name": f"i{i}", **c} for i, c in enumerate(init)]
    return spec


def _storage(kind: str, amount: str) -> dict[str, Any]:
    return {"resources": {kind: {"ephemeral-storage": amount}}}


NODE = PoolNodes("p", {}, (), ephemeral_storage=BOOT)


@pytest.mark.parametrize(
    ("pod", "per_node"),
    [
        (_pod(_storage("requests", "20Gi")), 2),
        (_pod(_storage("requests", "20Gi"), _storage("limits", "20Gi")), 1),  # limit = request
        (_pod(_storage("requests", "10Gi"), init=(_storage("requests", "40Gi"),)), 1),
        (_pod({}), 1 << 30),  # asks for none: storage does not bound it
    ],
)
def test_pods_fit_by_the_sum_of_their_containers_or_their_largest_init_container(
    pod: dict[str, Any], per_node: int
) -> None:
    assert fits(pod, NODE, {}, [], False) == (5, "", per_node)


def test_a_pod_asking_more_than_a_node_offers_never_fits_and_says_how_to_give_it_room() -> None:
    stage, why, _ = fits(_pod(_storage("requests", "145Gi")), NODE, {}, [], False)
    assert stage == 3
    assert why.startswith(
        "each pod asks for 145.0 GiB of ephemeral-storage and a node offers 43.8 GiB "
        "(Insufficient ephemeral-storage)"
    )
    assert "ephemeral_storage=" in why and "boot_disk_gb" in why
    init_only = _pod(_storage("requests", "1Gi"), init=(_storage("limits", "50Gi"),))
    assert fits(init_only, NODE, {}, [], False)[0] == 3


def test_the_node_model_offers_what_the_pool_request_sets() -> None:
    request = {"name": "h100", "config": {"machineType": "a3-highgpu-8g"}}
    assert pool_nodes(request).ephemeral_storage == BOOT
    on_ssd = {"name": "h100", "config": {"machineType": "a3-highgpu-8g",
              "ephemeralStorageLocalSsdConfig": {"localSsdCount": 16}}}  # fmt: skip
    nodes = pool_nodes(on_ssd)
    assert nodes.ephemeral_storage > 5000 * 2**30
    # GKE labels the nodes whose ephemeral storage is on Local SSDs.
    assert nodes.labels["cloud.google.com/gke-ephemeral-storage-local-ssd"] == "true"
    assert "cloud.google.com/gke-ephemeral-storage-local-ssd" not in pool_nodes(request).labels
