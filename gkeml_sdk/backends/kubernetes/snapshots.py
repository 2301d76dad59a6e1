"""One read of a run's current attempt (its Job/JobSet, Workloads and pods), fed to the run's
tracker at once: what `run.state` and the run controller's reconcile look at."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from gkeml_sdk.backends.kubernetes.attempts import job_resource
from gkeml_sdk.backends.kubernetes.kube import KubeClient
from gkeml_sdk.backends.kubernetes.resources import resource
from gkeml_sdk.backends.kubernetes.streams import Event
from gkeml_sdk.core import kinds
from gkeml_sdk.core.objects import uid
from gkeml_sdk.scheduling.kueue import JOB_UID_LABEL

if TYPE_CHECKING:
    from gkeml_sdk.backends.kubernetes.kube_run import KubeRun

PODS = resource(kinds.CORE, "Pod")
WORKLOADS = resource(kinds.KUEUE, "Workload")


def read_attempt(kube: KubeClient, run: KubeRun) -> None:
    """Read the current attempt's objects and feed them to `run` (three GETs, no writes).

    Example:
        >>> read_attempt(kube, run)  # doctest: +SKIP
    """
    now = time.time()
    kind = job_resource(run.record)
    current = run.record.current
    job = kube.find(kind, run.object_name(), run.namespace)
    if job is None or (current.uid and uid(job) != current.uid):
        if current.uid or run.seen_job():
            # It existed and was deleted behind our back (a same-named object with another
            # uid is not this attempt): the run is over.
            gone = {"metadata": {"name": current.name, "namespace": run.namespace}}
            if current.uid:
                gone["metadata"]["uid"] = current.uid
            run.observe(Event(kind.kind, "DELETED", gone), now)
        return  # else recorded but not created yet: whoever acts creates it
    workloads, _ = kube.list(WORKLOADS, run.namespace, label_selector=f"{JOB_UID_LABEL}={uid(job)}")
    pods, _ = kube.list(PODS, run.namespace, label_selector=run.pod_selector())
    run.observe_snapshot(job, workloads, pods, now)
