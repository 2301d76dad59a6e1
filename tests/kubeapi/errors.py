"""Kubernetes `Status` error objects, raised inside the fake API server and sent as JSON."""

from __future__ import annotations

from typing import Any

from .resources import ResourceType


class ApiError(Exception):
    """An API failure that the handler turns into a `Status` response with `code`."""

    def __init__(
        self,
        code: int,
        reason: str,
        message: str,
        details: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details
        self.headers = headers or {}

    def status(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "code": self.code,
        }
        if self.reason:
            body["reason"] = self.reason
        if self.details is not None:  # kube-apiserver omits empty details
            body["details"] = self.details
        return body


def _details(rt: ResourceType | None, name: str | None, **extra: Any) -> dict[str, Any]:
    details: dict[str, Any] = {}
    if name:
        details["name"] = name
    if rt is not None:
        if rt.group:
            details["group"] = rt.group
        details["kind"] = rt.plural
    details.update(extra)
    return details


def not_found(rt: ResourceType, name: str) -> ApiError:
    return ApiError(404, "NotFound", f'{rt.qualified} "{name}" not found', _details(rt, name))


def resource_not_found() -> ApiError:
    # What kube-apiserver answers for an unknown group/version/resource (e.g. CRD missing).
    return ApiError(404, "NotFound", "the server could not find the requested resource")


def already_exists(rt: ResourceType, name: str) -> ApiError:
    msg = f'{rt.qualified} "{name}" already exists'
    return ApiError(409, "AlreadyExists", msg, _details(rt, name))


def conflict(rt: ResourceType, name: str, why: str) -> ApiError:
    msg = f'Operation cannot be fulfilled on {rt.qualified} "{name}": {why}'
    return ApiError(409, "Conflict", msg, _details(rt, name))


def precondition_failed(rt: ResourceType, name: str, why: str) -> ApiError:
    # rest.BeforeDelete names the kind, not the resource: "Deployment.apps", details.kind
    # "Deployment", unlike every other Conflict (apiserver/pkg/registry/rest/delete.go).
    qualified = f"{rt.kind}.{rt.group}" if rt.group else rt.kind
    details = {"name": name, **({"group": rt.group} if rt.group else {}), "kind": rt.kind}
    msg = f'Operation cannot be fulfilled on {qualified} "{name}": {why}'
    return ApiError(409, "Conflict", msg, details)


def stale(rt: ResourceType, name: str) -> ApiError:
    why = (
        "the object has been modified; please apply your changes to the latest version and "
        "try again"
    )
    return conflict(rt, name, why)


def invalid(rt: ResourceType, name: str, causes: list[dict[str, str]]) -> ApiError:
    # utilerrors.Aggregate prints identical messages once; the causes keep every one.
    parts = list(
        dict.fromkeys(
            f"{c['field']}: {c['message']}" if c.get("field") else c["message"] for c in causes
        )
    )
    summary = parts[0] if len(parts) == 1 else "[" + ", ".join(parts) + "]"
    msg = f'{rt.kind}{"." + rt.group if rt.group else ""} "{name}" is invalid: {summary}'
    return ApiError(422, "Invalid", msg, _details(rt, name, kind=rt.kind, causes=causes))


def bad_request(message: str) -> ApiError:
    return ApiError(400, "BadRequest", message)


def forbidden(rt: ResourceType | None, verb: str, resource: str, namespace: str) -> ApiError:
    group = rt.group if rt else ""
    what = f"{resource}.{group}" if group else resource
    msg = (
        f'{what} is forbidden: User "system:serviceaccount:default:gkeml-test" cannot {verb} '
        f'resource "{resource}" in API group "{group}" in the namespace "{namespace}"'
    )
    return ApiError(403, "Forbidden", msg, _details(rt, None))


def method_not_allowed(message: str = "the server does not allow this method") -> ApiError:
    return ApiError(405, "MethodNotAllowed", message)


def unsupported_media_type(content_type: str) -> ApiError:
    msg = (
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
    )
    return ApiError(415, "UnsupportedMediaType", msg, {"causes": [{"message": content_type}]})


def expired(message: str) -> ApiError:
    return ApiError(410, "Expired", message)


def too_many_requests(retry_after: float) -> ApiError:
    seconds = max(1, round(retry_after))
    return ApiError(
        429,
        "TooManyRequests",
        "Too many requests, please try again later.",
        {"retryAfterSeconds": seconds},
        {"Retry-After": str(seconds)},
    )


def internal_error(message: str) -> ApiError:
    return ApiError(
        500,
        "InternalError",
        f"Internal error occurred: {message}",
        {"causes": [{"message": message}]},
    )


def rv_set_on_create() -> ApiError:
    # The etcd3 storage layer's error: a 500 without a reason, exactly as clients see it.
    return ApiError(500, "", "resourceVersion should not be set on objects to be created")
