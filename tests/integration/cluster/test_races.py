"""Races a real cluster produces: names reused while the old object is dying, objects of other
runs under our names, and cancels from another client landing in the middle of a resubmission."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from gkeml_sdk import RetryPolicy, RunState, TrainingJob
from gkeml_sdk.errors import ClusterError
from tests.integration.cluster.conftest import record_of
from tests.kubeapi.faults import RequestInfo

from .conftest import make_client
from .replay import Replayer
from .test_scenarios import WATCHERS, gang, jobsets

HOLD = "test.gkeml.dev/hold"


def release_later(cluster: Any, name: str, after: float) -> threading.Thread:
    """Drop the test finalizer of JobSet `name` after `after` seconds (a slow foreground
    deletion: its pods take their grace period to terminate)."""

    def release() -> None:
        time.sleep(after)
        current = cluster.store.get("jobsets", "ml", name)
        current["metadata"]["finalizers"] = [
            f for f in current["metadata"].get("finalizers", []) if f != HOLD
        ]
        cluster.store.put(current)

    thread = threading.Thread(target=release, daemon=True)
    thread.start()
    return thread


def test_a_finished_name_resubmitted_never_reports_the_old_status(cluster, client):
    first = client.submit(gang())
    replay = Replayer(cluster, "ml", "train", 1, "train")
    thread = replay.play_in_background("jobset-succeeded", "train", watchers=WATCHERS)
    assert first.wait(timeout=30).state is RunState.SUCCEEDED
    thread.join()
    old = cluster.store.get("jobsets", "ml", "train")
    old["metadata"]["finalizers"] = [HOLD]
    cluster.store.put(old)
    releaser = release_later(cluster, "train", after=0.5)

    second = client.submit(gang())

    releaser.join()
    new = cluster.store.get("jobsets", "ml", "train")
    assert new["metadata"]["uid"] != old["metadata"]["uid"]
    assert "deletionTimestamp" not in new["metadata"] and "status" not in new
    assert second.state.state is RunState.PENDING
    assert [t.status.state for t in second.history] == [RunState.PENDING]


def test_a_name_held_past_the_deletion_timeout_is_a_clear_error(cluster):
    client = make_client(cluster, deletion_timeout=0.3)
    first = client.submit(gang())
    held = cluster.store.get("jobsets", "ml", "train")
    held["metadata"]["finalizers"] = [HOLD]
    cluster.store.put(held)
    first.cancel()  # its JobSet stays, terminating, until the finalizer goes
    with pytest.raises(ClusterError, match=r"JobSet train.*still there after 0.3 s.*" + HOLD):
        client.submit(gang())


@pytest.mark.parametrize(
    ("labels", "owner"),
    [
        ({"gkeml.dev/run-id": "other", "gkeml.dev/attempt": "2"}, "attempt 2 of gkeml run 'other'"),
        ({"app": "mine"}, "something other than gkeml"),
    ],
)
def test_an_object_of_another_run_is_never_touched(cluster, client, labels, owner):
    foreign = gang(namespace="ml").compile().main
    foreign["metadata"]["labels"] = labels
    stored = cluster.store.put(foreign)
    with pytest.raises(ClusterError, match=f"409 AlreadyExists.*belongs to {owner}"):
        client.submit(gang())
    after = cluster.store.get("jobsets", "ml", "train")
    assert after["metadata"]["resourceVersion"] == stored["metadata"]["resourceVersion"]


def _slow_then_cancel(cluster: Any, target: str, canceller: Any) -> threading.Thread:
    """Hold the resubmitting client's request `target` ("create": its create of attempt 2;
    "recheck": its first cancel-marker read after that create) for 2 s before the server
    handles it, and have the other client cancel the run meanwhile: the cancel lands exactly
    in that gap."""
    creates = {"n": 0}
    marker = "/configmaps/train-gkeml-cancelled"

    def match(info: RequestInfo) -> bool:
        if info.method == "POST" and info.path.endswith("/namespaces/ml/jobsets"):
            creates["n"] += 1
            return target == "create" and creates["n"] == 2
        return (
            target == "recheck"
            and creates["n"] == 2
            and info.method == "GET"
            and info.path.endswith(marker)
        )

    rule = cluster.faults.inject(kind="slow", count=1, delay=2.0, match=match)

    def cancel() -> None:
        cluster.wait_for(lambda: rule.hits == 1, timeout=30)
        canceller.get_run("train").cancel()

    thread = threading.Thread(target=cancel, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize("target", ["create", "recheck"])
def test_no_attempt_outlives_a_cancel_from_another_client(cluster, target):
    resubmitter, canceller = make_client(cluster), make_client(cluster)
    cancelling = _slow_then_cancel(cluster, target, canceller)
    run = resubmitter.submit(gang(), retry=RetryPolicy(max_resubmits=2, backoff_seconds=0.05))
    # A deactivation is an infrastructure loss: attempt 2 is created after the backoff.
    replay = Replayer(cluster, "ml", "train", 1, "train")
    thread = replay.play_in_background(
        "jobset-podsready-timeout-deactivated", "stuck", watchers=WATCHERS
    )
    final = run.wait(timeout=30)
    thread.join()
    cancelling.join()
    assert final.state is RunState.CANCELLED
    assert run.attempt == 2  # the resubmission happened, and nothing of it is left
    cluster.wait_for(lambda: jobsets(cluster) == [], timeout=5)


def test_a_running_attempt_is_never_reapplied(cluster, client):
    """Kueue owns `spec.suspend` once it admits: a re-apply of the compiled JobSet would
    conflict with it (409) or, forced, suspend the running job. The SDK only ever creates."""
    run = client.submit(gang())
    Replayer(cluster, "ml", "train", 1, "train").play("jobset-succeeded", "train", until=2.0)
    assert run.state.state is RunState.RUNNING
    again = client.submit(gang())  # the same submission: the same run
    assert again.state.state is RunState.RUNNING
    assert make_client(cluster).get_run("train").state.state is RunState.RUNNING
    writes = [
        r
        for r in cluster.request_log
        if r.method in ("PATCH", "PUT") and "/jobsets/" in r.path + "/"
    ]
    assert writes == []
    assert cluster.store.get("jobsets", "ml", "train")["spec"]["suspend"] is False


def test_a_retried_create_never_suspends_what_kueue_just_admitted(cluster, client):
    # The create lands but its answer is lost; Kueue admits the JobSet before the client
    # retries. A retried (forced) apply would set `suspend: true` on the running job again.
    cluster.faults.inject(kind="reset-after-write", count=1, match=("POST", r"/jobsets$"))
    retry = cluster.faults.inject(kind="slow", count=1, delay=1.0, match=(None, r"/jobsets"))

    def admit() -> None:
        cluster.wait_for(lambda: retry.hits == 1)
        cluster.store.patch("jobsets", "ml", "train", {"spec": {"suspend": False}}, manager="kueue")

    thread = threading.Thread(target=admit, daemon=True)
    thread.start()
    run = client.submit(gang())
    thread.join()
    assert cluster.store.get("jobsets", "ml", "train")["spec"]["suspend"] is False
    assert (
        record_of(run).current.uid == cluster.store.get("jobsets", "ml", "train")["metadata"]["uid"]
    )


def test_a_code_config_map_that_is_not_the_runs_is_never_overwritten(cluster, client):
    # The code travels in the run record's ConfigMap; one of that name that gkeml did not
    # write is another tool's: the submission is refused and nothing of it is left behind.
    job = TrainingJob.from_code("print('hi')", name="train", queue="team-a", image="python:3")
    foreign = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "train-gkeml-run", "namespace": "ml", "labels": {"team": "data"}},
        "data": {"settings": "keep me"},
    }
    cluster.store.put(foreign)
    with pytest.raises(ClusterError, match=r"train-gkeml-run"):
        client.submit(job)
    assert cluster.store.get("configmaps", "ml", "train-gkeml-run")["data"] == {
        "settings": "keep me"
    }
    # The Job made before the record was refused is deleted (its pods' finalizers may keep it
    # a moment): it never runs without a record.
    assert jobsets(cluster) == []
    assert all(j["metadata"].get("deletionTimestamp") for j in cluster.objects("jobs", "ml"))
