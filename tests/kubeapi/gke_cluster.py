"""`GkeCluster`: a GKE cluster on the test API server, played in deterministic rounds: the Nodes
of its node pools (`gke_nodes.py`), the workload controllers that make pods, Kueue
(`kueue_admission.py`), kube-scheduler (`scheduler.py`) and the kubelet.

Each round, in this order:
- the HorizontalPodAutoscaler raises a Deployment below its minReplicas to it (what it does
  before any metric is read);
- the workload controllers create the pods of what runs: a Job's `parallelism` pods once it is
  unsuspended, a JobSet's replicatedJobs x replicas x parallelism pods once it is unsuspended
  (its child Jobs are left out: the pods carry the JobSet's labels directly), a Deployment's
  `replicas` pods (its ReplicaSet left out) and a LeaderWorkerSet's groups of a leader and
  size-1 workers, labelled as LeaderWorkerSet labels them. Pods go through the API server's
  POST, so Kueue's pod webhook gates the pods of Deployments and LeaderWorkerSets it manages;
- Kueue creates and admits Workloads and starts what it admitted;
- the scheduler binds the pods that fit;
- the kubelet runs every bound pod (Running and Ready; no container is started).
Nodes of a DRA pool also get the ResourceSlices NVIDIA's DRA driver publishes, and the cluster
its DeviceClass (`dra.py`); `device_classes` is Kueue's `resources.deviceClassMappings`.
`settle()` plays rounds until one changes nothing. `apply()` creates compiled objects through
the API, as `kubectl create` would, so every webhook and validation runs."""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any

from .dra import DEVICE_CLASS, resource_slices
from .gke_nodes import node_objects
from .kueue_admission import KueueAdmission
from .kueue_workloads import LWS_GROUP, LWS_NAME, LWS_WORKER
from .rawhttp import send
from .scheduler import Scheduler
from .server import KubeAPIServer

Obj = dict[str, Any]
_STAMP = "2026-01-01T00:00:00Z"


class GkeCluster:
    """The pools' nodes and the controllers that run pods on them, for one test API server.

    Example:
        >>> GkeCluster.__name__
        'GkeCluster'
    """

    def __init__(
        self,
        server: KubeAPIServer,
        pools: Iterable[Mapping[str, Any]],
        workload_policies: Mapping[str, str] | None = None,
        device_classes: Mapping[str, str] | None = None,
    ) -> None:
        self.server = server
        self.kueue = KueueAdmission(server, device_classes)
        self.scheduler = Scheduler(server)
        slices = []
        for pool in pools:
            nodes = node_objects(pool, workload_policies)
            for node in nodes:
                server.store.put(node)
            slices += resource_slices(pool, [n["metadata"]["name"] for n in nodes])
        if slices:  # NVIDIA's DRA driver runs there: its DeviceClass and what it publishes
            server.store.put(copy.deepcopy(DEVICE_CLASS))
            for found in slices:
                server.store.put(found)

    def apply(self, objects: Iterable[Mapping[str, Any]]) -> None:
        """Create each object through the API (a Namespace that exists is kept)."""
        for obj in objects:
            code, body = send(self.server, "POST", _collection(self.server, obj), dict(obj))
            exists = code == 409 and obj.get("kind") == "Namespace"
            assert code == 201 or exists, f"{obj.get('kind')} {obj['metadata'].get('name')}: {body}"

    def settle(self, rounds: int = 20) -> int:
        """Play rounds until one writes nothing; returns the rounds played."""
        for played in range(1, rounds + 1):
            before = self.server.store.resource_version
            self.step()
            if self.server.store.resource_version == before:
                return played
        raise AssertionError(f"the cluster still changes after {rounds} rounds")

    def step(self) -> None:
        self._autoscale()
        self._make_pods()
        self.kueue.step()
        self.scheduler.step()
        self._run_bound()

    def _autoscale(self) -> None:
        store = self.server.store
        for hpa in store.list("horizontalpodautoscalers"):
            spec, ns = hpa["spec"], hpa["metadata"]["namespace"]
            target = spec["scaleTargetRef"]
            deployment = store.get("deployments", ns, target["name"])
            least = int(spec.get("minReplicas", 1))
            below = deployment is not None and int(deployment["spec"].get("replicas", 1)) < least
            if target["kind"] == "Deployment" and deployment is not None and below:
                deployment["spec"]["replicas"] = least
                store.put(deployment, manager="horizontal-pod-autoscaler")

    def _make_pods(self) -> None:
        store = self.server.store
        for job in store.list("jobs"):
            if not job["spec"].get("suspend"):
                template = job["spec"]["template"]
                for i in range(int(job["spec"].get("parallelism", 1))):
                    labels = {
                        "batch.kubernetes.io/job-name": job["metadata"]["name"],
                        "batch.kubernetes.io/job-completion-index": str(i),
                    }
                    self._pod(job, f"{job['metadata']['name']}-{i}", template, labels)
        for jobset in store.list("jobsets"):
            if jobset["spec"].get("suspend"):
                continue
            name = jobset["metadata"]["name"]
            for rj in jobset["spec"].get("replicatedJobs") or []:
                job_spec = rj["template"]["spec"]
                for r in range(int(rj.get("replicas", 1))):
                    for i in range(int(job_spec.get("parallelism", 1))):
                        labels = {
                            "jobset.sigs.k8s.io/jobset-name": name,
                            "jobset.sigs.k8s.io/replicatedjob-name": rj["name"],
                            "jobset.sigs.k8s.io/job-index": str(r),
                            "batch.kubernetes.io/job-completion-index": str(i),
                        }
                        pod_name = f"{name}-{rj['name']}-{r}-{i}"
                        self._pod(jobset, pod_name, job_spec["template"], labels)
        for deployment in store.list("deployments"):
            name = deployment["metadata"]["name"]
            for i in range(int(deployment["spec"].get("replicas", 1))):
                self._pod(deployment, f"{name}-{i}", deployment["spec"]["template"], {})
        for lws in store.list("leaderworkersets"):
            name, spec = lws["metadata"]["name"], lws["spec"]
            group = spec["leaderWorkerTemplate"]
            for g in range(int(spec.get("replicas", 1))):
                for w in range(int(group.get("size", 1))):
                    template = (
                        group["leaderTemplate"]
                        if w == 0
                        else group.get("workerTemplate", group["leaderTemplate"])
                    )
                    labels = {LWS_NAME: name, LWS_GROUP: str(g), LWS_WORKER: str(w)}
                    self._pod(lws, f"{name}-{g}" + (f"-{w}" if w else ""), template, labels)

    def _pod(self, owner: Obj, name: str, template: Mapping[str, Any], labels: Obj) -> None:
        namespace = owner["metadata"]["namespace"]
        if self.server.store.get("pods", namespace, name) is not None:
            return
        meta = template.get("metadata") or {}
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": name,
                "namespace": namespace,
                "labels": {**(meta.get("labels") or {}), **labels},
                "annotations": dict(meta.get("annotations") or {}),
                "ownerReferences": [
                    {
                        "apiVersion": owner["apiVersion"],
                        "kind": owner["kind"],
                        "name": owner["metadata"]["name"],
                        "uid": owner["metadata"]["uid"],
                        "controller": True,
                    }
                ],
            },
            "spec": dict(template["spec"]),
        }
        code, body = send(self.server, "POST", f"/api/v1/namespaces/{namespace}/pods", pod)
        assert code == 201, f"pod {name}: {body}"

    def _run_bound(self) -> None:
        store = self.server.store
        for pod in store.list("pods"):
            status = pod.get("status") or {}
            if pod["spec"].get("nodeName") and status.get("phase", "Pending") == "Pending":
                pod["status"] = {
                    **status,
                    "phase": "Running",
                    "conditions": [
                        {"type": t, "status": "True", "lastTransitionTime": _STAMP}
                        for t in ("PodScheduled", "Initialized", "ContainersReady", "Ready")
                    ],
                }
                store.put(pod)


def _collection(server: KubeAPIServer, obj: Mapping[str, Any]) -> str:
    rt = server.registry.resolve(str(obj["kind"]))
    version = str(obj["apiVersion"]).rsplit("/", 1)[-1]
    root = f"/apis/{rt.group}/{version}" if rt.group else f"/api/{version}"
    namespace = (obj.get("metadata") or {}).get("namespace")
    if rt.namespaced:
        return f"{root}/namespaces/{namespace or 'default'}/{rt.plural}"
    return f"{root}/{rt.plural}"
