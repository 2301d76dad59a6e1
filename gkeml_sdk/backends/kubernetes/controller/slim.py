"""What the run controller keeps of each object its streams show (controller-runtime's cache
transform): only what its reconcile reads, so that 10,000 runs fit in a few hundred megabytes."""

from __future__ import annotations

from typing import Any

from gkeml_sdk.core.labels import ATTEMPT_LABEL, RUN_ID_LABEL
from gkeml_sdk.core.objects import Obj
from gkeml_sdk.scheduling.kueue import (
    JOB_CONTROLLER_UID_LABEL,
    JOB_NAME_LABEL,
    JOBSET_NAME_LABEL,
    JOBSET_RESTART_ATTEMPT_LABEL,
    JOBSET_UID_LABEL,
)

# What the controller reads of a Workload's spec (its status tracker and preemptor naming).
_WORKLOAD_SPEC = ("active", "queueName", "priority", "priorityClassName")
# Of a pod: the labels that say whose it is (`pod_belongs`, the run and attempt), the status
# its classification reads (phase, conditions, containers' states and exit codes).
_POD_LABELS = frozenset(
    {
        RUN_ID_LABEL,
        ATTEMPT_LABEL,
        JOBSET_NAME_LABEL,
        JOBSET_UID_LABEL,
        JOBSET_RESTART_ATTEMPT_LABEL,
        JOB_NAME_LABEL,
        JOB_CONTROLLER_UID_LABEL,
    }
)
_POD_META = (
    "name",
    "namespace",
    "uid",
    "resourceVersion",
    "creationTimestamp",
    "deletionTimestamp",
)
_POD_STATUS = ("phase", "reason", "message")
_POD_CONDITIONS = frozenset({"DisruptionTarget", "Ready"})  # what `pods` readers look at
_CONDITION = ("type", "status", "reason", "message", "lastTransitionTime")
_CONTAINER = ("name", "ready", "restartCount", "state", "lastState")
_OWNER = ("apiVersion", "kind", "name", "uid", "controller")


def slim(obj: Obj) -> Obj:
    """What the controller keeps of an object: no managedFields; of JobSets, Jobs and pods no
    spec (their templates are most of their size; the controller reads their metadata and
    status); of a pod only the labels that say whose it is and the status it is judged by
    (phase, its Ready and DisruptionTarget conditions, its containers' states); of
    a Workload's spec what says whether it is active, where it queues and how many pods it
    needs, and of its admission which pod sets got how many pods. ConfigMaps keep their data
    (a record is read whole).

    Example:
        >>> pod = {"kind": "Pod", "metadata": {"name": "p", "managedFields": [{}],
        ...        "annotations": {"a": "b"}}, "spec": {"containers": []},
        ...        "status": {"phase": "Running", "podIP": "10.0.0.1"}}
        >>> slim(pod)
        {'kind': 'Pod', 'status': {'phase': 'Running'}, 'metadata': {'name': 'p'}}
    """
    meta = {k: v for k, v in (obj.get("metadata") or {}).items() if k != "managedFields"}
    kind = obj.get("kind")
    if kind == "ConfigMap":
        return {**obj, "metadata": meta}
    out = {k: v for k, v in obj.items() if k not in ("spec", "metadata")}
    out["metadata"] = meta
    if kind == "Pod":
        out["status"], out["metadata"] = _pod_status(obj), _pod_meta(meta)
    if kind == "Workload":
        spec = obj.get("spec") or {}
        kept = {k: spec[k] for k in _WORKLOAD_SPEC if k in spec}
        sets = [{k: p[k] for k in ("name", "count") if k in p} for p in spec.get("podSets") or []]
        out["spec"] = {**kept, "podSets": sets}
        out["status"] = _workload_status(obj.get("status") or {})
        owners = meta.get("ownerReferences") or []
        meta["ownerReferences"] = [{k: o[k] for k in _OWNER if k in o} for o in owners]
    return out


def _pod_meta(meta: dict[str, Any]) -> dict[str, Any]:
    kept = {k: meta[k] for k in _POD_META if k in meta}
    labels = {k: v for k, v in (meta.get("labels") or {}).items() if k in _POD_LABELS}
    return {**kept, **({"labels": labels} if labels else {})}


def _pod_status(obj: Obj) -> dict[str, Any]:
    status = obj.get("status") or {}
    kept = {k: status[k] for k in _POD_STATUS if k in status}
    conditions = [
        {k: c[k] for k in _CONDITION if k in c}
        for c in status.get("conditions") or []
        if c.get("type") in _POD_CONDITIONS
    ]
    if conditions:
        kept["conditions"] = conditions
    for key in ("containerStatuses", "initContainerStatuses"):
        if key in status:
            kept[key] = [{k: c[k] for k in _CONTAINER if k in c} for c in status[key] or []]
    return kept


def _workload_status(status: dict[str, Any]) -> dict[str, Any]:
    admission = status.get("admission")
    if not isinstance(admission, dict):
        return status
    assigned = [
        {k: a[k] for k in ("name", "count") if k in a}
        for a in admission.get("podSetAssignments") or []
    ]
    return {**status, "admission": {**admission, "podSetAssignments": assigned}}
