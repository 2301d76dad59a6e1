"""Plays Kueue, JobSet, the Job controller and the kubelet against the fake API server by
replaying what the real ones did in ../shared/fixtures/kueue-real, renamed onto our objects."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import pytest

from tests.schemas import RECORDINGS

FIXTURES = RECORDINGS
PLURALS = {
    "JobSet": "jobsets",
    "Job": "jobs",
    "Workload": "workloads",
    "Pod": "pods",
    "Event": "events",
}
SERVER_FIELDS = ("resourceVersion", "uid", "creationTimestamp", "generation", "managedFields")


def fixture_events(scenario: str, job: str) -> list[dict[str, Any]]:
    """The recorded events of one job of a scenario: the job, its Workload, its pods and the
    Events about them."""
    path = FIXTURES / f"{scenario}.jsonl"
    if not path.exists():
        pytest.skip(f"Kueue recordings not found at {FIXTURES}")
    events = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    uid = next(e["object"]["metadata"]["uid"] for e in events if e["name"] == job)
    chosen = []
    names: set[str] = set()
    for event in events:
        meta = event["object"]["metadata"]
        labels = meta.get("labels") or {}
        mine = (
            (event["kind"] in ("JobSet", "Job") and event["name"] == job)
            or (event["kind"] == "Workload" and labels.get("kueue.x-k8s.io/job-uid") == uid)
            or (
                event["kind"] == "Pod"
                and job
                in (
                    labels.get("jobset.sigs.k8s.io/jobset-name"),
                    labels.get("batch.kubernetes.io/job-name"),
                )
            )
        )
        about = (event["object"].get("involvedObject") or {}).get("name")
        if mine or (event["kind"] == "Event" and about in names):
            chosen.append(event)
            names.add(event["name"])
    return chosen


class Replayer:
    """Rewrites recorded objects onto a live job (name, uid, namespace, our labels) and writes
    them through the fake server's store, as the controllers would."""

    def __init__(self, server: Any, namespace: str, run: str, attempt: int, obj_name: str) -> None:
        self.server = server
        self.store = server.store
        self.namespace = namespace
        self.run, self.attempt, self.name = run, attempt, obj_name

    def play(
        self,
        scenario: str,
        job: str,
        *,
        pause: float = 0.02,
        since: float = 0.0,
        until: float = float("inf"),
        kinds: tuple[str, ...] = ("JobSet", "Job", "Workload", "Pod"),
        rename: dict[str, str] | None = None,
    ) -> None:
        """Write the recorded objects with `since <= t < until` of the given kinds, pausing
        between writes so that watchers see them in order; `rename` maps recorded names
        (e.g. to replay a pod's disruption onto another pod)."""
        events = fixture_events(scenario, job)
        kind = next(e["kind"] for e in events if e["name"] == job)
        ours = self.store.get(PLURALS[kind], self.namespace, self.name)
        assert ours is not None, f"{kind} {self.name} was not created"
        old_uid = next(e["object"]["metadata"]["uid"] for e in events if e["name"] == job)
        new_uid = ours["metadata"]["uid"]
        for event in events:
            if not since <= event["t"] < until or event["kind"] not in kinds:
                continue
            obj = self._rename(event["object"], job, old_uid, new_uid, rename or {})
            self._write(event["kind"], event["type"], obj)
            time.sleep(pause)

    def play_in_background(
        self, scenario: str, job: str, *, watchers: int, **kw: Any
    ) -> threading.Thread:
        """Start replaying once the client has `watchers` watch connections open."""

        def run() -> None:
            self.wait_for_watchers(watchers)
            self.play(scenario, job, **kw)

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        return thread

    def wait_for_watchers(self, count: int, timeout: float = 20.0) -> None:
        """Block until the client has `count` watch connections open (so it sees every write)."""
        deadline = time.monotonic() + timeout
        while self.server.open_watches < count:
            assert time.monotonic() < deadline, f"client never opened {count} watches"
            time.sleep(0.01)

    def _rename(
        self, obj: dict[str, Any], old: str, old_uid: str, new_uid: str, names: dict[str, str]
    ) -> dict[str, Any]:
        def fix(value: Any) -> Any:
            if isinstance(value, dict):
                return {k: fix(v) for k, v in value.items()}
            if isinstance(value, list):
                return [fix(v) for v in value]
            if isinstance(value, str):
                value = names.get(value, value)
                if value == old_uid:
                    return new_uid
                for prefix in ("", "jobset-", "job-"):
                    if value == prefix + old or value.startswith(prefix + old + "-"):
                        return prefix + self.name + value[len(prefix + old) :]
            return value

        renamed = fix(json.loads(json.dumps(obj)))
        meta = renamed["metadata"]
        meta["namespace"] = self.namespace
        for field in SERVER_FIELDS:
            meta.pop(field, None)
        meta.pop("generateName", None)
        if renamed["kind"] == "Pod":
            meta.setdefault("labels", {}).update(
                {"gkeml.dev/run-id": self.run, "gkeml.dev/attempt": str(self.attempt)}
            )
        return renamed

    def _write(self, kind: str, event_type: str, obj: dict[str, Any]) -> None:
        plural = PLURALS[kind]
        name = obj["metadata"]["name"]
        if event_type == "DELETED":
            self.store.delete(plural, self.namespace, name)
            return
        if kind in ("JobSet", "Job") and name == self.name:
            # Our object keeps its spec; the controllers only change suspension and status.
            current = self.store.get(plural, self.namespace, name)
            if current is None:
                return
            current["spec"]["suspend"] = obj["spec"].get("suspend", False)
            current["status"] = obj.get("status") or {}
            if obj["metadata"].get("deletionTimestamp"):
                current["metadata"]["deletionTimestamp"] = obj["metadata"]["deletionTimestamp"]
            self.store.put(current, manager="kueue")  # Kueue owns spec.suspend
            return
        if kind == "Job":
            return  # a JobSet's child Jobs: the SDK reads the JobSet, not them
        if kind == "Workload":
            # Kueue's controller drops its finalizer once the owner is being deleted
            # (admission-rules §3.6); no Kueue runs here to do it, so a replayed Workload
            # would hold a foreground deletion of its JobSet forever.
            meta = obj["metadata"]
            meta["finalizers"] = [
                f for f in meta.get("finalizers") or [] if f != "kueue.x-k8s.io/resource-in-use"
            ]
        existing = self.store.get(plural, self.namespace, name)
        if existing is not None:
            obj["metadata"]["uid"] = existing["metadata"]["uid"]
        self.store.put(obj)
