"""Users' requests routed as the compiled route routes them: one pick by weight per request,
every retry to the destination picked, so a lost primary's share fails until the route
moves, however many retries the route has."""

from __future__ import annotations

import random
import threading
import time
from collections import Counter

from gkeml_sdk import load_specs
from gkeml_sdk.backends.kubernetes.standby.user_traffic import (
    FAILED,
    UserTraffic,
    pick,
    route_split,
    route_tries,
)
from gkeml_sdk.errors import ClusterError
from gkeml_sdk.tenancy.routes import RETRY_ATTEMPTS, http_route, virtual_service

A = load_specs("examples/tenants.yaml")[0]
MODEL, STANDBY = "llama-2-7b", "llama-2-7b-standby"


class Cluster:
    """Which destinations serve, and every try sent to each."""

    def __init__(self, serving: set[str]) -> None:
        self.serving = serving
        self.tries: list[str] = []

    def __call__(self, destination: str) -> bool:
        self.tries.append(destination)
        return destination in self.serving


def test_a_lost_primarys_share_fails_with_every_retry_sent_to_it() -> None:
    route = virtual_service(A)  # 95/5: the route has not moved yet
    cluster = Cluster({STANDBY})
    users = UserTraffic(lambda: route, MODEL, cluster, seed=7)
    outcomes = [users.request() for _ in range(400)]
    expected = random.Random(7)  # the same draws, by the route's weights
    chosen = [pick(route_split(route, MODEL), expected) for _ in range(400)]
    # Every request the router sent to the primary failed; the standby's share was served.
    assert outcomes == [FAILED if c == MODEL else STANDBY for c in chosen]
    tries = Counter(cluster.tries)
    assert tries[MODEL] == chosen.count(MODEL) * (1 + RETRY_ATTEMPTS)  # retries stayed there
    assert tries[STANDBY] == chosen.count(STANDBY)  # one try each: served
    assert 0 < chosen.count(STANDBY) < chosen.count(MODEL)


def test_once_the_route_moves_every_request_is_served() -> None:
    route = virtual_service(A, failed_over=[MODEL])
    users = UserTraffic(lambda: route, MODEL, Cluster({STANDBY}))
    assert {users.request() for _ in range(50)} == {STANDBY}
    assert users.failover(0.0, float("inf")) == (50, 0)


def test_an_httproute_has_no_retries_and_a_route_of_zeros_fails() -> None:
    gateway = type(A).model_validate(
        A.model_dump() | {"routing": "inference-gateway", "gateway_cidrs": ["10.129.0.0/23"]}
    )
    route = http_route(gateway)
    assert route_split(route, MODEL) == ((MODEL, 95), (STANDBY, 5))
    assert route_tries(route, MODEL) == 1 and route_tries(virtual_service(A), MODEL) == 4
    cluster = Cluster(set())
    users = UserTraffic(lambda: route, MODEL, cluster)
    assert [users.request() for _ in range(20)] == [FAILED] * 20
    assert len(cluster.tries) == 20
    nothing = UserTraffic(lambda: None, MODEL, cluster)
    assert nothing.request() == FAILED and len(cluster.tries) == 20  # no route: no try


def test_the_failover_window_counts_requests_between_loss_and_recovery() -> None:
    now = iter(float(t) for t in range(10))
    route = virtual_service(A)
    users = UserTraffic(lambda: route, MODEL, Cluster({STANDBY}), seed=7, clock=lambda: next(now))
    outcomes = [users.request() for _ in range(10)]
    requests, failed = users.failover(2.0, 5.0)
    assert (requests, failed) == (4, outcomes[2:6].count(FAILED))


def test_a_try_that_cannot_be_sent_stops_the_users_and_is_kept() -> None:
    refused = ClusterError("ask the engine of pod p", status=403, reason="Forbidden")
    tried = threading.Event()

    def send(destination: str) -> bool:
        tried.set()
        raise refused

    users = UserTraffic(lambda: virtual_service(A, failed_over=[MODEL]), MODEL, send)
    with users:
        assert tried.wait(10)
        end = time.monotonic() + 10
        while users.error is None and time.monotonic() < end:
            tried.wait(0.01)
    assert users.error is refused and users.outcomes == []
