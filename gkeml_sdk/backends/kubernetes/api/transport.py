"""HTTP to the Kubernetes API through the `kubernetes` package's ApiClient, with tenacity
retries for transient faults and clear errors for everything else."""

from __future__ import annotations

import json
import logging
import random
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from tenacity import RetryCallState, Retrying, retry_if_exception_type, stop_after_attempt

from gkeml_sdk.core.rules import check_number
from gkeml_sdk.errors import ClusterError, NotFoundError

log = logging.getLogger(__name__)

# What client-go's metadata client asks for: a list's items (or a watch's objects) with their
# metadata only (PartialObjectMetadata), none of their data or spec.
METADATA_ONLY = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
UNAVAILABLE = "Unavailable"  # the reason of a ClusterError raised after transient retries ran out
TRANSIENT_STATUS = frozenset({429, 500, 502, 503, 504})
HINTS = {
    400: "the request was malformed; if your spec validated, this is a gkeml bug: please report it",
    401: "the cluster rejected your credentials: refresh them, e.g. "
    "`gcloud container clusters get-credentials CLUSTER --location LOCATION`",
    403: "your account lacks permission (RBAC) for this; ask a cluster admin for access to the "
    "namespace or use one you may write to",
    404: "it does not exist (check the name and namespace)",
    409: "it changed or already exists",
    422: "the API server rejected the object; if your spec validated, this is a gkeml bug: "
    "please report it with the rendered YAML",
}


_ADMISSION_WEBHOOK = re.compile(r'admission webhook "([^"]+)" denied the request')


class TransientError(Exception):
    """A fault worth retrying: 429/5xx, a reset connection or a timeout."""

    def __init__(self, what: str, retry_after: float | None = None) -> None:
        super().__init__(what)
        self.retry_after = retry_after


@dataclass(frozen=True)
class ApiRetrySettings:
    """How hard to retry transient Kubernetes API faults (429/5xx, resets, timeouts): up to
    `attempts` requests in all, capped exponential backoff with full jitter in between, or
    the server's `Retry-After` up to `max_retry_after` seconds. (Resubmitting a run after
    infrastructure loss is `RetryPolicy`, another thing.)

    Example:
        >>> from gkeml_sdk import ApiRetrySettings, KubernetesSettings
        >>> KubernetesSettings(api_retry=ApiRetrySettings(attempts=3)).api_retry.attempts
        3
    """

    attempts: int = 8
    initial_seconds: float = 0.2
    max_seconds: float = 10.0
    max_retry_after: float = 60.0

    def __post_init__(self) -> None:
        check_number("attempts", self.attempts, low=1, integer=True)
        for name in ("initial_seconds", "max_seconds", "max_retry_after"):
            check_number(name, getattr(self, name))


class Transport:
    """Sends requests through an `kubernetes.client.ApiClient`; retries only transient faults.

    Example:
        >>> t = Transport(api_client)  # doctest: +SKIP
        >>> t.call("GET", "/api/v1/namespaces/default", action="read namespace")  # doctest: +SKIP
    """

    def __init__(
        self,
        api_client: Any,
        *,
        api_retry: ApiRetrySettings | None = None,
        request_timeout: float = 30.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.api_client = api_client  # used as given: its settings belong to its owner
        self.api_retry = api_retry or ApiRetrySettings()
        self.request_timeout = request_timeout
        self._sleep = sleep
        self.requests_sent = 0  # every HTTP request, retries included

    def call(
        self,
        method: str,
        path: str,
        *,
        action: str,
        query: Sequence[tuple[str, str]] = (),
        body: Any = None,
        content_type: str = "application/json",
        ok_statuses: frozenset[int] = frozenset(),
        accept: str = "application/json",
    ) -> Any:
        """One request, retried while transient. Returns parsed JSON (or text), or None for
        a status listed in `ok_statuses` (e.g. 404 when deleting). `accept`: the media type
        asked for (`METADATA_ONLY` for objects' metadata only)."""

        def once() -> Any:
            response = self._send(
                method, path, query, body, content_type, self.request_timeout, accept
            )
            try:
                raw = response.read()
            except Exception as exc:  # a reset while reading the body is transient too
                raise TransientError(f"{action}: connection lost: {exc}") from exc
            status = response.status
            if 200 <= status < 300:
                text = raw.decode() if isinstance(raw, bytes) else str(raw or "")
                return _parse(text)
            if status in ok_statuses:
                return None
            self._raise_for(status, raw, action, response)

        return self._retrying(once)

    def open_stream(
        self, path: str, *, action: str, query: Sequence[tuple[str, str]], timeout: float | None
    ) -> Any:
        """Open a streaming GET (watch, log follow); returns the urllib3 response. Opening is
        retried like `call`; reading the stream is the caller's business."""

        def once() -> Any:
            response = self._send("GET", path, query, None, "application/json", timeout)
            if response.status >= 300:
                self._raise_for(response.status, response.read(), action, response)
            return response.response

        return self._retrying(once)

    def _retrying(self, fn: Callable[[], Any]) -> Any:
        retrying = Retrying(
            stop=stop_after_attempt(self.api_retry.attempts),
            wait=self._wait,
            retry=retry_if_exception_type(TransientError),
            sleep=self._sleep,
            reraise=True,
            before_sleep=lambda state: log.info("retrying after %s", state.outcome.exception()),  # type: ignore[union-attr]
        )
        try:
            return retrying(fn)
        except TransientError as exc:
            raise ClusterError(
                str(exc),
                reason=UNAVAILABLE,
                message=f"gave up after {self.api_retry.attempts} attempts",
                hint="the API server kept failing; check the cluster's health and try again",
            ) from None

    def _wait(self, state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        if isinstance(exc, TransientError) and exc.retry_after is not None:
            return min(exc.retry_after, self.api_retry.max_retry_after)
        cap = min(
            self.api_retry.max_seconds, self.api_retry.initial_seconds * 2**state.attempt_number
        )
        return random.uniform(0, cap)

    def _send(
        self,
        method: str,
        path: str,
        query: Sequence[tuple[str, str]],
        body: Any,
        content_type: str,
        timeout: float | None,
        accept: str = "application/json",
    ) -> Any:
        import urllib3

        headers = {"Accept": accept, "Content-Type": content_type}
        _, url, headers, payload, _ = self.api_client.param_serialize(
            method=method,
            resource_path=path,
            query_params=list(query),
            header_params=headers,
            body=body,
            auth_settings=["BearerToken"],
        )
        self.requests_sent += 1
        try:
            return _request(self.api_client, method, url, headers, payload, timeout)
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            raise TransientError(f"{method} {path}: {type(exc).__name__}: {exc}") from exc

    def _raise_for(self, status: int, raw: Any, action: str, response: Any) -> None:
        text = raw.decode(errors="replace") if isinstance(raw, bytes) else str(raw or "")
        detail = _parse(text) if text else {}
        reason = detail.get("reason", "") if isinstance(detail, dict) else ""
        message = detail.get("message", text) if isinstance(detail, dict) else text
        if status in TRANSIENT_STATUS:
            retry_after = _retry_after(response.getheader("Retry-After"))
            raise TransientError(f"{action}: {status} {reason or message}", retry_after)
        error = NotFoundError if status == 404 else ClusterError
        hint = HINTS.get(status, "")
        webhook = _ADMISSION_WEBHOOK.match(message)
        if webhook:
            # LWS's and Kueue's webhooks answer 403 with no details: a refusal, not RBAC.
            hint = (
                f"the admission webhook {webhook.group(1)} refused the object (this is not a "
                "permission problem); if your spec validated, this is a gkeml bug: please "
                "report it with the rendered YAML"
            )
        raise error(action, status=status, reason=reason, message=message, hint=hint)


def _request(
    api_client: Any, method: str, url: str, headers: dict[str, str], body: Any, timeout: Any
) -> Any:
    """Send one request through the ApiClient's own connection pool with urllib3's retries off
    for this request only: one retry policy, ours. (`ApiClient.call_api` would apply the
    pool's retries, which would retry 429/503 and resets out of sight, uncounted and
    unbounded by `ApiRetrySettings`; turning them off on the pool would change an embedder's
    client.) Bodies are encoded as `call_api` does: JSON unless already text."""
    import urllib3
    from kubernetes.client.rest import RESTResponse

    payload = body if body is None or isinstance(body, str | bytes) else json.dumps(body)
    response = api_client.rest_client.pool_manager.request(
        method,
        url,
        body=payload,
        headers=headers,
        timeout=urllib3.Timeout(total=timeout) if timeout else None,
        preload_content=False,
        retries=False,
    )
    return RESTResponse(response)


def _parse(text: str) -> Any:
    if not text:
        return {}
    try:
        return json.loads(text)
    except ValueError:
        return text


def _retry_after(value: str | None) -> float | None:
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None
