"""One shared watch per kind and namespace per backend, whatever thread waits: counts of watch
connections the fake API server saw, late subscribers, the last one leaving, a drop resumed
once for everybody."""

from __future__ import annotations

import queue
import threading
from typing import Any

from gkeml_sdk import RunState, RunStatus
from gkeml_sdk.backends.kubernetes.api.resources import resource
from gkeml_sdk.backends.kubernetes.api.streams import Event, SharedStreams, StreamSpec

from .conftest import make_client
from .test_scenarios import WATCHERS, gang

CONFIG_MAPS = resource("v1", "ConfigMap")
ENDS = {
    RunState.SUCCEEDED: {"type": "Completed", "reason": "AllJobsCompleted"},
    RunState.FAILED: {"type": "Failed", "reason": "FailedJobs"},
}


def end(server: Any, name: str, state: RunState) -> None:
    """Write the JobSet status the JobSet controller writes when the run ends in `state`."""
    cond = {**ENDS[state], "status": "True", "message": "done"}
    cond["lastTransitionTime"] = "2026-12-01T00:00:00Z"
    server.store.update_status("jobsets", "ml", name, {"conditions": [cond], "restarts": 0})


def watch_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("gkeml-watch-")]


def wait_in_threads(runs: list[Any], finals: dict[str, RunStatus], heard: Any) -> list[Any]:
    def wait(run: Any) -> None:
        finals[run.name] = run.wait(timeout=120, progress=lambda status: heard(run.name))

    threads = [threading.Thread(target=wait, args=(r,), daemon=True) for r in runs]
    for thread in threads:
        thread.start()
    return threads


def known_as(obj: dict) -> dict:
    """What a subscriber that has seen `obj` tells the stream it knows: its name and uid."""
    meta = obj["metadata"]
    return {"metadata": {"name": meta["name"], "namespace": meta["namespace"], "uid": meta["uid"]}}


def test_a_hundred_threads_waiting_hold_one_watch_per_kind(cluster, client):
    runs = [client.submit(gang(f"job-{i:03d}")) for i in range(100)]
    expected = {
        r.name: RunState.FAILED if i % 7 == 0 else RunState.SUCCEEDED for i, r in enumerate(runs)
    }
    finals: dict[str, RunStatus] = {}
    heard: set[str] = set()
    everyone = threading.Event()

    def hear(name: str) -> None:
        heard.add(name)
        if len(heard) == len(runs):
            everyone.set()

    cluster.reset_peak_watches()
    threads = wait_in_threads(runs, finals, hear)
    assert everyone.wait(120), f"{len(heard)} of 100 waits reported a first status"
    for name, state in expected.items():
        end(cluster, name, state)
    for thread in threads:
        thread.join(timeout=120)
    assert {n: f.state for n, f in finals.items()} == expected
    assert cluster.peak_watches <= WATCHERS
    assert cluster.count("GET", path_re=r"/jobsets$", watch=True) == 1
    assert cluster.count("GET", path_re=r"/jobsets$", watch=False) == 1  # one list, too
    assert watch_threads() == []  # the last wait stopped the streams
    cluster.wait_for(lambda: cluster.open_watches == 0, timeout=10)


def test_a_late_waiter_sees_the_end_from_the_stream_already_open(cluster, client):
    holder, late = client.submit(gang("holder")), client.submit(gang("late"))
    finals: dict[str, RunStatus] = {}
    first = threading.Event()
    threads = wait_in_threads([holder], finals, lambda name: first.set())
    assert first.wait(30)
    end(cluster, "late", RunState.SUCCEEDED)  # while nobody waits for it
    assert late.wait(timeout=30).state is RunState.SUCCEEDED
    # The end came from the open stream's cache: no second list, no second watch.
    assert cluster.count("GET", path_re=r"/jobsets$", watch=False) == 1
    assert cluster.count("GET", path_re=r"/jobsets$", watch=True) == 1
    end(cluster, "holder", RunState.SUCCEEDED)
    threads[0].join(timeout=30)
    assert finals["holder"].state is RunState.SUCCEEDED


def test_the_last_waiter_leaving_closes_the_watches(cluster, client):
    runs = [client.submit(gang(f"job-{i}")) for i in range(2)]
    finals: dict[str, RunStatus] = {}
    heard: set[str] = set()
    threads = wait_in_threads(runs, finals, heard.add)
    cluster.wait_for(lambda: heard == {"job-0", "job-1"}, timeout=30)
    cluster.wait_for_watches(WATCHERS, timeout=30)
    end(cluster, "job-0", RunState.SUCCEEDED)
    threads[0].join(timeout=30)
    assert finals["job-0"].state is RunState.SUCCEEDED
    assert len(watch_threads()) == WATCHERS  # job-1 still waits on them
    assert cluster.open_watches == WATCHERS
    end(cluster, "job-1", RunState.SUCCEEDED)
    threads[1].join(timeout=30)
    assert watch_threads() == []
    cluster.wait_for(lambda: cluster.open_watches == 0, timeout=10)


def test_a_dropped_watch_is_resumed_once_for_every_waiter(cluster, client):
    runs = [client.submit(gang(f"job-{i}")) for i in range(10)]
    finals: dict[str, RunStatus] = {}
    heard: set[str] = set()
    threads = wait_in_threads(runs, finals, heard.add)
    cluster.wait_for(lambda: len(heard) == 10, timeout=60)
    cluster.wait_for_watches(WATCHERS, timeout=30)
    assert cluster.cut_watches() == WATCHERS
    cluster.wait_for(lambda: cluster.count("GET", watch=True) == 2 * WATCHERS, timeout=30)
    for run in runs:
        end(cluster, run.name, RunState.SUCCEEDED)
    for thread in threads:
        thread.join(timeout=60)
    assert [finals[r.name].state for r in runs] == [RunState.SUCCEEDED] * 10
    assert cluster.count("GET", watch=True) == 2 * WATCHERS  # one resume per stream
    assert cluster.count("GET", path_re=r"/jobsets$", watch=False) == 1  # resumed, not relisted


def config_map(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "ml", "labels": {"app": "x"}},
    }


def next_about(events: queue.Queue[Event], name: str) -> Event:
    while True:
        event = events.get(timeout=10)
        if event.obj["metadata"]["name"] == name:
            return event


def test_a_subscriber_knowing_an_object_gone_before_it_joined_hears_it_deleted(kube_api):
    streams = SharedStreams(make_client(kube_api)._backend.kube)  # type: ignore[attr-defined]
    spec = StreamSpec(CONFIG_MAPS, "ml", "app")
    first: queue.Queue[Event] = queue.Queue()
    joined = streams.subscribe(spec, first.put)
    kube_api.wait_for_watches(1)
    made = kube_api.store.put(config_map("brief"))
    kube_api.store.delete("configmaps", "ml", "brief")
    assert next_about(first, "brief").type == "ADDED"
    assert next_about(first, "brief").type == "DELETED"  # the stream is past it
    late: queue.Queue[Event] = queue.Queue()
    again = streams.subscribe(
        StreamSpec(CONFIG_MAPS, "ml", "app", known=(known_as(made),)), late.put
    )
    assert again is joined  # the same stream
    assert next_about(late, "brief").type == "DELETED"
    streams.unsubscribe(again, late.put)
    streams.unsubscribe(joined, first.put)
    assert streams.open == 0 and watch_threads() == []


def test_a_subscriber_knowing_an_object_the_stream_has_not_shown_yet_waits_for_it(kube_api):
    streams = SharedStreams(make_client(kube_api)._backend.kube)  # type: ignore[attr-defined]
    spec = StreamSpec(CONFIG_MAPS, "ml", "app")
    first: queue.Queue[Event] = queue.Queue()
    joined = streams.subscribe(spec, first.put)
    kube_api.wait_for_watches(1)
    # The stream lags: its watch is down and comes back only after the object was made.
    kube_api.faults.inject("slow", count=1, delay=5.0, match=lambda info: info.is_watch)
    kube_api.cut_watches()
    made = kube_api.store.put(config_map("fresh"))
    late: queue.Queue[Event] = queue.Queue()
    streams.subscribe(StreamSpec(CONFIG_MAPS, "ml", "app", known=(known_as(made),)), late.put)
    # Not in the stream's cache: read once, found, so not reported gone while unseen.
    assert kube_api.count("GET", path_re=r"/configmaps/fresh$") == 1
    assert next_about(late, "fresh").type == "ADDED"
    streams.unsubscribe(joined, late.put)
    streams.unsubscribe(joined, first.put)
    assert streams.open == 0 and watch_threads() == []


def test_a_list_under_way_when_a_subscriber_joins_does_not_report_its_objects_gone(kube_api):
    streams = SharedStreams(make_client(kube_api)._backend.kube)  # type: ignore[attr-defined]
    # The stream's first list is answered as of before the object exists, and arrives late.
    listing = kube_api.faults.inject(
        "slow-reply",
        count=1,
        delay=2.0,
        match=lambda info: info.method == "GET" and not info.is_watch,
    )
    first: queue.Queue[Event] = queue.Queue()
    joined = streams.subscribe(StreamSpec(CONFIG_MAPS, "ml", "app"), first.put)
    kube_api.wait_for(lambda: any(r.handled for r in kube_api.request_log), timeout=10)
    assert listing.hits == 1
    made = kube_api.store.put(config_map("newer"))  # after the list was made
    late: queue.Queue[Event] = queue.Queue()
    streams.subscribe(StreamSpec(CONFIG_MAPS, "ml", "app", known=(known_as(made),)), late.put)
    # The list under way predates what the subscriber knows: it must not judge it gone.
    assert next_about(late, "newer").type == "ADDED"
    streams.unsubscribe(joined, late.put)
    streams.unsubscribe(joined, first.put)
    assert streams.open == 0 and watch_threads() == []
