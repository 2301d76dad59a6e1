"""The test API server's scheduler and Kueue admission (tests/kubeapi/scheduler.py,
kueue_admission.py) against kube-scheduler's and Kueue's rules: each filter's verdict, the
FailedScheduling message a pod that fits nowhere keeps, and Kueue's pending message."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from gkeml_sdk.runs.explain.pod_reasons import diagnose_pods
from tests.kubeapi import KubeAPIServer
from tests.kubeapi.gke_cluster import GkeCluster
from tests.kubeapi.scheduler import Scheduler, unfit

GPU = "nvidia.com/gpu"


def node(
    name: str, labels: dict[str, str] | None = None, taints: list[Any] | None = None, gpus: int = 0
) -> dict[str, Any]:
    allocatable = {"pods": "110", GPU: str(gpus)}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
        "spec": {"taints": taints or []},
        "status": {"allocatable": allocatable, "capacity": allocatable},
    }


def pod(name: str, gpus: int = 0, **spec: Any) -> dict[str, Any]:
    resources = {"limits": {GPU: gpus}} if gpus else {}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"containers": [{"name": "c", "image": "i", "resources": resources}], **spec},
    }


def affinity(*expressions: dict[str, Any]) -> dict[str, Any]:
    terms = [{"matchExpressions": list(expressions)}]
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}
        }
    }


@pytest.mark.parametrize(
    ("expression", "fits"),
    [
        ({"key": "size", "operator": "In", "values": ["8"]}, True),
        ({"key": "size", "operator": "In", "values": ["4"]}, False),
        ({"key": "size", "operator": "NotIn", "values": ["4"]}, True),
        ({"key": "absent", "operator": "NotIn", "values": ["4"]}, True),
        ({"key": "absent", "operator": "In", "values": ["4"]}, False),
        ({"key": "size", "operator": "Exists"}, True),
        ({"key": "size", "operator": "DoesNotExist"}, False),
        ({"key": "absent", "operator": "DoesNotExist"}, True),
        ({"key": "size", "operator": "Gt", "values": ["4"]}, True),
        ({"key": "size", "operator": "Gt", "values": ["8"]}, False),
        ({"key": "size", "operator": "Lt", "values": ["9"]}, True),
        ({"key": "absent", "operator": "Lt", "values": ["9"]}, False),
        ({"key": "name", "operator": "Gt", "values": ["1"]}, False),  # not an integer
    ],
)
def test_required_node_affinity_operators(expression: dict[str, Any], fits: bool) -> None:
    target = node("n", {"size": "8", "name": "big"})
    why = unfit(pod("p", affinity=affinity(expression)), target, [])
    assert (why == "") is fits, why


def test_node_affinity_terms_are_ored_and_an_empty_term_matches_nothing() -> None:
    target = node("n", {"zone": "a"})
    terms = [
        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["b"]}]},
        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]},
    ]
    required = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}
        }
    }
    assert unfit(pod("p", affinity=required), target, []) == ""
    empty = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{}]}
        }
    }
    assert unfit(pod("p", affinity=empty), target, []) != ""
    by_name = [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n"]}]}]
    named = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": by_name}
        }
    }
    assert unfit(pod("p", affinity=named), target, []) == ""
    assert unfit(pod("p", affinity=named), node("m", {"zone": "a"}), []) != ""


@pytest.mark.parametrize(
    ("toleration", "fits"),
    [
        ({"key": "gpu", "operator": "Exists"}, True),
        ({"operator": "Exists"}, True),  # an empty key with Exists tolerates every taint
        ({"key": "gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"}, True),
        ({"key": "gpu", "value": "present"}, True),  # Equal is the default operator
        ({"key": "gpu", "operator": "Equal", "value": "absent"}, False),
        ({"key": "gpu", "operator": "Exists", "effect": "NoExecute"}, False),
        ({"key": "other", "operator": "Exists"}, False),
    ],
)
def test_tolerations_as_the_taint_toleration_filter_reads_them(
    toleration: dict[str, Any], fits: bool
) -> None:
    tainted = node("n", taints=[{"key": "gpu", "value": "present", "effect": "NoSchedule"}])
    why = unfit(pod("p", tolerations=[toleration]), tainted, [])
    assert (why == "") is fits
    if not fits:
        assert why == "node(s) had untolerated taint {gpu: present}"
    soft = node("n", taints=[{"key": "gpu", "value": "present", "effect": "PreferNoSchedule"}])
    assert unfit(pod("p"), soft, []) == ""  # only NoSchedule and NoExecute filter


def test_resources_count_the_requests_of_pods_already_bound() -> None:
    target = node("n", gpus=2)
    first = {**pod("a", gpus=1), "spec": {**pod("a", gpus=1)["spec"], "nodeName": "n"}}
    assert unfit(pod("p", gpus=1), target, [first]) == ""
    assert unfit(pod("p", gpus=2), target, [first]) == f"Insufficient {GPU}"


def test_a_pod_that_fits_nowhere_stays_pending_with_the_schedulers_message(
    kube_api_factory: Callable[..., KubeAPIServer],
) -> None:
    server = kube_api_factory(namespaces=("default",))
    gpu_taint = [{"key": GPU, "value": "present", "effect": "NoSchedule"}]
    for obj in (
        node("cpu-0"),
        node("gpu-0", {"accel": "l4"}, gpu_taint, gpus=1),
        node("gpu-1", {"accel": "l4"}, gpu_taint, gpus=1),
    ):
        server.store.put(obj)
    tolerant = [{"key": GPU, "operator": "Exists", "effect": "NoSchedule"}]
    for name in ("a", "b", "c"):
        server.store.put(pod(name, gpus=1, nodeSelector={"accel": "l4"}, tolerations=tolerant))
    scheduler = Scheduler(server)
    assert scheduler.step() == 2
    assert [b[1:] for b in scheduler.bound] == [("a", "gpu-0"), ("b", "gpu-1")]
    waiting = server.store.get("pods", "default", "c")
    assert waiting["spec"].get("nodeName") is None
    (condition,) = waiting["status"]["conditions"]
    assert (condition["type"], condition["status"], condition["reason"]) == (
        "PodScheduled",
        "False",
        "Unschedulable",
    )
    assert condition["message"] == (
        "0/3 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, "
        "2 Insufficient nvidia.com/gpu. preemption: 0/3 nodes are available: "
        "1 Preemption is not helpful for scheduling, 2 No preemption victims found for "
        "incoming pod."
    )
    (event,) = server.store.list("events", "default")
    assert (event["type"], event["reason"], event["involvedObject"]["name"]) == (
        "Warning",
        "FailedScheduling",
        "c",
    )
    assert event["message"] == condition["message"]
    # The SDK's explanation reads the scheduler's words as it reads a real cluster's.
    finding = diagnose_pods([server.store.get("pods", "default", "c")], [event], "run")
    assert finding is not None
    assert "no node has enough free nvidia.com/gpu: 0/3 nodes are available" in finding.sentence
    before = server.store.resource_version
    assert scheduler.step() == 0
    assert server.store.resource_version == before  # the same verdict is not written again


def test_kueue_starts_what_its_quota_holds_on_the_flavor_and_leaves_the_rest_pending(
    kube_api_factory: Callable[..., KubeAPIServer],
) -> None:
    server = kube_api_factory(namespaces=("default", "ml"))
    cluster = GkeCluster(server, [])
    flavor = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ResourceFlavor",
        "metadata": {"name": "l4"},
        "spec": {
            "nodeLabels": {"accel": "l4", "tier": "a"},
            "nodeTaints": [{"key": "tier", "value": "a", "effect": "NoSchedule"}],
            "tolerations": [{"key": "tier", "operator": "Exists", "effect": "NoSchedule"}],
        },
    }
    quota = [{"name": GPU, "nominalQuota": "2"}]
    cq = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ClusterQueue",
        "metadata": {"name": "cq"},
        "spec": {
            "namespaceSelector": {},
            "resourceGroups": [
                {"coveredResources": [GPU], "flavors": [{"name": "l4", "resources": quota}]}
            ],
        },
    }
    lq = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "LocalQueue",
        "metadata": {"name": "lq", "namespace": "ml"},
        "spec": {"clusterQueue": "cq"},
    }

    def job(name: str, pods: int) -> dict[str, Any]:
        container = {"name": "c", "image": "i", "resources": {"limits": {GPU: 1}}}
        template = {"restartPolicy": "Never", "nodeSelector": {"accel": "l4"},
                    "containers": [container]}  # fmt: skip
        labels = {"kueue.x-k8s.io/queue-name": "lq"}
        return {"apiVersion": "batch/v1", "kind": "Job",
                "metadata": {"name": name, "namespace": "ml", "labels": labels},
                "spec": {"parallelism": pods, "completions": pods,
                         "template": {"spec": template}}}  # fmt: skip

    # The nodes only the flavor's label and toleration reach, and a node they do not select.
    tier_taint = [{"key": "tier", "value": "a", "effect": "NoSchedule"}]
    server.store.put(node("gpu-a", {"accel": "l4"}, gpus=2))
    gpu_node = node("gpu-0", {"accel": "l4", "tier": "a"}, tier_taint, gpus=2)
    server.store.put(gpu_node)
    cluster.apply([flavor, cq, lq, job("big", 3), job("fits", 2), job("more", 1)])
    cluster.settle()
    conditions = {
        w["metadata"]["ownerReferences"][0]["name"]: w["status"]["conditions"]
        for w in server.store.list("workloads")
    }
    assert [c["type"] for c in conditions["fits"]] == ["QuotaReserved", "Admitted"]
    for name, message in (
        ("big", "insufficient quota for nvidia.com/gpu in flavor l4, previously considered "
                "podsets requests (0) + current podset request (3) > maximum capacity (2)"),
        ("more", "insufficient unused quota for nvidia.com/gpu in flavor l4, 1 more needed"),
    ):  # fmt: skip
        (condition,) = conditions[name]
        assert (condition["type"], condition["status"]) == ("QuotaReserved", "False")
        assert condition["message"] == f"couldn't assign flavors to pod set main: {message}"
        assert server.store.get("jobs", "ml", name)["spec"]["suspend"] is True
    pods = server.store.list("pods")
    assert sorted(p["metadata"]["name"] for p in pods) == ["fits-0", "fits-1"]
    assert {p["spec"]["nodeName"] for p in pods} == {"gpu-0"}
    started = server.store.get("jobs", "ml", "fits")["spec"]["template"]["spec"]
    assert started["nodeSelector"] == {"accel": "l4", "tier": "a"}  # Kueue merged the flavor
    assert started["tolerations"] == [{"key": "tier", "operator": "Exists", "effect": "NoSchedule"}]


def test_dra_claims_take_free_devices_of_their_class_and_kueue_charges_them(
    kube_api_factory: Callable[..., KubeAPIServer],
) -> None:
    server = kube_api_factory(namespaces=("default", "ml"))
    pool = {"name": "l4", "config": {"machineType": "g2-standard-8",
            "labels": {"cloud.google.com/gke-nvidia-gpu-dra-driver": "true",
                       "gke-no-default-nvidia-gpu-device-plugin": "true",
                       "nvidia.com/gpu.present": "true"},
            "accelerators": [{"acceleratorCount": "1", "acceleratorType": "nvidia-l4",
                              "gpuDriverInstallationConfig":
                                  {"gpuDriverVersion": "INSTALLATION_DISABLED"}}]},
            "autoscaling": {"totalMaxNodeCount": 1}}  # fmt: skip
    cluster = GkeCluster(server, [pool], device_classes={"gpu.nvidia.com": "gpu.nvidia.com"})
    (published,) = server.store.list("resourceslices")
    assert [d["name"] for d in published["spec"]["devices"]] == ["gpu-0"]
    assert published["spec"]["nodeName"] == "gke-l4-0"

    def claimed(memory: str) -> dict[str, Any]:
        selector = f"device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('{memory}')) >= 0"
        request = {
            "name": "gpu",
            "exactly": {
                "deviceClassName": "gpu.nvidia.com",
                "count": 1,
                "selectors": [{"cel": {"expression": selector}}],
            },
        }
        return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                "metadata": {"name": f"gpu-{memory.lower()}", "namespace": "ml"},
                "spec": {"spec": {"devices": {"requests": [request]}}}}  # fmt: skip

    def pod_claiming(name: str, template: str) -> dict[str, Any]:
        claims = [{"name": "gpu", "resourceClaimTemplateName": template}]
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "ml"},
                "spec": {"containers": [{"name": "c", "image": "i",
                                         "resources": {"claims": [{"name": "gpu"}]}}],
                         "resourceClaims": claims}}  # fmt: skip

    cluster.apply([claimed("20Gi"), claimed("40Gi"), pod_claiming("a", "gpu-20gi"),
                   pod_claiming("b", "gpu-20gi"), pod_claiming("big", "gpu-40gi")])  # fmt: skip
    cluster.settle()
    (claim,) = server.store.list("resourceclaims")
    assert claim["metadata"]["name"] == "a-gpu"
    assert claim["status"]["allocation"]["devices"]["results"] == [
        {"request": "gpu", "driver": "gpu.nvidia.com", "pool": "gke-l4-0", "device": "gpu-0"}
    ]
    assert server.store.get("pods", "ml", "a")["status"]["resourceClaimStatuses"] == [
        {"name": "gpu", "resourceClaimName": "a-gpu"}
    ]
    for waiting in ("b", "big"):  # the one GPU is taken; a 24 GiB L4 has not 40 GiB
        (condition,) = server.store.get("pods", "ml", waiting)["status"]["conditions"]
        assert condition["message"] == (
            "0/1 nodes are available: 1 cannot allocate all claims. preemption: 0/1 nodes are "
            "available: 1 No preemption victims found for incoming pod."
        )
    # Kueue charges a claimed device to the resource its DeviceClass maps to.
    flavor = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ResourceFlavor",
        "metadata": {"name": "any"},
        "spec": {},
    }
    cq = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ClusterQueue",
        "metadata": {"name": "cq"},
        "spec": {
            "namespaceSelector": {},
            "resourceGroups": [
                {
                    "coveredResources": ["gpu.nvidia.com"],
                    "flavors": [
                        {
                            "name": "any",
                            "resources": [{"name": "gpu.nvidia.com", "nominalQuota": "1"}],
                        }
                    ],
                }
            ],
        },
    }
    lq = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "LocalQueue",
        "metadata": {"name": "lq", "namespace": "ml"},
        "spec": {"clusterQueue": "cq"},
    }
    job = {"apiVersion": "batch/v1", "kind": "Job",
           "metadata": {"name": "j", "namespace": "ml",
                        "labels": {"kueue.x-k8s.io/queue-name": "lq"}},
           "spec": {"parallelism": 2, "completions": 2, "template": {"spec": {
               **pod_claiming("x", "gpu-20gi")["spec"], "restartPolicy": "Never"}}}}  # fmt: skip
    cluster.apply([flavor, cq, lq, job])
    cluster.settle()
    (workload,) = server.store.list("workloads")
    assert workload["status"]["conditions"][0]["message"] == (
        "couldn't assign flavors to pod set main: insufficient quota for gpu.nvidia.com in "
        "flavor any, previously considered podsets requests (0) + current podset request (2) "
        "> maximum capacity (1)"
    )
