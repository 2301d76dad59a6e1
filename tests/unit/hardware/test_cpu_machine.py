"""CPU HPC: an H4D (or C3/C4 HPC) pool with compact placement, an MPI-style job with no
accelerator on it, both valid for the GKE API and Kubernetes, and costed like any other row."""

from __future__ import annotations

import pytest
from google.cloud import container_v1

from gkeml_sdk import Accelerator, CpuMachine, NodePool, SpecError, TrainingJob
from gkeml_sdk.backends.gke.messages import node_pool_messages
from gkeml_sdk.hardware.cpu_machine import INSTANCE_TYPE_LABEL
from gkeml_sdk.hardware.machines import hpc_machines, machine_shape
from gkeml_sdk.pricing.vm import vm_part
from tests.schemas import validate_object

MPI = ["mpirun", "--hostfile", "/etc/mpi/hostfile", "-np", "768", "xhpl"]


def test_the_hpc_rows_are_cpu_machines_of_the_compact_placement_families():
    names = hpc_machines()
    assert {"h4d-highmem-192", "h4d-standard-192", "c3-standard-176", "c4-standard-192"} <= set(
        names
    )
    assert {machine_shape(n).family for n in names} == {"h4d", "c3", "c4"}


def test_a_pool_named_by_machine_type_alone_is_a_compact_cpu_pool_the_gke_api_takes():
    pool = NodePool(
        name="hpc",
        machine_type="h4d-highmem-192",
        compact=True,
        max_nodes=4,
        zones=("us-central1-a",),
    )
    assert pool.hardware == CpuMachine("h4d-highmem-192")
    (request,) = pool.to_dict()["nodePools"]
    assert request["config"] == {"machineType": "h4d-highmem-192"}  # no accelerator, no taint
    assert request["placementPolicy"] == {"type": "COMPACT"}
    (message,) = node_pool_messages(pool)  # the real client library parses the JSON
    assert message.config.machine_type == "h4d-highmem-192" and not message.config.accelerators
    assert message.placement_policy.type_ == container_v1.NodePool.PlacementPolicy.Type.COMPACT
    assert not message.config.taints


def test_a_cpu_pool_refuses_gpu_fields_and_other_zones():
    with pytest.raises(SpecError, match="gpu_driver"):
        NodePool(name="hpc", machine_type="h4d-highmem-192", gpu_driver="latest")
    with pytest.raises(SpecError, match="zones"):
        NodePool(name="hpc", machine_type="c4-standard-192", compact=True, zones=("a", "b"))
    with pytest.raises(SpecError, match="not a CPU machine for tightly coupled HPC"):
        NodePool(name="x", machine_type="n1-standard-8")


def test_an_mpi_job_without_accelerator_compiles_to_valid_objects_on_the_hpc_nodes():
    job = TrainingJob(
        name="hpl", image="img", command=MPI, accelerator=CpuMachine("h4d-highmem-192"), nodes=4
    )
    manifests = job.compile()
    for obj in manifests.objects:
        validate_object(obj)
    pod = manifests.main["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {INSTANCE_TYPE_LABEL: "h4d-highmem-192"}
    assert "tolerations" not in pod or not pod["tolerations"]
    (container,) = pod["containers"]
    assert "nvidia.com/gpu" not in str(container.get("resources", {}))
    # The command runs as given, after the launcher (no MPI preset is built here).
    assert container["command"][-len(MPI) :] == MPI
    # MPI ranks on one node talk through /dev/shm: a memory-backed one is mounted.
    assert any(v.get("emptyDir", {}).get("medium") == "Memory" for v in pod["volumes"])


def test_the_same_job_from_yaml_round_trips():
    job = TrainingJob(
        name="hpl", image="img", command=MPI, accelerator=CpuMachine("c4-standard-192")
    )
    again = TrainingJob.model_validate(job.model_dump())
    assert again == job and isinstance(again.accelerator, CpuMachine)


def test_a_cpu_job_costs_its_vms():
    job = TrainingJob(name="hpl", command=MPI, accelerator=CpuMachine("h4d-highmem-192"), nodes=4)
    cost = job.estimate_cost(hours=10)
    part = vm_part("h4d-highmem-192")
    assert cost.total("on-demand") == pytest.approx(4 * part.on_demand * 10)
    assert cost.total("spot") == pytest.approx(4 * part.spot * 10)
    text = str(cost)
    assert text.startswith("4 x h4d-highmem-192 VM for 10 h")
    assert "no H4D row in the catalog read: N1 rates" in text and "no accelerator" in text
    assert cost.break_even is not None and cost.how_to_set_price == ""


def test_a_capacity_takes_accelerators_only():
    from gkeml_sdk.setup.capacity_model import Capacity

    with pytest.raises(SpecError, match="a capacity is of accelerators"):
        Capacity(accelerator={"machine_type": "h4d-highmem-192"})
    assert Capacity(accelerator=Accelerator("l4")).accelerator == Accelerator("l4")


def test_flex_start_comes_on_h4d_only():
    pool = NodePool(name="hpc", machine_type="h4d-highmem-192", provisioning="flex-start")
    assert pool.to_dict()["nodePools"][0]["config"]["flexStart"] is True
    with pytest.raises(SpecError, match="does not offer c4-standard-192"):
        NodePool(name="hpc", machine_type="c4-standard-192", provisioning="flex-start")


def test_a_job_without_hardware_has_nothing_to_price_and_says_what_would():
    cost = TrainingJob(name="c", command=["x"]).estimate_cost()
    assert all(line.total is None for line in cost.lines)
    assert "accelerator=CpuMachine(...) prices its VMs" in str(cost)
    assert cost.break_even is None and cost.spot_saving is None
