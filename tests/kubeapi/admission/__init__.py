"""Admission for the fake kube-apiserver, in the real order: mutating webhooks, then (in
writes.py) schema defaults/validation and CEL, then validating webhooks. Each webhook acts
only on kinds whose CRDs are installed (Kueue's when Kueue's CRDs are).

`admission_errors` runs the webhooks on one object without a server, for fuzz tests.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from typing import Any

from ..errors import ApiError
from ..objects import json_copy
from ..resources import BUILTINS, ResourceType
from . import jobset, kueue_jobs, kueue_queues, lws
from .cel import ABSENT, cel_errors, has_rules
from .review import Review

__all__ = ["ABSENT", "Review", "admission_errors", "cel_errors", "has_rules", "mutate", "validate"]

MUTATING = (jobset.mutate, lws.mutate, kueue_jobs.mutate)
VALIDATING = (jobset.validate, lws.validate, kueue_jobs.validate, kueue_queues.validate)


def mutate(review: Review) -> None:
    """Every mutating webhook, in order, changes `review.obj` in place."""
    for plugin in MUTATING:
        # a malformed object: the schema validation that follows rejects it
        with contextlib.suppress(AttributeError, TypeError, ValueError):
            plugin(review)


def validate(review: Review) -> list[ApiError]:
    """The denial of every validating webhook that rejects the object (they run in
    parallel on a real server, so when several reject, any one answer can come back)."""
    denials = []
    for plugin in VALIDATING:
        try:
            err = plugin(review)
        except (AttributeError, TypeError, ValueError):
            continue  # only reachable for objects the schema let through untyped
        if err is not None:
            denials.append(err)
    return denials


def _custom(
    group: str, version: str, plural: str, kind: str, namespaced: bool = True
) -> ResourceType:
    return ResourceType(group, (version,), plural, kind.lower(), kind, namespaced, builtin=False)


_CUSTOM = (
    _custom("jobset.x-k8s.io", "v1alpha2", "jobsets", "JobSet"),
    _custom("leaderworkerset.x-k8s.io", "v1", "leaderworkersets", "LeaderWorkerSet"),
    _custom("kueue.x-k8s.io", "v1beta2", "localqueues", "LocalQueue"),
    _custom("kueue.x-k8s.io", "v1beta2", "clusterqueues", "ClusterQueue", False),
    _custom("kueue.x-k8s.io", "v1beta2", "cohorts", "Cohort", False),
    _custom("kueue.x-k8s.io", "v1beta2", "workloads", "Workload"),
    _custom("kueue.x-k8s.io", "v1beta2", "workloadpriorityclasses", "WorkloadPriorityClass", False),
)


def _resource_of(obj: dict[str, Any]) -> ResourceType:
    group = str(obj.get("apiVersion") or "").rpartition("/")[0]
    for rt in (*BUILTINS, *_CUSTOM):
        if rt.kind == obj.get("kind") and rt.group == group:
            return rt
    raise ValueError(f"no admission model for {obj.get('apiVersion')} {obj.get('kind')}")


def admission_errors(
    obj: dict[str, Any], namespace_objects: Iterable[dict[str, Any]] = ()
) -> list[str]:
    """Messages of every webhook denial a real cluster (JobSet + LWS + Kueue webhooks on)
    gives when `obj` is CREATEd; [] if admitted. `namespace_objects` is what else exists
    (e.g. a LocalQueue `default`, which makes Kueue label and check the object). Schema
    and CEL checks of the CRDs are not part of this.

    >>> admission_errors({"apiVersion": "leaderworkerset.x-k8s.io/v1",
    ...     "kind": "LeaderWorkerSet", "metadata": {"name": "serve"},
    ...     "spec": {"leaderWorkerTemplate": {"size": 0}}})[0].split(": ", 1)[1]
    'spec.leaderWorkerTemplate.size: Invalid value: 0: size must be equal or greater than 1'
    """
    others = [(_resource_of(o).key, o) for o in namespace_objects]
    group = str(obj.get("apiVersion") or "").rpartition("/")[0]
    if not any(rt.kind == obj.get("kind") and rt.group == group for rt in (*BUILTINS, *_CUSTOM)):
        return []  # no webhook of JobSet, LWS or Kueue acts on this kind
    rt = _resource_of(obj)
    namespace = str((obj.get("metadata") or {}).get("namespace") or "default")

    def objects(key: str, ns: str) -> list[dict[str, Any]]:
        found = [o for k, o in others if k == key]
        return [o for o in found if not ns or (o.get("metadata") or {}).get("namespace", ns) == ns]

    review = Review("CREATE", rt, json_copy(obj), None, namespace, objects, lambda key: True)
    mutate(review)
    return [err.message for err in validate(review)]
