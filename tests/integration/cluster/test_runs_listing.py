"""`runs()` lists each kind once (records, JobSets/Jobs, Workloads, pods) and joins them: its
rows say what each run's own reads say, and its requests do not grow with the runs."""

from __future__ import annotations

import gc
import json
from typing import Any

import pytest

from gkeml_magics.display import RunTable
from gkeml_sdk import Accelerator, RunState, TrainingJob, runs_html
from gkeml_sdk.cli.main import main

from .clones import put_copy, run_objects
from .conftest import make_client
from .replay import FIXTURES, Replayer
from .test_preemptor import SCENARIO as PREEMPTED
from .test_preemptor import put_recorded_preemptor
from .test_records_fail_alone import RECORD_LABELS, configmap
from .test_scenarios import gang

QUEUED = "jobset-queued-behind-another"
VISIBILITY = (
    "/apis/visibility.kueue.x-k8s.io/v1beta2/namespaces/ml/localqueues/team-a/pendingworkloads"
)


def single(name: str) -> TrainingJob:
    return TrainingJob(name=name, image="busybox", command=["true"], queue="team-a",
                       accelerator=Accelerator("h100", count=8), stateless=True)  # fmt: skip


def play(cluster: Any, run: str, scenario: str, job: str, until: float = float("inf")) -> None:
    kinds = ("JobSet", "Job", "Workload", "Pod")
    Replayer(cluster, "ml", run, 1, run).play(scenario, job, pause=0, until=until, kinds=kinds)


def serve_queue_positions(cluster: Any) -> None:
    recorded = json.loads((FIXTURES / f"{QUEUED}.pendingworkloads.json").read_text())
    for item in recorded["items"]:
        item["metadata"]["namespace"] = "ml"
    cluster.serve_aggregated(VISIBILITY, recorded)


def varied_runs(cluster: Any) -> None:
    """Runs in every state a listing meets, each made as the cluster would make it."""
    client = make_client(cluster)
    client.submit(gang("pending"))  # no Workload yet
    client.submit(gang("second", nodes=1, gang=True))
    play(cluster, "second", QUEUED, "second", until=2.0)  # queued behind another, a position
    client.submit(gang("running"))
    play(cluster, "running", "jobset-succeeded", "train", until=2.0)
    put_recorded_preemptor(cluster)
    client.submit(gang("preempted"))
    play(cluster, "preempted", PREEMPTED, "low", until=1.6)
    client.submit(gang("ended"))  # the cluster says it succeeded; no record says so yet
    play(cluster, "ended", "jobset-succeeded", "train")
    finished = client.submit(gang("finished"))
    play(cluster, "finished", "jobset-succeeded", "train")
    assert finished.wait(timeout=30).state is RunState.SUCCEEDED  # recorded by this client
    client.submit(single("single"))  # a batch Job
    play(cluster, "single", "job-succeeded", "single", until=1.5)
    client.submit(gang("cancelled")).cancel()
    client.submit(gang("missing"))
    play(cluster, "missing", "jobset-succeeded", "train", until=2.0)
    cluster.store.delete("jobsets", "ml", "missing")  # deleted behind the SDK's back
    damaged = {"schema": "2", "spec.yaml": "name: broken\n", "attempts.json": "[{not json"}
    cluster.store.put(configmap("broken-gkeml-run", damaged, RECORD_LABELS))


def seen(run: Any) -> tuple[Any, ...]:
    """What a row and a history show of a run (not when this client happened to look)."""
    return (run.state, [(t.status, t.attempt, t.detail, t.key) for t in run.history])


def test_the_listing_says_what_each_runs_own_reads_say(cluster):
    serve_queue_positions(cluster)
    varied_runs(cluster)
    listed = {r.name: seen(r) for r in make_client(cluster).runs()}
    states = {name: row[0].state for name, row in listed.items()}
    assert states == {
        "pending": RunState.PENDING,
        "second": RunState.QUEUED,
        "running": RunState.RUNNING,
        "preempted": RunState.PREEMPTED,
        "ended": RunState.SUCCEEDED,
        "finished": RunState.SUCCEEDED,
        "single": RunState.RUNNING,
        "cancelled": RunState.CANCELLED,
        "missing": RunState.FAILED,  # JobSetDeleted: lost, not cancelled through gkeml
        "broken": RunState.UNREADABLE,
    }
    assert "position 0 in LocalQueue team-a" in listed["second"][0].message
    assert any("preempted by JobSet ml/high" in t[2] for t in listed["preempted"][1])
    for name, row in listed.items():
        if name != "broken":
            assert row == seen(make_client(cluster).get_run(name)), name


def test_a_listed_state_is_the_listings_read_and_the_next_one_reads_again(cluster):
    client = make_client(cluster)
    client.submit(gang("running"))
    play(cluster, "running", "jobset-succeeded", "train", until=2.0)
    [run] = client.runs()
    cluster.clear_request_log()
    assert run.state.state is RunState.RUNNING
    assert cluster.request_log == []
    play(cluster, "running", "jobset-succeeded", "train", until=2.25)
    assert run.state.state is RunState.SUCCEEDED
    assert len(cluster.request_log) == 3  # the job, its Workloads, its pods


SEEDS = {
    "running": ("jobset-succeeded", "train", 2.0, "Running"),
    "preempted": (PREEMPTED, "low", 1.6, "Preempted"),
    "queued": (QUEUED, "second", 2.0, "Queued"),
}


@pytest.mark.parametrize("state", sorted(SEEDS))
def test_listing_and_showing_runs_costs_the_same_for_1_10_and_50_runs(cluster, tmp_path, state):
    scenario, job, until, _ = SEEDS[state]
    if state == "preempted":
        put_recorded_preemptor(cluster)
    serve_queue_positions(cluster)
    client = make_client(cluster)
    client.submit(gang("zqseed"))
    play(cluster, "zqseed", scenario, job, until=until)
    seed = run_objects(cluster, "zqseed")
    kubeconfig = str(cluster.kubeconfig(tmp_path / "kubeconfig", namespace="ml"))
    counts = []
    for size in (1, 10, 50):
        for i in range(len(client.runs()) - 1, size - 1):
            put_copy(cluster, seed, "zqseed", f"copy-{i:02d}")
        cluster.clear_request_log()
        runs = client.runs()
        html = runs_html(runs)
        assert html.count(f"data-state='{SEEDS[state][3]}'") == size
        api = len(cluster.request_log)
        assert main(["runs", "--kubeconfig", kubeconfig]) == 0
        assert gc.isenabled()  # the listing paused the collector only while it ran
        counts.append((api, len(cluster.request_log) - api))
        assert {r.method for r in cluster.request_log} == {"GET"}  # readers never write
    assert counts[0] == counts[1] == counts[2], counts


def test_a_notebook_table_shows_both_forms_from_the_listing_alone(cluster):
    client = make_client(cluster)
    for name in ("a", "b"):
        client.submit(gang(name))
        play(cluster, name, "jobset-succeeded", "train", until=2.0)
    table = RunTable(client.runs())
    cluster.clear_request_log()
    text, html = repr(table), table._repr_html_()  # a notebook asks for both
    assert cluster.request_log == []
    assert text.count("Running") == 2 and html.count("data-state='Running'") == 2


def test_a_kind_no_longer_served_reads_as_its_jobs_gone_as_a_per_run_read_says(cluster):
    client = make_client(cluster)
    client.submit(gang("running"))
    play(cluster, "running", "jobset-succeeded", "train", until=2.0)
    cluster.uninstall_crd("jobsets.jobset.x-k8s.io")
    [listed] = client.runs()
    assert (listed.state.state, listed.state.reason) == (RunState.FAILED, "JobSetDeleted")
    assert seen(listed) == seen(make_client(cluster).get_run("running"))
