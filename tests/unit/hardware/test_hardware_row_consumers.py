"""Serving, tenancy, the standby manager and the explainers ask the hardware row (or the
catalog, with no hardware in hand) for resource names and node labels: a GPU row of another
vendor (`new_gpu`, tests/unit/hardware/conftest.py) flows through each of them, and
`nvidia.com/gpu` appears nowhere it has no business."""

from __future__ import annotations

import json
from typing import Any

import pytest

from gkeml_sdk import Accelerator, ServeModel, Tenant, TenantModel
from gkeml_sdk.backends.kubernetes.standby.view import allocations
from gkeml_sdk.hardware.listing import accelerator_labels, accelerator_resources
from gkeml_sdk.runs.explain.pod_reasons import diagnose_pods
from gkeml_sdk.serving.readiness import ServingState, serving_status
from tests.schemas import validate_object

Obj = dict[str, Any]
UNSCHEDULABLE = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}


def _server(name: str, accelerator: Accelerator, model: str = "llama-2-7b") -> ServeModel:
    return ServeModel(name=name, model=model, accelerator=accelerator, hf_token_secret="hf")


@pytest.fixture
def z900(new_gpu) -> ServeModel:
    return _server("chat", Accelerator(new_gpu.key, count=4))


def _tenant(*servers: ServeModel, quota: int = 16) -> Tenant:
    models = [TenantModel(model=s, min_replicas=1, max_replicas=2) for s in servers]
    return Tenant(name="acme", tier="A", gpu_quota=quota, models=models,
                  weight_sources=["10.0.0.0/24"])  # fmt: skip


def _one(objects: list[Obj], kind: str) -> Obj:
    (found,) = [o for o in objects if o["kind"] == kind]
    return found


def _pod(server: ServeModel, **status: Any) -> Obj:
    template = server.compile().main["spec"]["template"]
    meta = {"name": f"{server.name}-7d9f-abcde", "labels": template["metadata"]["labels"]}
    return {"metadata": meta, "spec": template["spec"], "status": status}


def test_the_catalog_lists_every_rows_resource_and_label(new_gpu) -> None:
    assert accelerator_resources() == ("nvidia.com/gpu", "acme.com/gpu", "google.com/tpu")
    assert accelerator_labels() == (
        "cloud.google.com/gke-accelerator",
        "acme.com/accelerator",
        "cloud.google.com/gke-tpu-accelerator",
    )


def test_a_model_server_requests_its_rows_resource(z900) -> None:
    pod = z900.compile().main["spec"]["template"]["spec"]
    resources = pod["containers"][0]["resources"]
    assert resources["limits"] == {"acme.com/gpu": 1}
    assert resources["requests"]["acme.com/gpu"] == 1
    assert pod["nodeSelector"] == {"acme.com/accelerator": "acme-z900"}
    assert [t["key"] for t in pod["tolerations"]] == ["acme.com/gpu"]
    assert "nvidia.com/gpu" not in json.dumps(pod)


def test_a_tenants_quota_limits_and_queue_name_its_rows_resource(z900) -> None:
    objects = _tenant(z900, quota=12).compile().objects
    for obj in objects:
        if obj["kind"] in ("ResourceQuota", "LimitRange", "ResourceFlavor", "ClusterQueue"):
            validate_object(obj)
    assert _one(objects, "ResourceQuota")["spec"]["hard"] == {"requests.acme.com/gpu": "12"}
    (limit,) = _one(objects, "LimitRange")["spec"]["limits"]
    assert (limit["max"], limit["default"]) == ({"acme.com/gpu": "1"}, {"acme.com/gpu": "0"})
    flavor = _one(objects, "ResourceFlavor")
    # Tier A: the tenant's own nodes, found by the row's label key and the tenant's label.
    assert flavor["spec"]["nodeLabels"] == {
        "acme.com/accelerator": "acme-z900",
        "gkeml.dev/dedicated-to": "acme",
    }
    (group,) = _one(objects, "ClusterQueue")["spec"]["resourceGroups"]
    assert group["coveredResources"] == ["acme.com/gpu", "ephemeral-storage"]
    (resources,) = [f["resources"] for f in group["flavors"]]
    assert resources[0] == {"name": "acme.com/gpu", "nominalQuota": "4"}  # 2 max + 2 hot standbys
    # The storage quota finds the pods' GPU label through the row's label key too.
    assert resources[1]["name"] == "ephemeral-storage" and resources[1]["nominalQuota"] != "0Gi"
    assert "nvidia.com/gpu" not in json.dumps(objects)


def test_a_tenant_on_two_vendors_covers_both_resources_in_one_group(z900) -> None:
    l4 = _server("small", Accelerator("l4"))
    objects = _tenant(l4, z900).compile().objects
    queue = _one(objects, "ClusterQueue")
    validate_object(queue)
    (group,) = queue["spec"]["resourceGroups"]
    assert group["coveredResources"] == ["nvidia.com/gpu", "acme.com/gpu", "ephemeral-storage"]
    quotas = {
        f["name"]: {r["name"]: r["nominalQuota"] for r in f["resources"][:2]}
        for f in group["flavors"]
    }
    assert quotas == {  # tier A: flavors of the tenant's own nodes
        "gkeml-acme-nvidia-l4": {"nvidia.com/gpu": "4", "acme.com/gpu": "0"},
        "gkeml-acme-acme-z900": {"nvidia.com/gpu": "0", "acme.com/gpu": "4"},
    }
    hard = _one(objects, "ResourceQuota")["spec"]["hard"]
    assert hard == {"requests.nvidia.com/gpu": "16", "requests.acme.com/gpu": "16"}


def test_the_standby_view_counts_the_gpus_of_any_catalog_row(z900) -> None:
    tenant = _tenant(z900)
    pod = _pod(z900)
    pod["metadata"]["namespace"] = tenant.namespace
    pod["metadata"]["labels"]["gkeml.dev/tenant-model"] = z900.name
    (row,) = allocations(tenant, {(tenant.namespace, "chat-0"): pod})
    assert (row["gpu"], row["gpus"], row["model"]) == ("acme-z900", 1, "chat")


def test_readiness_explains_a_shortage_of_the_rows_resource(z900) -> None:
    message = "0/2 nodes are available: 2 Insufficient acme.com/gpu."
    pod = _pod(z900, phase="Pending", conditions=[dict(UNSCHEDULABLE, message=message)])
    server = z900.compile().main
    server.update(metadata={**server["metadata"], "generation": 1}, status={})
    status = serving_status(server, [pod])
    assert status.state is ServingState.UNSCHEDULABLE
    assert "no node has 1 free acme.com/gpu of type acme-z900" in status.message
    selector = "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector."
    pod["status"]["conditions"] = [dict(UNSCHEDULABLE, message=selector)]
    assert "no node carries acme.com/accelerator=acme-z900" in serving_status(server, [pod]).message


def test_the_run_explainer_names_the_rows_node_label(new_gpu) -> None:
    message = "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector."
    pod = {
        "kind": "Pod",
        "metadata": {"name": "train-0"},
        "spec": {"nodeSelector": {"acme.com/accelerator": "acme-z900"}},
        "status": {"phase": "Pending", "conditions": [dict(UNSCHEDULABLE, message=message)]},
    }
    found = diagnose_pods([pod], [], "train")
    assert found is not None
    assert "no node has the requested accelerator (acme.com/accelerator=acme-z900)" in (
        found.sentence
    )
