"""A fake API server with Kueue and JobSet installed, a LocalQueue, and a client on it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from gkeml_sdk import ApiRetrySettings, Client, KubernetesSettings

FAST_RETRY = ApiRetrySettings(attempts=6, initial_seconds=0.01, max_seconds=0.05)


def queue(name: str, namespace: str = "ml") -> dict[str, Any]:
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "LocalQueue",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"clusterQueue": "acc-cq"},
    }


@pytest.fixture
def cluster(kube_api: Any) -> Any:
    kube_api.create_namespace("gkeml-system")  # the run controller's own (its Lease)
    kube_api.store.put(queue("team-a"))
    kube_api.store.put(
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "WorkloadPriorityClass",
            "metadata": {"name": "acc-low"},
            "value": 100,
        }
    )
    return kube_api


def make_client(server: Any, **options: Any) -> Client:
    """A Client whose backend retries fast (tests inject faults on purpose)."""
    options.setdefault("api_retry", FAST_RETRY)
    options.setdefault("watch_seconds", 30)
    return Client(
        kubernetes=KubernetesSettings(api_client=server.api_client(), namespace="ml", **options)
    )


@pytest.fixture
def client(cluster: Any) -> Iterator[Client]:
    yield make_client(cluster)


FAST_NO_RETRY = ApiRetrySettings(attempts=1)


NAMESPACES = ("default", "ml", "team-b")  # of `two`


@pytest.fixture
def two(kube_api_factory: Any) -> Any:
    """A cluster with two team namespaces, `ml` (team a) and `team-b`, each with its queue."""
    server = kube_api_factory(namespaces=NAMESPACES)
    server.create_namespace("gkeml-system")  # the run controller's own (its Lease)
    for namespace in NAMESPACES[1:]:
        server.store.put(queue("team-a", namespace))
    return server


def track_of(run: Any) -> Any:
    """What the client's run service keeps for the submission `run` names (its `RunTrack`):
    tests look at the record it read and whether it acts for the run."""
    return run._service.track(run.ref)


def record_of(run: Any) -> Any:
    """The run record of `run` as its client's service last read it."""
    return track_of(run).record
