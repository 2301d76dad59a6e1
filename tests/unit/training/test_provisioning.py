"""What provisioning modes and placement add to compiled jobs; every object passes the CRD
schemas, kubernetes-validate and the admission webhooks."""

from __future__ import annotations

from typing import Any

import pytest

from gkeml_sdk import Accelerator, TopologyPlacement, TpuSlice, TrainingJob
from tests.schemas import validate_object

QUEUED = {"key": "cloud.google.com/gke-queued", "operator": "Exists", "effect": "NoSchedule"}


def pod_spec(main: dict[str, Any]) -> dict[str, Any]:
    if main["kind"] == "JobSet":
        return main["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]
    return main["spec"]["template"]


def compiled(**kw: Any) -> dict[str, Any]:
    fields = {"name": "ft", "image": "img", "command": ["x"],
              "accelerator": Accelerator("h100", count=8), "nodes": 2, **kw}  # fmt: skip
    manifests = TrainingJob(**fields).compile()
    for obj in manifests.objects:
        validate_object(obj)
    return manifests.main


def test_queued_selects_and_tolerates_queued_nodes_and_passes_the_run_duration() -> None:
    main = compiled(provisioning="queued", max_runtime="36h")
    template = pod_spec(main)
    assert template["spec"]["nodeSelector"] == {
        "cloud.google.com/gke-accelerator": "nvidia-h100-80gb",
        "cloud.google.com/gke-queued": "true",
    }
    assert QUEUED in template["spec"]["tolerations"]
    annotations = main["metadata"]["annotations"]
    assert annotations["provreq.kueue.x-k8s.io/maxRunDurationSeconds"] == str(36 * 3600)
    assert len(main["spec"]["replicatedJobs"]) == 1  # one PodSet


def test_flex_start_selects_flex_start_nodes_without_a_provisioning_request() -> None:
    main = compiled(provisioning="flex-start", max_runtime="2h", nodes=1, gang=False)
    spec = pod_spec(main)["spec"]
    assert spec["nodeSelector"]["cloud.google.com/gke-flex-start"] == "true"
    assert "cloud.google.com/gke-queued" not in spec["nodeSelector"]
    assert QUEUED not in spec["tolerations"]
    assert "annotations" not in main["metadata"]


def test_standard_adds_nothing_and_queued_without_a_runtime_leaves_gke_s_default() -> None:
    spec = pod_spec(compiled())["spec"]
    assert set(spec["nodeSelector"]) == {"cloud.google.com/gke-accelerator"}
    assert "annotations" not in compiled(provisioning="queued")["metadata"]


def test_user_annotations_win_over_derived_ones() -> None:
    key = "provreq.kueue.x-k8s.io/maxRunDurationSeconds"
    main = compiled(provisioning="queued", max_runtime="2h", annotations={key: "60"})
    assert main["metadata"]["annotations"][key] == "60"


def test_flex_start_gang_gets_a_note_and_queued_names_its_queue() -> None:
    job = TrainingJob(name="a", image="i", command=["x"], nodes=2, provisioning="flex-start",
                      accelerator=Accelerator("h100", count=8))  # fmt: skip
    assert any("one at a time" in n for n in job.compile().notes)
    queued = job.with_changes(provisioning="queued", queue="team-a-queued").compile().notes
    assert any("queue='team-a-queued'" in n and "queued-provisioning.gke.io" in n for n in queued)


@pytest.mark.parametrize(
    ("placement", "key", "value"),
    [
        ("compact", "podset-preferred-topology", "cloud.google.com/gce-topology-host"),
        (TopologyPlacement("block", mode="required"), "podset-required-topology",
         "cloud.google.com/gce-topology-block"),
        (TopologyPlacement("subblock"), "podset-preferred-topology",
         "cloud.google.com/gce-topology-subblock"),
    ],
)  # fmt: skip
def test_placement_annotates_the_pod_template(placement: Any, key: str, value: str) -> None:
    for nodes in (1, 2):
        main = compiled(placement=placement, nodes=nodes)
        annotations = pod_spec(main)["metadata"]["annotations"]
        kueue = {k: v for k, v in annotations.items() if k.startswith("kueue.x-k8s.io/")}
        assert kueue == {f"kueue.x-k8s.io/{key}": value}


def test_exclusive_placement_annotates_the_jobset() -> None:
    main = compiled(placement=TopologyPlacement("block", exclusive="subblock"))
    exclusive = main["metadata"]["annotations"]["alpha.jobset.sigs.k8s.io/exclusive-topology"]
    assert exclusive == "cloud.google.com/gce-topology-subblock"
    tpu = TrainingJob(name="t", image="i", command=["x"], accelerator=TpuSlice("v5e", "4x4"),
                      provisioning="queued", placement="compact")  # fmt: skip
    manifests = tpu.compile()
    for obj in manifests.objects:
        validate_object(obj)
    annotations = manifests.main["metadata"]["annotations"]
    assert annotations["alpha.jobset.sigs.k8s.io/exclusive-topology"] == (
        "cloud.google.com/gke-nodepool"
    )


def test_the_workload_view_carries_the_topology_request() -> None:
    job = TrainingJob(name="a", image="i", command=["x"], nodes=2, placement="compact",
                      accelerator=Accelerator("h100", count=8), provisioning="queued")  # fmt: skip
    workload = job.compile().workload
    validate_object(workload)
    (pod_set,) = workload["spec"]["podSets"]
    assert pod_set["template"]["metadata"]["annotations"]
