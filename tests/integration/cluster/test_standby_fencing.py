"""The standby manager under faults: a leader that lost its Lease cannot change a route
(its delayed write is a 409), a route changed by hand is restored by one resync, two managers
never both write, and one tenant's failing route writes never hold another's failover."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from gkeml_sdk import KubernetesSettings
from gkeml_sdk.backends.kubernetes.api.lease import LeaseTiming
from gkeml_sdk.backends.kubernetes.standby.fenced import TERM_ANNOTATION
from gkeml_sdk.backends.kubernetes.standby.manager import StandbyManager
from tests.integration.cluster.conftest import FAST_RETRY
from tests.integration.cluster.test_tenants import cluster, lose_primaries, status, wait, weights
from tests.kubeapi import KubeAPIServer
from tests.kubeapi.faults import RequestInfo

__all__ = ["cluster"]  # the fixture, shared with test_tenants
# A successor may take over 3 s after the leader's last renewal; the leader stops writing
# 1.5 s after it, so a write it sends just before has 1.5 s to land.
LEASE = LeaseTiming(lease_seconds=3, renew_deadline_seconds=1.5, retry_seconds=0.2)
STEADY = LeaseTiming(lease_seconds=60, renew_deadline_seconds=50, retry_seconds=0.2)
CLIENT = "x-test-client"  # a header naming which manager sent a request


class Clock:
    """A clock the test moves."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def named_manager(
    server: KubeAPIServer, tenants: Any, identity: str, lease: LeaseTiming = LEASE, **options: Any
) -> StandbyManager:
    api = server.api_client()
    api.set_default_header(CLIENT, identity)
    settings = KubernetesSettings(api_client=api, api_retry=FAST_RETRY, watch_seconds=30)
    return StandbyManager(tenants, settings=settings, identity=identity, lease=lease, **options)


def sent_by(identity: str, method: str, path_part: str) -> Any:
    def match(info: RequestInfo) -> bool:
        return (
            info.headers.get(CLIENT) == identity
            and info.method == method
            and path_part in info.path
        )

    return match


def requests_of(server: KubeAPIServer, identity: str) -> list[Any]:
    return [r for r in list(server.request_log) if r.headers.get(CLIENT) == identity]


def without_allocations(data: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k != "allocations"}


def tenant_writes(server: KubeAPIServer, identity: str) -> list[Any]:
    return [
        r
        for r in requests_of(server, identity)
        if r.method != "GET" and "/namespaces/tenant-" in r.path and not r.watch
    ]


def test_a_delayed_stale_leader_cannot_change_routes_after_losing_the_lease(cluster: Any) -> None:
    server, tenants, _ = cluster
    one = named_manager(server, tenants, "one").start()
    two = None
    try:
        wait(lambda: one.ready.is_set() and one.leading)
        wait(lambda: weights(server, "tenant-a", "llama-2-7b") == [95, 5])
        # One's route write hangs 8 s in the network; its renewals fail from now on.
        slow = server.faults.inject(
            "slow", count=1, delay=8.0, match=sent_by("one", "PUT", "/virtualservices/")
        )
        server.faults.inject("500", count=None, match=sent_by("one", "PUT", "/leases/"))
        two = named_manager(server, tenants, "two").start()
        lose_primaries(server)
        wait(lambda: slow.hits == 1)
        wait(lambda: two.leading, timeout=15)
        # Two fails over on its own, its term on the route...
        wait(lambda: weights(server, "tenant-a", "llama-2-7b") == [0, 100], timeout=15)
        # ...and one's write, sent under its old term, lands after that: a 409 it obeys.
        wait(
            lambda: any(
                r.fault == "slow" and r.status is not None for r in requests_of(server, "one")
            ),
            timeout=15,
        )
        (late,) = [r for r in requests_of(server, "one") if r.fault == "slow"]
        assert late.status == 409
        vs = server.store.get("virtualservices", "tenant-a", "tenant-a-models")
        assert vs["metadata"]["annotations"][TERM_ANNOTATION] == "1"
        # Nothing one sent after two took the Lease changed anything.
        time.sleep(0.5)
        taken = min(
            r.started
            for r in requests_of(server, "two")
            if "/leases" in r.path and r.method in ("PUT", "POST") and r.status in (200, 201)
        )
        assert late.started < taken
        after = [r for r in tenant_writes(server, "one") if r.started > taken]
        assert all(r.status == 409 for r in after) and not one.leading
        assert status(server, "tenant-a")["failover_count"] == "1"
    finally:
        one.stop(release=False)
        if two is not None:
            two.stop()


def test_a_route_drifted_by_hand_is_restored_within_one_resync(cluster: Any) -> None:
    server, tenants, _ = cluster
    clock = Clock()
    m = named_manager(server, tenants, "one", lease=STEADY, clock=clock).start()
    try:
        wait(lambda: m.ready.is_set() and all(w.clean for w in m.workers))
        assert weights(server, "tenant-a", "llama-2-7b") == [95, 5]
        vs = server.store.get("virtualservices", "tenant-a", "tenant-a-models")
        vs["spec"]["http"][0]["route"][0]["weight"], vs["spec"]["http"][0]["route"][1]["weight"] = (
            0,
            100,
        )
        server.store.put(vs)  # kubectl edit: nothing the manager watches
        loops = count_loops(m, 5)
        assert loops >= 5 and weights(server, "tenant-a", "llama-2-7b") == [0, 100]
        clock.now += m.resync_seconds
        wait(lambda: weights(server, "tenant-a", "llama-2-7b") == [95, 5])
        assert m.resyncs == 1
        # A standby count changed by hand is seen on the watch and put back at once.
        server.store.patch(
            "deployments", "tenant-a", "llama-2-7b-standby", {"spec": {"replicas": 0}}
        )
        wait(
            lambda: (
                server.store.get("deployments", "tenant-a", "llama-2-7b-standby")["spec"][
                    "replicas"
                ]
                == 2
            )
        )
        assert m.resyncs == 1
    finally:
        m.stop()


def count_loops(m: StandbyManager, n: int) -> int:
    """Wait for `n` turns of the manager's loop (each one reconciles what it saw)."""
    seen = 0
    end = time.monotonic() + 10
    with m.changed:
        while seen < n and time.monotonic() < end:
            if m.changed.wait(1.0):
                seen += 1
    return seen


def test_two_managers_never_both_write(cluster: Any) -> None:
    server, tenants, _ = cluster
    one = named_manager(server, tenants, "one").start()
    two = named_manager(server, tenants, "two").start()
    try:
        wait(lambda: one.ready.is_set() and two.ready.is_set())
        leader, other = (one, two) if one.leading else (two, one)
        lose_primaries(server)
        wait(lambda: weights(server, "tenant-a", "llama-2-7b") == [0, 100])
        # The leader's renewals fail: the other takes over and fails back.
        server.faults.inject("500", count=None, match=sent_by(leader.identity, "PUT", "/leases/"))
        wait(lambda: other.leading, timeout=15)
        for pod in server.store.list("pods", "tenant-a", "gkeml.dev/serve=llama-2-7b"):
            ready = {"status": {"conditions": [{"type": "Ready", "status": "True"}]}}
            server.store.patch("pods", "tenant-a", pod["metadata"]["name"], ready)
        wait(lambda: weights(server, "tenant-a", "llama-2-7b") == [95, 5], timeout=15)
    finally:
        one.stop()
        two.stop()
    # Each successful write came from the manager whose Lease write succeeded last before it.
    log = sorted(list(server.request_log), key=lambda r: r.started)
    holder, writers = "", set()
    for r in log:
        who = r.headers.get(CLIENT, "")
        if r.method in ("PUT", "POST") and "/leases" in r.path and r.status in (200, 201):
            holder = who
        elif r.method != "GET" and "/namespaces/tenant-" in r.path and r.status in (200, 201):
            assert who == holder, (r.method, r.path, who, holder)
            writers.add(who)
    assert writers - {""} == {"one", "two"}  # "": the test's own apply before the managers
    assert status(server, "tenant-a")["failover_count"] == "1"


def test_a_tenant_whose_route_writes_fail_never_delays_another(cluster: Any) -> None:
    server, tenants, _ = cluster
    m = named_manager(server, tenants, "one", lease=STEADY).start()
    try:
        wait(lambda: m.ready.is_set() and all(w.clean for w in m.workers))
        assert [w.tenant.tier.name for w in m.workers] == ["A", "B", "C"]  # poked in tier order
        # Tier C's route writes hang 2 s each and get no answer, from now on.
        failing = server.faults.inject(
            "timeout", count=None, delay=2.0, match=sent_by("one", "PUT", "/tenant-c/")
        )
        lose_primaries(server, "tenant-c", "qwen-7b")
        wait(lambda: failing.hits >= 1, timeout=15)  # C is now stuck in its route write
        lose_primaries(server, "tenant-a", "llama-2-7b")
        wait(lambda: weights(server, "tenant-a", "llama-2-7b") == [0, 100], timeout=5)
        assert weights(server, "tenant-c", "qwen-7b") == [100, 0]
        c_routes = [r for r in requests_of(server, "one") if r.fault == "timeout"]
        assert c_routes and all(r.status is None for r in c_routes)
    finally:
        m.stop()


class Pause:
    """A `before_write` hook: once armed, stops the first write of `point` in `namespace`
    after its Lease check, until the test resumes it."""

    def __init__(self, point: str, namespace: str, *, armed: bool) -> None:
        self.point, self.namespace, self.armed = point, namespace, armed
        self.reached, self.resume = threading.Event(), threading.Event()

    def __call__(self, point: str, namespace: str) -> None:
        if self.armed and (point, namespace) == (self.point, self.namespace):
            self.armed = False
            self.reached.set()
            assert self.resume.wait(60)


def move_lease(server: KubeAPIServer, to: str) -> None:
    """What a takeover writes: another holder, one more transition."""
    lease = server.store.get("leases", "default", "gkeml-standby-manager")
    spec = lease["spec"]
    spec["holderIdentity"], spec["leaseTransitions"] = to, spec["leaseTransitions"] + 1
    server.store.put(lease)


# Where a failover of tenant-b (warm) writes, in order; "create" and "sleep" are written before
# any failover (a standby Deployment deleted by hand, a standby that started awake).
FAILOVER_POINTS = ("status", "wake", "route", "replicas", "event")
REQUEST = {  # what each write point sends
    "status": ("PUT", "/configmaps/gkeml-tenant-status"),
    "wake": ("POST", "/proxy/wake_up"),
    "route": ("PUT", "/virtualservices/tenant-b-models"),
    "replicas": ("PATCH", "/deployments/tiny-llama-1b-standby"),
    "event": ("POST", "/events"),
    "create": ("POST", "/deployments"),
    "sleep": ("POST", "/proxy/sleep"),
}
WARM, STANDBY_POD = "tenant-b", "tiny-llama-1b-standby-0"
LOADED = 60.0  # seconds a step may take on a loaded machine (a bound, never a pace)


@pytest.mark.parametrize("point", (*FAILOVER_POINTS, "create", "sleep"))
def test_a_leader_paused_at_a_write_point_changes_nothing_once_the_lease_moved(
    cluster: Any, point: str
) -> None:
    server, tenants, kubelet = cluster
    if point == "create":
        server.store.delete("deployments", WARM, "tiny-llama-1b-standby")
        for pod in server.store.list("pods", WARM, "gkeml.dev/serve=tiny-llama-1b-standby"):
            server.store.delete("pods", WARM, pod["metadata"]["name"])
    clock_one, clock_two = Clock(), Clock()
    pause = Pause(point, WARM, armed=point not in FAILOVER_POINTS)
    one = named_manager(server, tenants, "one", STEADY, clock=clock_one, before_write=pause).start()
    two = None
    try:
        wait(lambda: one.leading, LOADED)
        two = named_manager(server, tenants, "two", STEADY, clock=clock_two).start()
        wait(lambda: two.ready.is_set(), LOADED)
        if point in FAILOVER_POINTS:  # a steady state first: the warm standby asleep
            wait(lambda: kubelet.sleeping.get((WARM, STANDBY_POD)) and one.ready.is_set(), LOADED)
            pause.armed = True
            lose_primaries(server, WARM, "tiny-llama-1b")
        assert pause.reached.wait(LOADED)
        worker = next(w for w in one.workers if w.tenant.name == WARM)
        paused_passes = worker.ended
        # The Lease moves to two while one waits between its check and its write...
        moved = time.monotonic()
        move_lease(server, "two")
        clock_one.now += STEADY.renew_deadline_seconds  # one's renewals stopped succeeding
        assert not one.leading
        if point not in FAILOVER_POINTS:
            lose_primaries(server, WARM, "tiny-llama-1b")
        # ...and two routes all of tenant-b to its awake standby.
        wait(lambda: two.leading and weights(server, WARM, "tiny-llama-1b") == [0, 100], LOADED)
        wait(lambda: not kubelet.sleeping[(WARM, STANDBY_POD)], LOADED)
        two_worker = next(w for w in two.workers if w.tenant.name == WARM)
        wait(lambda: two_worker.clean, LOADED)
        before = status(server, WARM)
        resumed = time.monotonic()
        pause.resume.set()
        wait(lambda: worker.ended > paused_passes, LOADED)
        # (Another tenant's worker of one may have passed its check just before the Lease
        # moved and sent its write just after: that write is a different paused writer.)
        late = [
            r
            for r in tenant_writes(server, "one")
            if r.started >= moved and f"/namespaces/{WARM}/" in r.path
        ]
        # One's paused request went out; its next write stopped at the Lease check.
        assert [r.started >= resumed for r in late] == [True]
        (request,) = late
        method, path = REQUEST[point]
        assert request.method == method and request.path.endswith(path), request.path
        if point in ("wake", "sleep"):  # pods/proxy: no precondition, it lands
            assert (request.method, request.status) == ("POST", 200)
        else:  # conditional on what one read, which two changed; an Event two sent first
            assert request.status == 409, (request.method, request.path, request.status)
        # What one's late status write would have changed; `allocations` is the leader's live
        # view of the pods, which two keeps writing as its new standby's pod comes up.
        assert without_allocations(status(server, WARM)) == without_allocations(before)
        assert before["failover_count"] == "1"
        assert weights(server, WARM, "tiny-llama-1b") == [0, 100]
        reasons = [e["reason"] for e in server.store.list("events", WARM)]
        assert sorted(reasons) == ["FailedOver", "PrimaryLost"]  # each once
        if point == "sleep":
            # One's late /sleep put the standby carrying all traffic to sleep: nothing two
            # watches changed, so only its resync finds out, and wakes it.
            assert kubelet.sleeping[(WARM, STANDBY_POD)]
            clock_two.now += two.resync_seconds
            wait(lambda: not kubelet.sleeping[(WARM, STANDBY_POD)], LOADED)
            assert two.resyncs == 1
        assert not kubelet.sleeping[(WARM, STANDBY_POD)]
        assert one.refused == {} and two.refused == {}
    finally:
        pause.resume.set()
        one.stop(release=False)
        if two is not None:
            two.stop()
