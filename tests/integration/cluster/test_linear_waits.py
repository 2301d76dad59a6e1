"""Waiting is linear (issue 40 item 2): an event reaches only the run it belongs to, whether
the runs are followed by one `wait_all` or by a thread each, a crowd of waits reads the
run controller's Lease once, not once per run, and a namespace is followed on three watches
(JobSets, Workloads, pods), a run controller acting or not: what the controller does shows on
the attempt objects, so no stream follows the run records."""

from __future__ import annotations

import threading
from typing import Any

from gkeml_sdk import Client, KubernetesSettings, RetryPolicy, RunState, RunStatus
from gkeml_sdk.backends.kubernetes import run_service
from gkeml_sdk.backends.kubernetes.controller.process import RunController
from gkeml_sdk.backends.kubernetes.runs import run_routing
from gkeml_sdk.backends.kubernetes.runs.liveness import (
    CONTROLLER_NAMESPACE,
    LEASE_NAME,
    MANAGED_ANNOTATION,
    ControllerWatch,
)
from gkeml_sdk.backends.kubernetes.runs.run_routing import run_of
from gkeml_sdk.backends.kubernetes.runs.track import RunTrack
from tests.kubeapi.kueue_deactivation import deactivate_after_requeue_limit

from .conftest import FAST_RETRY, make_client, track_of
from .replay import Replayer
from .test_scenarios import gang, jobsets
from .test_shared_streams import end, wait_in_threads

RUNS = 30
LEASE = r"/leases/gkeml-run-controller$"
CONTROLLER_AGENT = "gkeml-run-controller-test"  # told apart from the followers at the server
RECORD = "/namespaces/ml/configmaps/train-gkeml-run"


def watched(cluster: Any) -> list[str]:
    """The resources of every watch request made in namespace ml, but the run controller's."""
    return sorted(
        r.path.rsplit("/", 1)[-1]
        for r in list(cluster.request_log)
        if r.watch and "/namespaces/ml/" in r.path
        and r.headers.get("user-agent") != CONTROLLER_AGENT
    )  # fmt: skip


def followers_reads(cluster: Any, path: str) -> int:
    """GETs of `path` (not watches) made by anybody but the run controller."""
    return sum(
        1
        for r in list(cluster.request_log)
        if r.method == "GET" and not r.watch and r.path.endswith(path)
        and r.headers.get("user-agent") != CONTROLLER_AGENT
    )  # fmt: skip


def owner_names(obj: dict[str, Any]) -> list[str]:
    return [str(o.get("name")) for o in (obj.get("metadata") or {}).get("ownerReferences") or []]


def live_lease(cluster: Any) -> None:
    """The Lease of a run controller acting for ml, held for an hour (nobody acts)."""
    cluster.store.put(
        {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {
                "name": LEASE_NAME,
                "namespace": CONTROLLER_NAMESPACE,
                "annotations": {MANAGED_ANNOTATION: "ml"},
            },
            "spec": {"holderIdentity": "elsewhere", "leaseDurationSeconds": 3600},
        }
    )


def lose_attempt_1(cluster: Any) -> None:
    """Kueue times attempt 1 out (PodsReady) until its requeue limit deactivates it: an
    infrastructure loss a RetryPolicy resubmits."""
    uid = cluster.store.get("jobsets", "ml", "train")["metadata"]["uid"]
    Replayer(cluster, "ml", "train", 1, "train").play(
        "jobset-podsready-timeout-deactivated", "stuck", pause=0.005, until=63.0
    )
    deactivate_after_requeue_limit(cluster, "ml", uid)


def fed(monkeypatch: Any) -> list[tuple[str, list[str]]]:
    """(run fed, runs the event belongs to) for every event a run's tracker is fed from now."""
    calls: list[tuple[str, list[str]]] = []
    observe = RunTrack.observe

    def counted(track: RunTrack, event: Any, now: float) -> bool:
        calls.append((track.name, [run for _, run in run_of(event)]))
        return observe(track, event, now)

    monkeypatch.setattr(RunTrack, "observe", counted)
    return calls


def finish_when_heard(cluster: Any, runs: list[Any]) -> tuple[Any, threading.Event]:
    """A progress callback per run name; once every run reported, every run succeeds."""
    heard: set[str] = set()
    lock, everyone = threading.Lock(), threading.Event()

    def hear(name: str) -> None:
        with lock:
            heard.add(name)
            if len(heard) == len(runs) and not everyone.is_set():
                everyone.set()
                for run in runs:
                    end(cluster, run.name, RunState.SUCCEEDED)

    return hear, everyone


def test_one_wait_all_feeds_each_event_to_its_own_run_and_reads_the_lease_once(
    cluster, client, monkeypatch
):
    runs = [client.submit(gang(f"job-{i:03d}")) for i in range(RUNS)]
    calls = fed(monkeypatch)
    hear, everyone = finish_when_heard(cluster, runs)
    cluster.clear_request_log()
    service = client._backend.service
    reported = iter([r.name for r in runs])  # a status names no run: the n-th stands for one
    finals = service.wait([r.ref for r in runs], 120, progress=lambda s: hear(next(reported, "")))
    assert everyone.is_set() and [f.state for f in finals] == [RunState.SUCCEEDED] * RUNS
    assert calls and all(name in belongs for name, belongs in calls)
    # Each run is fed its own objects' events (its JobSet listed, then completed), not 30x.
    assert len(calls) <= 3 * RUNS
    assert cluster.count("GET", path_re=LEASE) == 1  # one read of the Lease for the wait
    assert cluster.count("GET", path_re=r"/jobsets$", watch=True) == 1


def test_a_thread_per_run_feeds_each_its_own_events_and_reads_the_lease_once(
    cluster, client, monkeypatch
):
    runs = [client.submit(gang(f"job-{i:03d}")) for i in range(RUNS)]
    service = client._backend.service
    # A frozen clock: the Lease read stays fresh however slowly the threads start.
    service.controller = ControllerWatch(service.kube, clock=lambda: 0.0, fresh_for=2.0)
    calls = fed(monkeypatch)
    hear, everyone = finish_when_heard(cluster, runs)
    finals: dict[str, RunStatus] = {}
    cluster.clear_request_log()
    threads = wait_in_threads(runs, finals, hear)
    for thread in threads:
        thread.join(timeout=120)
    assert everyone.is_set()
    assert {f.state for f in finals.values()} == {RunState.SUCCEEDED} and len(finals) == RUNS
    assert calls and all(name in belongs for name, belongs in calls)
    assert len(calls) <= 3 * RUNS
    assert cluster.count("GET", path_re=LEASE) == 1
    assert cluster.count("GET", path_re=r"/jobsets$", watch=True) == 1


def test_a_wait_joining_late_is_sent_its_own_runs_objects_only(cluster, client, monkeypatch):
    runs = [client.submit(gang(f"job-{i:03d}")) for i in range(RUNS)]
    first, last = runs[:-1], runs[-1]
    calls = fed(monkeypatch)
    hear, everyone = finish_when_heard(cluster, runs)
    finals: dict[str, RunStatus] = {}
    early = wait_in_threads(first, finals, hear)
    # The streams are open and listed (every early wait heard its run) before the last joins.
    cluster.wait_for(lambda: len({name for name, _ in calls}) == len(first), timeout=60)
    before = len(calls)
    assert last.wait(timeout=120, progress=lambda s: hear(last.name)).state is RunState.SUCCEEDED
    for thread in early:
        thread.join(timeout=120)
    assert everyone.is_set() and len(finals) == len(first)
    late = [belongs for name, belongs in calls[before:] if name == last.name]
    assert late and all(belongs == [last.name] for belongs in late)


def test_a_batch_cut_short_at_its_limit_loses_no_event(cluster, client, monkeypatch):
    monkeypatch.setattr(run_service, "BATCH", 1)  # every batch is cut after its first run
    runs = [client.submit(gang(f"job-{i:03d}")) for i in range(5)]
    hear, everyone = finish_when_heard(cluster, runs)
    service = client._backend.service
    reported = iter([r.name for r in runs])
    finals = service.wait([r.ref for r in runs], 60, progress=lambda s: hear(next(reported, "")))
    assert everyone.is_set() and [f.state for f in finals] == [RunState.SUCCEEDED] * 5


def test_runs_a_controller_acts_for_are_followed_with_no_read_per_run(cluster, client):
    live_lease(cluster)
    runs = [client.submit(gang(f"job-{i:03d}")) for i in range(RUNS)]
    hear, everyone = finish_when_heard(cluster, runs)
    cluster.clear_request_log()
    service = client._backend.service
    reported = iter([r.name for r in runs])
    finals = service.wait([r.ref for r in runs], 120, progress=lambda s: hear(next(reported, "")))
    assert everyone.is_set() and [f.state for f in finals] == [RunState.SUCCEEDED] * RUNS
    # The Lease, then one list per stream (JobSets, Workloads, pods): no record is read, nor
    # any cancel marker, and no stream follows the records.
    assert cluster.count("GET", watch=False) == 4
    assert cluster.count(method=None, watch=False) == 4  # and nothing written
    assert watched(cluster) == ["jobsets", "pods", "workloads"]


def controller_acting(cluster: Any) -> tuple[RunController, threading.Thread]:
    """A run controller leading ml, acting in a thread, its requests told apart by its agent."""
    api = cluster.api_client()
    api.user_agent = CONTROLLER_AGENT
    settings = KubernetesSettings(api_client=api, namespace="ml", api_retry=FAST_RETRY)
    backend = Client(kubernetes=settings)._backend  # type: ignore[attr-defined]
    controller = RunController(backend, ["ml"], identity="a", interval=0.05)
    assert controller.reconcile_once() == {"ml": True}
    acting = threading.Thread(target=controller.run, daemon=True)
    acting.start()
    return controller, acting


def follow_resubmission(cluster: Any, run: Any, before_r2_seen: Any = None) -> RunStatus:
    """Attempt 1 lost, the controller resubmits, attempt 2 succeeds; `run` waited for
    meanwhile. `before_r2_seen()` runs once attempt 2 was played, before it returns."""
    controller, acting = controller_acting(cluster)

    def kueue() -> None:
        lose_attempt_1(cluster)
        cluster.wait_for(lambda: "train--r2" in jobsets(cluster), timeout=60)
        Replayer(cluster, "ml", "train", 2, "train--r2").play("jobset-succeeded", "train", pause=0)
        if before_r2_seen is not None:
            before_r2_seen()

    played = threading.Thread(target=kueue, daemon=True)
    cluster.clear_request_log()
    played.start()
    try:
        return run.wait(timeout=60)
    finally:
        controller.stop()
        acting.join(timeout=30)
        played.join(timeout=30)


def test_a_controllers_resubmission_reaches_a_follower_on_three_watches(cluster):
    follower = make_client(cluster, watch_seconds=300)  # no watch ends while it waits
    run = follower.submit(gang(), retry=RetryPolicy(max_resubmits=1, backoff_seconds=0.05))
    final = follow_resubmission(cluster, run)
    assert final.state is RunState.SUCCEEDED and run.attempt == 2
    assert [t.attempt for t in run.history if t.status.reason == "Resubmitted"] == [2]
    # One watch per kind that tells the run's state; the record is read once, when attempt 2
    # appeared on the JobSet stream (the controller reserves it in the record first).
    assert watched(cluster) == ["jobsets", "pods", "workloads"]
    assert followers_reads(cluster, RECORD) == 1


def test_a_new_attempts_workload_seen_before_its_jobset_is_not_lost(cluster, monkeypatch):
    # The streams are apart: attempt 2's Workload and pods may reach the follower before its
    # JobSet tells it of attempt 2. Held here until the Workload stream showed the last of them.
    released, delivered = threading.Event(), {}
    deliver = run_routing._Route.deliver

    def holding(route: Any, event: Any) -> None:
        meta = event.obj.get("metadata") or {}
        owners = owner_names(event.obj)
        if event.kind == "JobSet" and meta.get("name") == "train--r2":
            assert released.wait(60)
        deliver(route, event)
        if event.kind == "Workload" and owners == ["train--r2"]:
            delivered[meta["name"]] = meta["resourceVersion"]

    def shown() -> bool:
        """The follower's Workload stream delivered attempt 2's Workload as stored now."""
        found = cluster.store.list("workloads", "ml")
        owned = [w["metadata"] for w in found if owner_names(w) == ["train--r2"]]
        return bool(owned) and delivered.get(owned[0]["name"]) == owned[0]["resourceVersion"]

    def release() -> None:
        cluster.wait_for(shown, timeout=60)
        released.set()

    monkeypatch.setattr(run_routing._Route, "deliver", holding)
    run = make_client(cluster).submit(gang(), retry=RetryPolicy(max_resubmits=1, backoff_seconds=0))
    final = follow_resubmission(cluster, run, release)
    assert final.state is RunState.SUCCEEDED and run.attempt == 2
    workload = next(iter(delivered))
    assert track_of(run).tracker.workload_name == workload  # replayed when attempt 2 came


def test_a_cancel_while_a_follower_waits_for_the_resubmission_ends_its_wait(cluster, client):
    live_lease(cluster)  # the controller would resubmit: the follower only waits for it
    run = client.submit(gang(), retry=RetryPolicy(max_resubmits=1, backoff_seconds=0.0))
    lose_attempt_1(cluster)
    lost = threading.Event()
    finals: list[RunStatus] = []

    def follow() -> None:
        finals.append(run.wait(timeout=60, progress=lambda s: s.terminal and lost.set()))

    following = threading.Thread(target=follow, daemon=True)
    following.start()
    assert lost.wait(60)  # attempt 1 ended; the follower waits for attempt 2
    assert make_client(cluster).get_run("train").cancel()
    following.join(timeout=60)
    # The cancel deleted attempt 1; its marker, read on that deletion, says why.
    assert [f.state for f in finals] == [RunState.CANCELLED]
    assert watched(cluster) == ["jobsets", "pods", "workloads"]
