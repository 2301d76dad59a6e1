"""Race scenarios of the reliability benchmark, each played at 20% transient API faults: cancels
from another client during the resubmission backoff, deletions behind the SDK's back,
resubmits of finished names, watch drops with compaction, and names that collide with attempts.

Controllers are played from the real Kueue/JobSet recordings (tests/integration/cluster/replay.py)
through the fake server's store, which no fault touches.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from gkeml_sdk import Client, RetryPolicy, RunState, TrainingJob
from gkeml_sdk.errors import ClusterError, GkemlError, RunTimeoutError, SpecError
from tests.integration.cluster.replay import Replayer
from tests.kubeapi import KubeAPIServer

RUN_ID = "gkeml.dev/run-id"
POLICY = RetryPolicy(max_resubmits=2, backoff_seconds=0.3)
WAIT = 10.0  # seconds a run may take before it counts as stuck


@dataclass
class Tally:
    """What the race scenarios measured."""

    runs: int = 0
    stuck: list[str] = field(default_factory=list)
    wrong: list[str] = field(default_factory=list)  # a final state other than the expected one
    sentinels: dict[str, str] = field(default_factory=dict)  # name -> resourceVersion


class LiveAttempts:
    """The most JobSets of one run that were live at once over the event history (so a
    second live attempt that existed only briefly is counted): not being deleted, not finished
    (Completed/Failed) and not deactivated by Kueue (its Workload `spec.active: false`), since
    finished attempts are kept while their run lives. `update()` before any compaction, which
    forgets the history."""

    def __init__(self) -> None:
        self.rv = 0
        self.live: dict[str, set[str]] = {}
        self.ended: set[str] = set()  # uids of JobSets that finished or were deactivated
        self.peak = 0

    def update(self, api: KubeAPIServer) -> int:
        events, _ = api.store.events_after(self.rv)
        assert events is not None, "raise history_size: events were lost before update()"
        for event in events:
            self.rv = event.rv
            kind, obj = event.key.split(".")[0], event.obj
            meta = obj["metadata"]
            if kind == "workloads" and (obj.get("spec") or {}).get("active") is False:
                self.ended.add((meta.get("labels") or {}).get("kueue.x-k8s.io/job-uid", ""))
            if kind != "jobsets":
                continue
            alive = self.live.setdefault((meta.get("labels") or {}).get(RUN_ID, ""), set())
            conditions = (obj.get("status") or {}).get("conditions") or []
            if any(c.get("type") in ("Completed", "Failed") and c.get("status") == "True"
                   for c in conditions):  # fmt: skip
                self.ended.add(meta["uid"])
            if event.type == "DELETED" or meta.get("deletionTimestamp"):
                alive.discard(meta["uid"])
            else:
                alive.add(meta["uid"])
            self.peak = max(self.peak, len(alive - self.ended))
        return self.peak


@dataclass
class Harness:
    api: KubeAPIServer
    make: Callable[[], Client]
    live: LiveAttempts = field(default_factory=LiveAttempts)
    foreign_touched: int = 0  # objects of other runs changed under a scenario's name
    wait: float = WAIT  # scaled by the bench to how slow the machine is now


def play(api: KubeAPIServer, run: str, attempt: int, obj: str, scenario: str, job: str) -> None:
    Replayer(api, "ml", run, attempt, obj).play(scenario, job, pause=0)


def finish_in_background(fn: Callable[[], None]) -> threading.Thread:
    thread = threading.Thread(target=fn, daemon=True)
    thread.start()
    return thread


def cancel_during_backoff(h: Harness, job: TrainingJob) -> str:
    api, make = h.api, h.make
    owner, other = make(), make()
    # A resubmitted job starts in new pods: it keeps no state here (else gkeml refuses it).
    run = owner.submit(job.with_changes(stateless=True, namespace="ml"), retry=POLICY)
    play(api, job.name, 1, job.name, "jobset-podsready-timeout-deactivated", "stuck")

    def cancel() -> None:
        time.sleep(0.1)  # inside the 0.3 s backoff that follows the deactivation
        other.get_run(job.name).cancel()

    thread = finish_in_background(cancel)
    final = run.wait(timeout=h.wait).state
    thread.join()
    return expect(final, RunState.CANCELLED)


def deleted_behind_the_back(h: Harness, job: TrainingJob) -> str:
    api, make = h.api, h.make
    run = make().submit(job)
    play(api, job.name, 1, job.name, "jobset-succeeded", "train")
    api.store.delete("jobsets", "ml", job.name)
    # Deleted by hand, not cancelled through gkeml: the attempt is lost (JobSetDeleted).
    return expect(run.wait(timeout=h.wait).state, RunState.FAILED)


def resubmit_finished_name(h: Harness, job: TrainingJob) -> str:
    api, make = h.api, h.make
    client = make()
    first = client.submit(job)
    play(api, job.name, 1, job.name, "jobset-succeeded", "train")
    first.wait(timeout=h.wait)
    second = client.submit(job)
    # The new run must never show the old one's Completed status.
    early = second.state.state
    if early is RunState.SUCCEEDED:
        return "resubmitted run reported the old run's SUCCEEDED"
    play(api, job.name, 1, job.name, "jobset-succeeded", "train")
    return expect(second.wait(timeout=h.wait).state, RunState.SUCCEEDED)


def watch_drop_with_compaction(h: Harness, job: TrainingJob) -> str:
    api, make = h.api, h.make
    run = make().submit(job)
    result: list[RunState | Exception] = []

    def wait() -> None:
        try:
            result.append(run.wait(timeout=h.wait).state)
        except GkemlError as exc:
            result.append(exc)

    waiter = finish_in_background(wait)
    deadline = time.monotonic() + 10
    while api.open_watches < 3 and time.monotonic() < deadline:
        time.sleep(0.005)
    api.cut_watches()
    api.store.delete("jobsets", "ml", job.name)  # while the watch is down
    h.live.update(api)
    api.compact()  # so the resume gets 410 Gone and must relist
    waiter.join()
    if isinstance(result[0], Exception):
        raise result[0]
    return expect(result[0], RunState.FAILED)  # JobSetDeleted: lost, not cancelled


def name_like_an_attempt(h: Harness, job: TrainingJob) -> str:
    api, make = h.api, h.make
    # A user's run named like another run's attempt is refused before it reaches the cluster...
    try:
        job.with_changes(name=f"{job.name}--r2")
        return "a run name containing '--' was accepted"
    except SpecError:
        pass
    # ...and an object of another run under our name is never applied over.
    foreign = job.with_changes(namespace="ml").compile().main
    foreign["metadata"]["labels"] = {RUN_ID: "someone-else", "gkeml.dev/attempt": "1"}
    stored = api.store.put(foreign)
    problem = ""
    try:
        make().submit(job)
        problem = "submitted over another run's JobSet"
    except ClusterError as exc:
        if "belongs to attempt 1 of gkeml run 'someone-else'" not in str(exc):
            problem = f"wrong refusal: {exc}"
    now = api.store.get("jobsets", "ml", job.name)
    if now is None or now["metadata"]["resourceVersion"] != stored["metadata"]["resourceVersion"]:
        h.foreign_touched += 1
        problem = problem or "another run's JobSet was touched"
    api.store.delete("jobsets", "ml", job.name)
    return problem


SCENARIOS: dict[str, Callable[[Harness, TrainingJob], str]] = {
    "cancel during backoff": cancel_during_backoff,
    "deleted behind the SDK's back": deleted_behind_the_back,
    "resubmit of a finished name": resubmit_finished_name,
    "watch drop with compaction": watch_drop_with_compaction,
    "run named like an attempt": name_like_an_attempt,
}


def expect(got: RunState | None, want: RunState) -> str:
    return "" if got is want else f"ended {got} instead of {want}"


def bystanders(h: Harness, job: Callable[[str], TrainingJob]) -> dict[str, str]:
    """Finished runs of other names, whose objects no scenario may touch: name -> rv."""
    api, client = h.api, h.make()
    seen = {}
    for i in range(5):
        name = f"bystander-{i}"
        run = client.submit(job(name))
        play(api, name, 1, name, "jobset-succeeded", "train")
        run.wait(timeout=h.wait)
        seen[name] = api.store.get("jobsets", "ml", name)["metadata"]["resourceVersion"]
    return seen


def run_races(
    h: Harness,
    job: Callable[[str], TrainingJob],
    per_scenario: int,
    rate: float,
    faults: tuple[str, ...],
    delay: float = 0.6,
) -> tuple[Tally, Counter[str], int]:
    """Play every scenario `per_scenario` times under `rate` random faults; returns the tally,
    failures per scenario and the requests sent."""
    api = h.api
    tally = Tally()
    tally.sentinels = bystanders(h, job)
    failures: Counter[str] = Counter()
    api.faults.random(rate=rate, kinds=faults, seed=11, retry_after=0.01, delay=delay)
    before = len(api.request_log)
    for i in range(per_scenario):
        for title, scenario in SCENARIOS.items():
            name = f"race-{i:03d}-{list(SCENARIOS).index(title)}"
            tally.runs += 1
            try:
                problem = scenario(h, job(name))
            except RunTimeoutError as exc:
                tally.stuck.append(f"{name}: {exc}")
                continue
            except GkemlError as exc:
                problem = f"{type(exc).__name__}: {exc}"
            if problem:
                failures[title] += 1
                tally.wrong.append(f"{name} ({title}): {problem}")
    api.faults.clear()
    sent = len(api.request_log) - before
    return tally, failures, sent


def touched(api: KubeAPIServer, sentinels: dict[str, str]) -> int:
    """Bystander objects whose resourceVersion changed (or that vanished)."""
    count = 0
    for name, rv in sentinels.items():
        now = api.store.get("jobsets", "ml", name)
        count += now is None or now["metadata"]["resourceVersion"] != rv
    return count
