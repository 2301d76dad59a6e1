"""Metadata-only reads, as kube-apiserver answers an `Accept` header asking for them
(`application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1`, what client-go's
metadata client and informers send): the output media type is negotiated clause by clause
(apiserver `negotiation.NegotiateOutputMediaType`), then the object is transformed
(`handlers.doTransformObject`: `asPartialObjectMetadata`, `asPartialObjectMetadataList`).
Tables (`as=Table`) are not modelled: they are refused here, where the real server serves them."""

from __future__ import annotations

from typing import Any

from . import errors
from .resources import ResourceType

META_GROUP = "meta.k8s.io"
META_VERSIONS = ("v1", "v1beta1")
PARTIAL, PARTIAL_LIST = "PartialObjectMetadata", "PartialObjectMetadataList"
# The media types kube-apiserver's serializers encode (the 406 lists them).
_SERVED = ("application/json", "application/yaml", "application/vnd.kubernetes.protobuf")
_ANY = ("*/*", "application/*")


def negotiate(accept: str) -> tuple[str, str] | None:
    """The transformation an `Accept` header asks for: (kind, group version) such as
    ("PartialObjectMetadataList", "meta.k8s.io/v1"), or None for the object as stored. The
    first acceptable clause wins; none acceptable is 406 NotAcceptable, as kube-apiserver says.

    Example:
        >>> negotiate("application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1")
        ('PartialObjectMetadataList', 'meta.k8s.io/v1')
        >>> negotiate("application/json") is None
        True
    """
    if not accept.strip():
        return None
    for clause in accept.split(","):
        media, *params = [p.strip() for p in clause.split(";")]
        if media.lower() not in (*_SERVED, *_ANY):
            continue
        options = dict(p.split("=", 1) for p in params if "=" in p)
        target = options.get("as")
        if target is None:
            return None
        # What a resource endpoint allows converting to (`AllowsConversion`); any other
        # clause is skipped, as the real negotiation skips it.
        group, version = options.get("g", ""), options.get("v", "")
        if target in (PARTIAL, PARTIAL_LIST) and group == META_GROUP and version in META_VERSIONS:
            return target, f"{group}/{version}"
    raise errors.ApiError(
        406,
        "NotAcceptable",
        f"only the following media types are accepted: {', '.join(_SERVED)}",
    )


def partial_object(obj: dict[str, Any], target: tuple[str, str], rt: ResourceType) -> Any:
    """One object as `asPartialObjectMetadata` serves it (406 when a list was asked for)."""
    kind, group_version = target
    if kind == PARTIAL_LIST:
        raise errors.ApiError(
            406,
            "NotAcceptable",
            f"you requested {PARTIAL_LIST}, but the requested object is not a list "
            f"({_go_type(rt, listed=False)})",
        )
    return {"kind": PARTIAL, "apiVersion": group_version, "metadata": obj.get("metadata") or {}}


def partial_list(
    items: list[dict[str, Any]],
    list_meta: dict[str, Any],
    target: tuple[str, str],
    rt: ResourceType,
) -> dict[str, Any]:
    """A list as `asPartialObjectMetadataList` serves it: each item's metadata only; its
    `items` is null when empty (a nil Go slice without omitempty)."""
    kind, group_version = target
    if kind == PARTIAL:
        raise errors.ApiError(
            406,
            "NotAcceptable",
            f"you requested {PARTIAL}, but the requested object is a list "
            f"({_go_type(rt, listed=True)})",
        )
    partial = [
        {"kind": PARTIAL, "apiVersion": group_version, "metadata": o.get("metadata") or {}}
        for o in items
    ]
    return {
        "kind": PARTIAL_LIST,
        "apiVersion": group_version,
        "metadata": list_meta,
        "items": partial or None,
    }


def _go_type(rt: ResourceType, *, listed: bool) -> str:
    if not rt.builtin:
        return "*unstructured.UnstructuredList" if listed else "*unstructured.Unstructured"
    return f"*v1.{rt.kind}{'List' if listed else ''}"
