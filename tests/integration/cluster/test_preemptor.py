"""Who preempted me: the explanation and the history name the preempting workload (job,
namespace, priority, queue) resolved from the Workload whose UID Kueue's Preempted condition
carries (recording `jobset-preempted-requeued-succeeded`), or say it is gone."""

from __future__ import annotations

import copy
from typing import Any

from gkeml_sdk import RetryPolicy, RunState

from .replay import SERVER_FIELDS, Replayer, fixture_events
from .test_scenarios import WATCHERS, gang

SCENARIO = "jobset-preempted-requeued-succeeded"
HIGH = "JobSet ml/high (priority 1000, queue team-a)"


def put_recorded_preemptor(cluster: Any) -> None:
    """The `high` job's Workload as Kueue recorded it (its UID is the one the message names)."""
    recorded = [e for e in fixture_events(SCENARIO, "high") if e["kind"] == "Workload"][-1]
    workload = copy.deepcopy(recorded["object"])
    meta = workload["metadata"]
    for field in (f for f in SERVER_FIELDS if f != "uid"):
        meta.pop(field, None)
    meta["namespace"] = "ml"
    meta["finalizers"] = []
    cluster.store.put(workload)


def test_the_explanation_and_the_history_name_the_preemptor(cluster, client):
    put_recorded_preemptor(cluster)
    run = client.submit(gang("low"), retry=RetryPolicy(max_resubmits=1, backoff_seconds=0.01))
    replay = Replayer(cluster, "ml", "low", 1, "low")
    replay.play(SCENARIO, "low", pause=0, until=1.6)  # evicted by `high`, waiting to requeue
    explanation = client.get_run("low").explain()
    assert explanation.sentence.startswith(f"Preempted by {HIGH}: Kueue evicted it"), (
        explanation.sentence
    )
    thread = replay.play_in_background(SCENARIO, "low", watchers=WATCHERS, since=1.6)
    assert run.wait(timeout=30).state is RunState.SUCCEEDED
    thread.join()
    preempted = [t for t in run.history if t.status.state is RunState.PREEMPTED]
    assert [t.detail for t in preempted] == [f"preempted by {HIGH}"]


def test_a_preemptor_that_is_gone_is_said_to_be_gone(cluster, client):
    client.submit(gang("low"))
    Replayer(cluster, "ml", "low", 1, "low").play(SCENARIO, "low", pause=0, until=1.6)
    sentence = client.get_run("low").explain().sentence
    assert sentence.startswith(
        "Preempted by a workload that no longer exists "
        "(Workload UID 2bb50f0b-e5ef-41ba-993b-86abdabac104): "
    ), sentence


def test_explain_reads_whole_namespaces_in_pages(cluster, client):
    """ProvisioningRequests and the Workloads searched for the preemptor grow with the
    namespace, and an object's Events with its age: explain reads them `limit` at a time,
    never in one answer."""
    put_recorded_preemptor(cluster)
    client.submit(gang("low"))
    Replayer(cluster, "ml", "low", 1, "low").play(SCENARIO, "low", pause=0, until=1.6)
    cluster.clear_request_log()
    assert client.get_run("low").explain().sentence.startswith(f"Preempted by {HIGH}")
    whole = [
        r
        for r in cluster.request_log
        if r.method == "GET"
        and not r.watch
        and r.path.endswith(("/events", "/provisioningrequests", "/workloads"))
        and not r.query.get("labelSelector")
    ]
    assert whole, "explain read no whole namespace: the test no longer looks at anything"
    assert [(r.path, r.query) for r in whole if "limit" not in r.query] == []


def test_explain_reads_the_events_of_its_own_objects_only(cluster, client):
    """Events are read per object, by field selector, as `kubectl describe` reads them: the
    other run's Events (here the preemptor's Workload's) are never read, nor counted as this
    run's."""
    put_recorded_preemptor(cluster)
    client.submit(gang("low"))
    Replayer(cluster, "ml", "low", 1, "low").play(SCENARIO, "low", pause=0, until=1.6)
    high = next(e for e in fixture_events(SCENARIO, "high") if e["kind"] == "Workload")
    workload = high["object"]["metadata"]["name"]
    cluster.store.put(
        {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": f"{workload}.1", "namespace": "ml"},
            "involvedObject": {"kind": "Workload", "name": workload, "namespace": "ml"},
            "reason": "AdmissionCheckUpdated",
            "message": "Admission check other updated state from Pending to Ready with "
            "message: the preemptor's, not ours",
        }
    )
    cluster.clear_request_log()
    explanation = client.get_run("low").explain()
    assert explanation.sentence.startswith(f"Preempted by {HIGH}")
    reads = [r for r in cluster.request_log if r.path.endswith("/events") and not r.watch]
    selectors = [r.query.get("fieldSelector", "") for r in reads]
    assert selectors, "explain read no Events: the test no longer looks at anything"
    assert all(s.startswith("involvedObject.kind=") for s in selectors), selectors
    assert all(not s.endswith(f"name={workload}") for s in selectors), selectors
    assert any(s.endswith(",involvedObject.name=low") for s in selectors), selectors
    assert "the preemptor's" not in str(explanation)
