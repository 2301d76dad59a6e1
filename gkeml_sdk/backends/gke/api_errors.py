"""What a GKE API failure means: transient (retry it), quota, permission, or another refusal,
from `google.api_core` exceptions and from a finished operation's error. GKE words a lack of
resource quota as 403 PERMISSION_DENIED "Insufficient regional quota to satisfy request: ...",
so the message, not only the code, tells quota from permission."""

from __future__ import annotations

from typing import Any

from gkeml_sdk.errors import GkeError, GkePermissionError, QuotaError, excerpt

_QUOTA_HINT = (
    "raise the quota it names (IAM & Admin > Quotas), use another region or zone, or ask for "
    "Spot or flex-start capacity, which draw on preemptible quota"
)
_PERMISSION_HINT = (
    "grant the caller a role with container.nodePools.* permissions on the cluster's project, "
    "e.g. roles/container.clusterAdmin"
)
_RATE_HINT = (
    "the GKE API is limiting this project's request rate and still did after the retries: "
    "send fewer requests at once (one gkeml command at a time), or wait a minute"
)
_NETWORK_HINT = "check the network path to container.googleapis.com, then retry"
_STOCKOUT_HINT = (
    "the zone has no such VMs free now: try other zones, provisioning='flex-start' or "
    "'queued', or a reservation"
)


class WholeRequestTimeout(TimeoutError):
    """A request whose answer did not arrive whole within its timeout (`GkeClient` bounds
    the whole request; the transport bounds each wait for bytes)."""


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
        WholeRequestTimeout,
    )
    return isinstance(exc, transient)


def as_gke_error(action: str, exc: BaseException, timeout: float = 0) -> GkeError | None:
    """The `gkeml_sdk.errors` exception for a failed request (an API refusal, a transport
    failure, an answer that is not the API's JSON), or None when it is none of these."""
    from google.api_core import exceptions as api
    from google.protobuf import json_format
    from requests import exceptions as http

    if isinstance(exc, http.Timeout | WholeRequestTimeout) or _timed_out(exc):
        return GkeError(
            action,
            reason="TIMEOUT",
            message=f"no answer from the GKE API within {timeout:g} s",
            hint=_NETWORK_HINT,
        )
    if isinstance(exc, http.RequestException):
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return GkeError(action, reason="UNAVAILABLE", message=excerpt(first), hint=_NETWORK_HINT)
    if isinstance(exc, json_format.ParseError | ValueError) and not isinstance(exc, GkeError):
        # The REST transport parses every 2xx body as the method's JSON message; a proxy's
        # or front end's HTML page (or a truncated body) fails there.
        return GkeError(
            action,
            reason="BAD_RESPONSE",
            message=f"the answer is not the GKE API's JSON ({excerpt(str(exc), 120)})",
            hint="a proxy or firewall between here and container.googleapis.com may answer "
            "in its place: check HTTPS_PROXY and the network path",
        )
    if not isinstance(exc, api.GoogleAPICallError):
        return None
    status = int(exc.code or 0)
    reason, message = _status(exc)
    if isinstance(exc, api.TooManyRequests):
        # HTTP 429 is the API's request-rate limit ("Quota exceeded for quota metric 'Write
        # requests'"), already retried with backoff: not a resource quota to raise.
        return GkeError(action, status=status, reason=reason, message=message, hint=_RATE_HINT)
    if "quota" in message.lower():
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
        return str(error["status"]), excerpt(str(error["message"]), 2_000)
    except Exception:
        grpc_code = getattr(exc, "grpc_status_code", None)
        name = grpc_code.name if grpc_code is not None else type(exc).__name__
        return name, excerpt(str(exc.message or exc))


def _timed_out(exc: BaseException) -> bool:
    """requests reports a read timeout inside its connection pool's retries as a
    ConnectionError wrapping urllib3's MaxRetryError(reason=ReadTimeoutError)."""
    from urllib3 import exceptions as pool

    cause = exc.args[0] if exc.args else None
    return isinstance(getattr(cause, "reason", None), pool.TimeoutError)
