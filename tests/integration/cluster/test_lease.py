"""Leader election on a Lease as client-go does it: acquire, renew, expiry judged by local
observation, a stale update refused with 409, release."""

from __future__ import annotations

from typing import Any

import pytest

from gkeml_sdk.backends.kubernetes.api.kube import KubeClient
from gkeml_sdk.backends.kubernetes.api.lease import LEASES, LeaderElector, LeaseLost, LeaseTiming
from gkeml_sdk.backends.kubernetes.api.transport import Transport
from tests.integration.cluster.conftest import FAST_RETRY


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def elector(server: Any, identity: str, clock: Clock) -> LeaderElector:
    kube = KubeClient(Transport(server.api_client(), api_retry=FAST_RETRY))
    timing = LeaseTiming(lease_seconds=15, renew_deadline_seconds=10, retry_seconds=2)
    return LeaderElector(kube, "default", "lead", identity, timing, clock=clock)


def test_one_leader_renews_and_another_takes_over_after_expiry(kube_api: Any) -> None:
    clock = Clock()
    a, b = elector(kube_api, "a", clock), elector(kube_api, "b", clock)
    assert a.try_acquire_or_renew() and a.leading
    assert not b.try_acquire_or_renew() and not b.leading
    clock.now += 14  # within the duration since b first saw the lease
    assert not b.try_acquire_or_renew()
    assert a.try_acquire_or_renew()  # a renews: b sees a new renewTime and waits again
    assert not b.try_acquire_or_renew()
    clock.now += 14
    assert not b.try_acquire_or_renew()
    assert not a.leading  # a's last renewal is 14 s old: past its 10 s deadline
    clock.now += 2  # 16 s since b first saw the last renewal: expired
    assert b.try_acquire_or_renew() and b.leading
    lease = kube_api.store.get("leases", "default", "lead")
    assert lease["spec"]["holderIdentity"] == "b" and lease["spec"]["leaseTransitions"] == 1
    assert lease["spec"]["leaseDurationSeconds"] == 15


def test_a_stale_update_gets_409_and_loses(kube_api: Any) -> None:
    clock = Clock()
    a = elector(kube_api, "a", clock)
    assert a.try_acquire_or_renew()
    current = a.kube.get(LEASES, "lead", "default")
    a.kube.replace({**current, "spec": {**current["spec"], "holderIdentity": "x"}})
    stale = {**current, "spec": {**current["spec"], "holderIdentity": "y"}}
    assert a.kube.replace(stale) is None  # 409 Conflict: resourceVersion moved on
    assert kube_api.count("PUT", "/leases/lead", status=409) == 1


def test_release_lets_the_next_candidate_in_at_once(kube_api: Any) -> None:
    clock = Clock()
    a, b = elector(kube_api, "a", clock), elector(kube_api, "b", clock)
    assert a.try_acquire_or_renew()
    assert not b.try_acquire_or_renew()
    a.release()
    clock.now += 1.5  # the released lease lasts one second
    assert b.try_acquire_or_renew()


def test_fence_is_the_local_deadline_and_reads_nothing(kube_api: Any) -> None:
    clock = Clock()
    a, b = elector(kube_api, "a", clock), elector(kube_api, "b", clock)
    assert a.try_acquire_or_renew()
    assert not b.try_acquire_or_renew()  # b sees a's lease now and judges expiry from here
    reads = kube_api.count("GET", "/leases/")
    token = a.fence()
    assert token == kube_api.store.get("leases", "default", "lead")["metadata"]["resourceVersion"]
    clock.now += 9.9
    assert a.fence() == token  # within its 10 s deadline
    assert kube_api.count("GET", "/leases/") == reads  # the check is local: no request
    clock.now += 0.2  # no renewal for longer than the deadline
    with pytest.raises(LeaseLost, match="renew deadline"):
        a.fence()
    clock.now += 5
    assert b.try_acquire_or_renew()  # b takes the lease 5 s after a stopped acting
    with pytest.raises(LeaseLost):
        a.fence()


def test_a_renewal_counts_from_when_it_was_sent(kube_api: Any) -> None:
    clock = Clock()
    a = elector(kube_api, "a", clock)
    assert a.try_acquire_or_renew()

    def late(info: Any) -> bool:
        if info.method == "PUT" and "/leases/" in info.path:
            clock.now += 11  # the answer comes 11 s later: past the 10 s deadline
            return True
        return False

    kube_api.faults.inject("slow", count=1, delay=0, match=late)
    assert a.try_acquire_or_renew()  # written, but the answer came too late to count
    assert not a.leading
    with pytest.raises(LeaseLost):
        a.fence()
    assert a.try_acquire_or_renew() and a.leading  # a prompt renewal
    a.fence()
