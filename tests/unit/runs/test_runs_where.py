"""`where_it_runs` over the whole matrix of issue 37, and the defects it found, each judged from
compiled objects alone."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gkeml_sdk import Accelerator, ClusterSetup, NodePool, Team, TrainingJob
from gkeml_sdk.errors import SpecError
from gkeml_sdk.hardware.gpus import GPUS
from gkeml_sdk.runs.explain.runs_where import where_it_runs
from gkeml_sdk.setup.capacity_model import Capacity
from tests.schemas import validate_object
from tests.unit.runs.runs_where_matrix import (
    DRIVER_INSTALLER,
    LARGE,
    Cell,
    cells,
    compose,
    judge,
    table,
)

GPUS_BY_KEY = {row.key: row for row in GPUS}
DOCS = Path(__file__).resolve().parents[3] / "docs" / "what-runs-where.md"


@pytest.fixture(scope="module")
def matrix() -> list[Cell]:
    return cells()


def test_no_cell_compiles_into_something_that_never_runs(matrix: list[Cell]) -> None:
    never = [c for c in matrix if c.outcome == "never"]
    assert not never, "\n".join(f"{c.kind} {c.hardware} {c.mode}: {c.why}" for c in never[:10])
    assert {c.outcome for c in matrix} == {"runs", "refused"}
    assert len(matrix) > 900


def test_every_refusal_says_what_would_work(matrix: list[Cell]) -> None:
    refused = [c for c in matrix if c.outcome == "refused"]
    assert refused
    assert all("Try:" in c.why for c in refused), [c.why for c in refused if "Try:" not in c.why]


def test_the_docs_page_shows_the_matrix_as_measured(matrix: list[Cell]) -> None:
    page = DOCS.read_text()
    shown = re.search(r"<!-- matrix -->\n(.*?)\n<!-- /matrix -->", page, re.S)
    assert shown is not None, "docs/what-runs-where.md lost its matrix table"
    assert shown.group(1) == table(matrix)


def _dra_cluster(pool: NodePool) -> tuple[list[dict], list[dict]]:
    setup = ClusterSetup(capacity=Capacity.from_node_pools([pool]),
                         teams=[Team(name="team-a", quota={"l4": 8})])  # fmt: skip
    return setup.compile().objects, pool.to_dict()["nodePools"]


def _dra_job() -> TrainingJob:
    return TrainingJob(name="ft", image="i", command=["x"], namespace="team-a", queue="team-a",
                       accelerator=Accelerator("l4", allocation="dra"), stateless=True)  # fmt: skip


def test_dra_pool_turns_the_device_plugin_off_and_the_dra_driver_on() -> None:
    pool = NodePool.for_accelerator(Accelerator("l4", allocation="dra"), name="l4")
    (request,) = pool.to_dict()["nodePools"]
    driver = request["config"]["accelerators"][0]["gpuDriverInstallationConfig"]
    assert driver == {"gpuDriverVersion": "INSTALLATION_DISABLED"}
    assert request["config"]["labels"] == {
        "cloud.google.com/gke-nvidia-gpu-dra-driver": "true",
        "gke-no-default-nvidia-gpu-device-plugin": "true",
        "nvidia.com/gpu.present": "true",
    }
    with pytest.raises(SpecError, match="gpu_driver='disabled'"):
        NodePool.for_accelerator(Accelerator("l4", allocation="dra"), name="l4",
                                 gpu_driver="latest")  # fmt: skip


def test_dra_claims_are_admitted_against_quota_for_the_claimed_devices() -> None:
    pool = NodePool.for_accelerator(Accelerator("l4", allocation="dra"), name="l4")
    setup, pools = _dra_cluster(pool)
    for obj in setup:  # Kueue's CRDs take the claimed devices' quota resource
        validate_object(obj)
    (cq,) = [o for o in setup if o["kind"] == "ClusterQueue"]
    group = cq["spec"]["resourceGroups"][0]
    assert "gpu.nvidia.com" in group["coveredResources"]
    quota = {r["name"]: r["nominalQuota"] for r in group["flavors"][0]["resources"]}
    assert quota["gpu.nvidia.com"] == "8"
    m = _dra_job().compile()
    answer = where_it_runs([*setup, DRIVER_INSTALLER], pools, m.objects, workload=m.workload)
    assert answer.runs, answer.reason
    assert (answer.flavor, answer.pools) == ("l4-standard", ("l4",))
    unmapped = where_it_runs([*setup, DRIVER_INSTALLER], pools, m.objects, workload=m.workload,
                             device_classes={})  # fmt: skip
    assert not unmapped.runs and "DeviceClass gpu.nvidia.com is not mapped" in unmapped.reason


def test_dra_without_the_driver_installer_or_the_dra_labels_never_runs() -> None:
    pool = NodePool.for_accelerator(Accelerator("l4", allocation="dra"), name="l4")
    setup, pools = _dra_cluster(pool)
    m = _dra_job().compile()
    bare = where_it_runs(setup, pools, m.objects, workload=m.workload)
    assert not bare.runs and "no driver-installer DaemonSet" in bare.reason
    plain = NodePool.for_accelerator(Accelerator("l4"), name="l4", gpu_driver="disabled")
    answer = where_it_runs([*setup, DRIVER_INSTALLER], plain.to_dict()["nodePools"], m.objects,
                           workload=m.workload)  # fmt: skip
    assert not answer.runs
    assert "claims 1 gpu.nvidia.com device(s) through DRA and a node publishes 0" in answer.reason


def test_dra_mig_is_refused_with_the_fix() -> None:
    with pytest.raises(SpecError, match="allocation='device-plugin' for MIG"):
        Accelerator("a100-80gb", mig="1g.10gb", allocation="dra")


def test_h100_mig_pool_is_on_a_machine_sold_on_demand() -> None:
    pool = NodePool.for_accelerator(Accelerator("h100", mig="1g.10gb"), name="mig")
    assert pool.shape.machine_type == "a3-highgpu-8g"
    assert pool.to_dict()["nodePools"][0]["config"]["accelerators"][0]["acceleratorCount"] == "8"
    assert judge("training", {"model": "h100", "mig": "1g.10gb"}, False, "standard")[0] == "runs"


def test_serving_pods_are_admitted_for_their_ephemeral_storage() -> None:
    outcome, why = judge("serving", {"model": "l4"}, False, "standard")
    assert outcome == "runs", why


@pytest.mark.parametrize(
    ("gpu", "room"), [("a100-40gb", "boot disk"), ("h100", "Local SSDs"), ("gb200", "Local SSDs")]
)
def test_multi_node_servers_run_only_on_pools_with_room_for_their_weights(
    gpu: str, room: str
) -> None:
    args = {"model": gpu, "count": GPUS_BY_KEY[gpu].max_gpus_per_node, "served": LARGE}
    cell = compose("serving", args, True, "standard")
    (config,) = [p["config"] for p in cell.pools]
    assert ("diskSizeGb" in config, "ephemeralStorageLocalSsdConfig" in config) == (
        (room == "boot disk", room == "Local SSDs")
    )
    answer = where_it_runs(cell.setup, cell.pools, cell.manifests.objects,
                           workload=cell.manifests.workload)  # fmt: skip
    assert answer.runs, answer.reason
    # The same pool left as GKE makes it by default: its 100 GB boot disk holds no 832Gi.
    bare = [{**p, "config": {k: v for k, v in p["config"].items()
                             if k not in ("diskSizeGb", "ephemeralStorageLocalSsdConfig")}}
            for p in cell.pools]  # fmt: skip
    never = where_it_runs(cell.setup, bare, cell.manifests.objects,
                          workload=cell.manifests.workload)  # fmt: skip
    assert not never.runs
    assert "asks for 832.0 GiB of ephemeral-storage and a node offers 43.8 GiB" in never.reason


def test_taints_the_pods_do_not_tolerate_are_named() -> None:
    pool = NodePool.for_accelerator(Accelerator("l4"), name="l4", spot=True)
    setup = ClusterSetup(capacity=Capacity.from_node_pools([pool]),
                         teams=[Team(name="team-a", quota={"l4": 8})])  # fmt: skip
    job = TrainingJob(name="ft", image="i", command=["x"], namespace="team-a", queue="team-a",
                      accelerator=Accelerator("l4"), stateless=True)  # fmt: skip
    m = job.compile()
    answer = where_it_runs(setup.compile().objects, pool.to_dict()["nodePools"], m.objects,
                           workload=m.workload)  # fmt: skip
    assert not answer.runs
    assert "LocalQueue team-a does not exist" in answer.reason  # only team-a-spot exists
    spot_job = job.model_copy(update={"queue": "team-a-spot"})
    m = spot_job.compile()
    ok = where_it_runs(setup.compile().objects, pool.to_dict()["nodePools"], m.objects,
                       workload=m.workload)  # fmt: skip
    assert ok.runs and ok.flavor == "l4-spot"
    untainted = NodePool.for_accelerator(Accelerator("l4"), name="od")
    placed = where_it_runs(setup.compile().objects, untainted.to_dict()["nodePools"], m.objects,
                           workload=m.workload)  # fmt: skip
    assert not placed.runs
    assert "pool od: its nodes are cloud.google.com/gke-spot=(unset)" in placed.reason


def test_a_job_on_more_nodes_than_its_pool_grows_to_never_runs() -> None:
    pool = NodePool.for_accelerator(Accelerator("l4"), name="l4")
    setup = ClusterSetup(capacity=Capacity.from_node_pools([pool]),
                         teams=[Team(name="team-a", quota={"l4": 8})])  # fmt: skip
    job = TrainingJob(name="ft", image="i", command=["x"], namespace="team-a", queue="team-a",
                      accelerator=Accelerator("l4"), nodes=3, stateless=True)  # fmt: skip
    m = job.compile()
    answer = where_it_runs(setup.compile().objects, pool.to_dict()["nodePools"], m.objects,
                           workload=m.workload)  # fmt: skip
    assert not answer.runs and "3 pods need more nodes" in answer.reason


@pytest.mark.parametrize("model", ["h100", "h100-mega"])
def test_gpudirect_daemons_get_their_devices_from_the_setups_nri_injector(model: str) -> None:
    pool = NodePool.for_accelerator(Accelerator(model, count=8), name="gpu", max_nodes=2)
    setup = ClusterSetup(capacity=Capacity.from_node_pools([pool]),
                         teams=[Team(name="team-a", quota={model: 16})])  # fmt: skip
    objects = setup.compile().objects
    (injector,) = [o for o in objects if o["metadata"]["name"] == "device-injector"]
    assert injector["kind"] == "DaemonSet"
    job = TrainingJob(name="ft", image="i", command=["x"], namespace="team-a", queue="team-a",
                      accelerator=Accelerator(model, count=8), nodes=2, stateless=True)  # fmt: skip
    m = job.compile()
    pools = pool.to_dict()["nodePools"]
    assert where_it_runs(objects, pools, m.objects, workload=m.workload).runs
    without = [o for o in objects if o is not injector]
    answer = where_it_runs(without, pools, m.objects, workload=m.workload)
    assert not answer.runs and "no NRI device injector DaemonSet" in answer.reason


def test_rdma_needs_no_device_injector() -> None:
    setup = ClusterSetup(capacity=[Capacity(accelerator=Accelerator("h200", count=8))],
                         teams=[Team(name="team-a", quota={"h200": 16})])  # fmt: skip
    assert not [o for o in setup.compile().objects if o["metadata"]["name"] == "device-injector"]


def test_a_setup_preview_with_pools_says_where_the_pods_land() -> None:
    pool = NodePool.for_accelerator(Accelerator("l4"), name="l4", max_nodes=2)
    setup = ClusterSetup(capacity=Capacity.from_node_pools([pool]),
                         teams=[Team(name="team-a", quota={"l4": 8})])  # fmt: skip
    job = TrainingJob(name="ft", image="i", command=["x"], namespace="team-a", queue="team-a",
                      accelerator=Accelerator("l4"), nodes=2, stateless=True)  # fmt: skip
    answer = setup.preview(job, [pool])
    assert answer.verdict.value == "fits now"
    assert answer.sentence.endswith("its pods fit nodes of pool l4.")
    small = NodePool.for_accelerator(Accelerator("l4"), name="l4")
    assert setup.preview(job, [small]).sentence.startswith("Never runs: ")
    assert answer.sentence.startswith(setup.preview(job).sentence)


def test_a_pool_of_machines_not_sold_on_demand_never_gets_nodes() -> None:
    # What main compiled for an H100 MIG pool: an on-demand a3-highgpu-1g.
    request = {"name": "mig", "config": {"machineType": "a3-highgpu-1g", "accelerators": [
        {"acceleratorCount": "1", "acceleratorType": "nvidia-h100-80gb",
         "gpuPartitionSize": "1g.10gb",
         "gpuDriverInstallationConfig": {"gpuDriverVersion": "LATEST"}}],
        "taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"}]},
        "autoscaling": {"totalMaxNodeCount": 1}}  # fmt: skip
    setup = ClusterSetup(capacity=[Capacity(accelerator=Accelerator("h100", mig="1g.10gb"))],
                         teams=[Team(name="team-a", quota={"h100-1g-10gb": 8})])  # fmt: skip
    job = TrainingJob(name="ft", image="i", command=["x"], namespace="team-a", queue="team-a",
                      accelerator=Accelerator("h100", mig="1g.10gb"), stateless=True)  # fmt: skip
    m = job.compile()
    answer = where_it_runs(setup.compile().objects, [request], m.objects, workload=m.workload)
    assert not answer.runs
    assert "a3-highgpu-1g is sold only as Spot or flex-start, and the pool is neither" in (
        answer.reason
    )
    spot = {**request, "config": {**request["config"], "spot": True, "taints": []}}
    assert where_it_runs(setup.compile().objects, [spot], m.objects, workload=m.workload).runs


def test_topology_aware_placement_needs_a_flavor_with_a_topology_and_nodes_with_its_levels() -> (
    None
):
    h100 = Accelerator("h100", count=8)
    job = TrainingJob(name="ft", image="i", command=["x"], namespace="team-a", queue="team-a",
                      accelerator=h100, nodes=2, placement="compact", stateless=True)  # fmt: skip
    m = job.compile()
    pool = NodePool.for_accelerator(h100, name="h100", max_nodes=2)

    def answer(topology: bool, pools: list[NodePool]) -> str:
        setup = ClusterSetup(capacity=Capacity.from_node_pools([pool], topology=topology),
                             teams=[Team(name="team-a", quota={"h100": 16})])  # fmt: skip
        requests = [r for p in pools for r in p.to_dict()["nodePools"]]
        return where_it_runs(setup.compile().objects, requests, m.objects,
                             workload=m.workload).reason  # fmt: skip

    # Kueue itself never admits it there (preview says so before the nodes are looked at).
    assert (
        "flavor h100-standard of cluster queue team-a cannot hold these pods: it has no topology"
        in answer(False, [pool])
    )
    assert answer(True, [pool]).endswith("fit nodes of pool h100.")
    # An A3 Edge pool: the same GPU and labels, but no GCE topology labels on its nodes.
    edge = NodePool.for_accelerator(h100, name="edge", machine_type="a3-edgegpu-8g", max_nodes=2)
    assert "cloud.google.com/gce-topology-block=(unset)" in answer(True, [edge])
