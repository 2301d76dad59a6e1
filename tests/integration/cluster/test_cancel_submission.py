"""A handle cancels only the submission it was returned for: a stale handle of a finished
run changes nothing of a later run of the same name, a finished run says so, and every delete
carries the uid of the object the canceller read."""

from __future__ import annotations

from typing import Any

from gkeml_sdk import RunState
from gkeml_sdk.cli.main import main
from tests.integration.cluster.conftest import record_of
from tests.kubeapi.faults import RequestInfo
from tests.record_fields import record_field

from .conftest import make_client
from .replay import Replayer
from .test_scenarios import gang

WRITES = ("POST", "PUT", "PATCH", "DELETE")


def writes(cluster: Any) -> int:
    return sum(cluster.count(method=m, watch=False) for m in WRITES)


def finished_then_running_again(cluster: Any, client: Any) -> tuple[Any, Any]:
    """`old`, a handle of a submission that ended, and `new`, one of the next submission of
    that name, running."""
    old = client.submit(gang())
    Replayer(cluster, "ml", "train", 1, "train").play("jobset-succeeded", "train", pause=0)
    assert old.wait(timeout=10).state is RunState.SUCCEEDED
    new = client.submit(gang())
    Replayer(cluster, "ml", "train", 1, "train").play("jobset-succeeded", "train", until=2.0)
    assert new.state.state is RunState.RUNNING
    return old, new


def test_a_stale_handle_cancels_nothing_of_the_next_submission(cluster, client):
    old, _ = finished_then_running_again(cluster, client)
    jobset = cluster.store.get("jobsets", "ml", "train")
    record = cluster.store.get("configmaps", "ml", "train-gkeml-run")
    cluster.clear_request_log()

    assert old.cancel() is False

    assert writes(cluster) == 0
    after = cluster.store.get("jobsets", "ml", "train")
    assert after["metadata"]["uid"] == jobset["metadata"]["uid"]
    assert after["metadata"]["resourceVersion"] == jobset["metadata"]["resourceVersion"]
    assert "deletionTimestamp" not in after["metadata"]
    stored = cluster.store.get("configmaps", "ml", "train-gkeml-run")
    assert stored["metadata"]["resourceVersion"] == record["metadata"]["resourceVersion"]
    assert cluster.store.get("configmaps", "ml", "train-gkeml-cancelled") is None
    assert old.state.state is RunState.SUCCEEDED
    assert make_client(cluster).get_run("train").state.state is RunState.RUNNING


def test_a_live_run_is_cancelled_once_and_then_says_it_had_finished(cluster, client):
    _, new = finished_then_running_again(cluster, client)
    uid = cluster.store.get("jobsets", "ml", "train")["metadata"]["uid"]
    cluster.clear_request_log()

    assert new.cancel() is True

    # One conditional write of each object: the marker created, the record updated on the
    # resourceVersion read, the JobSet deleted on its uid.
    assert cluster.count(method="POST", path_re="/configmaps$") == 1
    assert cluster.count(method="PUT", path_re="/configmaps/train-gkeml-run$") == 1
    assert cluster.count(method="DELETE", path_re="/jobsets/train$") == 1
    dying = cluster.store.get("jobsets", "ml", "train")  # foreground: it may still be there
    assert dying is None or dying["metadata"]["uid"] == uid
    assert dying is None or dying["metadata"]["deletionTimestamp"]
    assert new.state.state is RunState.CANCELLED
    assert [t.status.state for t in new.history][-2:] == [RunState.RUNNING, RunState.CANCELLED]
    recorded = make_client(cluster).get_run("train")
    assert [t.status.state for t in recorded.history][-2:] == [RunState.RUNNING, RunState.CANCELLED]
    cluster.wait_for(lambda: cluster.store.get("jobsets", "ml", "train") is None)
    cluster.clear_request_log()

    assert new.cancel() is False
    assert make_client(cluster).get_run("train").cancel() is False
    assert writes(cluster) == 0


def test_the_cli_says_a_finished_run_had_already_finished(cluster, client, tmp_path, capsys):
    kubeconfig = str(cluster.kubeconfig(tmp_path / "kubeconfig", namespace="ml"))
    run = client.submit(gang())
    Replayer(cluster, "ml", "train", 1, "train").play("jobset-succeeded", "train", pause=0)
    cluster.clear_request_log()

    assert main(["cancel", "train", "--kubeconfig", kubeconfig]) == 0

    out = capsys.readouterr().out
    assert out.startswith("ml/train had already finished (Succeeded")
    assert "nothing to cancel" in out
    assert writes(cluster) == 0
    assert run.state.state is RunState.SUCCEEDED
    assert cluster.store.get("jobsets", "ml", "train") is not None


def test_a_delete_takes_effect_only_on_the_object_read(cluster, client):
    """Between the canceller's list and its delete, the name comes to hold another object
    (same labels, another uid): the uid precondition refuses the delete, and that object
    stays."""
    run = client.submit(gang())
    swapped: list[str] = []

    def swap_before_the_delete(info: RequestInfo) -> bool:
        if info.method == "DELETE" and info.path.endswith("/jobsets/train") and not swapped:
            read = cluster.store.get("jobsets", "ml", "train")
            cluster.store.delete("jobsets", "ml", "train")
            meta = {k: read["metadata"][k] for k in ("name", "namespace", "labels", "annotations")}
            swapped.append(cluster.store.put({**read, "metadata": meta})["metadata"]["uid"])
        return False  # no fault: the request is handled as sent

    cluster.faults.inject(kind="500", count=1, match=swap_before_the_delete)

    assert run.cancel() is True

    assert cluster.count(method="DELETE", path_re="/jobsets/train$", status=409) == 1
    survivor = cluster.store.get("jobsets", "ml", "train")
    assert survivor["metadata"]["uid"] == swapped[0]
    assert "deletionTimestamp" not in survivor["metadata"]


def test_a_resubmission_of_a_finished_run_nobody_followed_never_reports_it(cluster, client):
    """Nobody waited for the first run, so its record says nothing of its end; its objects do.
    Submitting the same spec again is a new submission, and its handle reads only its own."""
    old = client.submit(gang())
    Replayer(cluster, "ml", "train", 1, "train").play("jobset-succeeded", "train", pause=0)
    old_uid = cluster.store.get("jobsets", "ml", "train")["metadata"]["uid"]

    new = make_client(cluster).submit(gang())

    assert record_of(new).submitted_at != record_of(old).submitted_at
    current = cluster.store.get("jobsets", "ml", "train")
    assert current["metadata"]["uid"] == record_of(new).current.uid != old_uid
    assert new.state.state is RunState.PENDING
    assert all(old_uid not in t.key for t in new.history)
    old.state  # noqa: B018 - the old handle reads too ...
    assert all(
        record_of(new).current.uid not in t.key for t in old.history
    )  # ... never the new run


def test_a_jobset_deleted_by_hand_reads_as_lost_and_frees_its_name(cluster, client):
    client.submit(gang())
    Replayer(cluster, "ml", "train", 1, "train").play("jobset-succeeded", "train", until=2.0)
    cluster.store.delete("jobsets", "ml", "train")
    cluster.clear_request_log()

    read = make_client(cluster).get_run("train")
    status = read.state

    assert (status.state, status.reason) == (RunState.FAILED, "JobSetDeleted")
    assert "JobSet train was deleted outside gkeml" in status.message
    assert writes(cluster) == 0  # a reader writes nothing
    assert read.cancel() is False  # lost already: nothing to stop
    other = make_client(cluster).submit(gang(max_restarts=5))  # another spec, same name
    assert record_of(other).job.max_restarts == 5
    jobset = cluster.store.get("jobsets", "ml", "train")
    assert jobset["metadata"]["uid"] == record_of(other).current.uid


def test_a_handle_that_finds_its_job_deleted_by_anothers_cancel_reads_cancelled(cluster, client):
    """The deletion reaches a handle before the record it reads says cancelled: the cancel
    marker tells gkeml's cancel from a deletion by hand."""
    run = client.submit(gang())
    Replayer(cluster, "ml", "train", 1, "train").play("jobset-succeeded", "train", until=2.0)
    assert run.state.state is RunState.RUNNING
    assert make_client(cluster).get_run("train").cancel() is True
    cluster.wait_for(lambda: cluster.store.get("jobsets", "ml", "train") is None)

    assert run.state.state is RunState.CANCELLED  # not FAILED JobSetDeleted


def test_a_cancel_whose_answers_are_lost_still_stops_the_run(cluster, client):
    """Each write of the cancel lands but its answer is lost, so the retry meets what the first
    request did (409 AlreadyExists, 409 Conflict on the resourceVersion): taken as done,
    never as someone else's cancel."""
    run = client.submit(gang())
    Replayer(cluster, "ml", "train", 1, "train").play("jobset-succeeded", "train", until=2.0)
    cluster.faults.inject(kind="reset-after-write", count=1, match=("POST", r"/configmaps$"))
    cluster.faults.inject(kind="reset-after-write", count=1, match=("PUT", r"/train-gkeml-run$"))

    assert run.cancel() is True

    assert cluster.faults.count("reset-after-write") == 2
    dying = cluster.store.get("jobsets", "ml", "train")
    assert dying is None or dying["metadata"]["deletionTimestamp"]
    assert make_client(cluster).get_run("train").state.state is RunState.CANCELLED
    stored = cluster.store.get("configmaps", "ml", "train-gkeml-run")
    assert record_field(stored, "cancelled") == "true"
