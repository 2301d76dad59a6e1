"""MultiKueue: a manager cluster whose ClusterQueues dispatch admitted jobs to worker clusters
(https://kueue.sigs.k8s.io/docs/concepts/multikueue/). The manager holds a `MultiKueueCluster`
per worker (its kubeconfig in a Secret of Kueue's namespace), one `MultiKueueConfig` and the
`kueue.x-k8s.io/multikueue` AdmissionCheck on every ClusterQueue; each worker holds the same
queues, so a job keeps its queue name wherever it runs."""

from __future__ import annotations

from typing import Any

from pydantic import Field, model_validator

from gkeml_sdk.core import kinds
from gkeml_sdk.core.labels import sdk_labels
from gkeml_sdk.core.model import DNS1123_SUBDOMAIN, SpecModel
from gkeml_sdk.core.objects import Obj
from gkeml_sdk.core.rules import check_name
from gkeml_sdk.scheduling.kueue import MULTIKUEUE_CONTROLLER

MULTIKUEUE_CHECK = "gkeml-multikueue"
MULTIKUEUE_CONFIG = "gkeml-multikueue"
# Kueue's controller manager namespace: MultiKueueCluster kubeconfig Secrets live there, under
# the key "kubeconfig" (MultiKueueCluster CRD, clusterSource.kubeConfig.location).
KUEUE_NAMESPACE = "kueue-system"
KUBECONFIG_KEY = "kubeconfig"


class WorkerCluster(SpecModel):
    """A cluster the manager dispatches jobs to (`gkeml setup apply --worker-kubeconfig
    NAME=PATH` writes its kubeconfig Secret).

    Example:
        >>> WorkerCluster(name="us-east5").kubeconfig_secret
        'us-east5-kubeconfig'
    """

    name: str = Field(description="The worker's MultiKueueCluster name.")
    kubeconfig_secret: str = Field(
        default="",
        description="The Secret in Kueue's namespace holding its kubeconfig under the key "
        '`kubeconfig` ("": `<name>-kubeconfig`).',
    )

    @model_validator(mode="before")
    @classmethod
    def _default_secret(cls, data: Any) -> Any:
        if isinstance(data, dict) and not data.get("kubeconfig_secret") and data.get("name"):
            data = {**data, "kubeconfig_secret": f"{data['name']}-kubeconfig"}
        return data

    @model_validator(mode="after")
    def _check(self) -> WorkerCluster:
        check_name("worker cluster", self.name, DNS1123_SUBDOMAIN, 63)
        check_name("kubeconfig_secret", self.kubeconfig_secret, DNS1123_SUBDOMAIN, 253)
        return self


def manager_objects(workers: list[WorkerCluster]) -> list[Obj]:
    """The manager's MultiKueueClusters, MultiKueueConfig and AdmissionCheck, in apply order.

    Example:
        >>> [o["kind"] for o in manager_objects([WorkerCluster(name="w1")])]
        ['MultiKueueCluster', 'MultiKueueConfig', 'AdmissionCheck']
    """
    objects = [
        _kueue(
            "MultiKueueCluster",
            worker.name,
            spec={
                "clusterSource": {
                    "kubeConfig": {"locationType": "Secret", "location": worker.kubeconfig_secret}
                }
            },
        )
        for worker in workers
    ]
    objects.append(
        _kueue("MultiKueueConfig", MULTIKUEUE_CONFIG, spec={"clusters": [w.name for w in workers]})
    )
    parameters = {"apiGroup": "kueue.x-k8s.io", "kind": "MultiKueueConfig"}
    check_spec = {
        "controllerName": MULTIKUEUE_CONTROLLER,
        "parameters": {**parameters, "name": MULTIKUEUE_CONFIG},
    }
    objects.append(_kueue("AdmissionCheck", MULTIKUEUE_CHECK, spec=check_spec))
    return objects


def kubeconfig_secret(worker: WorkerCluster, kubeconfig: str) -> Obj:
    """The Secret MultiKueue reads `worker`'s kubeconfig from (built by the backend at apply
    time from the file the admin names, never part of a plan).

    Example:
        >>> kubeconfig_secret(WorkerCluster(name="w1"), "apiVersion: v1")["metadata"]["name"]
        'w1-kubeconfig'
    """
    return {
        "apiVersion": kinds.CORE,
        "kind": "Secret",
        "metadata": {
            "name": worker.kubeconfig_secret,
            "namespace": KUEUE_NAMESPACE,
            "labels": sdk_labels(),
        },
        "type": "Opaque",
        "stringData": {KUBECONFIG_KEY: kubeconfig},
    }


def _kueue(kind: str, name: str, **fields: object) -> Obj:
    metadata = {"name": name, "labels": sdk_labels()}
    return {"apiVersion": kinds.KUEUE, "kind": kind, "metadata": metadata, **fields}
