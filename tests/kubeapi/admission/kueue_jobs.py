"""Kueue's job webhooks for Job, JobSet, LeaderWorkerSet, Deployment and Pod
(admission-rules.md §3.2-3.5): defaults, then rules answered as 403 without details.
Namespaces kube-system/kueue-system and objects without a queue-name are left alone."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from .. import errors
from .fielderr import OMIT, FieldError, dns1123_subdomain, invalid, webhook_denied
from .review import JOBSETS, KUEUE_MARKER, LWS, Review, dig, labels

P = "kueue.x-k8s.io/"
QUEUE, PRIORITY, MAX_EXEC = P + "queue-name", P + "priority-class", P + "max-exec-time-seconds"
GROUP, GROUP_COUNT, MANAGED = P + "pod-group-name", P + "pod-group-total-count", P + "managed"
TOPOLOGY_KEYS = (
    P + "podset-required-topology",
    P + "podset-preferred-topology",
    P + "podset-unconstrained-topology",
)
SKIPPED_NAMESPACES = ("kube-system", "kueue-system")
LOCALQUEUES, PRIORITY_CLASSES = (
    "localqueues.kueue.x-k8s.io",
    "workloadpriorityclasses.kueue.x-k8s.io",
)
WEBHOOKS = {
    "jobs.batch": "vjob.kb.io",
    JOBSETS: "vjobset.kb.io",
    LWS: "vleaderworkerset.kb.io",
    "deployments.apps": "vdeployment.kb.io",
    "pods": "vpod.kb.io",
}
SUSPENDABLE = ("jobs.batch", JOBSETS)
MANAGED_OWNER_KINDS = ("JobSet", "LeaderWorkerSet", "Job", "Deployment", "StatefulSet")


def _active(review: Review) -> bool:
    return (
        review.rt.key in WEBHOOKS
        and review.installed(KUEUE_MARKER)
        and review.namespace not in SKIPPED_NAMESPACES
    )


def _templates(review: Review, obj: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(field path, pod template) pairs of the object."""
    spec = obj.get("spec") or {}
    key = review.rt.key
    if key == JOBSETS:
        return [
            (
                f"spec.replicatedJobs[{i}].template.spec.template",
                dig(r, "template", "spec", "template") or {},
            )
            for i, r in enumerate(spec.get("replicatedJobs") or [])
        ]
    if key == LWS:
        lwt = spec.get("leaderWorkerTemplate") or {}
        return [
            (f"spec.leaderWorkerTemplate.{t}", lwt[t])
            for t in ("leaderTemplate", "workerTemplate")
            if isinstance(lwt.get(t), dict)
        ]
    if key in ("jobs.batch", "deployments.apps"):
        return [("spec.template", spec.get("template") or {})]
    return []


def mutate(review: Review) -> None:
    if not _active(review):
        return
    obj, key = review.obj, review.rt.key
    meta = obj.setdefault("metadata", {})
    if review.operation == "CREATE" and key != "pods":
        if QUEUE not in labels(obj) and review.find(LOCALQUEUES, review.namespace, "default"):
            meta.setdefault("labels", {})[QUEUE] = "default"
        if (
            QUEUE in labels(obj)
            and PRIORITY not in labels(obj)
            and review.find(PRIORITY_CLASSES, "", "default")
        ):
            meta.setdefault("labels", {})[PRIORITY] = "default"
    queue = labels(obj).get(QUEUE)
    if not queue:
        return
    if key in SUSPENDABLE and review.operation == "CREATE" and not _managed_owner(obj):
        obj.setdefault("spec", {})["suspend"] = True
    elif key in (LWS, "deployments.apps"):
        for _, tpl in _templates(review, obj):
            _label_template(tpl, queue, labels(obj).get(PRIORITY), key)
    elif key == "pods" and review.operation == "CREATE":
        _gate_pod(obj)


def _managed_owner(obj: dict[str, Any]) -> bool:
    refs = dig(obj, "metadata", "ownerReferences") or []
    return any(r.get("controller") and r.get("kind") in MANAGED_OWNER_KINDS for r in refs)


def _label_template(tpl: dict[str, Any], queue: str, priority: str | None, key: str) -> None:
    tmeta = tpl.setdefault("metadata", {})
    tlabels = tmeta.setdefault("labels", {})
    tlabels[QUEUE] = queue
    if priority:
        tlabels[PRIORITY] = priority
    notes = tmeta.setdefault("annotations", {})
    if key == LWS:
        notes[P + "pod-suspending-parent"] = "leaderworkerset.x-k8s.io/leaderworkerset"
        notes[P + "pod-group-serving"] = "true"
    else:
        notes[P + "pod-suspending-parent"] = "deployment"
        tlabels[MANAGED] = "true"


def _gate_pod(pod: dict[str, Any]) -> None:
    meta = pod["metadata"]
    meta.setdefault("labels", {})[MANAGED] = "true"
    if not meta.get("ownerReferences"):
        fins = meta.setdefault("finalizers", [])
        if P + "managed" not in fins:
            fins.append(P + "managed")
    spec = pod.setdefault("spec", {})
    gates = spec.setdefault("schedulingGates", [])
    for gate in (P + "admission", P + "topology"):
        if not any(g.get("name") == gate for g in gates):
            gates.append({"name": gate})
    role = json.dumps(spec.get("containers"), sort_keys=True).encode()
    meta.setdefault("annotations", {})[P + "role-hash"] = hashlib.sha256(role).hexdigest()[:8]


def validate(review: Review) -> errors.ApiError | None:
    if not _active(review):
        return None
    unqueued = QUEUE not in labels(review.obj) and QUEUE not in labels(review.old)
    if unqueued and (review.rt.key != "pods" or GROUP not in labels(review.obj)):
        return None
    errs = _object_errors(review)
    if review.operation == "UPDATE":
        errs += _label_update_errors(review)
        if review.rt.key == LWS:
            errs += _lws_update_errors(review)
    return webhook_denied(WEBHOOKS[review.rt.key], errs) if errs else None


def _label_path(key: str) -> str:
    return f"metadata.labels[{key}]"


def _object_errors(review: Review) -> list[FieldError]:
    obj = review.obj
    lbls = labels(obj)
    errs: list[FieldError] = []
    queue = lbls.get(QUEUE)
    if queue:
        errs += [invalid(_label_path(QUEUE), queue, m) for m in dns1123_subdomain(queue)]
    if MAX_EXEC in lbls and review.rt.key in SUSPENDABLE:
        raw = lbls[MAX_EXEC]
        try:
            seconds = int(raw)
        except ValueError:
            errs.append(
                invalid(
                    _label_path(MAX_EXEC), raw, f'strconv.Atoi: parsing "{raw}": invalid syntax'
                )
            )
        else:
            if seconds <= 0:
                errs.append(invalid(_label_path(MAX_EXEC), seconds, "should be greater than 0"))
    for path, tpl in _templates(review, obj):
        present = [k for k in TOPOLOGY_KEYS if k in (dig(tpl, "metadata", "annotations") or {})]
        if len(present) > 1:
            keys = ", ".join(json.dumps(k) for k in TOPOLOGY_KEYS)
            errs.append(
                invalid(
                    f"{path}.metadata.annotations",
                    OMIT,
                    f"must not contain more than one topology annotation: [{keys}]",
                )
            )
    if review.rt.key == "pods":
        errs += _pod_errors(obj)
    return errs


def _pod_errors(pod: dict[str, Any]) -> list[FieldError]:
    lbls, notes = labels(pod), dig(pod, "metadata", "annotations") or {}
    errs: list[FieldError] = []
    if MANAGED in lbls and lbls[MANAGED] != "true":
        errs.append(
            invalid(_label_path(MANAGED), lbls[MANAGED], "managed label value can only be 'true'")
        )
    if (GROUP in lbls) != (GROUP_COUNT in notes):
        errs.append(
            FieldError(
                "Required",
                f"metadata.annotations[{GROUP_COUNT}]",
                f"both the '{GROUP_COUNT}' annotation and the '{GROUP}' label should be set",
            )
        )
    elif GROUP_COUNT in notes:
        raw = notes[GROUP_COUNT]
        if not raw.lstrip("-").isdigit() or int(raw) < 1:
            errs.append(
                invalid(
                    f"metadata.annotations[{GROUP_COUNT}]",
                    raw,
                    "group total count should be greater than zero",
                )
            )
    return errs


def _suspended(review: Review) -> bool:
    """Jobs: the new object's spec.suspend; LWS/Deployment: no replica ready yet."""
    if review.rt.key in SUSPENDABLE:
        return bool(dig(review.obj, "spec", "suspend"))
    if review.rt.key == "pods":
        gates = dig(review.old, "spec", "schedulingGates") or []
        return any(g.get("name") == P + "admission" for g in gates)
    return not dig(review.old, "status", "readyReplicas")


def _label_update_errors(review: Review) -> list[FieldError]:
    old, new = labels(review.old), labels(review.obj)
    suspended = _suspended(review)
    errs: list[FieldError] = []
    if QUEUE in old and new.get(QUEUE) != old[QUEUE]:
        value = new.get(QUEUE, "")
        if QUEUE not in new and (review.rt.key in (LWS, "deployments.apps") or not suspended):
            errs.append(invalid(_label_path(QUEUE), "", "field is immutable"))
        elif QUEUE not in new and review.find(LOCALQUEUES, review.namespace, "default"):
            errs.append(
                invalid(
                    _label_path(QUEUE),
                    "",
                    "queue-name must not be empty in namespace with default queue",
                )
            )
        elif QUEUE in new and not suspended:
            errs.append(invalid(_label_path(QUEUE), value, "field is immutable"))
    if PRIORITY in new and PRIORITY not in old and not suspended:
        errs.append(
            invalid(
                _label_path(PRIORITY),
                new[PRIORITY],
                "WorkloadPriorityClass cannot be added to a non-suspended workload",
            )
        )
    if PRIORITY in old and PRIORITY not in new:
        errs.append(
            invalid(
                _label_path(PRIORITY), "", "WorkloadPriorityClass cannot be removed from a workload"
            )
        )
    exec_changed = review.rt.key in SUSPENDABLE and old.get(MAX_EXEC) != new.get(MAX_EXEC)
    if exec_changed and not (dig(review.old, "spec", "suspend") and suspended):
        errs.append(invalid(_label_path(MAX_EXEC), new.get(MAX_EXEC, ""), "field is immutable"))
    return errs


_POD_FROZEN = (
    "nodeSelector",
    "affinity",
    "tolerations",
    "runtimeClassName",
    "priority",
    "topologySpreadConstraints",
    "overhead",
    "resourceClaims",
    "resources",
)


def _lws_update_errors(review: Review) -> list[FieldError]:
    """§3.4: group size and the scheduling-relevant pod template fields are frozen."""
    old, new = review.old or {}, review.obj
    errs: list[FieldError] = []
    size_path = ("spec", "leaderWorkerTemplate", "size")
    if dig(old, *size_path) != dig(new, *size_path):
        errs.append(
            invalid("spec.leaderWorkerTemplate.size", dig(new, *size_path), "field is immutable")
        )
    before = dict(_templates(review, old))
    for path, tpl in _templates(review, new):
        old_spec, spec = dig(before.get(path), "spec") or {}, tpl.get("spec") or {}
        for field in _POD_FROZEN:
            if old_spec.get(field) != spec.get(field):
                errs.append(invalid(f"{path}.spec.{field}", spec.get(field), "field is immutable"))
        old_containers = old_spec.get("containers") or []
        for i, c in enumerate(spec.get("containers") or []):
            oc = old_containers[i] if i < len(old_containers) else {}
            for sub, value, was in (
                (
                    "resources.requests",
                    dig(c, "resources", "requests"),
                    dig(oc, "resources", "requests"),
                ),
                ("ports", c.get("ports"), oc.get("ports")),
            ):
                if value != was:
                    errs.append(
                        invalid(f"{path}.spec.containers[{i}].{sub}", value, "field is immutable")
                    )
    return errs
