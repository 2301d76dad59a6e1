"""Many runs at once without submitting each: one run's objects as the cluster holds them
(record, Job/JobSet, Workloads, pods), copied under other names and uids into the store."""

from __future__ import annotations

import json
import uuid
from typing import Any

# Fields the server sets on every write; a copy is a new object. The job's uid is kept (as a
# placeholder) because the record, the Workloads' labels and the pods name it.
SERVER_FIELDS = ("resourceVersion", "managedFields", "generation", "creationTimestamp")
UID = "@JOB_UID@"


def run_objects(server: Any, run: str, namespace: str = "ml") -> list[str]:
    """Run `run`'s objects as JSON text, its job's uid replaced by a placeholder. `run` must
    be a name no other string of those objects contains (e.g. "zqseed")."""
    record = server.store.get("configmaps", namespace, f"{run}-gkeml-run")
    job = server.store.get("jobsets", namespace, run) or server.store.get("jobs", namespace, run)
    assert record is not None and job is not None, f"run {run} has no record or job"
    job_uid = job["metadata"]["uid"]
    objects = [
        record,
        job,
        *server.store.list("workloads", namespace, f"kueue.x-k8s.io/job-uid={job_uid}"),
        *server.store.list("pods", namespace, f"gkeml.dev/run-id={run}"),
    ]
    texts = []
    for obj in objects:
        meta = obj["metadata"]
        for field in SERVER_FIELDS:
            meta.pop(field, None)
        if meta["uid"] != job_uid:
            meta.pop("uid")
        texts.append(json.dumps(obj).replace(job_uid, UID))
    return texts


def put_copy(server: Any, objects: list[str], seed: str, name: str) -> None:
    """Write a copy of `objects` (from `run_objects(server, seed)`) as run `name`."""
    job_uid = str(uuid.uuid4())
    for text in objects:
        server.store.put(json.loads(text.replace(seed, name).replace(UID, job_uid)))
