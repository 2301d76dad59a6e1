"""Resource types served by the fake API server: built-in kinds and CRD-defined kinds."""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from typing import Any

ALL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
READ_VERBS = ("get", "list", "watch")


@dataclass(frozen=True)
class ResourceType:
    """One REST resource (e.g. `jobsets.jobset.x-k8s.io`) and the versions it is served at."""

    group: str
    versions: tuple[str, ...]  # served versions, preferred first
    plural: str
    singular: str
    kind: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    subresources: frozenset[str] = frozenset()
    builtin: bool = True
    read_only: bool = False
    categories: tuple[str, ...] = ()
    # version -> openAPIV3Schema, for CRDs only (built-ins use kubernetes-validate).
    schemas: dict[str, dict[str, Any]] = field(default_factory=dict, compare=False, hash=False)
    crd_name: str = ""
    # version -> the CRD's `selectableFields` paths (field selectors beyond metadata.*).
    selectable: dict[str, frozenset[str]] = field(default_factory=dict, compare=False, hash=False)

    @property
    def key(self) -> str:
        return f"{self.plural}.{self.group}" if self.group else self.plural

    @property
    def qualified(self) -> str:
        """How kube-apiserver names the resource in messages (`jobs.batch`, `pods`)."""
        return self.key

    @property
    def has_status(self) -> bool:
        return "status" in self.subresources

    def api_version(self, version: str) -> str:
        return f"{self.group}/{version}" if self.group else version

    @property
    def verbs(self) -> tuple[str, ...]:
        return READ_VERBS if self.read_only else ALL_VERBS


def _b(
    group: str,
    version: str,
    plural: str,
    kind: str,
    namespaced: bool = True,
    short: tuple[str, ...] = (),
    sub: tuple[str, ...] = (),
    read_only: bool = False,
    categories: tuple[str, ...] = (),
) -> ResourceType:
    return ResourceType(
        group,
        (version,),
        plural,
        kind.lower(),
        kind,
        namespaced,
        short,
        frozenset(sub),
        True,
        read_only,
        categories,
    )


BUILTINS: tuple[ResourceType, ...] = (
    _b("", "v1", "namespaces", "Namespace", False, ("ns",), ("status",)),
    _b("", "v1", "nodes", "Node", False, ("no",), ("status",)),
    _b("", "v1", "pods", "Pod", True, ("po",), ("status", "log", "proxy"), categories=("all",)),
    _b("", "v1", "configmaps", "ConfigMap", True, ("cm",)),
    _b("", "v1", "services", "Service", True, ("svc",), ("status",), categories=("all",)),
    _b("", "v1", "secrets", "Secret", True),
    _b("", "v1", "events", "Event", True, ("ev",)),
    _b("", "v1", "podtemplates", "PodTemplate", True),
    _b("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", True, ("pvc",), ("status",)),
    _b("", "v1", "persistentvolumes", "PersistentVolume", False, ("pv",), ("status",)),
    _b("storage.k8s.io", "v1", "storageclasses", "StorageClass", False, ("sc",)),
    _b("batch", "v1", "jobs", "Job", True, (), ("status",), categories=("all",)),
    _b(
        "apps",
        "v1",
        "deployments",
        "Deployment",
        True,
        ("deploy",),
        ("status",),
        categories=("all",),
    ),
    # As `kubectl api-resources` lists it on a real server (NCCL installers, `gkeml setup`).
    _b("apps", "v1", "daemonsets", "DaemonSet", True, ("ds",), ("status",), categories=("all",)),
    _b(
        "autoscaling",
        "v2",
        "horizontalpodautoscalers",
        "HorizontalPodAutoscaler",
        True,
        ("hpa",),
        ("status",),
        categories=("all",),
    ),
    _b("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", True, ("pdb",), ("status",)),
    _b("", "v1", "resourcequotas", "ResourceQuota", True, ("quota",), ("status",)),
    _b("", "v1", "limitranges", "LimitRange", True, ("limits",)),
    _b("", "v1", "serviceaccounts", "ServiceAccount", True, ("sa",)),
    _b("coordination.k8s.io", "v1", "leases", "Lease", True),
    _b("networking.k8s.io", "v1", "networkpolicies", "NetworkPolicy", True, ("netpol",)),
    _b("rbac.authorization.k8s.io", "v1", "roles", "Role", True),
    _b("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding", True),
    _b("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", False),
    _b("rbac.authorization.k8s.io", "v1", "clusterrolebindings", "ClusterRoleBinding", False),
    _b("scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", False, ("pc",)),
    # Built in and served by default from Kubernetes 1.34 (DRA GA).
    _b("resource.k8s.io", "v1", "resourceclaimtemplates", "ResourceClaimTemplate", True),
    _b("resource.k8s.io", "v1", "resourceclaims", "ResourceClaim", True, (), ("status",)),
    _b("resource.k8s.io", "v1", "resourceslices", "ResourceSlice", False),
    _b("resource.k8s.io", "v1", "deviceclasses", "DeviceClass", False),
    _b(
        "apiextensions.k8s.io",
        "v1",
        "customresourcedefinitions",
        "CustomResourceDefinition",
        False,
        ("crd", "crds"),
        ("status",),
        read_only=True,
    ),
)


_VERSION_RE = re.compile(r"^v(\d+)(?:(alpha|beta)(\d+))?$")


def version_priority(version: str) -> tuple[int, int, int]:
    """Sort key (descending) that mirrors kube-aware version ordering: GA > beta > alpha."""
    m = _VERSION_RE.match(version)
    if not m:
        return (0, 0, 0)
    stability = {"": 3, "beta": 2, "alpha": 1}[m.group(2) or ""]
    return (stability, int(m.group(1)), int(m.group(3) or 0))


def resource_from_crd(crd: dict[str, Any]) -> ResourceType:
    spec = crd["spec"]
    names = spec["names"]
    served = [v for v in spec["versions"] if v.get("served", True)]
    served.sort(key=lambda v: version_priority(v["name"]), reverse=True)
    subs: set[str] = set()
    schemas: dict[str, dict[str, Any]] = {}
    selectable: dict[str, frozenset[str]] = {}
    for v in served:
        subs.update((v.get("subresources") or {}).keys())
        schemas[v["name"]] = (v.get("schema") or {}).get("openAPIV3Schema") or {}
        paths = (f["jsonPath"].lstrip(".") for f in v.get("selectableFields") or ())
        selectable[v["name"]] = frozenset(paths)
    # The scale subresource is not implemented, so it is not advertised either.
    subs.discard("scale")
    return ResourceType(
        group=spec["group"],
        versions=tuple(v["name"] for v in served),
        plural=names["plural"],
        singular=names.get("singular") or names["kind"].lower(),
        kind=names["kind"],
        namespaced=spec.get("scope", "Namespaced") == "Namespaced",
        short_names=tuple(names.get("shortNames") or ()),
        subresources=frozenset(subs),
        builtin=False,
        categories=tuple(names.get("categories") or ()),
        schemas=schemas,
        crd_name=crd["metadata"]["name"],
        selectable=selectable,
    )


class Registry:
    """Thread-safe lookup of resource types by (group, version, plural) or by a loose name."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._types: dict[str, ResourceType] = {rt.key: rt for rt in BUILTINS}

    def add(self, rt: ResourceType) -> None:
        with self._lock:
            self._types[rt.key] = rt

    def remove(self, key: str) -> ResourceType | None:
        with self._lock:
            return self._types.pop(key, None)

    def all(self) -> list[ResourceType]:
        with self._lock:
            return list(self._types.values())

    def get(self, group: str, version: str, plural: str) -> ResourceType | None:
        with self._lock:
            rt = self._types.get(f"{plural}.{group}" if group else plural)
        return rt if rt is not None and version in rt.versions else None

    def by_key(self, key: str) -> ResourceType | None:
        with self._lock:
            return self._types.get(key)

    def resolve(self, name: str) -> ResourceType:
        """Find a type by `plural.group`, plural, kind, singular or short name (tests' helper)."""
        with self._lock:
            if name in self._types:
                return self._types[name]
            low = name.lower()
            hits = [
                rt
                for rt in self._types.values()
                if low in (rt.plural, rt.singular, rt.kind.lower(), *rt.short_names)
                or low == f"{rt.kind.lower()}.{rt.group}"
            ]
        builtin = [rt for rt in hits if rt.builtin]
        if len(builtin) == 1 or len(hits) == 1:
            return builtin[0] if builtin else hits[0]
        if not hits:
            raise KeyError(f"unknown resource {name!r}")
        raise KeyError(f"ambiguous resource {name!r}: use one of {[rt.key for rt in hits]}")

    def groups(self) -> dict[str, list[str]]:
        """group -> served versions (preferred first), for discovery."""
        out: dict[str, list[str]] = {}
        for rt in self.all():
            versions = out.setdefault(rt.group, [])
            for v in rt.versions:
                if v not in versions:
                    versions.append(v)
        for versions in out.values():
            versions.sort(key=version_priority, reverse=True)
        return out
