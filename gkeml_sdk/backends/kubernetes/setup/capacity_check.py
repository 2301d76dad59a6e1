"""Before a queued-provisioning job: its LocalQueue must lead to a ClusterQueue whose flavors
exist and that asks GKE for capacity through a ProvisioningRequest admission check; otherwise
Kueue would start pods that wait for nodes nobody requested."""

from __future__ import annotations

from typing import Any, NoReturn

from gkeml_sdk.backends.kubernetes.api.kube import KubeClient
from gkeml_sdk.backends.kubernetes.api.resources import resource
from gkeml_sdk.backends.kubernetes.setup.setup_advice import setup_advice
from gkeml_sdk.core import kinds
from gkeml_sdk.errors import ConfigError
from gkeml_sdk.scheduling.catalog import PROVISIONING_CONTROLLER
from gkeml_sdk.training.model import TrainingJob


def check_provisioning_queue(kube: KubeClient, job: TrainingJob) -> None:
    """Raise `ConfigError`, with the `gkeml setup` commands that fix it, when `job.queue`
    cannot obtain queued-provisioning capacity.

    Example:
        >>> check_provisioning_queue(kube, job)  # doctest: +SKIP
    """
    local = kube.find(resource(kinds.KUEUE, "LocalQueue"), job.queue, job.namespace) or {}
    name = str((local.get("spec") or {}).get("clusterQueue", ""))
    queue = kube.find(resource(kinds.KUEUE, "ClusterQueue"), name) if name else None
    if queue is None:
        _fail(
            f"LocalQueue {job.queue!r} points at ClusterQueue {name!r}, which does not exist", job
        )
        return
    spec: dict[str, Any] = queue.get("spec") or {}
    for group in spec.get("resourceGroups") or []:
        for flavor in group.get("flavors") or []:
            if kube.find(resource(kinds.KUEUE, "ResourceFlavor"), flavor["name"]) is None:
                _fail(f"ResourceFlavor {flavor['name']!r} of ClusterQueue {name!r} is missing", job)
    strategy = spec.get("admissionChecksStrategy") or {}
    for rule in strategy.get("admissionChecks") or []:
        check = kube.find(resource(kinds.KUEUE, "AdmissionCheck"), rule["name"])
        if (check or {}).get("spec", {}).get("controllerName") == PROVISIONING_CONTROLLER:
            return
    _fail(
        f"ClusterQueue {name!r} has no ProvisioningRequest admission check, so Kueue would "
        f"start provisioning={job.provisioning!r} pods without asking GKE for their nodes",
        job,
    )


def _fail(problem: str, job: TrainingJob) -> NoReturn:
    raise ConfigError(f"{problem}; {setup_advice(job)}")
