"""Whether a run controller is alive is judged by the changes of its Lease a client has seen on
its own monotonic clock, never by comparing the Lease's renewTime with the client's clock: a
client whose clock is 30 s ahead of the controller's makes no write while it renews."""

from __future__ import annotations

import threading
import time
from datetime import datetime
from typing import Any

from gkeml_sdk import RetryPolicy, RunState
from gkeml_sdk.backends.kubernetes.api.lease import LeaseTiming
from gkeml_sdk.backends.kubernetes.controller.process import RunController
from gkeml_sdk.backends.kubernetes.runs.liveness import LEASE_NAME, ControllerWatch
from tests.kubeapi.kueue_deactivation import deactivate_after_requeue_limit

from .conftest import make_client
from .replay import Replayer
from .test_controller_fencing import Clock
from .test_scenarios import gang, jobsets

SKEW = 30.0


def renewed_at(server: Any) -> float:
    spec = server.store.get("leases", "gkeml-system", LEASE_NAME)["spec"]
    return datetime.fromisoformat(spec["renewTime"].replace("Z", "+00:00")).timestamp()


def test_a_follower_whose_clock_is_30s_ahead_makes_no_write_while_the_controller_renews(cluster):
    follower = make_client(cluster)
    run = follower.submit(gang(), retry=RetryPolicy(max_resubmits=1, backoff_seconds=0.05))
    writes: list[str] = []
    follower._backend.kube.guard = writes.append  # type: ignore[attr-defined]
    # The controller's clock is 30 s behind the follower's: every renewTime it writes is
    # 30 s old by the follower's clock, twice the Lease's 15 s duration.
    controller = RunController(
        make_client(cluster)._backend,  # type: ignore[attr-defined]
        ["ml"],
        identity="a",
        interval=0.05,
        wall=lambda: time.time() - SKEW,
    )
    assert controller.reconcile_once() == {"ml": True}
    assert renewed_at(cluster) < time.time() - SKEW + 1
    acting = threading.Thread(target=controller.run, daemon=True)
    acting.start()
    uid = cluster.store.get("jobsets", "ml", "train")["metadata"]["uid"]

    def kueue() -> None:
        Replayer(cluster, "ml", "train", 1, "train").play(
            "jobset-podsready-timeout-deactivated", "stuck", pause=0.005, until=63.0
        )
        deactivate_after_requeue_limit(cluster, "ml", uid)
        cluster.wait_for(lambda: "train--r2" in jobsets(cluster), timeout=60)
        Replayer(cluster, "ml", "train", 2, "train--r2").play("jobset-succeeded", "train", pause=0)

    played = threading.Thread(target=kueue, daemon=True)
    played.start()
    try:
        final = run.wait(timeout=60)
    finally:
        controller.stop()
        acting.join(timeout=30)
    played.join(timeout=30)
    assert final.state is RunState.SUCCEEDED and run.attempt == 2
    assert writes == []  # the controller resubmitted; the follower only read
    assert renewed_at(cluster) < time.time() - SKEW + 1


def test_a_holder_is_alive_until_its_lease_is_seen_unchanged_for_its_duration(cluster):
    clock = Clock()
    controller = RunController(
        make_client(cluster)._backend,  # type: ignore[attr-defined]
        ["ml"],
        identity="a",
        lease=LeaseTiming(lease_seconds=15, renew_deadline_seconds=10, retry_seconds=2),
    )
    watch = ControllerWatch(make_client(cluster)._backend.kube, clock=clock)  # type: ignore[attr-defined]
    assert not watch.acts_for("ml")  # no Lease yet: no controller, the client acts
    assert controller.reconcile_once() == {"ml": True}
    assert watch.acts_for("ml") and not watch.acts_for("other")  # it names what it manages
    clock.now += 14.9
    assert watch.acts_for("ml")  # unchanged, but for less than its duration
    clock.now += 0.2
    assert not watch.acts_for("ml")  # seen unchanged for 15 s: dead, whatever renewTime says
    assert controller.reconcile_once() == {"ml": True}  # a renewal: alive from now on
    assert watch.acts_for("ml")
    controller.elector.release()
    assert not watch.acts_for("ml")  # given up: nobody holds it
