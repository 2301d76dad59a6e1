"""`runs()` at a constant number of requests: the records (two paginated lists, read by the
service), then for the runs still going one paginated list per kind of attempt object (JobSets,
Jobs, Workloads, pods), joined here the way the per-run reads select them."""

from __future__ import annotations

import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gkeml_sdk.backends.kubernetes.api.kube import KubeClient
from gkeml_sdk.backends.kubernetes.api.queue_reads import list_pages
from gkeml_sdk.backends.kubernetes.api.resources import Resource
from gkeml_sdk.backends.kubernetes.api.shared_reads import SharedReads
from gkeml_sdk.backends.kubernetes.runs.attempts import job_resource
from gkeml_sdk.backends.kubernetes.runs.snapshots import PODS, WORKLOADS, attempt_missing
from gkeml_sdk.core.labels import ATTEMPT_LABEL, RUN_ID_LABEL
from gkeml_sdk.core.objects import Obj, labels, uid
from gkeml_sdk.errors import ClusterError
from gkeml_sdk.scheduling.kueue import JOB_UID_LABEL

if TYPE_CHECKING:
    from gkeml_sdk.backends.kubernetes.runs.track import RunTrack


def read_listing(kube: KubeClient, tracks: list[RunTrack]) -> None:
    """Feed each run still going its current attempt's objects from one listing per kind and
    namespace (the next `state` of each answers from it). Reads only.

    Example:
        >>> read_listing(kube, tracks)  # doctest: +SKIP
    """
    live = [t for t in tracks if not t.done()]  # a finished run's record says all
    shared = SharedReads()
    for where in sorted({t.namespace for t in live}):
        here = [t for t in live if t.namespace == where]
        objects = AttemptObjects.read(kube, where, {job_resource(t.record) for t in here})
        now = time.time()
        for track in here:
            track.shared = shared  # what the runs' lookups read, read once for all of them
            objects.feed(track, now)
            track.read_ahead = True


@dataclass(frozen=True)
class AttemptObjects:
    """The attempt objects gkeml labelled in one namespace, keyed as the per-run reads find
    them: a Job/JobSet by kind and name, Workloads by their job's uid, pods by run and attempt."""

    jobs: dict[tuple[str, str], Obj]
    workloads: dict[str, list[Obj]]
    pods: dict[tuple[str, str], list[Obj]]

    @classmethod
    def read(cls, kube: KubeClient, namespace: str, kinds: set[Resource]) -> AttemptObjects:
        """One paginated list of each kind in `kinds`, of Workloads and of pods, at once (the
        server answers one while this client reads another)."""
        chosen = sorted(kinds, key=lambda r: r.kind)
        pod_selector = f"{RUN_ID_LABEL},{ATTEMPT_LABEL}"
        with ThreadPoolExecutor(max_workers=len(chosen) + 2) as pool:
            job_lists = [pool.submit(_kind, kube, res, namespace) for res in chosen]
            found_workloads = pool.submit(
                list_pages, kube, WORKLOADS, namespace, label_selector=JOB_UID_LABEL
            )
            found_pods = pool.submit(list_pages, kube, PODS, namespace, label_selector=pod_selector)
        jobs = {
            (res.kind, o["metadata"]["name"]): o
            for res, listed in zip(chosen, job_lists, strict=True)
            for o in listed.result()
        }
        workloads: dict[str, list[Obj]] = defaultdict(list)
        for w in found_workloads.result():
            workloads[labels(w)[JOB_UID_LABEL]].append(w)
        pods: dict[tuple[str, str], list[Obj]] = defaultdict(list)
        for p in found_pods.result():
            pods[(labels(p)[RUN_ID_LABEL], labels(p)[ATTEMPT_LABEL])].append(p)
        return cls(jobs, dict(workloads), dict(pods))

    def feed(self, run: RunTrack, now: float) -> None:
        """Give `run` its current attempt's objects, as `read_attempt` would have read them."""
        job = self.jobs.get((job_resource(run.record).kind, run.object_name()))
        if attempt_missing(run, job, now) or job is None:
            return
        workloads = self.workloads.get(uid(job), [])
        run.observe_snapshot(job, workloads, self.pods.get((run.name, str(run.attempt)), []), now)


def _kind(kube: KubeClient, res: Resource, namespace: str) -> list[Obj]:
    try:
        return list_pages(kube, res, namespace, label_selector=RUN_ID_LABEL)
    except ClusterError as exc:
        if exc.status == 404:  # the kind is not served (its CRD is gone): none of them exist
            return []
        raise
