"""ClusterSetup -> Kueue objects: Namespaces, WorkloadPriorityClasses, the TAS Topology,
ResourceFlavors, the ProvisioningRequest admission check, ClusterQueues and LocalQueues
(https://kueue.sigs.k8s.io/docs/concepts/, https://cloud.google.com/kubernetes-engine/docs/
how-to/provisioningrequest)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gkeml_sdk.core import kinds
from gkeml_sdk.core.labels import sdk_labels
from gkeml_sdk.core.manifests import Manifests
from gkeml_sdk.core.objects import Obj
from gkeml_sdk.hardware.dra import KUEUE_DEVICE_CLASSES
from gkeml_sdk.scheduling.catalog import PROVISIONING_CONTROLLER, QUEUED_PROVISIONING_CLASS, mode
from gkeml_sdk.scheduling.kueue import DEFAULT_PRIORITIES
from gkeml_sdk.scheduling.topology import DEFAULT_TOPOLOGY, LEVELS
from gkeml_sdk.setup.gpudirect import gpudirect_objects
from gkeml_sdk.setup.multikueue import MULTIKUEUE_CHECK, manager_objects

if TYPE_CHECKING:
    from gkeml_sdk.hardware.accelerator import Accelerator
    from gkeml_sdk.hardware.tpu_slice import TpuSlice
    from gkeml_sdk.setup.capacity_model import Capacity
    from gkeml_sdk.setup.fields import ClusterSetupFields, Team
QUEUED_CONFIG = "gkeml-queued-provisioning"
QUEUED_CHECK = "gkeml-queued-provisioning"
NAMESPACE_LABEL = "kubernetes.io/metadata.name"
# Model servers request local disk for their weights cache; Kueue leaves a workload that
# requests a resource no resource group covers inadmissible ("resource ... unavailable in
# ClusterQueue", kueue pkg/scheduler/flavorassigner), so the queues cover it.
EPHEMERAL_STORAGE = "ephemeral-storage"


def compile_setup(setup: ClusterSetupFields) -> Manifests:
    """Every object of `setup`, in an order a server accepts from an empty cluster.

    Example:
        >>> from gkeml_sdk import Accelerator, ClusterSetup
        >>> setup = ClusterSetup.model_validate({"capacity": [{"accelerator": {"model": "l4"},
        ...     "provisioning": ["spot"]}], "teams": [{"name": "a", "quota": {"l4": 4}}]})
        >>> [o["kind"] for o in compile_setup(setup).objects]  # doctest: +NORMALIZE_WHITESPACE
        ['Namespace', 'WorkloadPriorityClass', 'WorkloadPriorityClass',
         'WorkloadPriorityClass', 'ResourceFlavor', 'ClusterQueue', 'LocalQueue']
    """
    objects: list[Obj] = [
        {"apiVersion": kinds.CORE, "kind": "Namespace", "metadata": {"name": ns}}
        for team in setup.teams
        for ns in team.namespaces
    ]
    objects += gpudirect_objects(setup)
    priorities = DEFAULT_PRIORITIES if setup.priorities is None else setup.priorities
    objects += [_kueue("WorkloadPriorityClass", n, value=v) for n, v in priorities.items()]
    if any(c.topology for c in setup.capacity):
        levels = [{"nodeLabel": label} for _, label in LEVELS]
        objects.append(_kueue("Topology", DEFAULT_TOPOLOGY, spec={"levels": levels}))
    objects += [_flavor(c, m) for c in setup.capacity for m in c.provisioning]
    queued = [c for c in setup.capacity if "queued" in c.provisioning]
    # A manager's ClusterQueues only dispatch: Kueue refuses MultiKueue next to a
    # ProvisioningRequest check (MultiKueueWithProvisioningRequest); workers provision.
    if queued and not setup.workers:
        objects += _queued_check(setup, queued)
    if setup.workers:
        objects += manager_objects(setup.workers)
    for team in setup.teams:
        for queue, offered in _queues(setup, team):
            objects.append(_cluster_queue(setup, team, queue, offered))
            objects += [_local_queue(queue, ns) for ns in team.namespaces]
    return Manifests(objects=objects, notes=tuple(_dra_notes(setup)))


def _dra_notes(setup: ClusterSetupFields) -> list[str]:
    """What a cluster must have beyond these objects for the capacities claimed through DRA
    (GKE "Set up DRA"; Kueue "Dynamic Resource Allocation": deviceClassMappings)."""
    classes = sorted(
        {r.device_class for c in setup.capacity for r in c.accelerator.device_requests()}
    )
    if not classes:
        return []
    mappings = ", ".join(
        f"{{name: {KUEUE_DEVICE_CLASSES[c]}, deviceClassNames: [{c}]}}" for c in classes
    )
    return [
        f"DRA capacity: add to Kueue's configuration resources.deviceClassMappings: "
        f"[{mappings}] (KueueDRAIntegration, on by default from Kueue v0.18) and restart "
        "Kueue; the ClusterQueues cover those names",
        "DRA capacity: its node pools come without GKE's GPU driver (gpu_driver='disabled', "
        "as GKE requires for DRA): apply NVIDIA's driver installer (kubectl apply -f https://"
        "raw.githubusercontent.com/GoogleCloudPlatform/container-engine-accelerators/master/"
        "nvidia-driver-installer/cos/daemonset-preloaded.yaml) and install NVIDIA's DRA driver "
        "(helm install dra-driver-nvidia-gpu oci://registry.k8s.io/dra-driver-nvidia/charts/"
        "dra-driver-nvidia-gpu -n dra-driver-nvidia-gpu --set nvidiaDriverRoot=/home/"
        "kubernetes/bin/nvidia,gpuResourcesEnabledOverride=true,resources.computeDomains."
        "enabled=false)",
    ]


def _queues(setup: ClusterSetupFields, team: Team) -> list[tuple[str, list[tuple[Capacity, str]]]]:
    """Each ClusterQueue of `team` with its (capacity, mode) flavors in preference order."""
    held = [c for c in setup.capacity if c.name in team.quota]
    if setup.queues == "ordered":
        ordered: list[tuple[Capacity, str]] = [(c, m) for c in held for m in c.provisioning]
        return [(team.name, ordered)]
    queues = []
    for m in setup.modes():
        offered: list[tuple[Capacity, str]] = [(c, m) for c in held if m in c.provisioning]
        if offered:
            queues.append((team.queue(m), offered))
    return queues


def _kueue(kind: str, name: str, **fields: Any) -> Obj:
    metadata = {"name": name, "labels": sdk_labels()}
    return {"apiVersion": kinds.KUEUE, "kind": kind, "metadata": metadata, **fields}


def _flavor(capacity: Capacity, provisioning: str) -> Obj:
    row = mode(provisioning)
    hardware = capacity.accelerator
    reserved = capacity.reserved if provisioning == "reservation" else None
    labels = reserved.node_labels() if reserved is not None else row.node_labels()
    spec: Obj = {
        "nodeLabels": {**hardware.node_selector(), **labels},
        # Kueue adds these to admitted pods, so jobs need not know the taints of the nodes.
        "tolerations": hardware.tolerations() + row.tolerations(),
    }
    if capacity.topology:
        spec["topologyName"] = DEFAULT_TOPOLOGY
    return _kueue("ResourceFlavor", capacity.flavor(provisioning), spec=spec)


def _queued_check(setup: ClusterSetupFields, queued: list[Capacity]) -> list[Obj]:
    managed = sorted({r for c in queued for r in c.accelerator.resources()})
    config = _kueue(
        "ProvisioningRequestConfig",
        QUEUED_CONFIG,
        spec={
            "provisioningClassName": QUEUED_PROVISIONING_CLASS,
            "managedResources": managed,
            "retryStrategy": {
                "backoffLimitCount": setup.queued_retries,
                "backoffBaseSeconds": 60,
                "backoffMaxSeconds": 1800,
            },
        },
    )
    parameters = {"apiGroup": "kueue.x-k8s.io", "kind": "ProvisioningRequestConfig"}
    check = _kueue(
        "AdmissionCheck",
        QUEUED_CHECK,
        spec={
            "controllerName": PROVISIONING_CONTROLLER,
            "parameters": {**parameters, "name": QUEUED_CONFIG},
        },
    )
    return [config, check]


def _cluster_queue(
    setup: ClusterSetupFields, team: Team, queue: str, offered: list[tuple[Capacity, str]]
) -> Obj:
    accelerators = sorted({r for c in setup.capacity for r in _charged(c.accelerator)})
    covered = ["cpu", "memory", EPHEMERAL_STORAGE, *accelerators]
    flavors = []
    for cap, provisioning in offered:
        own = _charged(cap.accelerator)
        resources = [_quota("cpu", team.cpu), _quota("memory", team.memory),
                     _quota(EPHEMERAL_STORAGE, team.ephemeral_storage)]  # fmt: skip
        for name in accelerators:
            if name in own:
                resources.append(_quota(name, str(team.quota[cap.name]), team.borrowing_limit))
            else:
                resources.append(_quota(name, "0"))
        flavors.append({"name": cap.flavor(provisioning), "resources": resources})
    borrow = {"policy": setup.borrow_within_cohort}
    spec: Obj = {
        "cohortName": setup.cohort,
        "namespaceSelector": {
            "matchExpressions": [
                {"key": NAMESPACE_LABEL, "operator": "In", "values": list(team.namespaces)}
            ]
        },
        "queueingStrategy": "BestEffortFIFO",
        "preemption": {
            "reclaimWithinCohort": setup.reclaim_within_cohort,
            "withinClusterQueue": setup.within_cluster_queue,
            "borrowWithinCohort": borrow,
        },
        "resourceGroups": [{"coveredResources": covered, "flavors": flavors}],
    }
    if setup.queues == "ordered":
        # Flavors are tried in order; one that fits only by borrowing or preempting yields to
        # the next, so a full reservation falls through to on-demand, Spot, then DWS.
        spec["flavorFungibility"] = {
            "whenCanBorrow": setup.when_can_borrow,
            "whenCanPreempt": setup.when_can_preempt,
        }
    checks = _admission_checks(setup, offered)
    if checks:
        spec["admissionChecksStrategy"] = {"admissionChecks": checks}
    return _kueue("ClusterQueue", queue, spec=spec)


def _admission_checks(setup: ClusterSetupFields, offered: list[tuple[Capacity, str]]) -> list[Obj]:
    if setup.workers:
        # MultiKueue applies to the whole queue (Kueue refuses it per flavor).
        return [{"name": MULTIKUEUE_CHECK}]
    dws = [c.flavor(m) for c, m in offered if mode(m).provisioning_class is not None]
    if not dws:
        return []
    if len(dws) == len(offered):
        return [{"name": QUEUED_CHECK}]
    # In an ordered queue only the queued-provisioning flavors ask for a ProvisioningRequest.
    return [{"name": QUEUED_CHECK, "onFlavors": dws}]


def _charged(hardware: Accelerator | TpuSlice) -> list[str]:
    """The quota resources Kueue charges pods of `hardware` to: its device-plugin resources,
    or, for DRA claims, the resource Kueue's deviceClassMappings give each DeviceClass."""
    claimed = [KUEUE_DEVICE_CLASSES[r.device_class] for r in hardware.device_requests()]
    return sorted({*hardware.resources(), *claimed})


def _quota(name: str, nominal: str, borrowing: int | None = None) -> Obj:
    # Quantities as strings: Kueue rewrites numbers as strings and would then own the field.
    quota: Obj = {"name": name, "nominalQuota": nominal}
    if borrowing is not None:
        quota["borrowingLimit"] = str(borrowing)
    return quota


def _local_queue(queue: str, namespace: str) -> Obj:
    obj = _kueue("LocalQueue", queue, spec={"clusterQueue": queue})
    obj["metadata"]["namespace"] = namespace
    return obj
