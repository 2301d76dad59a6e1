"""Waiting is linear (issue 40 item 2): an event reaches only the run it belongs to, whether
the runs are followed by one `wait_all` or by a thread each, and a crowd of waits reads the
run controller's Lease once, not once per run."""

from __future__ import annotations

import threading
from typing import Any

from gkeml_sdk import RunState, RunStatus
from gkeml_sdk.backends.kubernetes import run_service
from gkeml_sdk.backends.kubernetes.runs.liveness import (
    CONTROLLER_NAMESPACE,
    LEASE_NAME,
    MANAGED_ANNOTATION,
    ControllerWatch,
)
from gkeml_sdk.backends.kubernetes.runs.run_routing import run_of
from gkeml_sdk.backends.kubernetes.runs.track import RunTrack

from .test_scenarios import gang
from .test_shared_streams import end, wait_in_threads

RUNS = 30
LEASE = r"/leases/gkeml-run-controller$"


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
    runs = [client.submit(gang(f"job-{i:03d}")) for i in range(RUNS)]
    hear, everyone = finish_when_heard(cluster, runs)
    cluster.clear_request_log()
    service = client._backend.service
    reported = iter([r.name for r in runs])
    finals = service.wait([r.ref for r in runs], 120, progress=lambda s: hear(next(reported, "")))
    assert everyone.is_set() and [f.state for f in finals] == [RunState.SUCCEEDED] * RUNS
    # The Lease, then one list per stream (JobSets, run records, Workloads, pods): the records
    # listed as this client holds them are not read again, nor their cancel markers.
    assert cluster.count("GET", watch=False) == 5
    assert cluster.count(method=None, watch=False) == 5  # and nothing written
