"""Dynamic Resource Allocation objects of a training job: the `ResourceClaimTemplate` of its
GPUs (`resource.k8s.io/v1`), the NVIDIA `ComputeDomain` of a multi-node NVLink job, the
pod's claims, and what the cluster must have for them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gkeml_sdk.core import kinds
from gkeml_sdk.core.labels import RUN_ID_LABEL, sdk_labels
from gkeml_sdk.core.objects import Obj
from gkeml_sdk.hardware.dra import DeviceRequest

if TYPE_CHECKING:
    from gkeml_sdk.training.fields import TrainingJobFields

RESOURCE_API = kinds.RESOURCE
COMPUTE_DOMAIN_API = kinds.NVIDIA_RESOURCE
GPU_CLAIM = "gpu"
CHANNEL_CLAIM = "compute-domain-channel"


def claim_objects(job: TrainingJobFields) -> list[Obj]:
    """Objects to apply before the workload: the GPUs' claim template and the ComputeDomain.
    Named after the run, like its code ConfigMap, they serve every attempt.

    Example:
        >>> from gkeml_sdk import Accelerator, TrainingJob
        >>> job = TrainingJob(name="ft", image="i", command=["x"],
        ...                   accelerator=Accelerator("l4", allocation="dra"))
        >>> [o["kind"] for o in claim_objects(job)]
        ['ResourceClaimTemplate']
    """
    name = job.name
    objects: list[Obj] = []
    requests = job.hardware.device_requests()
    if requests:
        spec: Obj = {"spec": {"devices": {"requests": [_request(r) for r in requests]}}}
        objects.append(_object(RESOURCE_API, "ResourceClaimTemplate", f"{name}-gpu", job, spec))
    if _compute_domain(job):
        spec = {
            # 0: the driver's IMEX daemons find each other by DNS name (numNodes is deprecated).
            "numNodes": 0,
            "channel": {"resourceClaimTemplate": {"name": f"{name}-channel"}},
        }
        objects.append(_object(COMPUTE_DOMAIN_API, "ComputeDomain", name, job, spec))
    return objects


def add_claims(template: Obj, job: TrainingJobFields, app: str) -> Obj:
    """`template` with the pod's `resourceClaims` and the `app` container's claims.

    Example:
        >>> from gkeml_sdk import Accelerator, TrainingJob
        >>> job = TrainingJob(name="ft", image="i", command=["x"],
        ...                   accelerator=Accelerator("l4", allocation="dra"))
        >>> t = add_claims({"spec": {"containers": [{"name": "main"}]}}, job, "main")
        >>> t["spec"]["resourceClaims"]
        [{'name': 'gpu', 'resourceClaimTemplateName': 'ft-gpu'}]
    """
    name = job.name
    claims: list[Obj] = []
    if job.hardware.device_requests():
        claims.append({"name": GPU_CLAIM, "resourceClaimTemplateName": f"{name}-gpu"})
    if _compute_domain(job):
        claims.append({"name": CHANNEL_CLAIM, "resourceClaimTemplateName": f"{name}-channel"})
    if not claims:
        return template
    spec = template["spec"]
    spec["resourceClaims"] = claims
    container = next(c for c in spec["containers"] if c["name"] == app)
    resources = container.setdefault("resources", {})
    resources["claims"] = [{"name": c["name"]} for c in claims]
    return template


def dra_notes(job: TrainingJobFields) -> list[str]:
    """The cluster prerequisites of the job's claims, one sentence each."""
    requests = job.hardware.device_requests()
    notes = []
    if requests:
        classes = ", ".join(sorted({r.device_class for r in requests}))
        notes.append(
            "DRA: GKE Standard 1.34 or later (resource.k8s.io/v1; not Autopilot, not node "
            "auto-provisioning); a GPU node pool (NodePool.for_accelerator makes it) created "
            "with gpu-driver-version=disabled and "
            "the labels gke-no-default-nvidia-gpu-device-plugin=true, nvidia.com/gpu.present="
            "true and cloud.google.com/gke-nvidia-gpu-dra-driver=true, and NVIDIA's DRA driver "
            "(dra-driver-nvidia-gpu Helm chart) installed"
        )
        notes.append(
            f"DRA and Kueue: Kueue counts these devices only with its DRA integration "
            f"(KueueDRAIntegration, on by default from v0.18; the DynamicResourceAllocation "
            f"gate in v0.14-v0.17) and a resources.deviceClassMappings entry for {classes} "
            "whose name is a covered resource of the ClusterQueue; otherwise the Workload is "
            "inadmissible"
        )
    if _compute_domain(job):
        notes.append(
            "ComputeDomain (multi-node NVLink): NVIDIA's DRA driver installed with compute "
            "domains enabled and GPUs left to GKE's device plugin (resources.gpus.enabled="
            "false); with Kueue's DRA integration on, map the DeviceClass "
            "compute-domain-default-channel.nvidia.com in deviceClassMappings too"
        )
    return notes


def _compute_domain(job: TrainingJobFields) -> bool:
    stack = job.network_choice.stack
    return stack is not None and stack.compute_domain and job.nodes > 1


def _request(request: DeviceRequest) -> Obj:
    exactly: Obj = {"deviceClassName": request.device_class}
    if request.selectors:
        exactly["selectors"] = [{"cel": {"expression": e}} for e in request.selectors]
    exactly["allocationMode"] = "ExactCount"
    exactly["count"] = request.count
    return {"name": request.name, "exactly": exactly}


def _object(api: str, kind: str, name: str, job: TrainingJobFields, spec: Obj) -> Obj:
    labels = {RUN_ID_LABEL: job.name, **sdk_labels()}
    metadata = {"name": name, "namespace": job.namespace, "labels": labels}
    return {"apiVersion": api, "kind": kind, "metadata": metadata, "spec": spec}
