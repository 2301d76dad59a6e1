"""Parsing kube-apiserver URL paths into discovery or resource routes."""

from __future__ import annotations

from dataclasses import dataclass

NAMESPACE_SUBRESOURCES = ("status", "finalize")


@dataclass(frozen=True)
class Route:
    group: str
    version: str
    plural: str
    namespace: str = ""
    name: str | None = None
    subresource: str = ""
    legacy_watch: bool = False


def parse_resource_path(path: str) -> Route | None:
    """`/api/v1/...` or `/apis/<g>/<v>/...` -> Route; None when it is not a resource path."""
    parts = [p for p in path.split("/") if p]
    if len(parts) >= 3 and parts[0] == "api":
        group, version, rest = "", parts[1], parts[2:]
    elif len(parts) >= 4 and parts[0] == "apis":
        group, version, rest = parts[1], parts[2], parts[3:]
    else:
        return None
    legacy_watch = False
    if rest and rest[0] == "watch":  # deprecated /watch/ prefix form
        legacy_watch, rest = True, rest[1:]
    namespace = ""
    if len(rest) >= 3 and rest[0] == "namespaces" and rest[2] not in NAMESPACE_SUBRESOURCES:
        namespace, rest = rest[1], rest[2:]
    if not rest or len(rest) > 3:
        return None
    name = rest[1] if len(rest) >= 2 else None
    sub = rest[2] if len(rest) == 3 else ""
    return Route(group, version, rest[0], namespace, name, sub, legacy_watch)
