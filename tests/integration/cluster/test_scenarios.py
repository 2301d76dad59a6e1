"""End-to-end scenarios through the fake API server, the controllers played from the
recordings of a real Kueue + JobSet: final state, history and the exact objects created."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest

from gkeml_sdk import (
    Accelerator,
    Capacity,
    ClusterSetup,
    RetryPolicy,
    RunState,
    Team,
    TrainingJob,
)
from gkeml_sdk.errors import ClusterError, ConfigError
from gkeml_sdk.runs.handle import FailureCause

from .conftest import FAST_NO_RETRY, make_client, record_of
from .replay import FIXTURES, Replayer

# One watch per kind: JobSet (or Job), Workload, Pod.
WATCHERS = 3


def gang(name: str = "train", **kw: Any) -> TrainingJob:
    return TrainingJob(
        **{
            "name": name,
            "image": "busybox",
            "command": ["true"],
            "accelerator": Accelerator("h100", count=8),
            "nodes": 2,
            "queue": "team-a",
            "stateless": True,  # busybox `true` keeps nothing to resume from
            **kw,
        }
    )


def states(run: Any) -> list[RunState]:
    seen: list[RunState] = []
    for transition in run.history:
        if not seen or seen[-1] is not transition.status.state:
            seen.append(transition.status.state)
    return seen


def creates(server: Any, plural: str) -> list[str]:
    """Names of objects of `plural` created, in order (from the server's event history)."""
    events, _ = server.store.events_after(0)
    assert events is not None, "the event history was compacted"
    names = []
    for event in events:
        name = event.obj["metadata"]["name"]
        if event.type == "ADDED" and event.key.split(".")[0] == plural and name not in names:
            names.append(name)
    return names


def jobsets(server: Any) -> list[str]:
    return sorted(o["metadata"]["name"] for o in server.objects("jobsets", "ml"))


def live_attempts(server: Any) -> list[str]:
    """JobSets not finished and whose Workload Kueue has not deactivated."""
    live = []
    for jobset in server.objects("jobsets", "ml"):
        status = jobset.get("status") or {}
        conditions = {c["type"]: c["status"] for c in status.get("conditions", [])}
        if "True" in (conditions.get("Completed"), conditions.get("Failed")):
            continue
        selector = f"kueue.x-k8s.io/job-uid={jobset['metadata']['uid']}"
        workloads = server.store.list("workloads", "ml", selector)
        if any(w["spec"].get("active") is False for w in workloads):
            continue
        live.append(jobset["metadata"]["name"])
    return sorted(live)


def test_a_queued_admitted_succeeded(cluster, client):
    run = client.submit(gang())
    replay = Replayer(cluster, "ml", "train", 1, "train")
    thread = replay.play_in_background("jobset-succeeded", "train", watchers=WATCHERS)
    final = run.wait(timeout=30)
    thread.join()
    assert final.state is RunState.SUCCEEDED
    assert states(run)[-3:] == [RunState.STARTING, RunState.RUNNING, RunState.SUCCEEDED]
    assert RunState.QUEUED in states(run)
    assert jobsets(cluster) == ["train"]


def test_a_single_node_job(cluster, client):
    job = TrainingJob(name="one", image="busybox", command=["true"], queue="team-a",
                      accelerator=Accelerator("h100", count=8))  # fmt: skip
    run = client.submit(job)
    thread = Replayer(cluster, "ml", "one", 1, "one").play_in_background(
        "job-succeeded", "single", watchers=WATCHERS
    )
    assert run.wait(timeout=30).state is RunState.SUCCEEDED
    thread.join()
    assert [o["metadata"]["name"] for o in cluster.objects("jobs", "ml")] == ["one"]


def test_b_kueue_preemption_is_reported_not_resubmitted(cluster, client):
    run = client.submit(gang("low"), retry=RetryPolicy(max_resubmits=3, backoff_seconds=0.01))
    thread = Replayer(cluster, "ml", "low", 1, "low").play_in_background(
        "jobset-preempted-requeued-succeeded", "low", watchers=WATCHERS
    )
    final = run.wait(timeout=30)
    thread.join()
    assert final.state is RunState.SUCCEEDED
    assert run.preemptions == 1
    assert states(run).count(RunState.PREEMPTED) == 1
    assert run.attempt == 1 and jobsets(cluster) == ["low"]
    assert creates(cluster, "jobsets") == ["low"]


def test_c_spot_reclaims_twice_without_spending_user_restarts(cluster, client):
    run = client.submit(gang(spot=True, max_restarts=1))
    replay = Replayer(cluster, "ml", "train", 1, "train")
    scenario, first, replacement = (
        "jobset-spot-disruption-succeeded",
        "train-node-0-0-2ct7q",
        ("train-node-0-0-mhrhs"),
    )
    # The recording has one kubelet termination (t=1.54) and the pod's replacement (t=11.22);
    # the same disruption is played again on the replacement, replaced by a third pod.
    again = {first: replacement, replacement: "train-node-0-0-z9q4k"}

    def controllers() -> None:
        replay.wait_for_watchers(WATCHERS)
        replay.play(scenario, "train", until=11.8)
        replay.play(scenario, "train", since=1.5, until=11.8, kinds=("Pod",), rename=again)
        replay.play(scenario, "train", since=11.8, rename={replacement: "train-node-0-0-z9q4k"})

    thread = threading.Thread(target=controllers, daemon=True)
    thread.start()
    final = run.wait(timeout=30)
    assert final.state is RunState.SUCCEEDED
    counters = run.counters
    thread.join()
    assert counters.disruptions == 2
    assert counters.user_restarts == 0
    assert states(run).count(RunState.RESTARTING) == 2
    assert run.attempt == 1 and jobsets(cluster) == ["train"]


def test_d_deactivated_after_requeue_limit_resubmits_on_demand(cluster, client):
    policy = RetryPolicy(max_resubmits=2, fallback_to_on_demand_after=1, backoff_seconds=0.05)
    run = client.submit(gang(spot=True), retry=policy)
    thread = Replayer(cluster, "ml", "train", 1, "train").play_in_background(
        "jobset-podsready-timeout-deactivated", "stuck", watchers=WATCHERS
    )
    second = Replayer(cluster, "ml", "train", 2, "train--r2")

    def on_status(status):
        if status.reason == "Resubmitted":
            second.play_in_background("jobset-succeeded", "train", watchers=0)

    final = run.wait(timeout=30, progress=on_status)
    thread.join()
    assert final.state is RunState.SUCCEEDED
    assert run.attempt == 2
    # The same logical run never runs twice: attempt 1 is kept finished (its name taken, so a
    # late create of it collides) while attempt 2 runs.
    cluster.wait_for(lambda: jobsets(cluster) == ["train", "train--r2"])
    assert live_attempts(cluster) == []  # attempt 1 deactivated, attempt 2 succeeded
    assert creates(cluster, "jobsets") == ["train", "train--r2"]
    attempt2 = cluster.store.get("jobsets", "ml", "train--r2")
    pod_spec = attempt2["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    assert "cloud.google.com/gke-spot" not in pod_spec.get("nodeSelector", {})
    history = states(run)
    assert RunState.FAILED in history and history[-1] is RunState.SUCCEEDED
    failed = next(t for t in run.history if t.status.state is RunState.FAILED)
    assert failed.status.cause is FailureCause.DEACTIVATED and failed.attempt == 1
    assert {t.attempt for t in run.history} == {1, 2}


def test_e_user_code_failure_is_never_resubmitted(cluster, client):
    run = client.submit(
        gang(max_restarts=1), retry=RetryPolicy(max_resubmits=3, backoff_seconds=0.01)
    )
    thread = Replayer(cluster, "ml", "train", 1, "train").play_in_background(
        "jobset-user-failure-after-restart", "train", watchers=WATCHERS
    )
    final = run.wait(timeout=30)
    thread.join()
    assert final.state is RunState.FAILED and final.cause is FailureCause.USER_CODE
    assert run.counters.user_restarts == 1
    assert jobsets(cluster) == ["train"]


@pytest.mark.parametrize("write_applied", [False, True])
def test_f_client_killed_between_deciding_and_creating_resubmits_once(cluster, write_applied):
    crashing = make_client(cluster, api_retry=FAST_NO_RETRY)
    policy = RetryPolicy(max_resubmits=2, backoff_seconds=0.01)
    run = crashing.submit(gang(), retry=policy)
    thread = Replayer(cluster, "ml", "train", 1, "train").play_in_background(
        "jobset-podsready-timeout-deactivated", "stuck", watchers=WATCHERS
    )
    # The client dies at the moment it creates attempt 2 (before or after the write lands).
    cluster.faults.inject(
        count=1,
        kind="reset-after-write" if write_applied else "reset",
        match=("POST", r"/namespaces/ml/jobsets$"),
    )
    with pytest.raises(ClusterError):
        run.wait(timeout=30)
    thread.join()
    assert (cluster.store.get("jobsets", "ml", "train--r2") is not None) == write_applied
    resumed = make_client(cluster).get_run("train")
    assert resumed.attempt == 2
    replay = Replayer(cluster, "ml", "train", 2, "train--r2")
    second = replay.play_in_background("jobset-succeeded", "train", watchers=WATCHERS)
    assert resumed.wait(timeout=30).state is RunState.SUCCEEDED
    second.join()
    cluster.wait_for(lambda: jobsets(cluster) == ["train", "train--r2"])
    assert live_attempts(cluster) == []


def test_g_invalid_queue_missing_crds_forbidden_namespace(cluster, client, kube_api_factory):
    with pytest.raises(ConfigError, match=r"LocalQueue 'nope' does not exist.*team-a"):
        client.submit(gang(queue="nope"))
    with pytest.raises(ConfigError, match=r"WorkloadPriorityClass 'urgent'.*acc-low"):
        client.submit(gang(priority="urgent"))
    bare = kube_api_factory(exclude_crds=["jobset.x-k8s.io"])
    bare.store.put({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
                    "metadata": {"name": "team-a", "namespace": "ml"},
                    "spec": {"clusterQueue": "acc-cq"}})  # fmt: skip
    with pytest.raises(ConfigError, match="JobSet is not installed: kubectl apply"):
        make_client(bare).submit(gang())
    cluster.forbid_namespace("ml")
    with pytest.raises(ClusterError) as err:
        make_client(cluster).submit(gang(name="other"))
    assert err.value.status == 403 and "permission" in str(err.value)
    assert cluster.objects("jobsets", "ml") == []
    for server in (cluster, bare):
        assert server.objects("configmaps", "ml") == []
        assert not [r for r in server.request_log if r.method in ("POST", "PATCH", "PUT")]


def test_queued_runs_show_their_position_from_the_visibility_api(cluster, client):
    recorded = json.loads(
        (FIXTURES / "jobset-queued-behind-another.pendingworkloads.json").read_text()
    )
    cluster.serve_aggregated(
        "/apis/visibility.kueue.x-k8s.io/v1beta2/namespaces/ml/localqueues/team-a/pendingworkloads",
        recorded,
    )
    run = client.submit(gang("second", nodes=1, gang=True))
    thread = Replayer(cluster, "ml", "second", 1, "second").play_in_background(
        "jobset-queued-behind-another", "second", watchers=WATCHERS
    )
    assert run.wait(timeout=30).state is RunState.SUCCEEDED
    thread.join()
    queued = [t.status for t in run.history if t.status.state is RunState.QUEUED]
    assert any("position 0 in LocalQueue team-a, 0 in ClusterQueue" in s.message for s in queued)
    assert any("insufficient unused quota" in s.message for s in queued)


def test_a_run_cancelled_elsewhere_during_the_backoff_is_not_resubmitted(cluster, client):
    policy = RetryPolicy(max_resubmits=2, backoff_seconds=0.5)
    run = client.submit(gang(), retry=policy)
    thread = Replayer(cluster, "ml", "train", 1, "train").play_in_background(
        "jobset-podsready-timeout-deactivated", "stuck", watchers=WATCHERS
    )

    def cancel_when_lost(status):
        if status.state is RunState.FAILED:
            make_client(cluster).get_run("train").cancel()

    final = run.wait(timeout=30, progress=cancel_when_lost)
    thread.join()
    assert final.state is RunState.CANCELLED
    assert cluster.store.get("jobsets", "ml", "train--r2") is None


def dws_queue(client: Any) -> None:
    """Team team-a's queued-provisioning queue, set up as a platform engineer would."""
    client.apply_setup(
        ClusterSetup(
            capacity=[Capacity(accelerator=Accelerator("h100", count=8), provisioning=["queued"])],
            teams=[Team(name="team-a", namespaces=["ml"], quota={"h100": 16})],
            nccl_installers=False,  # the queue only; no node DaemonSets in this fake cluster
        )
    )


def test_queued_provisioning_waits_for_capacity_then_runs(cluster, client):
    dws_queue(client)
    run = client.submit(gang(provisioning="queued", queue="team-a-queued", max_runtime="1h"))
    thread = Replayer(cluster, "ml", "train", 1, "train").play_in_background(
        "jobset-dws-provisioned-succeeded", "train", watchers=WATCHERS
    )
    final = run.wait(timeout=30)
    thread.join()
    assert final.state is RunState.SUCCEEDED
    assert states(run) == [RunState.PENDING, RunState.QUEUED, RunState.WAITING_FOR_CAPACITY,
                           RunState.STARTING, RunState.RUNNING, RunState.SUCCEEDED]  # fmt: skip
    waiting = [t.status for t in run.history if t.status.state is RunState.WAITING_FOR_CAPACITY]
    # First quota without checks listed yet, then the check's own state, as Kueue wrote them.
    assert [(s.reason, s.message) for s in waiting] == [
        ("AdmissionChecksPending", "quota reserved; waiting for admission checks"),
        ("AdmissionChecksPending", "acc-dws: Pending"),
        (
            "AdmissionChecksReady",
            "acc-dws: Ready (Provisioned by the test acting as cluster autoscaler)",
        ),
    ]
    created = cluster.store.get("jobsets", "ml", "train")
    annotations = dict(created["metadata"]["annotations"])
    assert annotations.pop("gkeml.dev/submission") == repr(record_of(run).submitted_at)
    assert annotations.pop("gkeml.dev/spec-digest") == record_of(run).spec_digest
    assert annotations == {"provreq.kueue.x-k8s.io/maxRunDurationSeconds": "3600"}
    assert jobsets(cluster) == ["train"]


def test_queued_provisioning_failure_is_resubmitted_per_the_retry_policy(cluster, client):
    dws_queue(client)
    policy = RetryPolicy(max_resubmits=1, backoff_seconds=0.05)
    run = client.submit(gang(provisioning="queued", queue="team-a-queued"), retry=policy)
    thread = Replayer(cluster, "ml", "train", 1, "train").play_in_background(
        "jobset-dws-provisioning-failed-deactivated", "train", watchers=WATCHERS
    )
    second = Replayer(cluster, "ml", "train", 2, "train--r2")

    def on_status(status):
        if status.reason == "Resubmitted":
            second.play_in_background("jobset-dws-provisioned-succeeded", "train", watchers=0)

    final = run.wait(timeout=30, progress=on_status)
    thread.join()
    assert final.state is RunState.SUCCEEDED and run.attempt == 2
    first = [t.status for t in run.history if t.attempt == 1]
    assert [(s.state, s.reason) for s in first if s.state is not RunState.PENDING][:3] == [
        (RunState.QUEUED, ""),
        (RunState.WAITING_FOR_CAPACITY, "AdmissionChecksPending"),
        (RunState.WAITING_FOR_CAPACITY, "AdmissionCheckRetry"),
    ]
    retry = next(s for s in first if s.reason == "AdmissionCheckRetry")
    assert "GCE out of resources" in retry.message
    lost = next(s for s in first if s.state is RunState.FAILED)
    assert lost.reason == "DeactivatedDueToAdmissionCheck"
    assert lost.cause is FailureCause.DEACTIVATED and "GCE out of resources again" in lost.message
    assert RunState.WAITING_FOR_CAPACITY in [t.status.state for t in run.history if t.attempt == 2]
    cluster.wait_for(lambda: jobsets(cluster) == ["train", "train--r2"])
    attempt2 = cluster.store.get("jobsets", "ml", "train--r2")
    pod = attempt2["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    assert pod["nodeSelector"]["cloud.google.com/gke-queued"] == "true"
    assert attempt2["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "team-a-queued"
