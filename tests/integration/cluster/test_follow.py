"""Run.follow() on a cluster run: statuses come from the watch streams, so a run that sits
RUNNING costs no API request per second, and every transition and log line still shows."""

from __future__ import annotations

import threading
import time

import pytest

from gkeml_sdk import RunState, RunStatus
from gkeml_sdk.errors import RunTimeoutError

from .replay import Replayer
from .test_scenarios import gang


def test_following_a_running_run_makes_no_requests_while_nothing_changes(cluster, client):
    run = client.submit(gang())
    replay = Replayer(cluster, "ml", "train", 1, "train")
    replay.play("jobset-succeeded", "train", until=2.0)
    pods = sorted(p["metadata"]["name"] for p in cluster.objects("pods", "ml"))
    for pod in pods:
        cluster.set_pod_log("ml", pod, "start\n")
    items: list[str | RunStatus] = []
    thread = threading.Thread(target=lambda: items.extend(run.follow(timeout=30)), daemon=True)
    thread.start()

    def following() -> bool:
        lines = {"[0] start", "[1] start"} <= set(items)
        return lines and RunState.RUNNING in states(items)

    cluster.wait_for(following, timeout=10)

    cluster.clear_request_log()
    time.sleep(3.0)
    per_second = len(cluster.request_log) / 3.0
    # Polling run.state made about 16 requests a second; the open watches make none.
    assert per_second < 0.5, f"{per_second:.1f} requests/s while following"

    replay.play("jobset-succeeded", "train", since=2.0)
    for pod in pods:
        cluster.finish_pod_log("ml", pod)
    thread.join(timeout=20)
    assert not thread.is_alive()
    assert states(items)[-1] is RunState.SUCCEEDED


def states(items: list[str | RunStatus]) -> list[RunState]:
    return [i.state for i in items if isinstance(i, RunStatus)]


def test_following_stops_at_the_timeout_and_the_run_keeps_going(cluster, client):
    run = client.submit(gang())
    Replayer(cluster, "ml", "train", 1, "train").play("jobset-succeeded", "train", until=2.0)
    # The replay stops with the run RUNNING: only the timeout can end this follow.
    with pytest.raises(RunTimeoutError):
        list(run.follow(timeout=1.0))
    assert cluster.objects("jobsets", "ml") != []


def test_a_follow_abandoned_early_closes_its_watches(cluster, client):
    run = client.submit(gang())
    Replayer(cluster, "ml", "train", 1, "train").play("jobset-succeeded", "train", until=2.0)
    assert run.state.state is RunState.RUNNING
    following = run.follow()
    next(following)  # e.g. Ctrl-C in `%%gke_train --wait` after the first line
    # The status wait (JobSet, Workload, Pod) and the log follower (JobSet, Pod) share the
    # backend's streams: five subscriptions, three watches.
    streams = client._backend.streams  # type: ignore[attr-defined]
    cluster.wait_for(lambda: streams.subscribers == 5, timeout=10)
    cluster.wait_for_watches(3, timeout=10)
    assert cluster.open_watches == 3
    following.close()
    cluster.wait_for(lambda: cluster.open_watches == 0, timeout=10)
    assert streams.open == 0 and cluster.peak_watches == 3
    assert run.state.state is RunState.RUNNING  # the run itself goes on
