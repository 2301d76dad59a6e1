"""`GkeClient`: creates, resizes and deletes node pools of one cluster through
`google-cloud-container`, waiting for each long-running operation to finish."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar, cast

from tenacity import (
    RetryCallState,
    Retrying,
    retry_if_exception,
    stop_after_attempt,
    wait_random_exponential,
)
from tenacity.stop import stop_base

from gkeml_sdk.backends.gke.api_errors import (
    WholeRequestTimeout,
    as_gke_error,
    is_transient,
    operation_error,
)
from gkeml_sdk.errors import ConfigError, GkeError, SpecError

if TYPE_CHECKING:
    from google.cloud import container_v1

    from gkeml_sdk.nodepools.model import NodePool

log = logging.getLogger(__name__)
T = TypeVar("T")


class GkeClient:
    """Node pools of cluster `cluster` in `project` and `location` (a region or a zone).

    `credentials` (google.auth) default to Application Default Credentials; `client` is an
    existing `container_v1.ClusterManagerClient`, else one is made with `transport` and
    `client_options`. Transient failures (429 rate limits, 5xx, dropped connections, requests
    that get no answer within `request_timeout_seconds`) are retried up to `attempts`
    requests; quota and permission failures raise `QuotaError` and `GkePermissionError`, and
    every other failure, the transport's included, a `GkeError`. `timeout_seconds` bounds
    the wall time (read from `clock`) of waiting for one operation, its retries included.

    Example:
        >>> from gkeml_sdk import Accelerator
        >>> from gkeml_sdk import GkeClient, NodePool
        >>> gke = GkeClient("my-project", "us-central1", "ml")  # doctest: +SKIP
        >>> gke.create(NodePool.for_accelerator(Accelerator("l4"), name="l4"))  # doctest: +SKIP
        ['l4']
    """

    def __init__(
        self,
        project: str,
        location: str,
        cluster: str,
        *,
        credentials: Any = None,
        client: container_v1.ClusterManagerClient | None = None,
        transport: str | None = None,
        client_options: dict[str, Any] | None = None,
        attempts: int = 6,
        backoff_seconds: float = 30.0,
        poll_seconds: float = 5.0,
        timeout_seconds: float = 3600.0,
        request_timeout_seconds: float = 60.0,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.project, self.location, self.cluster = project, location, cluster
        if client is None:
            from gkeml_sdk.backends.gke.library import DefaultCredentialsError, container_v1

            try:
                client = container_v1.ClusterManagerClient(
                    credentials=credentials, transport=transport, client_options=client_options
                )
            except DefaultCredentialsError as exc:
                why = str(exc).splitlines()[0].rstrip(".")
                raise ConfigError(
                    f"no Google credentials for the GKE API ({why}): sign in with `gcloud auth "
                    "application-default login`, or set GOOGLE_APPLICATION_CREDENTIALS to a "
                    "service account key file"
                ) from None
        self.client = client
        self.attempts = attempts
        self.backoff_seconds = backoff_seconds
        self.poll_seconds = poll_seconds
        self.timeout_seconds = timeout_seconds
        self.request_timeout_seconds = request_timeout_seconds
        self._sleep = sleep
        self._clock = clock

    @property
    def parent(self) -> str:
        """The cluster's resource name: projects/P/locations/L/clusters/C."""
        return f"projects/{self.project}/locations/{self.location}/clusters/{self.cluster}"

    def create(self, pool: NodePool) -> list[str]:
        """Create every pool of `pool` (one per slice), wait until GKE has them; their names.

        Raises `SpecError` before any request when a pool that must sit in one zone names
        none in a regional cluster, whose default node locations are several zones.
        """
        if pool.single_zone and not pool.zones and not _is_zone(self.location):
            raise SpecError(
                f"node pool {pool.name!r} names no zone in regional cluster {self.cluster}",
                rule="compact placement and multi-host TPU slices keep all nodes in one zone, "
                "and a regional cluster's pools default to several",
                fix=f"zones=('{self.location}-a',) or another zone of {self.location} with "
                "the hardware",
                field="zones",
            )
        from gkeml_sdk.backends.gke.messages import node_pool_requests

        # Start every slice's pool before waiting: GKE creates them side by side.
        requests = node_pool_requests(pool, self.parent)
        started = [(r.node_pool.name, self._create(r)) for r in requests]
        for name, operation in started:
            self._wait(f"create node pool {name}", operation)
        return [name for name, _ in started]

    def resize(self, name: str, nodes: int) -> None:
        """Set pool `name` to `nodes` nodes now (the autoscaler may change it later)."""
        action = f"resize node pool {name} to {nodes}"
        operation = self._call(
            action,
            lambda timeout: self.client.set_node_pool_size(
                request={"name": self._pool(name), "node_count": nodes},
                retry=None,
                timeout=timeout,
            ),
        )
        self._wait(action, operation)

    def set_autoscaling(self, name: str, min_nodes: int, max_nodes: int) -> None:
        """Let the autoscaler keep pool `name` between `min_nodes` and `max_nodes` nodes."""
        action = f"set autoscaling of node pool {name} to {min_nodes}..{max_nodes}"
        from gkeml_sdk.backends.gke.library import container_v1

        # The call replaces the pool's whole autoscaling: keep its location policy.
        current = self.get(name).autoscaling
        bounds = container_v1.NodePoolAutoscaling(
            enabled=True,
            total_min_node_count=min_nodes,
            total_max_node_count=max_nodes,
            location_policy=current.location_policy,
        )
        operation = self._call(
            action,
            lambda timeout: self.client.set_node_pool_autoscaling(
                request={"name": self._pool(name), "autoscaling": bounds},
                retry=None,
                timeout=timeout,
            ),
        )
        self._wait(action, operation)

    def delete(self, name: str) -> None:
        """Delete pool `name` and its nodes; return when GKE has."""
        action = f"delete node pool {name}"
        operation = self._call(
            action,
            lambda timeout: self.client.delete_node_pool(
                name=self._pool(name), retry=None, timeout=timeout
            ),
        )
        self._wait(action, operation)

    def get(self, name: str) -> container_v1.NodePool:
        """Pool `name` as GKE reports it (status, node count, config)."""
        return self._call(
            f"get node pool {name}",
            lambda timeout: self.client.get_node_pool(
                name=self._pool(name), retry=None, timeout=timeout
            ),
        )

    def _create(self, request: container_v1.CreateNodePoolRequest) -> container_v1.Operation:
        sent: list[object] = []

        def send(timeout: float) -> container_v1.Operation:
            sent.append(request)
            return self.client.create_node_pool(request=request, retry=None, timeout=timeout)

        name = request.node_pool.name
        try:
            return self._call(f"create node pool {name}", send)
        except GkeError as err:
            # A retry that finds the pool: an earlier attempt reached GKE and only its answer
            # was lost, so follow that attempt's operation instead of failing.
            if err.reason != "ALREADY_EXISTS" or len(sent) < 2:
                raise
            earlier = self._create_operation(name)
            if earlier is None:
                raise
            return earlier

    def _create_operation(self, name: str) -> container_v1.Operation | None:
        target = f"{self.parent}/nodePools/{name}"
        location = f"projects/{self.project}/locations/{self.location}"
        listed = self._call(
            f"list operations for node pool {name}",
            lambda timeout: self.client.list_operations(
                parent=location, retry=None, timeout=timeout
            ),
        )
        creates = [
            op
            for op in listed.operations
            if op.operation_type.name == "CREATE_NODE_POOL" and op.target_link.endswith(target)
        ]
        return creates[-1] if creates else None

    def _pool(self, name: str) -> str:
        return f"{self.parent}/nodePools/{name}"

    def _wait(self, action: str, operation: container_v1.Operation) -> None:
        from gkeml_sdk.backends.gke.library import container_v1

        done = container_v1.Operation.Status.DONE
        name = f"projects/{self.project}/locations/{self.location}/operations/{operation.name}"
        deadline = self._clock() + self.timeout_seconds
        while operation.status != done:
            left = deadline - self._clock()
            if left <= 0:
                raise GkeError(
                    action,
                    reason="TIMEOUT",
                    message=f"operation {operation.name} still {operation.status.name} "
                    f"after {self.timeout_seconds:.0f} s",
                    hint="it goes on in GKE: check it with gcloud container operations describe",
                )
            log.info("%s: operation %s %s", action, operation.name, operation.status.name)
            self._sleep(min(self.poll_seconds, left))
            operation = self._call(
                action,
                lambda timeout: self.client.get_operation(name=name, retry=None, timeout=timeout),
                deadline=deadline,
            )
        failure = operation_error(action, operation)
        if failure is not None:
            raise failure

    def _call(self, action: str, request: Callable[[float], T], deadline: float | None = None) -> T:
        """`request(timeout)`, retried while transient, within `attempts` and `deadline` (so a
        wait overshoots `timeout_seconds` by one request's timeout at most)."""

        def send() -> T:
            return within(self.request_timeout_seconds, request)

        retrying = Retrying(
            retry=retry_if_exception(is_transient),
            stop=stop_after_attempt(self.attempts) | _PastDeadline(self._clock, deadline),
            wait=wait_random_exponential(multiplier=0.5, max=self.backoff_seconds),
            sleep=self._sleep,
            reraise=True,
        )
        try:
            return retrying(send)
        except Exception as exc:
            error = as_gke_error(action, exc, self.request_timeout_seconds)
            if error is None:
                raise
            raise error from None


def within(seconds: float, request: Callable[[float], T]) -> T:
    """`request(seconds)`, given `seconds` in all: the transport's timeout bounds each wait
    for bytes, so an answer trickling in a byte at a time would hold the caller for as long
    as it trickles. The request runs in a daemon thread, left to end on its own when late.

    Example:
        >>> within(5.0, lambda timeout: f"answered within {timeout:g} s")
        'answered within 5 s'
    """
    done = threading.Event()
    outcome: list[tuple[bool, Any]] = []

    def run() -> None:
        try:
            outcome.append((True, request(seconds)))
        except BaseException as exc:  # handed to the caller, whatever it is
            outcome.append((False, exc))
        finally:
            done.set()

    threading.Thread(target=run, name="gke-request", daemon=True).start()
    if not done.wait(seconds):
        raise WholeRequestTimeout(f"the answer did not arrive whole within {seconds:g} s")
    answered, value = outcome[0]
    if answered:
        return cast(T, value)
    raise value


class _PastDeadline(stop_base):
    """Stop retrying once `clock` reads `deadline` (never, when it is None)."""

    def __init__(self, clock: Callable[[], float], deadline: float | None) -> None:
        self.clock, self.deadline = clock, deadline

    def __call__(self, retry_state: RetryCallState) -> bool:
        return self.deadline is not None and self.clock() >= self.deadline


def _is_zone(location: str) -> bool:
    """True for a zone (us-central1-a), False for a region (us-central1)."""
    return location.count("-") >= 2
