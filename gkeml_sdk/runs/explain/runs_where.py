"""Will it run: a compiled job or model server, against a compiled setup (Kueue objects) and
node pools, answered from the objects alone: Kueue admits it on a flavor (the admission model
`preview` uses) and its pods, with what Kueue adds from that flavor, fit the nodes GKE makes
from the pools (selectors, affinities, tolerations, devices, ephemeral storage, claims:
`node_fit`)
(https://kueue.sigs.k8s.io/docs/concepts/resource_flavor/,
https://kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/)."""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from gkeml_sdk.core.objects import Obj, ObjView, name
from gkeml_sdk.hardware.dra import KUEUE_DEVICE_CLASSES
from gkeml_sdk.hardware.manifests import DEVICES_PREFIX
from gkeml_sdk.runs.explain.explanation import Verdict
from gkeml_sdk.runs.explain.flavor_choice import landing_flavor
from gkeml_sdk.runs.explain.node_fit import claims, fits
from gkeml_sdk.runs.explain.offline import queues_of
from gkeml_sdk.runs.explain.preview import preview
from gkeml_sdk.scheduling.gke_nodes import PoolNodes, pool_nodes
from gkeml_sdk.scheduling.topology import PREFERRED_ANNOTATION, REQUIRED_ANNOTATION

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
EXCLUSIVE_TOPOLOGY = "alpha.jobset.sigs.k8s.io/exclusive-topology"


@dataclass(frozen=True)
class WhereItRuns:
    """The answer: it runs (on `flavor`, pods on `pools`), or the first reason it never will.

    Example:
        >>> WhereItRuns(False, "no node pool").runs
        False
    """

    runs: bool
    reason: str
    flavor: str = ""
    pools: tuple[str, ...] = ()


def where_it_runs(
    setup: Iterable[ObjView],
    pools: Iterable[ObjView],
    job: Iterable[ObjView],
    *,
    workload: ObjView | None = None,
    device_classes: Mapping[str, str] = KUEUE_DEVICE_CLASSES,
    workload_policies: Mapping[str, str] | None = None,
) -> WhereItRuns:
    """Whether `job` (compiled objects; `workload`: its Kueue Workload view, derived from a
    Deployment or LeaderWorkerSet when None) runs in a cluster holding `setup` (compiled
    ClusterSetup objects) and node `pools` (items of `NodePool.to_dict()["nodePools"]`).
    `device_classes`: Kueue's `resources.deviceClassMappings` (DeviceClass -> quota resource).

    Example:
        >>> from gkeml_sdk import Accelerator, Capacity, ClusterSetup, NodePool, Team, TrainingJob
        >>> pool = NodePool(name="l4", hardware=Accelerator("l4"), spot=True)
        >>> setup = ClusterSetup(capacity=Capacity.from_node_pools([pool]),
        ...                      teams=[Team(name="a", quota={"l4": 4})])
        >>> job = TrainingJob(name="ft", image="i", command=["x"], accelerator=Accelerator("l4"),
        ...                   spot=True, queue="a-spot", namespace="a", stateless=True)
        >>> m = job.compile()
        >>> where_it_runs(setup.compile().objects, pool.to_dict()["nodePools"], m.objects,
        ...               workload=m.workload).reason
        'Kueue admits it on flavor l4-spot, and its pods fit nodes of pool l4.'
    """
    objects = list(job)
    setup_objects = list(setup)
    view = workload if workload is not None else _workload_of(objects[-1])
    templates = {name(o): o for o in objects if o.get("kind") == "ResourceClaimTemplate"}
    kueue_view, unmapped = _with_claimed_devices(view, templates, device_classes)
    if unmapped:
        return WhereItRuns(False, unmapped)
    spec = kueue_view.get("spec") or {}
    flavor: ObjView = {}
    flavor_name = ""
    if spec.get("queueName"):
        namespace = str((view.get("metadata") or {}).get("namespace") or "default")
        queues = queues_of(setup_objects, namespace, str(spec["queueName"]))
        found = preview(kueue_view, queues)
        if found.verdict == Verdict.NEVER_FITS:
            return WhereItRuns(False, found.sentence)
        flavor_name = landing_flavor(kueue_view, queues) or ""
        flavor = queues.flavors.get(flavor_name) or {}
        why = _topology_missing(spec, flavor_name, flavor, setup_objects)
        if why:
            return WhereItRuns(False, why)
    nodes = [pool_nodes(p, workload_policies) for p in pools]
    levels = _topology_levels(setup_objects, flavor)
    installers = [o for o in setup_objects if o.get("kind") == "DaemonSet"]
    placed: list[str] = []
    for pod_set in spec.get("podSets") or []:
        template = pod_set.get("template") or {}
        pod = _admitted_pod(template, flavor)
        annotations = (template.get("metadata") or {}).get("annotations") or {}
        devices = any(k.startswith(DEVICES_PREFIX) for k in annotations)
        count = int(pod_set.get("count", 1))
        if levels:  # a flavor with a Topology only takes nodes that carry its levels
            exists = [{"key": label, "operator": "Exists"} for label in levels]
            pod = {**pod, "affinity": _with_required(pod, exists)}
        where, why = _place(pod, count, nodes, templates, installers, devices)
        if why:
            head = f"Kueue admits it on flavor {flavor_name}, but" if flavor_name else "But"
            return WhereItRuns(False, f"{head} pods of {pod_set.get('name')} never run: {why}.")
        placed += [p for p in where if p not in placed]
    slices = _exclusive_slices(objects[-1])
    if slices > len(placed):
        return WhereItRuns(
            False,
            f"The job places one slice per node pool ({EXCLUSIVE_TOPOLOGY}) and needs {slices}, "
            f"but only {len(placed)} pool(s) fit: {', '.join(placed) or 'none'}.",
        )
    admits = f"Kueue admits it on flavor {flavor_name}, and its" if flavor_name else "Its"
    return WhereItRuns(
        True, f"{admits} pods fit nodes of pool {', '.join(placed)}.", flavor_name, tuple(placed)
    )


def _topology_missing(
    spec: ObjView, flavor_name: str, flavor: ObjView, setup: list[ObjView]
) -> str:
    """Why Kueue's Topology-Aware Scheduling cannot place pod sets that ask for a topology
    (kueue.x-k8s.io/podset-required/preferred-topology): the flavor names no Topology, or the
    Topology is missing."""
    asked = [
        key
        for pod_set in spec.get("podSets") or []
        for key in ((pod_set.get("template") or {}).get("metadata") or {}).get("annotations") or {}
        if key in (REQUIRED_ANNOTATION, PREFERRED_ANNOTATION)
    ]
    if not asked or not flavor_name:
        return ""
    topology = str((flavor.get("spec") or {}).get("topologyName") or "")
    if not topology:
        return (
            f"Never admitted: the pods ask {asked[0]}, and flavor {flavor_name} names no "
            "Topology, so Kueue's Topology-Aware Scheduling cannot place them. Offer the "
            "capacity with topology=True (nodes of A3 and newer carry GKE's topology labels)"
        )
    if not any(o.get("kind") == "Topology" and name(o) == topology for o in setup):
        return f"Never admitted: flavor {flavor_name} names Topology {topology}, which is missing."
    return ""


def _topology_levels(setup: list[ObjView], flavor: ObjView) -> list[str]:
    """Node labels of the levels of the flavor's Topology (every node must carry them)."""
    topology = str((flavor.get("spec") or {}).get("topologyName") or "")
    found = [o for o in setup if o.get("kind") == "Topology" and name(o) == topology]
    levels = ((found[0].get("spec") or {}).get("levels") or []) if found else []
    return [str(level.get("nodeLabel")) for level in levels]


def _workload_of(main: ObjView) -> Obj:
    """The Workload Kueue's pod integrations make: one per pod of a Deployment, one per group
    of a LeaderWorkerSet (leader and size-1 workers)."""
    spec = main.get("spec") or {}
    meta = main.get("metadata") or {}
    queue = (meta.get("labels") or {}).get(QUEUE_LABEL)
    group = spec.get("leaderWorkerTemplate")
    if group:
        size = int(group.get("size", 1))
        pod_sets = [{"name": "leader", "count": 1, "template": group["leaderTemplate"]}]
        if size > 1:
            worker = group.get("workerTemplate") or group["leaderTemplate"]
            pod_sets.append({"name": "workers", "count": size - 1, "template": worker})
    else:
        pod_sets = [{"name": "main", "count": 1, "template": spec.get("template") or {}}]
    out: Obj = {"metadata": {"namespace": meta.get("namespace")}, "spec": {"podSets": pod_sets}}
    if queue:
        out["spec"]["queueName"] = queue
    return out


def _with_required(pod: ObjView, expressions: list[Obj]) -> Obj:
    """The pod's affinity with `expressions` added to each required node selector term."""
    affinity = copy.deepcopy(dict(pod.get("affinity") or {}))
    node = affinity.setdefault("nodeAffinity", {})
    required = node.setdefault("requiredDuringSchedulingIgnoredDuringExecution", {})
    terms = required.get("nodeSelectorTerms") or [{}]
    required["nodeSelectorTerms"] = [
        {**t, "matchExpressions": [*(t.get("matchExpressions") or []), *expressions]} for t in terms
    ]
    return affinity


def _with_claimed_devices(
    workload: ObjView, templates: Mapping[str, ObjView], mapping: Mapping[str, str]
) -> tuple[Obj, str]:
    """The Workload as Kueue's DRA integration counts it: each claimed device request charges
    its count to the quota resource its DeviceClass maps to (kueue pkg/dra/claims.go)."""
    view = copy.deepcopy(dict(workload))
    for pod_set in (view.get("spec") or {}).get("podSets") or []:
        spec = (pod_set.get("template") or {}).get("spec") or {}
        for device_class, count in claims(spec, templates):
            if device_class not in mapping:
                return view, (
                    f"Never admitted: Kueue counts claimed devices only through its "
                    f"deviceClassMappings, and DeviceClass {device_class} is not mapped, so the "
                    "Workload is inadmissible. Map it in Kueue's configuration "
                    "(resources.deviceClassMappings) to a resource the ClusterQueue covers"
                )
            container = spec["containers"][0]
            requests = container.setdefault("resources", {}).setdefault("requests", {})
            resource = mapping[device_class]
            requests[resource] = int(requests.get(resource, 0)) + count
    return view, ""


def _admitted_pod(template: ObjView, flavor: ObjView) -> ObjView:
    """The pod spec after admission: Kueue adds the flavor's node labels to the nodeSelector
    and its tolerations (ResourceFlavor spec.nodeLabels, spec.tolerations)."""
    spec = dict(template.get("spec") or {})
    flavor_spec = flavor.get("spec") or {}
    labels, tolerations = flavor_spec.get("nodeLabels") or {}, flavor_spec.get("tolerations") or []
    spec["nodeSelector"] = {**(spec.get("nodeSelector") or {}), **labels}
    spec["tolerations"] = [*(spec.get("tolerations") or []), *tolerations]
    return spec


def _place(
    pod: ObjView,
    count: int,
    nodes: list[PoolNodes],
    templates: Mapping[str, ObjView],
    installers: list[ObjView],
    devices: bool,
) -> tuple[list[str], str]:
    """Pools whose nodes take the pods (enough of them for `count`), or why none does."""
    if not nodes:
        return [], "the cluster has no node pool"
    fitting: list[tuple[PoolNodes, int]] = []
    best = (-1, "")
    for node in nodes:
        stage, why, per_node = fits(pod, node, templates, installers, devices)
        if not why:
            fitting.append((node, per_node))
        elif stage > best[0]:
            best = (stage, f"pool {node.pool}: {why}")
    if not fitting:
        return [], best[1]
    room = sum(node.max_nodes * per_node for node, per_node in fitting)
    if room < count:
        pools = ", ".join(f"{n.pool} (at most {n.max_nodes} node(s))" for n, _ in fitting)
        return [], f"{count} pods need more nodes than the pools that fit can grow to: {pools}"
    return [node.pool for node, _ in fitting], ""


def _exclusive_slices(main: ObjView) -> int:
    """Slices a JobSet places one per node pool (exclusive topology), else 0."""
    meta = main.get("metadata") or {}
    if (meta.get("annotations") or {}).get(EXCLUSIVE_TOPOLOGY) is None:
        return 0
    jobs = (main.get("spec") or {}).get("replicatedJobs") or []
    return sum(int(j.get("replicas", 1)) for j in jobs)
