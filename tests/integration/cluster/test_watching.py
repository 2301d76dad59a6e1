"""wait() follows watch streams: resumes after a drop, relists on 410 Gone, never polls, and
shares streams across runs."""

from __future__ import annotations

import threading

from gkeml_sdk import RunState

from .replay import Replayer
from .test_scenarios import WATCHERS, gang, states


def lists(server, plural: str) -> int:
    return sum(
        1
        for r in server.request_log
        if r.method == "GET" and r.path.endswith(f"/{plural}") and "watch" not in r.query
    )


def test_resumes_after_dropped_streams_without_relisting(cluster, client):
    run = client.submit(gang())
    replay = Replayer(cluster, "ml", "train", 1, "train")

    def controllers() -> None:
        replay.wait_for_watchers(WATCHERS)
        replay.play("jobset-succeeded", "train", until=1.3)
        assert cluster.cut_watches() >= WATCHERS
        replay.play("jobset-succeeded", "train", since=1.3)

    thread = threading.Thread(target=controllers, daemon=True)
    thread.start()
    assert run.wait(timeout=30).state is RunState.SUCCEEDED
    thread.join()
    assert RunState.RUNNING in states(run)
    assert lists(cluster, "jobsets") == 1 and lists(cluster, "workloads") == 1


def test_relists_after_410_gone_and_still_counts_the_preemption(cluster, client):
    run = client.submit(gang("low"))
    replay = Replayer(cluster, "ml", "low", 1, "low")
    scenario = "jobset-preempted-requeued-succeeded"

    def controllers() -> None:
        replay.wait_for_watchers(WATCHERS)
        replay.play(scenario, "low", until=1.2)
        # Drop the streams and forget history: resuming from the old version gets 410 Gone,
        # and the preemption happens while the client is not watching.
        cluster.compact()
        cluster.cut_watches()
        replay.play(scenario, "low", since=1.2, until=2.5, pause=0)
        cluster.compact()
        replay.play(scenario, "low", since=2.5)

    thread = threading.Thread(target=controllers, daemon=True)
    thread.start()
    assert run.wait(timeout=30).state is RunState.SUCCEEDED
    thread.join()
    assert run.preemptions == 1
    assert lists(cluster, "workloads") >= 2  # the relist after 410


def test_waiting_on_many_runs_shares_watch_connections(cluster, client):
    runs = [client.submit(gang(f"job-{i}")) for i in range(12)]
    replays = [Replayer(cluster, "ml", r.name, 1, r.name) for r in runs]
    peak = []

    def controllers() -> None:
        replays[0].wait_for_watchers(WATCHERS)
        for replay in replays:
            peak.append(cluster.open_watches)
            replay.play("jobset-succeeded", "train", pause=0)

    thread = threading.Thread(target=controllers, daemon=True)
    thread.start()
    finals = client.wait_all(runs, timeout=60)
    thread.join()
    assert [f.state for f in finals] == [RunState.SUCCEEDED] * 12
    assert max(peak) == WATCHERS


def test_a_jobset_deleted_while_the_watch_was_down_ends_the_wait(cluster, client):
    run = client.submit(gang())
    replay = Replayer(cluster, "ml", "train", 1, "train")

    def controllers() -> None:
        replay.wait_for_watchers(WATCHERS)
        replay.play("jobset-succeeded", "train", until=2.0)
        # The resumes reach the server after the delete and a compaction: 410 Gone, and the
        # JobSet is simply absent from the relist.
        cluster.faults.inject("slow", count=WATCHERS, delay=1.0, match=lambda i: i.is_watch)
        cluster.cut_watches()
        cluster.store.delete("jobsets", "ml", "train")
        cluster.compact()

    thread = threading.Thread(target=controllers, daemon=True)
    thread.start()
    assert run.wait(timeout=15).reason == "JobSetDeleted"  # lost: not cancelled through gkeml
    thread.join()
    assert RunState.RUNNING in states(run)


def test_a_jobset_deleted_before_the_stream_first_listed_it_ends_the_wait(cluster, client):
    run = client.submit(gang())
    # The JobSet goes away after wait() checked it and before its stream's first list.
    listing = cluster.faults.inject(
        kind="slow",
        delay=1.0,
        match=lambda info: (
            info.method == "GET" and info.path.endswith("/jobsets") and not info.is_watch
        ),
    )

    def delete_meanwhile() -> None:
        cluster.wait_for(lambda: listing.hits == 1)
        cluster.store.delete("jobsets", "ml", "train")

    thread = threading.Thread(target=delete_meanwhile, daemon=True)
    thread.start()
    assert run.wait(timeout=10).reason == "JobSetDeleted"  # lost: not cancelled through gkeml
    thread.join()
