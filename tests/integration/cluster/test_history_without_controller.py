"""A run nobody follows, on a cluster with no controller, still reads with the history the
cluster keeps: the Workload's conditions and `schedulingStats` (recording
`jobset-preempted-requeued-succeeded`, really preempted by Kueue), the preemptor named, and
not one write from the reader."""

from __future__ import annotations

from gkeml_sdk import RunState

from .conftest import make_client
from .replay import Replayer
from .test_cancel_submission import writes
from .test_preemptor import HIGH, SCENARIO, put_recorded_preemptor
from .test_scenarios import gang


def test_a_preempted_run_nobody_followed_reads_its_history_from_the_workload(cluster, client):
    put_recorded_preemptor(cluster)
    client.submit(gang("low"))
    Replayer(cluster, "ml", "low", 1, "low").play(SCENARIO, "low", pause=0)
    cluster.clear_request_log()

    run = make_client(cluster).get_run("low")
    history = run.history  # before any `state`: the history reads the cluster itself
    status = run.state

    assert status.state is RunState.SUCCEEDED
    assert [t.status.state for t in history] == [RunState.PREEMPTED, RunState.SUCCEEDED]
    preempted = history[0]
    assert preempted.detail == f"preempted by {HIGH}; from schedulingStats"
    assert preempted.status.message.startswith("Preempted to accommodate a workload (UID: ")
    assert run.counters.preemptions == 1
    assert writes(cluster) == 0
