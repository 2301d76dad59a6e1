"""What a GKE API failure means: transient (retry it), quota, permission, or another refusal,
from `google.api_core` exceptions and from a finished operation's error. GKE words a lack of
resource quota as 403 PERMISSION_DENIED "Insufficient regional quota to satisfy request: ...",
so the message, not only the code, tells quota from permission."""

from __future__ import annotations

from typing import Any

from gkeml_sdk.errors import GkeError, GkePermissionError, QuotaError

_QUOTA_HINT = (
    "raise the quota it names (IAM & Admin > Quotas), use another region or zone, or ask for "
    "Spot or flex-start capacity, which draw on preemptible quota"
)
_PERMISSION_HINT = (
    "grant the caller a role with container.nodePools.* permissions on the cluster's project, "
    "e.g. roles/container.clusterAdmin"
)
_STOCKOUT_HINT = (
    "the zone has no such VMs free now: try other zones, provisioning='flex-start' or "
    "'queued', or a reservation"
)


def is_transient(exc: BaseException) -> bool:
    """True for failures worth retrying: 429 rate limits, 5xx, dropped connections."""
    from google.api_core import exceptions as api
    from requests import exceptions as http

    transient = (
        api.TooManyRequests,
        api.InternalServerError,
        api.BadGateway,
        api.ServiceUnavailable,
        api.GatewayTimeout,
        api.DeadlineExceeded,
        http.ConnectionError,
        http.Timeout,
    )
    return isinstance(exc, transient)


def as_gke_error(action: str, exc: BaseException) -> GkeError | None:
    """The `gkeml_sdk.errors` exception for an API failure, or None when it is not one."""
    from google.api_core import exceptions as api

    if not isinstance(exc, api.GoogleAPICallError):
        return None
    status = int(exc.code or 0)
    reason, message = _status(exc)
    if "quota" in message.lower() or isinstance(exc, api.TooManyRequests):
        return QuotaError(action, status=status, reason=reason, message=message, hint=_QUOTA_HINT)
    if isinstance(exc, api.Forbidden | api.Unauthorized):
        return GkePermissionError(
            action, status=status, reason=reason, message=message, hint=_PERMISSION_HINT
        )
    return GkeError(action, status=status, reason=reason, message=message)


def operation_error(action: str, operation: Any) -> GkeError | None:
    """The error of a finished `container_v1.Operation`, or None when it succeeded."""
    from google.rpc import code_pb2

    code = operation.error.code if operation.error else 0
    message = (operation.error.message if operation.error else "") or operation.status_message
    if not code and not message:
        return None
    reason = code_pb2.Code.Name(code) if code in code_pb2.Code.values() else "UNKNOWN"
    if "quota" in message.lower():
        return QuotaError(action, reason=reason, message=message, hint=_QUOTA_HINT)
    if code == code_pb2.PERMISSION_DENIED:
        return GkePermissionError(action, reason=reason, message=message, hint=_PERMISSION_HINT)
    stockout = "resource_pool_exhausted" in message.lower() or "stockout" in message.lower()
    return GkeError(action, reason=reason, message=message, hint=_STOCKOUT_HINT if stockout else "")


def _status(exc: Any) -> tuple[str, str]:
    """The API's status word (PERMISSION_DENIED, ...) and message, as its JSON error carries
    them (api_core prefixes the message with the method and URL)."""
    try:
        error = exc.response.json()["error"]
        return str(error["status"]), str(error["message"])
    except Exception:
        grpc_code = getattr(exc, "grpc_status_code", None)
        name = grpc_code.name if grpc_code is not None else type(exc).__name__
        return name, str(exc.message or exc)
