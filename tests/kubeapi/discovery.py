"""Legacy discovery documents: /api, /api/v1, /apis, /apis/<group>[/<version>], /version."""

from __future__ import annotations

import hashlib
from typing import Any

from .resources import Registry, ResourceType

_SUB_VERBS = {"status": ["get", "patch", "update"], "log": ["get"]}


def _resource_entry(rt: ResourceType) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "name": rt.plural,
        "singularName": rt.singular,
        "namespaced": rt.namespaced,
        "kind": rt.kind,
        "verbs": list(rt.verbs),
        "storageVersionHash": hashlib.sha256(rt.key.encode()).hexdigest()[:11],
    }
    if rt.short_names:
        entry["shortNames"] = list(rt.short_names)
    if rt.categories:
        entry["categories"] = list(rt.categories)
    return entry


def resource_list(registry: Registry, group: str, version: str) -> dict[str, Any] | None:
    types = [rt for rt in registry.all() if rt.group == group and version in rt.versions]
    if not types:
        return None
    resources: list[dict[str, Any]] = []
    for rt in sorted(types, key=lambda r: r.plural):
        resources.append(_resource_entry(rt))
        for sub in sorted(rt.subresources):
            resources.append(
                {
                    "name": f"{rt.plural}/{sub}",
                    "singularName": "",
                    "namespaced": rt.namespaced,
                    "kind": rt.kind,
                    "verbs": ["get"] if rt.read_only else _SUB_VERBS.get(sub, ["get"]),
                }
            )
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": f"{group}/{version}" if group else version,
        "resources": resources,
    }


def _group_entry(name: str, versions: list[str]) -> dict[str, Any]:
    gvs = [{"groupVersion": f"{name}/{v}", "version": v} for v in versions]
    return {"name": name, "versions": gvs, "preferredVersion": gvs[0]}


def api_group(registry: Registry, group: str) -> dict[str, Any] | None:
    versions = registry.groups().get(group)
    if not group or not versions:
        return None
    return {"kind": "APIGroup", "apiVersion": "v1", **_group_entry(group, versions)}


def api_group_list(registry: Registry) -> dict[str, Any]:
    groups = [_group_entry(g, v) for g, v in sorted(registry.groups().items()) if g]
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def api_versions(address: str) -> dict[str, Any]:
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": address}],
    }


def version_info(k8s_version: str) -> dict[str, Any]:
    parts = [*k8s_version.lstrip("v").split("."), "0", "0"][:3]
    return {
        "major": parts[0],
        "minor": parts[1],
        "gitVersion": f"v{parts[0]}.{parts[1]}.{parts[2]}-gke.0",
        "gitCommit": "0" * 40,
        "gitTreeState": "clean",
        "buildDate": "2026-01-01T00:00:00Z",
        "goVersion": "go1.24.0",
        "compiler": "gc",
        "platform": "linux/amd64",
    }
