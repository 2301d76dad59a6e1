"""Issue 37 on the test API server: matrix cells compiled as the SDK compiles them, applied
through the API on a cluster whose Nodes GKE would make from the SDK's own node pools, run by
Kueue's admission, kube-scheduler's filters and the kubelet (tests/kubeapi/gke_cluster.py).
Each cell is admitted on the flavor `where_it_runs` names and every pod runs on a node of the
cell's pools, while a decoy pool of the same hardware in another mode sorts first and takes
none. The example tenants start every model the same way."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gkeml_sdk import (
    Accelerator,
    ClusterSetup,
    NodePool,
    ServeModel,
    Team,
    compile_tenants,
    load_specs,
)
from gkeml_sdk.core.quantity import quantity
from gkeml_sdk.hardware.dra import KUEUE_DEVICE_CLASSES
from gkeml_sdk.runs.explain.runs_where import where_it_runs
from gkeml_sdk.setup.capacity_model import Capacity
from tests.kubeapi import KubeAPIServer
from tests.kubeapi.gke_cluster import GkeCluster
from tests.unit.runs.runs_where_matrix import DRIVER_INSTALLER, LARGE, NAMESPACE, compose

POOL_LABEL = "cloud.google.com/gke-nodepool"
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "tenants.yaml"
# Every accelerator family at least once, every allocation and every provisioning mode the
# family is sold in, training and serving: (kind, constructor arguments, spot, provisioning).
CELLS = [
    ("training", {"model": "t4", "count": 1}, False, "standard"),
    ("training", {"model": "p4", "count": 1}, True, "standard"),
    (
        "training",
        {"model": "v100", "sharing": "time-sharing", "clients_per_gpu": 4},
        False,
        "standard",
    ),
    ("training", {"model": "p100", "sharing": "mps", "clients_per_gpu": 4}, True, "standard"),
    ("serving", {"model": "l4", "count": 1}, True, "standard"),
    ("training", {"model": "l4", "sharing": "mps", "clients_per_gpu": 4}, False, "queued"),
    ("training", {"model": "a100-40gb", "mig": "1g.5gb"}, False, "flex-start"),
    ("serving", {"model": "a100-80gb", "mig": "1g.10gb"}, False, "standard"),
    ("training", {"model": "h100", "count": 8, "nodes": 2}, False, "flex-start"),
    ("training", {"model": "h100-mega", "count": 8}, False, "queued"),
    ("training", {"model": "h200", "mig": "1g.18gb"}, True, "standard"),
    ("training", {"model": "b200", "count": 8}, False, "standard"),
    ("serving", {"model": "gb200", "count": 4}, False, "standard"),
    (
        "training",
        {"model": "gb300", "sharing": "time-sharing", "clients_per_gpu": 4},
        True,
        "standard",
    ),
    ("serving", {"model": "rtx-pro-6000", "count": 1}, True, "standard"),
    ("training", {"model": "l4", "count": 2, "allocation": "dra"}, False, "standard"),
    ("training", {"model": "a100-80gb", "count": 1, "allocation": "dra"}, True, "standard"),
    ("training", {"tpu": "v4", "topology": "2x2x1"}, True, "standard"),
    ("training", {"tpu": "v5e", "topology": "4x4", "slices": 2}, False, "standard"),
    ("training", {"tpu": "v5p", "topology": "2x2x1"}, False, "flex-start"),
    ("training", {"tpu": "v6e", "topology": "1x1"}, False, "queued"),
    ("training", {"tpu": "tpu7x", "topology": "2x2x2"}, True, "standard"),
]
SHOWN = ("mig", "sharing", "allocation", "topology", "slices")  # in the test ids
OTHER_MODE = {
    "standard": (True, "standard"),
    "spot": (False, "standard"),
    "flex-start": (False, "standard"),
    "queued": (False, "standard"),
}


def _mode(spot: bool, provisioning: str) -> str:
    return "spot" if spot else provisioning


def _play(
    server: KubeAPIServer, kind: str, args: dict[str, Any], spot: bool, provisioning: str
) -> tuple[GkeCluster, Any]:
    cell = compose(kind, args, spot, provisioning)
    pools, policies = list(cell.pools), dict(cell.policies)
    # The same hardware in another mode: its nodes sort first and must take no pod.
    decoy = compose(kind, args, *OTHER_MODE[_mode(spot, provisioning)], pool_name="alt")
    pools += decoy.pools
    policies.update(decoy.policies)
    # Kueue configured as the setup's notes ask: claimed GPUs charged to their quota resource.
    cluster = GkeCluster(server, pools, policies, KUEUE_DEVICE_CLASSES)
    # The reduced driver installer stands for NVIDIA's (dra.py assumes the driver it installs).
    cluster.apply([o for o in cell.setup if o is not DRIVER_INSTALLER])
    cluster.apply(cell.manifests.objects)
    cluster.settle()
    return cluster, cell


@pytest.mark.parametrize(
    ("kind", "args", "spot", "provisioning"),
    CELLS,
    ids=[
        "-".join(
            [
                k,
                str(a.get("model") or a.get("tpu")),
                *(str(a[x]) for x in SHOWN if x in a),
                _mode(s, p),
            ]
        )
        for k, a, s, p in CELLS
    ],
)
def test_each_cell_is_admitted_and_its_pods_run_on_its_pool(
    kube_api_factory: Callable[..., KubeAPIServer],
    kind: str,
    args: dict[str, Any],
    spot: bool,
    provisioning: str,
) -> None:
    server = kube_api_factory(namespaces=("default", "kube-system"))
    cluster, cell = _play(server, kind, args, spot, provisioning)
    answer = where_it_runs(
        cell.setup,
        cell.pools,
        cell.manifests.objects,
        workload=cell.manifests.workload,
        workload_policies=cell.policies,
    )
    assert answer.runs, answer.reason
    workloads = server.store.list("workloads")
    assert workloads and len(cluster.kueue.admitted) == len(workloads)
    flavors = {
        flavor
        for w in workloads
        for ps in w["status"]["admission"]["podSetAssignments"]
        for flavor in ps["flavors"].values()
    }
    assert flavors == {answer.flavor}  # Kueue lands where the oracle said
    pods = server.store.list("pods")
    assert pods and len(cluster.scheduler.bound) == len(pods)
    nodes = {n["metadata"]["name"]: n for n in server.store.list("nodes")}
    pools_of = {n["metadata"]["labels"][POOL_LABEL] for n in nodes.values()}
    assert any(pool.startswith("alt") for pool in pools_of)  # the decoy is there to refuse
    used = {nodes[p["spec"]["nodeName"]]["metadata"]["labels"][POOL_LABEL] for p in pods}
    assert used == set(answer.pools) and all(not u.startswith("alt") for u in used)
    assert {p["status"]["phase"] for p in pods} == {"Running"}
    if args.get("allocation") == "dra":  # each pod holds its GPUs through an allocated claim
        claims = server.store.list("resourceclaims")
        assert len(claims) == len(pods)
        for claim in claims:
            results = claim["status"]["allocation"]["devices"]["results"]
            assert len(results) == args["count"]
            owner = claim["metadata"]["ownerReferences"][0]["name"]
            node_of = server.store.get("pods", "team-a", owner)["spec"]["nodeName"]
            assert {r["pool"] for r in results} == {node_of}


# Weights caches past GKE's 100 GB boot disk: on the Local SSDs of A3 nodes, and on the boot
# disk `NodePool.for_accelerator(ephemeral_storage=...)` sizes for a G2 node.
LARGE_SERVERS = [
    ("h100", "meta-llama/Llama-3.1-70B-Instruct", "145Gi"),
    ("h100", LARGE, "832Gi"),
    ("l4", "meta-llama/Llama-3.1-70B-Instruct", "145Gi"),
]


@pytest.mark.parametrize(
    ("gpu", "served", "cache"), LARGE_SERVERS, ids=[f"{g}-{s}" for g, s, _ in LARGE_SERVERS]
)
def test_a_large_model_server_runs_on_its_pool(
    kube_api_factory: Callable[..., KubeAPIServer], gpu: str, served: str, cache: str
) -> None:
    server = kube_api_factory(namespaces=("default", "kube-system"))
    args = {"model": gpu, "count": 8, "served": served}
    cluster, _ = _play(server, "serving", args, True, "standard")
    assert len(cluster.kueue.admitted) == 1  # Kueue admits it (or its group) on the Spot flavor
    pods = server.store.list("pods")
    assert {p["status"]["phase"] for p in pods} == {"Running"}, [
        p["status"]["conditions"][0].get("message") for p in pods
    ]
    asked = {
        c["resources"]["requests"]["ephemeral-storage"]
        for p in pods
        for c in p["spec"]["containers"]
    }
    assert asked == {cache}
    nodes = {n["metadata"]["name"]: n for n in server.store.list("nodes")}
    for pod in pods:  # each on a node whose allocatable holds the cache
        allocatable = nodes[pod["spec"]["nodeName"]]["status"]["allocatable"]["ephemeral-storage"]
        assert int(allocatable) >= quantity(cache)


def test_a_server_on_a_pool_without_room_for_its_weights_stays_pending_as_the_oracle_says(
    kube_api_factory: Callable[..., KubeAPIServer],
) -> None:
    server = kube_api_factory(namespaces=("default", "kube-system"))
    svc = ServeModel(
        name="big", model="meta-llama/Llama-3.1-70B-Instruct", spot=True,
        accelerator=Accelerator("l4", count=8), namespace=NAMESPACE,
        queue=Team(name=NAMESPACE).queue("spot"), hf_token_secret="hf",
    )  # fmt: skip
    pool = NodePool.for_accelerator(svc.accelerator, name="l4", spot=True)  # 100 GB boot disk
    setup = ClusterSetup(
        capacity=Capacity.from_node_pools([pool]), teams=[Team(name=NAMESPACE, quota={"l4": 8})]
    )
    manifests, pools = svc.compile(), pool.to_dict()["nodePools"]
    answer = where_it_runs(
        setup.compile().objects, pools, manifests.objects, workload=manifests.workload
    )
    assert not answer.runs
    assert (
        "Insufficient ephemeral-storage" in answer.reason and "ephemeral_storage=" in answer.reason
    )
    cluster = GkeCluster(server, pools)
    cluster.apply(setup.compile().objects)
    cluster.apply(manifests.objects)
    cluster.settle()
    assert len(cluster.kueue.admitted) == 1 and not cluster.scheduler.bound
    (pod,) = server.store.list("pods")
    assert pod["status"]["conditions"][0]["message"].startswith(
        "0/1 nodes are available: 1 Insufficient ephemeral-storage."
    )


def test_the_example_tenants_start_every_model(
    kube_api_factory: Callable[..., KubeAPIServer],
) -> None:
    server = kube_api_factory(namespaces=("default", "kube-system"))
    tenants = load_specs(EXAMPLE)
    pools = [r for t in tenants for p in t.node_pools() for r in p.to_dict()["nodePools"]]
    cluster = GkeCluster(server, pools)
    cluster.apply(compile_tenants(tenants).objects)
    cluster.settle()
    for tenant in tenants:
        namespace = tenant.namespace
        expected = {p.to_dict()["nodePools"][0]["name"] for p in tenant.node_pools()}
        for model in tenant.models:
            pods = server.store.list("pods", namespace, f"gkeml.dev/serve={model.name}")
            assert len(pods) >= model.min_replicas, (tenant.name, model.name)
            for pod in pods:
                node = server.store.get("nodes", None, pod["spec"].get("nodeName") or "?")
                assert node is not None, (pod["metadata"]["name"], pod["status"])
                assert node["metadata"]["labels"][POOL_LABEL] in expected
                assert pod["status"]["phase"] == "Running"
    workloads = server.store.list("workloads")  # one per queued model pod (pod integration)
    assert workloads and len(cluster.kueue.admitted) == len(workloads)
    assert {(ns, cq) for ns, _, cq in cluster.kueue.admitted} == {
        (t.namespace, t.name) for t in tenants
    }
    every = server.store.list("pods")
    assert {p["status"]["phase"] for p in every} == {"Running"}
    assert len(cluster.scheduler.bound) == len(every)
