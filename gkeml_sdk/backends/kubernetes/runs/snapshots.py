"""One read of a run's current attempt (its Job/JobSet, Workloads and pods), fed to the run's
tracker at once: what `run.state` and the run controller's reconcile look at."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from gkeml_sdk.backends.kubernetes.api.kube import KubeClient
from gkeml_sdk.backends.kubernetes.api.resources import resource
from gkeml_sdk.backends.kubernetes.api.streams import Event
from gkeml_sdk.backends.kubernetes.runs.attempts import job_resource
from gkeml_sdk.backends.kubernetes.runs.submissions import submission_of
from gkeml_sdk.core import kinds
from gkeml_sdk.core.objects import Obj, uid
from gkeml_sdk.scheduling.kueue import JOB_UID_LABEL

if TYPE_CHECKING:
    from gkeml_sdk.backends.kubernetes.runs.track import RunTrack

PODS = resource(kinds.CORE, "Pod")
# An attempt's Job/JobSet, its Workloads and its pods, as one read (or a cache) gives them.
AttemptObjects = tuple[Obj, list[Obj], list[Obj]]
WORKLOADS = resource(kinds.KUEUE, "Workload")


def read_attempt(kube: KubeClient, run: RunTrack) -> None:
    """Read the current attempt's objects and feed them to `run` (three GETs, no writes).

    Example:
        >>> read_attempt(kube, run)  # doctest: +SKIP
    """
    now = time.time()
    job = kube.find(job_resource(run.record), run.object_name(), run.namespace)
    if attempt_missing(run, job, now) or job is None:
        return
    workloads, _ = kube.list(WORKLOADS, run.namespace, label_selector=f"{JOB_UID_LABEL}={uid(job)}")
    pods, _ = kube.list(PODS, run.namespace, label_selector=run.pod_selector())
    run.observe_snapshot(job, workloads, pods, now)


def attempt_missing(run: RunTrack, job: Obj | None, now: float) -> bool:
    """True when `job` (what the cluster holds under the current attempt's name) is not that
    attempt's object, so there is nothing of it to read; a deletion is fed to `run` then.

    Example:
        >>> attempt_missing(run, None, time.time())  # doctest: +SKIP
        True
    """
    current = run.record.current
    if job is not None and is_this_attempt(run, job):
        return False
    if current.uid or run.seen_job():
        # It existed and was deleted behind our back (a same-named object with another
        # uid, or of another submission, is not this attempt): the attempt is lost.
        gone = {"metadata": {"name": current.name, "namespace": run.namespace}}
        if current.uid:
            gone["metadata"]["uid"] = current.uid
        run.observe(Event(job_resource(run.record).kind, "DELETED", gone), now)
    return True  # else recorded but not created yet: whoever acts creates it


def is_this_attempt(run: RunTrack, job: Obj) -> bool:
    """True when `job` is the object of `run`'s current attempt (its recorded uid, or before
    that is recorded, its submission's mark).

    Example:
        >>> is_this_attempt(run, job)  # doctest: +SKIP
        True
    """
    current = run.record.current
    if current.uid:
        return uid(job) == current.uid
    # Created, but the uid not recorded yet: the submission annotation tells (objects of an
    # older gkeml carry none).
    return submission_of(job) in ("", repr(run.record.submitted_at))
