"""A leader paused right before a write (its Lease check passed) and resumed after another
controller took the Lease and moved the run on: none of its requests takes effect, because
each write carries its own precondition (the record's resourceVersion, a name the record
reserved, a uid), and it stops acting once it sees it no longer leads."""

from __future__ import annotations

import json
import threading
from dataclasses import replace
from typing import Any

import pytest

from gkeml_sdk import RetryPolicy
from gkeml_sdk.backends.kubernetes.api.lease import LeaseTiming
from gkeml_sdk.backends.kubernetes.controller.process import RunController
from gkeml_sdk.backends.kubernetes.runs.attempts import SUBMISSION_ANNOTATION
from gkeml_sdk.backends.kubernetes.runs.run_record import SPEC_DIGEST_ANNOTATION, spec_digest
from gkeml_sdk.backends.kubernetes.runs.run_records import RecordConflict
from tests.integration.cluster.conftest import record_of
from tests.kubeapi.kueue_deactivation import deactivate_after_requeue_limit
from tests.record_fields import record_field, set_record_field

from .conftest import make_client
from .replay import Replayer
from .test_scenarios import gang, jobsets, live_attempts

WRITES = ("POST", "PUT", "PATCH", "DELETE")
TIMING = LeaseTiming(lease_seconds=15, renew_deadline_seconds=10, retry_seconds=2)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class PauseAt:
    """The leader's hook after its Lease check: counts its writes and holds the `at`-th."""

    def __init__(self, at: int) -> None:
        self.at, self.seen = at, []  # type: ignore[var-annotated]
        self.paused, self.resume = threading.Event(), threading.Event()

    def __call__(self, action: str) -> None:
        self.seen.append(action)
        if len(self.seen) == self.at:
            self.paused.set()
            assert self.resume.wait(60), "never resumed"


def controller(server: Any, identity: str, clock: Clock) -> RunController:
    backend = make_client(server)._backend  # type: ignore[attr-defined]
    return RunController(backend, ["ml"], identity=identity, lease=TIMING, clock=clock)


def attempts(server: Any) -> list[dict[str, Any]]:
    found = server.store.get("configmaps", "ml", "train-gkeml-run")
    return list(json.loads(record_field(found, "attempts.json")))


def lose(server: Any, attempt: int, name: str) -> None:
    """Kueue times the attempt out (PodsReady) and deactivates it at its requeue limit."""
    uid = server.store.get("jobsets", "ml", name)["metadata"]["uid"]
    Replayer(server, "ml", "train", attempt, name).play(
        "jobset-podsready-timeout-deactivated", "stuck", pause=0, until=63.0
    )
    deactivate_after_requeue_limit(server, "ml", uid)


def take_over_and_move_on(server: Any, b: RunController, clock_b: Clock) -> list[dict[str, Any]]:
    """b sees the paused leader's Lease, judges it expired after 16 s unchanged, takes the run
    on: creates attempt 2, and once Kueue loses that too, attempt 3. The record's attempts."""
    assert b.reconcile_once() == {"ml": False}
    clock_b.now += 16
    assert b.reconcile_once() == {"ml": True}
    server.wait_for(lambda: live_attempts(server) == ["train--r2"], timeout=30)
    lose(server, 2, "train--r2")
    for _ in range(5):
        b.reconcile_once()
        if live_attempts(server) == ["train--r3"]:
            break
    assert live_attempts(server) == ["train--r3"]
    return attempts(server)


# The leader's writes once attempt 1 is lost, in order; it is held before the n-th.
POINTS = {
    "note-the-loss": (1, "update ConfigMap train-gkeml-run"),
    "reserve-r2": (2, "update ConfigMap train-gkeml-run"),
    "create-r2": (3, "create JobSet train--r2"),
    "record-r2-uid": (4, "update ConfigMap train-gkeml-run"),
}


@pytest.mark.parametrize("point", list(POINTS))
def test_a_paused_leader_resumed_after_the_lease_moved_changes_nothing(cluster, point):
    at, action = POINTS[point]
    make_client(cluster).submit(gang(), retry=RetryPolicy(max_resubmits=3, backoff_seconds=0))
    clock_a, clock_b = Clock(), Clock()
    a, b = controller(cluster, "a", clock_a), controller(cluster, "b", clock_b)
    assert a.reconcile_once() == {"ml": True}
    hold = a.before_write = PauseAt(at)
    lose(cluster, 1, "train")
    acting = threading.Thread(target=a.reconcile_once, daemon=True)
    acting.start()
    assert hold.paused.wait(60), f"a made only {hold.seen}"
    assert hold.seen[-1] == action

    # a is stopped (no renewal): b takes the run on.
    moved_on = take_over_and_move_on(cluster, b, clock_b)
    assert [x["attempt"] for x in moved_on] == [1, 2, 3]
    before = len(cluster.request_log)

    clock_a.now += 16  # the time a was stopped, as its monotonic clock sees it on resuming
    hold.resume.set()
    acting.join(timeout=60)
    assert not acting.is_alive()
    resumed = cluster.request_log[before:]
    writes = [r for r in resumed if r.method in WRITES]
    assert writes, "a's held write was sent on resuming"
    assert [r.status for r in writes] == [409] * len(writes), writes
    assert live_attempts(cluster) == ["train--r3"]  # exactly one live attempt
    assert attempts(cluster) == moved_on  # the record's attempts only grew (by b)
    assert not a.leading
    assert a.reconcile_once() == {"ml": False} and not a.runs  # b holds it: a lets go


def stray(server: Any, name: str, attempt: int, submitted_at: float, digest: str = "") -> str:
    """A JobSet labelled as an attempt of run `train`, made by the submission of
    `submitted_at`, as a late create of a writer that lost its Lease would leave one (such a
    writer copies the record's spec `digest` onto it)."""
    obj = gang(namespace="ml").compile(attempt=attempt).main
    meta = obj["metadata"]
    meta["name"] = name
    meta["annotations"] = {SUBMISSION_ANNOTATION: repr(submitted_at)}
    if digest:
        meta["annotations"][SPEC_DIGEST_ANNOTATION] = digest
    created = make_client(server)._backend.kube.create(obj)  # type: ignore[attr-defined]
    return str(created["metadata"]["uid"])


def test_each_pass_deletes_what_is_no_attempt_of_the_record(cluster):
    run = make_client(cluster).submit(gang(), retry=RetryPolicy(max_resubmits=3))
    submitted = record_of(run).submitted_at  # type: ignore[attr-defined]
    stray(cluster, "train--r4", 4, submitted)  # a name the record never reserved
    stray(cluster, "train--r2", 2, submitted - 60)  # an earlier submission's attempt
    stray(cluster, "train--r3", 3, submitted + 60)  # a newer submission, being submitted now
    a = controller(cluster, "a", Clock())
    assert a.reconcile_once() == {"ml": True}
    cluster.wait_for(lambda: jobsets(cluster) == ["train", "train--r3"])
    deletes = [r for r in cluster.request_log if r.method == "DELETE"]
    assert sorted(r.path.rsplit("/", 1)[1] for r in deletes) == ["train--r2", "train--r4"]


def test_a_paused_repair_deletes_nothing_made_since(cluster):
    """The leader read a stray and is held before deleting it; meanwhile the stray went and
    the run's own attempt 2 took its name: the delete's uid precondition refuses."""
    run = make_client(cluster).submit(gang(), retry=RetryPolicy(max_resubmits=3, backoff_seconds=0))
    stray(cluster, "train--r2", 2, record_of(run).submitted_at - 60)  # type: ignore[attr-defined]
    clock_a, clock_b = Clock(), Clock()
    a, b = controller(cluster, "a", clock_a), controller(cluster, "b", clock_b)
    hold = a.before_write = PauseAt(1)
    acting = threading.Thread(target=a.reconcile_once, daemon=True)
    acting.start()
    assert hold.paused.wait(60) and hold.seen == ["delete JobSet train--r2"]
    assert b.reconcile_once() == {"ml": False}
    clock_b.now += 16
    assert b.reconcile_once() == {"ml": True}  # b deletes the stray itself
    cluster.wait_for(lambda: "train--r2" not in jobsets(cluster))
    lose(cluster, 1, "train")
    for _ in range(5):
        b.reconcile_once()
        if live_attempts(cluster) == ["train--r2"]:
            break
    assert live_attempts(cluster) == ["train--r2"]
    before = len(cluster.request_log)
    clock_a.now += 16
    hold.resume.set()
    acting.join(timeout=60)
    writes = [r for r in cluster.request_log[before:] if r.method in WRITES]
    assert [(r.method, r.status) for r in writes] == [("DELETE", 409)]
    assert live_attempts(cluster) == ["train--r2"]


def test_a_late_attempt_of_a_cancelled_run_is_deleted_by_the_next_pass(cluster):
    client = make_client(cluster)
    client.submit(gang(), retry=RetryPolicy(max_resubmits=3))
    # Attempt 1 was lost and attempt 2 reserved (its record saved) but not created yet ...
    record = cluster.store.get("configmaps", "ml", "train-gkeml-run")
    first, *_ = json.loads(record_field(record, "attempts.json"))
    reserved = {**first, "attempt": 2, "name": "train--r2", "uid": ""}
    set_record_field(
        record, "attempts.json", json.dumps([{**first, "outcome": "Failed"}, reserved])
    )
    cluster.store.put(record)
    run = client.get_run("train")
    run.cancel()  # ... when the run is cancelled: every object of it is deleted
    cluster.wait_for(lambda: jobsets(cluster) == [])
    # The writer that reserved attempt 2, paused meanwhile, creates it after the cancel.
    record = record_of(run)
    stray(cluster, "train--r2", 2, record.submitted_at, spec_digest(record))
    a = controller(cluster, "a", Clock())
    assert a.reconcile_once() == {"ml": True}
    cluster.wait_for(lambda: jobsets(cluster) == [])


def test_a_record_save_whose_answer_was_lost_finds_its_own_write(cluster):
    client = make_client(cluster)
    run = client.submit(gang(), retry=RetryPolicy(max_resubmits=3))
    backend = client._backend  # type: ignore[attr-defined]
    record = record_of(run)
    # The update lands, its answer is lost, the retried update is a 409 (the version moved).
    cluster.faults.inject("reset-after-write", match=("PUT", "/configmaps/train-gkeml-run$"))
    saved = backend.service.save(record.with_attempt(replace(record.current, outcome="Failed")))
    assert cluster.count("PUT", path_re="/configmaps/train-gkeml-run$", status=409) == 1
    assert saved.current.outcome == "Failed" and saved.resource_version != record.resource_version
    assert attempts(cluster)[0]["outcome"] == "Failed"
    with pytest.raises(RecordConflict):  # the old version is stale: someone else's now
        backend.service.save(replace(record, cancelled=True))


def test_a_paused_leader_creating_an_attempt_its_predecessor_reserved_changes_nothing(cluster):
    """The `ensure_attempt` write point: a leader (c) reserved attempt 2 and died before
    creating it; the next leader (a) creates it from the record and is held right before; a
    third (b) takes over from a, creates it, and moves the run on to attempt 3. Then a, and
    even c, resume: every write they send is refused."""
    make_client(cluster).submit(gang(), retry=RetryPolicy(max_resubmits=3, backoff_seconds=0))
    clocks = {name: Clock() for name in "cab"}
    c, a, b = (controller(cluster, name, clocks[name]) for name in "cab")
    assert c.reconcile_once() == {"ml": True}
    hold_c = c.before_write = PauseAt(POINTS["create-r2"][0])
    lose(cluster, 1, "train")
    dying = threading.Thread(target=c.reconcile_once, daemon=True)
    dying.start()
    assert hold_c.paused.wait(60), f"c made only {hold_c.seen}"
    assert [x["attempt"] for x in attempts(cluster)] == [1, 2] and "train--r2" not in jobsets(
        cluster
    )

    assert a.reconcile_once() == {"ml": False}  # c's Lease, seen unchanged for 16 s: expired
    clocks["a"].now += 16
    hold_a = a.before_write = PauseAt(1)
    acting = threading.Thread(target=a.reconcile_once, daemon=True)
    acting.start()
    assert hold_a.paused.wait(60), f"a made only {hold_a.seen}"
    assert hold_a.seen == ["create JobSet train--r2"]

    moved_on = take_over_and_move_on(cluster, b, clocks["b"])
    before = len(cluster.request_log)

    for name, hold, thread in (("a", hold_a, acting), ("c", hold_c, dying)):
        clocks[name].now += 16
        hold.resume.set()
        thread.join(timeout=60)
        assert not thread.is_alive()
    writes = [r for r in cluster.request_log[before:] if r.method in WRITES]
    assert writes, "the held writes were sent on resuming"
    assert [r.status for r in writes] == [409] * len(writes), writes
    assert live_attempts(cluster) == ["train--r3"]
    assert attempts(cluster) == moved_on
    assert not a.leading and not c.leading


class PauseBefore(PauseAt):
    """The leader's hook after its Lease check: holds its first write of `action`."""

    def __init__(self, action: str) -> None:
        super().__init__(0)
        self.action = action

    def __call__(self, action: str) -> None:
        self.seen.append(action)
        if action == self.action and not self.paused.is_set():
            self.paused.set()
            assert self.resume.wait(60), "never resumed"


def test_a_paused_leader_deleting_after_it_saw_a_cancel_changes_nothing(cluster):
    """The cancel write point: the leader created attempt 2 while the run was cancelled; its
    record save is refused, it sees the cancel marker and is held right before deleting that
    attempt. Another leader takes over and deletes it first; a new submission of the same
    name starts. The held delete, resumed, changes nothing (its uid precondition)."""
    client = make_client(cluster)
    run = client.submit(gang(), retry=RetryPolicy(max_resubmits=3, backoff_seconds=0))
    clock_a, clock_b = Clock(), Clock()
    a, b = controller(cluster, "a", clock_a), controller(cluster, "b", clock_b)
    assert a.reconcile_once() == {"ml": True}
    creating = a.before_write = PauseBefore("create JobSet train--r2")
    lose(cluster, 1, "train")
    acting = threading.Thread(target=a.reconcile_once, daemon=True)
    acting.start()
    assert creating.paused.wait(60), f"a made only {creating.seen}"
    assert run.cancel()  # the user, while a is about to create attempt 2
    deleting = a.before_write = PauseBefore("delete JobSet train--r2")
    creating.resume.set()
    assert deleting.paused.wait(60), f"a made only {deleting.seen}"

    assert b.reconcile_once() == {"ml": False}
    clock_b.now += 16
    assert b.reconcile_once() == {"ml": True}  # b deletes attempt 2: no attempt of the record
    cluster.wait_for(lambda: "train--r2" not in jobsets(cluster))
    again = client.submit(gang(), retry=RetryPolicy(max_resubmits=3, backoff_seconds=0))
    cluster.wait_for(lambda: live_attempts(cluster) == ["train"])
    settled = {
        n: cluster.store.get("jobsets", "ml", n)["metadata"]["uid"] for n in jobsets(cluster)
    }
    before = len(cluster.request_log)

    clock_a.now += 16
    deleting.resume.set()
    acting.join(timeout=60)
    assert not acting.is_alive()
    writes = [r for r in cluster.request_log[before:] if r.method in WRITES]
    assert [r.method for r in writes] == ["DELETE"]  # the held one; then a stops: not leading
    assert writes[0].status in (404, 409), writes
    assert {
        n: cluster.store.get("jobsets", "ml", n)["metadata"]["uid"] for n in jobsets(cluster)
    } == settled
    assert live_attempts(cluster) == ["train"] and record_of(again).cancelled is False
