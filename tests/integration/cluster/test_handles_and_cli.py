"""The run handle (state, logs, cancel, listing) and the CLI run commands against the fake
API server, reached through a kubeconfig as a user would."""

from __future__ import annotations

import threading
from dataclasses import replace

import pytest

from gkeml_sdk import Client, RunState, TrainingJob
from gkeml_sdk.cli.main import main
from gkeml_sdk.errors import ConfigError, NotFoundError
from gkeml_sdk.version import __version__
from tests.integration.cluster.conftest import record_of
from tests.record_fields import record_field
from tests.stored_records import CODE, UNVERSIONED_RUN_RECORD, expected_run_record

from .conftest import make_client
from .replay import Replayer
from .test_scenarios import gang

SPEC = """\
name: cli-train
image: busybox
command: [python, train.py]
accelerator: {model: h100, count: 8}
nodes: 2
queue: team-a
"""


def test_client_without_configuration_says_how_to_configure_one(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    with pytest.raises(ConfigError, match=r"get-credentials.*backend='local'"):
        Client()


def test_state_is_read_without_waiting_and_logs_are_prefixed_by_rank(cluster, client):
    run = client.submit(gang())
    Replayer(cluster, "ml", "train", 1, "train").play("jobset-succeeded", "train", until=2.0)
    assert run.state.state is RunState.RUNNING
    pods = sorted(p["metadata"]["name"] for p in cluster.objects("pods", "ml"))
    for rank, pod in enumerate(pods):
        cluster.set_pod_log("ml", pod, f"step 1 rank {rank}\nstep 2 rank {rank}\n")
    assert list(run.logs()) == [
        "[0] step 1 rank 0",
        "[0] step 2 rank 0",
        "[1] step 1 rank 1",
        "[1] step 2 rank 1",
    ]


def test_follow_streams_new_lines_until_the_run_ends(cluster, client):
    run = client.submit(gang())
    replay = Replayer(cluster, "ml", "train", 1, "train")
    replay.play("jobset-succeeded", "train", until=2.0)
    pods = sorted(p["metadata"]["name"] for p in cluster.objects("pods", "ml"))
    for pod in pods:
        cluster.set_pod_log("ml", pod, "start\n")

    def writer() -> None:
        for pod in pods:
            cluster.append_pod_log("ml", pod, "done\n")
        replay.play("jobset-succeeded", "train", since=2.0)

    threading.Timer(0.3, writer).start()
    lines = list(run.logs(follow=True))
    assert sorted(lines) == ["[0] done", "[0] start", "[1] done", "[1] start"]


def test_following_the_logs_of_a_queued_run_shows_pods_that_start_later(cluster, client):
    run = client.submit(gang())
    assert cluster.objects("pods", "ml") == []
    lines: list[str] = []
    follower = threading.Thread(target=lambda: lines.extend(run.logs(follow=True)), daemon=True)
    follower.start()
    cluster.wait_for_watches(2)  # the attempt's JobSet and its pods, before any pod exists
    replay = Replayer(cluster, "ml", "train", 1, "train")
    replay.play("jobset-succeeded", "train", until=2.0)
    pods = sorted(p["metadata"]["name"] for p in cluster.objects("pods", "ml"))
    assert len(pods) == 2
    cluster.set_pod_log("ml", pods[1], "hello from rank 1\n")
    cluster.wait_for(lambda: lines == ["[1] hello from rank 1"])
    cluster.append_pod_log("ml", pods[0], "hello from rank 0\n")
    replay.play("jobset-succeeded", "train", since=2.0)
    follower.join(timeout=10)
    assert not follower.is_alive()  # ended with the run, every log drained
    assert lines == ["[1] hello from rank 1", "[0] hello from rank 0"]


def test_cancel_deletes_the_objects_and_ends_cancelled(cluster, client):
    run = client.submit(gang())
    Replayer(cluster, "ml", "train", 1, "train").play("jobset-succeeded", "train", until=2.0)
    run.cancel()
    # Foreground deletion: the JobSet stays, terminating, until its Jobs and pods are gone.
    [dying] = cluster.objects("jobsets", "ml")
    assert dying["metadata"]["deletionTimestamp"]
    cluster.wait_for(lambda: cluster.objects("jobsets", "ml") == [])
    assert run.state.state is RunState.CANCELLED
    assert client.get_run("train").wait(timeout=5).state is RunState.CANCELLED


def test_runs_are_listed_newest_first_and_unknown_names_say_what_exists(cluster, client):
    client.submit(gang("first"))
    client.submit(gang("second"))
    assert [r.name for r in client.runs()] == ["second", "first"]
    with pytest.raises(NotFoundError, match="runs there: second, first"):
        client.get_run("third")


def test_submitting_the_same_run_twice_is_idempotent_but_a_different_spec_is_refused(
    cluster, client
):
    first = client.submit(gang())
    again = client.submit(gang())
    assert (first.name, again.name) == ("train", "train")
    assert len(cluster.objects("jobsets", "ml")) == 1
    with pytest.raises(ConfigError, match=r"still active.*different spec"):
        client.submit(gang(max_restarts=5))


def test_cli_drives_a_run_end_to_end(cluster, tmp_path, capsys):
    kubeconfig = str(cluster.kubeconfig(tmp_path / "kubeconfig", namespace="ml"))
    spec = tmp_path / "job.yaml"
    spec.write_text(SPEC)
    assert main(["submit", str(spec), "--kubeconfig", kubeconfig]) == 0
    assert "submitted ml/cli-train" in capsys.readouterr().out
    Replayer(cluster, "ml", "cli-train", 1, "cli-train").play("jobset-succeeded", "train", pause=0)
    assert main(["runs", "--kubeconfig", kubeconfig]) == 0
    out = capsys.readouterr().out
    assert "cli-train" in out and "Succeeded" in out
    assert main(["status", "cli-train", "--kubeconfig", kubeconfig]) == 0
    out = capsys.readouterr().out
    assert out.startswith("cli-train: Succeeded")
    pod = sorted(p["metadata"]["name"] for p in cluster.objects("pods", "ml"))[0]
    cluster.set_pod_log("ml", pod, "loss 0.1\n")
    assert main(["logs", "cli-train", "--kubeconfig", kubeconfig]) == 0
    assert "[0] loss 0.1" in capsys.readouterr().out
    assert main(["cancel", "cli-train", "--kubeconfig", kubeconfig]) == 0
    assert "ml/cli-train had already finished (Succeeded" in capsys.readouterr().out
    assert len(cluster.objects("jobsets", "ml")) == 1  # a finished run's cancel changes nothing
    assert main(["status", "nope", "--kubeconfig", kubeconfig]) == 1
    assert "no gkeml run with that name" in capsys.readouterr().err


def test_a_job_deleted_behind_the_sdks_back_ends_the_run(cluster, client):
    run = client.submit(gang())
    Replayer(cluster, "ml", "train", 1, "train").play("jobset-succeeded", "train", until=2.0)
    assert run.state.state is RunState.RUNNING
    cluster.store.delete("jobsets", "ml", "train")
    assert (run.state.state, run.state.reason) == (RunState.FAILED, "JobSetDeleted")
    assert client.get_run("train").wait(timeout=5).reason == "JobSetDeleted"
    assert cluster.objects("jobsets", "ml") == []


def test_a_finished_run_of_the_same_name_is_replaced(cluster, client):
    run = client.submit(gang())
    Replayer(cluster, "ml", "train", 1, "train").play("jobset-succeeded", "train", pause=0)
    assert run.wait(timeout=10).state is RunState.SUCCEEDED
    again = client.submit(gang(max_restarts=2))
    assert record_of(again).job.max_restarts == 2
    # Nothing of the first run: its history reads the new JobSet only.
    assert [t.status.state for t in again.history] == [RunState.PENDING]
    assert again.history[0].key.startswith(record_of(again).current.uid)
    jobset = cluster.store.get("jobsets", "ml", "train")
    assert jobset["spec"]["failurePolicy"]["maxRestarts"] == 2
    assert "status" not in jobset or not jobset["status"]


def test_code_shipped_with_a_job_is_restored_from_its_configmap_by_a_new_client(cluster, client):
    job = TrainingJob.from_code(
        "print('hello')\n", name="cell", image="busybox", queue="team-a", nodes=2
    )
    client.submit(job)
    record = cluster.store.get("configmaps", "ml", "cell-gkeml-run")
    # One copy of the code, in the record's `file.` keys that the pods mount; no other object.
    assert [k for k, v in record["data"].items() if "print('hello')" in v] == ["file.main.py"]
    assert cluster.store.get("configmaps", "ml", "cell-code") is None
    resumed = make_client(cluster).get_run("cell")
    assert record_of(resumed).job.files == job.files
    assert record_of(resumed).job == job.with_changes(namespace="ml")


def test_a_dra_job_creates_its_claim_template_before_the_jobset(cluster, client):
    from gkeml_sdk import Accelerator

    job = TrainingJob(
        name="claims", image="img", command=["python", "train.py"], queue="team-a", nodes=2,
        accelerator=Accelerator("h100", count=8, allocation="dra"),
    )  # fmt: skip
    client.submit(job)
    template = cluster.store.get("resourceclaimtemplates", "ml", "claims-gpu")
    assert template["spec"]["spec"]["devices"]["requests"][0]["exactly"]["count"] == 8
    jobset = cluster.store.get("jobsets", "ml", "claims")
    pod = jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    assert pod["resourceClaims"] == [{"name": "gpu", "resourceClaimTemplateName": "claims-gpu"}]


def test_a_run_record_written_before_schemas_is_resumed_and_rewritten_with_one(cluster):
    code = {"apiVersion": "v1", "kind": "ConfigMap", "data": CODE}
    cluster.store.put({**code, "metadata": {"name": "ft-code", "namespace": "ml"}})
    cluster.store.put(UNVERSIONED_RUN_RECORD)
    run = make_client(cluster).get_run("ft")
    expected = expected_run_record()
    assert (record_of(run).job, record_of(run).retry) == (expected.job, expected.retry)
    assert record_of(run).attempts[0] == expected.attempts[0]
    assert record_of(run).history[:2] == expected.history
    # Its attempt's Job is gone, so the attempt is lost; a reader writes nothing ...
    assert (run.state.state, run.state.reason) == (RunState.FAILED, "JobDeleted")
    assert "schema" not in cluster.store.get("configmaps", "ml", "ft-gkeml-run")["data"]
    # ... the one that acts for it records the end, with the schema.
    assert run.wait(timeout=30).state is RunState.FAILED
    assert record_of(run).attempts[1] == replace(
        expected.attempts[1], outcome="Failed", counters=record_of(run).attempts[1].counters
    )
    rewritten = cluster.store.get("configmaps", "ml", "ft-gkeml-run")
    assert record_field(rewritten, "schema") == rewritten["data"]["schema"] == "4"
    assert rewritten["data"]["file.train.py"] == CODE["train.py"]  # the code moved in


def test_a_run_record_of_a_newer_schema_is_refused_with_the_fix(cluster, tmp_path, capsys):
    newer = {**UNVERSIONED_RUN_RECORD, "data": {"schema": "5", "spec.json": "{}"}}
    cluster.store.put(newer)
    refusal = (
        "run record ConfigMap ml/ft-gkeml-run has schema 5, but gkeml "
        f"{__version__} reads schema 4 (and records written without one): a newer gkeml "
        "wrote it. Upgrade gkeml (pip install -U gkeml) to read it"
    )
    client = make_client(cluster)
    with pytest.raises(ConfigError) as refused:
        client.get_run("ft")
    assert str(refused.value) == refusal
    # Listing shows it as unreadable, with the same words, instead of failing for all runs.
    [listed] = client.runs()
    assert (listed.name, listed.state.state, listed.state.message) == (
        "ft",
        RunState.UNREADABLE,
        refusal,
    )
    kubeconfig = str(cluster.kubeconfig(tmp_path / "kubeconfig", namespace="ml"))
    assert main(["status", "ft", "--kubeconfig", kubeconfig]) == 1
    err = capsys.readouterr().err
    assert refusal in err and "Traceback" not in err
    assert cluster.store.get("configmaps", "ml", "ft-gkeml-run")["data"] == newer["data"]
