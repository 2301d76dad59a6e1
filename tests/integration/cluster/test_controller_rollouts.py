"""The run controller drives serving rollouts: the client makes the first step with its own
rights and may go away; the controller rolls a version that never gets ready back at its
deadline, and judges a canary on its engine's counters. It acts only for rollouts their
submitter began (a version record written by hand, or edited since, moves nothing), and a
leader paused after its Lease check, resumed once another took over, changes nothing.

`DeploymentController` plays the Deployment controller and the kubelet one step at a time;
the clocks are explicit."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest

from gkeml_sdk import Client
from gkeml_sdk.backends.kubernetes.api.lease import LeaseTiming
from gkeml_sdk.backends.kubernetes.controller.process import RunController
from gkeml_sdk.backends.kubernetes.serving.rollout_executor import RolloutExecutor
from gkeml_sdk.serving.rollout_machine import CanarySample, Phase
from tests.integration.cluster.test_controller_fencing import PauseBefore
from tests.integration.cluster.test_rollouts import (
    BROKEN,
    GOOD,
    NEWER,
    Clock,
    Metrics,
    canary_spec,
    deleted,
    deployment,
    images,
    served_ready,
    spec,
    weights,
)

from .conftest import make_client

TIMING = LeaseTiming(lease_seconds=15, renew_deadline_seconds=10, retry_seconds=2)
WRITES = ("POST", "PUT", "PATCH", "DELETE")


def leader(server: Any, identity: str, wall: Clock, lease_clock: Clock | None = None, **kw: Any):
    backend = make_client(server)._backend  # type: ignore[attr-defined]
    lease_clock = lease_clock or Clock()
    controller = RunController(
        backend, ["ml"], identity=identity, lease=TIMING, clock=lease_clock, wall=wall, **kw
    )
    return controller, lease_clock


def image(cluster: Any, name: str = "qa") -> str:
    return str(deployment(cluster, name)["spec"]["template"]["spec"]["containers"][0]["image"])


def versions(cluster: Any) -> dict[str, Any]:
    cm = cluster.store.get("configmaps", "ml", "qa-versions")
    return dict(json.loads(cm["data"]["versions.json"]))


def test_the_controller_rolls_back_a_version_its_client_left(cluster: Any) -> None:
    clock = Clock()
    user = make_client(cluster)
    handle, kubelet = served_ready(cluster, user, clock, spec(GOOD))
    handle.update(spec(BROKEN), wait=False, clock=clock)  # the notebook closes here
    assert image(cluster) == BROKEN
    controller, _ = leader(cluster, "c", clock)
    assert controller.reconcile_once() == {"ml": True}
    assert controller.rollouts is not None
    kubelet.step()
    kubelet.step()  # the surge pod crash-loops
    clock.now += 599
    assert controller.rollouts.pass_once() == {("ml", "qa"): "starting"}
    assert image(cluster) == BROKEN
    clock.now += 1
    assert controller.rollouts.pass_once() == {("ml", "qa"): "rolling-back"}
    assert image(cluster) == GOOD
    kubelet.step()
    assert controller.rollouts.pass_once() == {("ml", "qa"): "rolled-back"}
    assert images(cluster) == [(GOOD, True), (GOOD, True)]
    ready, failed = handle.history()
    assert (ready.outcome, failed.outcome) == ("ready", "rolled-back")
    assert "CrashLoopBackOff" in failed.reason
    # At rest: a pass over a finished rollout reads the records and writes nothing.
    before = len(cluster.request_log)
    controller.rollouts.pass_once()
    assert [r.method for r in cluster.request_log[before:]] == ["GET"]


@pytest.mark.parametrize(
    ("sample", "outcome"), [(CanarySample(400, 40), "rolled-back"), (CanarySample(400, 1), "ready")]
)
def test_the_controller_judges_a_canary_and_promotes_or_rolls_it_back(
    cluster: Any, sample: CanarySample, outcome: str
) -> None:
    clock = Clock()
    user = make_client(cluster)
    handle, kubelet = served_ready(cluster, user, clock, canary_spec(GOOD))
    handle.update(canary_spec(NEWER), wait=False, clock=clock)
    metrics = Metrics(sample)
    controller, _ = leader(cluster, "c", clock)
    assert controller.rollouts is not None
    controller.rollouts.metrics = lambda key: metrics  # the canary's answers
    controller.reconcile_once()
    kubelet.step()
    kubelet.step()
    assert controller.rollouts.pass_once() == {("ml", "qa"): "analysing"}
    assert weights(cluster) == {"qa": 90, "qa-canary": 10}
    clock.now += 300
    phase = controller.rollouts.pass_once()[("ml", "qa")]
    if outcome == "rolled-back":
        assert phase == "rolling-back"
        assert weights(cluster) == {"qa": 100}
        assert deleted(deployment(cluster, "qa-canary"))
        assert controller.rollouts.pass_once() == {("ml", "qa"): "rolled-back"}
    else:
        assert phase == "promoting" and image(cluster) == NEWER
        for _ in range(8):
            kubelet.step()
            if controller.rollouts.pass_once()[("ml", "qa")] == "complete":
                break
        assert weights(cluster) == {"qa": 100} and deleted(deployment(cluster, "qa-canary"))
    assert handle.history()[-1].outcome == outcome


def test_update_waits_for_the_controller_and_steps_nothing_itself(
    cluster: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    stepped_by: list[str] = []
    step = RolloutExecutor.step

    def counted(executor: RolloutExecutor) -> Any:
        stepped_by.append(threading.current_thread().name)
        return step(executor)

    monkeypatch.setattr(RolloutExecutor, "step", counted)
    clock = Clock()
    user = make_client(cluster)
    handle, kubelet = served_ready(cluster, user, clock, spec(GOOD))
    controller, _ = leader(cluster, "c", clock)
    stop = threading.Event()
    acting = threading.Thread(target=controller.run, args=(stop,), daemon=True)
    acting.start()
    try:
        cluster.wait_for(lambda: user._backend.controller.acts_for("ml", rollouts=True))  # type: ignore[attr-defined]
        done = threading.Event()
        stepping = threading.Thread(
            target=lambda: (handle.update(spec(NEWER), poll_seconds=0.05), done.set()),
            daemon=True,
            name="notebook",
        )
        stepping.start()
        cluster.wait_for(lambda: image(cluster) == NEWER)
        for _ in range(600):  # the Deployment rolls on while the controller steps
            kubelet.step()
            if done.wait(0.1):
                break
        assert done.is_set(), "update() never saw the rollout end"
    finally:
        stop.set()
        acting.join(timeout=30)
    assert [(v.version, v.outcome) for v in handle.history()] == [(1, "superseded"), (2, "ready")]
    assert handle.svc.image == NEWER
    assert stepped_by and "notebook" not in stepped_by  # every step was the controller's


def forge(cluster: Any, user: Client, clock: Clock, edit: str) -> None:
    """A version record moved to a rollout of `attacker/img` without its submitter's apply:
    written whole by hand ("forged"), or the spec of a rollout begun edited ("edited")."""
    handle, _ = served_ready(cluster, user, clock, spec(GOOD))
    if edit == "edited":
        handle.update(spec(BROKEN), wait=False, clock=clock)
    cm = cluster.store.get("configmaps", "ml", "qa-versions")
    body = json.loads(cm["data"]["versions.json"])
    if edit == "forged":
        first = body["versions"][0]
        body["versions"].append({**first, "version": 2, "outcome": "rolling-out"})
        body["state"] = {
            "strategy": "surge", "version": 2, "previous": 1, "phase": "starting",
            "started": clock.now, "deadline": clock.now + 600, "deadline_seconds": 600,
            "analysis_until": None, "reason": "", "finished": None,
        }  # fmt: skip
    body["versions"][-1]["spec"]["image"] = "attacker/img"
    cm["data"]["versions.json"] = json.dumps(body)
    cluster.store.put(cm)


@pytest.mark.parametrize("edit", ["forged", "edited"])
def test_a_version_record_its_submitter_did_not_write_moves_nothing(
    cluster: Any, edit: str
) -> None:
    clock = Clock()
    forge(cluster, make_client(cluster), clock, edit)
    controller, _ = leader(cluster, "c", clock)
    controller.reconcile_once()
    assert controller.rollouts is not None
    before = len(cluster.request_log)
    clock.now += 601  # past any deadline: a rollback would write
    controller.rollouts.pass_once()
    controller.rollouts.pass_once()
    sent = cluster.request_log[before:]
    assert [r for r in sent if r.method in WRITES] == []
    why = controller.rollouts.refused["ml/qa"]
    assert "refused: no server object carries the digests of versions 2 and 1" in why
    assert all("attacker/img" not in p["spec"]["containers"][0]["image"]
               for p in cluster.store.list("pods", "ml"))  # fmt: skip
    assert "attacker/img" not in image(cluster)


def everything(cluster: Any) -> dict[tuple[str, str], str]:
    """Every object of the namespace and its resourceVersion."""
    out = {}
    for kind in ("deployments", "services", "configmaps", "podmonitorings", "virtualservices"):
        for obj in cluster.store.list(kind, "ml"):
            out[(kind, obj["metadata"]["name"])] = obj["metadata"]["resourceVersion"]
    return out


# The leader's writes once the deadline passed, in the order it makes them: the record saved
# (ROLLING_BACK), the service's other objects applied, the server restored last.
POINTS = ["update ConfigMap qa-versions", "apply PodMonitoring qa", "apply Deployment qa"]


@pytest.mark.parametrize("point", POINTS)
def test_a_paused_leader_resumed_after_the_lease_moved_changes_nothing(
    cluster: Any, point: str
) -> None:
    clock = Clock()
    handle, kubelet = served_ready(cluster, make_client(cluster), clock, spec(GOOD))
    handle.update(spec(BROKEN), wait=False, clock=clock)
    a, lease_a = leader(cluster, "a", clock)
    b, lease_b = leader(cluster, "b", clock)
    assert a.reconcile_once() == {"ml": True}
    assert a.rollouts is not None and b.rollouts is not None
    hold = a.before_write = PauseBefore(point)
    kubelet.step()
    kubelet.step()
    clock.now += 600
    acting = threading.Thread(target=a.rollouts.pass_once, daemon=True)
    acting.start()
    assert hold.paused.wait(60), f"a made only {hold.seen}"

    # a is stopped (no renewal): b takes over and finishes the rollback.
    assert b.reconcile_once() == {"ml": False}
    lease_b.now += 16
    assert b.reconcile_once() == {"ml": True}
    assert b.rollouts.pass_once() == {("ml", "qa"): "rolling-back"}
    kubelet.step()
    assert b.rollouts.pass_once() == {("ml", "qa"): "rolled-back"}
    settled, record = everything(cluster), versions(cluster)
    before = len(cluster.request_log)

    lease_a.now += 16  # the time a was stopped, as its monotonic clock sees it on resuming
    hold.resume.set()
    acting.join(timeout=60)
    assert not acting.is_alive()
    writes = [r for r in cluster.request_log[before:] if r.method in WRITES]
    assert writes, "a's held write was sent on resuming"
    # Applied as read: a write over an object b changed is refused (409); one over an object b
    # left as it was changes nothing (the same content: no new resourceVersion); the next
    # write's Lease check stops a.
    assert {r.status for r in writes} <= {200, 409}, writes
    assert everything(cluster) == settled and versions(cluster) == record
    assert not a.leading
    assert record["state"]["phase"] == Phase.ROLLED_BACK.value
    assert image(cluster) == GOOD


def test_without_rollouts_the_client_drives_its_own(cluster: Any) -> None:
    clock = Clock()
    user = make_client(cluster)
    handle, kubelet = served_ready(cluster, user, clock, spec(GOOD))
    controller, _ = leader(cluster, "c", clock, rollouts=False)
    assert controller.rollouts is None
    controller.reconcile_once()
    lease = cluster.store.get("leases", "gkeml-system", "gkeml-run-controller")
    assert lease["metadata"]["annotations"]["gkeml.dev/drives-rollouts"] == "false"
    watch = user._backend.controller  # type: ignore[attr-defined]
    assert watch.acts_for("ml") and not watch.acts_for("ml", rollouts=True)
    done = threading.Event()
    threading.Thread(
        target=lambda: (handle.update(spec(NEWER), poll_seconds=0.01, clock=clock), done.set()),
        daemon=True,
    ).start()
    for _ in range(600):  # the client steps the rollout itself as the Deployment rolls on
        kubelet.step()
        if done.wait(0.1):
            break
    assert done.is_set() and handle.history()[-1].outcome == "ready"


@pytest.mark.parametrize(
    "data",
    [{"versions.json": "["}, {"versions.json": '{"versions": [{"version": "x"}], "state": 3}'}],
)
def test_a_damaged_version_record_refuses_that_service_alone(cluster: Any, data: dict) -> None:
    clock = Clock()
    handle, kubelet = served_ready(cluster, make_client(cluster), clock, spec(GOOD))
    handle.update(spec(BROKEN), wait=False, clock=clock)
    meta = {"name": "other-versions", "namespace": "ml", "labels": {"gkeml.dev/serve": "other"}}
    cluster.store.put({"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data})
    controller, _ = leader(cluster, "c", clock)
    controller.reconcile_once()
    assert controller.rollouts is not None
    kubelet.step()
    clock.now += 600
    assert controller.rollouts.pass_once() == {("ml", "qa"): "rolling-back"}
    assert "its version record cannot be read" in controller.rollouts.refused["ml/other"]
    assert image(cluster) == GOOD


def test_a_finishing_step_cut_short_leaves_the_rollout_unfinished_and_the_next_one_ends_it(
    cluster: Any,
) -> None:
    """A finished rollout is never stepped again: its last phase is put in place before the
    record says it is complete. Here the route changes between the step's read and its write
    (its apply is refused, 409), so the record stays `promoting`; the next pass completes it."""
    clock = Clock()
    handle, kubelet = served_ready(cluster, make_client(cluster), clock, canary_spec(GOOD))
    handle.update(canary_spec(NEWER), wait=False, clock=clock)
    controller, _ = leader(cluster, "c", clock)
    assert controller.rollouts is not None
    controller.rollouts.metrics = lambda key: Metrics(CanarySample(400, 0))
    controller.reconcile_once()
    kubelet.step()
    kubelet.step()
    assert controller.rollouts.pass_once() == {("ml", "qa"): "analysing"}
    clock.now += 300
    assert controller.rollouts.pass_once() == {("ml", "qa"): "promoting"}
    touched = []

    def someone_writes_the_route(action: str) -> None:
        if action == "apply VirtualService qa" and not touched:
            touched.append(action)
            cluster.store.patch("virtualservices", "ml", "qa", {"metadata": {"labels": {"x": "y"}}})

    controller.before_write = someone_writes_the_route
    phase = "promoting"
    for _ in range(8):
        kubelet.step()
        phase = controller.rollouts.pass_once()[("ml", "qa")]
        if touched:
            break
    assert touched and phase == "promoting"  # refused, and the record not moved
    assert versions(cluster)["state"]["phase"] == "promoting"
    assert controller.rollouts.pass_once() == {("ml", "qa"): "complete"}
    assert weights(cluster) == {"qa": 100} and deleted(deployment(cluster, "qa-canary"))
    assert handle.history()[-1].outcome == "ready"
