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
from gkeml_sdk.scheduling.catalog import PROVISIONING_CONTROLLER, QUEUED_PROVISIONING_CLASS, mode
from gkeml_sdk.scheduling.topology import DEFAULT_TOPOLOGY, LEVELS

if TYPE_CHECKING:
    from gkeml_sdk.setup.model import Capacity, ClusterSetup, Team
QUEUED_CONFIG = "gkeml-queued-provisioning"
QUEUED_CHECK = "gkeml-queued-provisioning"
NAMESPACE_LABEL = "kubernetes.io/metadata.name"


def compile_setup(setup: ClusterSetup) -> Manifests:
    """Every object of `setup`, in an order a server accepts from an empty cluster.

    Example:
        >>> from gkeml_sdk import Accelerator, ClusterSetup
        >>> setup = ClusterSetup.model_validate({"capacity": [{"accelerator": {"model": "l4"},
        ...     "provisioning": ["spot"]}], "teams": [{"name": "a", "quota": {"l4": 4}}]})
        >>> [o["kind"] for o in compile_setup(setup).objects]
        ['Namespace', 'ResourceFlavor', 'ClusterQueue', 'LocalQueue']
    """
    objects: list[Obj] = [
        {"apiVersion": kinds.CORE, "kind": "Namespace", "metadata": {"name": ns}}
        for team in setup.teams
        for ns in team.namespaces
    ]
    objects += [_kueue("WorkloadPriorityClass", n, value=v) for n, v in setup.priorities.items()]
    if any(c.topology for c in setup.capacity):
        levels = [{"nodeLabel": label} for _, label in LEVELS]
        objects.append(_kueue("Topology", DEFAULT_TOPOLOGY, spec={"levels": levels}))
    objects += [_flavor(c, m) for c in setup.capacity for m in c.provisioning]
    queued = [c for c in setup.capacity if "queued" in c.provisioning]
    if queued:
        objects += _queued_check(setup, queued)
    for team in setup.teams:
        for provisioning in setup.modes():
            capacity = [c for c in setup.capacity if provisioning in c.provisioning]
            capacity = [c for c in capacity if c.name in team.quota]
            if capacity:
                objects.append(_cluster_queue(setup, team, provisioning, capacity))
                objects += [_local_queue(team, provisioning, ns) for ns in team.namespaces]
    return Manifests(objects=objects)


def _kueue(kind: str, name: str, **fields: Any) -> Obj:
    metadata = {"name": name, "labels": sdk_labels()}
    return {"apiVersion": kinds.KUEUE, "kind": kind, "metadata": metadata, **fields}


def _flavor(capacity: Capacity, provisioning: str) -> Obj:
    row = mode(provisioning)
    hardware = capacity.accelerator
    spec: Obj = {
        "nodeLabels": {**hardware.node_selector(), **row.node_labels()},
        # Kueue adds these to admitted pods, so jobs need not know the taints of the nodes.
        "tolerations": hardware.tolerations() + row.tolerations(),
    }
    if capacity.topology:
        spec["topologyName"] = DEFAULT_TOPOLOGY
    return _kueue("ResourceFlavor", capacity.flavor(provisioning), spec=spec)


def _queued_check(setup: ClusterSetup, queued: list[Capacity]) -> list[Obj]:
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
    setup: ClusterSetup, team: Team, provisioning: str, capacity: list[Capacity]
) -> Obj:
    accelerators = sorted({r for c in setup.capacity for r in c.accelerator.resources()})
    covered = ["cpu", "memory", *accelerators]
    flavors = []
    for cap in capacity:
        own = cap.accelerator.resources()
        resources = [_quota("cpu", team.cpu), _quota("memory", team.memory)]
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
    if mode(provisioning).provisioning_class is not None:
        spec["admissionChecksStrategy"] = {"admissionChecks": [{"name": QUEUED_CHECK}]}
    return _kueue("ClusterQueue", team.queue(provisioning), spec=spec)


def _quota(name: str, nominal: str, borrowing: int | None = None) -> Obj:
    # Quantities as strings: Kueue rewrites numbers as strings and would then own the field.
    quota: Obj = {"name": name, "nominalQuota": nominal}
    if borrowing is not None:
        quota["borrowingLimit"] = str(borrowing)
    return quota


def _local_queue(team: Team, provisioning: str, namespace: str) -> Obj:
    queue = team.queue(provisioning)
    obj = _kueue("LocalQueue", queue, spec={"clusterQueue": queue})
    obj["metadata"]["namespace"] = namespace
    return obj
