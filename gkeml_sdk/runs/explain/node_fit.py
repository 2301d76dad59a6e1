"""Whether one pod fits the nodes of one GKE node pool, as kube-scheduler's filters and the
node's daemons decide it: node selectors and required affinity, taints, a GPU driver and the
NRI device injector where the pod needs them, extended resources, ephemeral storage and DRA
claims (https://kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/,
https://kubernetes.io/docs/concepts/configuration/manage-resources-containers/)."""

from __future__ import annotations

from collections.abc import Mapping

from gkeml_sdk.core.objects import ObjView
from gkeml_sdk.core.quantity import quantity
from gkeml_sdk.hardware.manifests import DEVICES_PREFIX, NRI_SOCKET_DIR
from gkeml_sdk.hardware.pool_facts import DRIVER_LABEL
from gkeml_sdk.runs.explain.admission import tolerates
from gkeml_sdk.scheduling.gke_nodes import PoolNodes
from gkeml_sdk.scheduling.node_storage import GIB

STORAGE = "ephemeral-storage"
STORAGE_FIX = (
    "give its pool room: NodePool.for_accelerator(..., ephemeral_storage=<the pods' "
    "request>) backs it with the machine's Local SSDs or a boot disk that holds it "
    "(boot_disk_gb)"
)


def claims(pod_spec: ObjView, templates: Mapping[str, ObjView]) -> list[tuple[str, int]]:
    """(DeviceClass, count) of each device request the pod claims through templates of the
    job; claims a driver's controller makes (a ComputeDomain's channel) are not here."""
    found = []
    for claim in pod_spec.get("resourceClaims") or []:
        template = templates.get(str(claim.get("resourceClaimTemplateName") or ""))
        devices = (((template or {}).get("spec") or {}).get("spec") or {}).get("devices") or {}
        for request in devices.get("requests") or []:
            exactly = request.get("exactly") or {}
            found.append((str(exactly.get("deviceClassName")), int(exactly.get("count", 1))))
    return found


def fits(
    pod: ObjView,
    node: PoolNodes,
    templates: Mapping[str, ObjView],
    installers: list[ObjView],
    devices: bool,
) -> tuple[int, str, int]:
    """(how far the pod got, why it does not fit this pool's nodes, pods per node); `devices`:
    the pod asks GKE's NRI device injector for host devices."""
    if node.never:
        return 0, f"GKE can never create its nodes: {node.never}", 0
    why = _selects(pod, node.labels)
    if why:
        return 0, why, 0
    for taint in node.taints:
        if taint.get("effect") == "PreferNoSchedule":
            continue
        if not any(tolerates(t, taint) for t in pod.get("tolerations") or []):
            why = f"its nodes are tainted {taint.get('key')}={taint.get('value')}:"
            return 1, f"{why}{taint.get('effect')} and the pods do not tolerate it", 0
    if node.gpus and not node.driver and not any(_installs(d, node) for d in installers):
        why = (
            "GKE installs no GPU driver there (gpuDriverVersion INSTALLATION_DISABLED) and the "
            f"setup has no driver-installer DaemonSet for nodes without {DRIVER_LABEL}, so no "
            "GPU is usable"
        )
        return 2, why, 0
    if devices and not any(_serves_nri(d, node) for d in installers):
        why = (
            f"the pods ask for host devices through {DEVICES_PREFIX}<name> annotations, and no "
            "NRI device injector DaemonSet of the setup runs on its nodes, so the network "
            "daemon gets no GPU devices"
        )
        return 2, why, 0
    per_node = 1 << 30
    for res, asked in _extended_requests(pod).items():
        has = node.allocatable.get(res, 0)
        if asked > has:
            return 3, f"each pod asks for {asked} {res} and a node offers {has}", 0
        per_node = min(per_node, has // asked)
    storage = _ephemeral_request(pod)
    if storage:
        if storage > node.ephemeral_storage:
            why = (
                f"each pod asks for {storage / GIB:.1f} GiB of ephemeral-storage and a node "
                f"offers {node.ephemeral_storage / GIB:.1f} GiB (Insufficient ephemeral-storage)"
            )
            return 3, f"{why}; {STORAGE_FIX}", 0
        per_node = min(per_node, node.ephemeral_storage // storage)
    for device_class, asked in claims(pod, templates):
        has = node.devices.get(device_class, 0)
        if asked > has:
            why = f"each pod claims {asked} {device_class} device(s) through DRA and a node "
            lacks = " (no NVIDIA DRA driver there: the pool lacks its node labels)"
            return 4, f"{why}publishes {has}{'' if has else lacks}", 0
    return 5, "", per_node


def _extended_requests(pod: ObjView) -> dict[str, int]:
    """Per-pod integer requests of extended resources (domain-qualified names: GPUs, TPUs)."""
    total: dict[str, int] = {}
    for container in pod.get("containers") or []:
        for res, value in ((container.get("resources") or {}).get("limits") or {}).items():
            if "/" in res and isinstance(value, int | str) and str(value).isdigit():
                total[res] = total.get(res, 0) + int(value)
    return total


def _ephemeral_request(pod: ObjView) -> int:
    """Bytes of ephemeral storage one pod requests, as NodeResourcesFit counts them: its
    containers' requests (a limit stands for a missing request, as the apiserver defaults it)
    added up, or its largest init container's when that is more."""

    def asked(container: ObjView) -> int:
        resources = container.get("resources") or {}
        for kind in ("requests", "limits"):
            value = (resources.get(kind) or {}).get(STORAGE)
            if value is not None:
                return int(quantity(value))
        return 0

    total = sum(asked(c) for c in pod.get("containers") or [])
    return max([total, *(asked(c) for c in pod.get("initContainers") or [])])


def _selects(pod: ObjView, labels: Mapping[str, str]) -> str:
    """Why the pod's nodeSelector or required node affinity rejects nodes with `labels`."""
    for key, value in (pod.get("nodeSelector") or {}).items():
        if labels.get(key) != value:
            return f"its nodes are {key}={labels.get(key, '(unset)')}, the pods ask {value}"
    required = (((pod.get("affinity") or {}).get("nodeAffinity") or {})
                .get("requiredDuringSchedulingIgnoredDuringExecution") or {})  # fmt: skip
    terms = required.get("nodeSelectorTerms") or []
    reasons = [_term(t, labels) for t in terms]
    if terms and all(reasons):
        return reasons[0]
    return ""


def _term(term: ObjView, labels: Mapping[str, str]) -> str:
    for expr in term.get("matchExpressions") or []:
        key, op, values = expr.get("key"), expr.get("operator"), list(expr.get("values") or [])
        have = labels.get(str(key))
        ok = {
            "In": have in values,
            "NotIn": have not in values,
            "Exists": have is not None,
            "DoesNotExist": have is None,
        }.get(str(op), False)
        if not ok:
            return f"its nodes are {key}={have or '(unset)'}, the pods ask {key} {op} {values}"
    return ""


def _serves_nri(daemonset: ObjView, node: PoolNodes) -> bool:
    """An NRI plugin DaemonSet (it mounts the node's NRI socket directory) on these nodes."""
    pod = ((daemonset.get("spec") or {}).get("template") or {}).get("spec") or {}
    volumes = pod.get("volumes") or []
    nri = any((v.get("hostPath") or {}).get("path") == NRI_SOCKET_DIR for v in volumes)
    return nri and _lands(pod, node)


def _lands(pod: ObjView, node: PoolNodes) -> bool:
    tolerated = all(
        any(tolerates(t, taint) for t in pod.get("tolerations") or [])
        for taint in node.taints
        if taint.get("effect") != "PreferNoSchedule"
    )
    return tolerated and not _selects(pod, node.labels)


def _installs(daemonset: ObjView, node: PoolNodes) -> bool:
    """A driver-installer DaemonSet: its pods target GPU nodes whose driver GKE did not install
    (node affinity `cloud.google.com/gke-gpu-driver-version DoesNotExist`) and land on these."""
    pod = ((daemonset.get("spec") or {}).get("template") or {}).get("spec") or {}
    required = (((pod.get("affinity") or {}).get("nodeAffinity") or {})
                .get("requiredDuringSchedulingIgnoredDuringExecution") or {})  # fmt: skip
    targets_driverless = any(
        e.get("key") == DRIVER_LABEL and e.get("operator") == "DoesNotExist"
        for t in required.get("nodeSelectorTerms") or []
        for e in t.get("matchExpressions") or []
    )
    return targets_driverless and _lands(pod, node)
