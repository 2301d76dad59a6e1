"""Log lines of one attempt's pods, prefixed by node rank (`Run.log_prefix`), or merged in
time order after their kubelet times (`by_time`); when following, pods are picked up from the
shared streams as they start, until the attempt is final. A pod with gkeml's bootstrap init
container shows its log (the workdir unpacked, pip's output) before the trainer's."""

from __future__ import annotations

import heapq
import logging
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from queue import Empty, Queue
from typing import TYPE_CHECKING

from gkeml_sdk.backends.kubernetes.api.kube import KubeClient
from gkeml_sdk.backends.kubernetes.api.resources import resource
from gkeml_sdk.backends.kubernetes.api.streams import Event, SharedStreams, StreamSpec
from gkeml_sdk.backends.kubernetes.runs.attempts import job_resource
from gkeml_sdk.core import kinds
from gkeml_sdk.core.labels import RUN_ID_LABEL
from gkeml_sdk.core.objects import Obj, uid
from gkeml_sdk.runs.log_lines import (
    UNTIMED,
    log_prefix,
    log_time,
    split_kube_time,
    timed_line,
)
from gkeml_sdk.runs.status import StatusTracker
from gkeml_sdk.scheduling.kueue import JOB_COMPLETION_INDEX_ANNOTATION, JOBSET_JOB_INDEX_LABEL
from gkeml_sdk.training.bootstrap import BOOTSTRAP
from gkeml_sdk.training.contract_env import CONTAINER
from gkeml_sdk.training.model import TrainingJob

if TYPE_CHECKING:
    from gkeml_sdk.backends.kubernetes.runs.track import RunTrack

log = logging.getLogger(__name__)
PODS = resource(kinds.CORE, "Pod")


@dataclass(frozen=True)
class AttemptPods:
    """Where one attempt's pods are and how to read them.

    `per_job` is the number of pods in each child Job (a TPU slice's hosts, else every node):
    a pod's node rank is its Job's index times `per_job` plus its completion index, the slot
    the local backend gives the same process. `by_time`: each line after its kubelet time.
    """

    kube: KubeClient
    namespace: str
    per_job: int
    by_time: bool = False

    @classmethod
    def of(cls, kube: KubeClient, job: TrainingJob, by_time: bool = False) -> AttemptPods:
        """The pods of `job`'s attempts (in its namespace)."""
        return cls(kube, job.namespace, job.nodes // job.hardware.slices, by_time)

    def lines(
        self, pod: Obj, follow: bool, container: str | None = None
    ) -> Iterator[tuple[tuple[int, int], str]]:
        """((time in ns, node rank), the line as shown) of each line of the log of `pod`'s
        `container` (its only one when None; time 0 without `by_time`)."""
        rank = node_rank(pod, self.per_job)
        name = pod["metadata"]["name"]
        last = 0  # a line without a time (none from a kubelet) keeps its place after the last
        read = self.kube.pod_log(
            name, self.namespace, follow=follow, timestamps=self.by_time, container=container
        )
        for line in read:
            timed = split_kube_time(line) if self.by_time else None
            if timed is not None:
                last = timed[0]
                yield (last, rank), timed_line(log_time(last), rank, timed[1])
            elif self.by_time:
                yield (last, rank), timed_line(UNTIMED, rank, line)
            else:
                yield (last, rank), log_prefix(rank) + line


def run_logs(
    streams: SharedStreams,
    run: RunTrack,
    follow: bool,
    stop: threading.Event | None = None,
    *,
    by_time: bool = False,
) -> Iterator[str]:
    """Log lines of `run`'s current attempt; following ends once the attempt is final. The
    attempt's Job/JobSet and pods come from the backend's shared streams (those `wait` uses).
    `by_time`: merged in time order, each line after its time; following, as they arrive.

    Example:
        >>> lines = run_logs(backend.streams, run, follow=True)  # doctest: +SKIP
    """
    kube = streams.kube
    where = AttemptPods.of(kube, run.record.job, by_time)
    selector = run.pod_selector()

    def list_pods() -> list[Obj]:
        return kube.list(PODS, run.namespace, label_selector=selector)[0]

    kind = job_resource(run.record)
    found = None if run.done() else kube.find(kind, run.object_name(), run.namespace)
    current = run.record.current.uid
    if not follow or found is None or (current and uid(found) != current):
        return pod_logs(where, list_pods())  # a gone attempt has nothing more to say
    tracker = StatusTracker(
        run.attempt, job_name=run.object_name(), job_kind=kind.kind, job_uid=uid(found)
    )
    specs = [StreamSpec(k, run.namespace, RUN_ID_LABEL) for k in (kind, PODS)]
    return follow_logs(where, streams, specs, tracker, list_pods, stop=stop)


def pod_logs(where: AttemptPods, pods: list[Obj]) -> Iterator[str]:
    """Every line logged so far by `pods`, pod after pod in rank order; with `by_time`, the
    pods' lines merged by time (each pod's log is in time order), ties in rank order.

    Example:
        >>> lines = pod_logs(AttemptPods(kube, "ml", per_job=2), pods)  # doctest: +SKIP
    """
    ranked = sorted(pods, key=lambda p: node_rank(p, where.per_job))
    each = [_pod_lines(where, pod) for pod in ranked]
    if not where.by_time:
        for lines in each:
            yield from (line for _, line in lines)
        return
    yield from (line for _, line in heapq.merge(*each, key=lambda x: x[0]))


def _pod_lines(where: AttemptPods, pod: Obj) -> Iterator[tuple[tuple[int, int], str]]:
    for container in log_containers(pod):
        yield from where.lines(pod, False, container)


def follow_logs(
    where: AttemptPods,
    streams: SharedStreams,
    specs: list[StreamSpec],
    tracker: StatusTracker,
    list_pods: Callable[[], list[Obj]],
    *,
    stop: threading.Event | None = None,
) -> Iterator[str]:
    """Lines of every pod of an attempt as they come, interleaved, including pods that start
    after the call (a queued run, a JobSet restart). The shared streams of `specs` show the
    attempt's Job/JobSet and pods (among others: `tracker` keeps the attempt's) and feed
    `tracker`; the lines end once it says the attempt is final and every pod's log has ended,
    or once `stop` is set (leaving the streams; a pod's log stream ends with the pod). Nothing
    polls: waits are on the streams and the log streams.

    Example:
        >>> for line in follow_logs(where, streams, specs, tracker, list_pods):  # doctest: +SKIP
        ...     print(line)
    """
    items: Queue[object] = Queue()
    sink = items.put  # one bound method: the same sink to unsubscribe
    followers = _Followers(where, items)
    joined = []
    try:
        for spec in specs:
            joined.append(streams.subscribe(spec, sink))
        final = False
        nap = None if stop is None else 1.0  # with a `stop`, wake every second to notice it
        while (not final or followers.active) and not (stop is not None and stop.is_set()):
            try:
                item = items.get(timeout=nap)
            except Empty:
                continue
            if isinstance(item, str):
                yield item
            elif item is _LOG_ENDED:
                followers.active -= 1
            elif isinstance(item, Event) and not final:
                if item.type == "ERROR":
                    raise item.obj["error"]
                event_type = "MODIFIED" if item.type == "SYNCED" else item.type
                tracker.observe(item.kind, event_type, item.obj, 0.0)
                if item.kind == "Pod" and event_type != "DELETED" and tracker.owns_pod(item.obj):
                    followers.start(item.obj)
                if tracker.status.terminal:
                    final = True
                    # The pod stream may lag the job's: catch pods that ran and are not
                    # followed yet with one last list.
                    for pod in list_pods():
                        followers.start(pod)
    finally:
        for informer in joined:
            streams.unsubscribe(informer, sink)


def node_rank(pod: Obj, per_job: int) -> int:
    """A pod's node rank: its child Job's index times `per_job`, plus its completion index.

    Example:
        >>> pod = {"metadata": {"labels": {"jobset.sigs.k8s.io/job-index": "1"},
        ...     "annotations": {"batch.kubernetes.io/job-completion-index": "2"}}}
        >>> node_rank(pod, per_job=4)
        6
    """
    meta = pod.get("metadata") or {}
    index = str((meta.get("annotations") or {}).get(JOB_COMPLETION_INDEX_ANNOTATION, "0"))
    job = str((meta.get("labels") or {}).get(JOBSET_JOB_INDEX_LABEL, "0"))
    return _number(job) * per_job + _number(index)


def log_containers(pod: Obj) -> list[str | None]:
    """The containers of `pod` whose logs exist (they ran), in the order they ran: the
    bootstrap, then the trainer, for a pod that has gkeml's bootstrap; else the pod's one
    container (None) once the pod ran.

    Example:
        >>> pod = {"spec": {"initContainers": [{"name": "bootstrap"}]}, "status": {
        ...     "initContainerStatuses": [{"name": "bootstrap", "state": {"terminated": {}}}],
        ...     "containerStatuses": [{"name": "trainer", "state": {"waiting": {}}}]}}
        >>> log_containers(pod)
        ['bootstrap']
    """
    spec, status = pod.get("spec") or {}, pod.get("status") or {}
    if not any(c.get("name") == BOOTSTRAP for c in spec.get("initContainers") or []):
        return [None] if _started(pod) else []
    ran = {
        c.get("name")
        for key in ("initContainerStatuses", "containerStatuses")
        for c in status.get(key) or []
        if {"running", "terminated"} & set(c.get("state") or {})
    }
    return [c for c in (BOOTSTRAP, CONTAINER) if c in ran]


_LOG_ENDED = object()


class _Followers:
    """One thread per started pod, streaming its log into the shared queue."""

    def __init__(self, where: AttemptPods, items: Queue[object]) -> None:
        self.where, self.items = where, items
        self.seen: set[tuple[str, str | None]] = set()
        self.active = 0

    def start(self, pod: Obj) -> None:
        """Follow each container of `pod` that ran and is not followed yet."""
        meta = pod.get("metadata") or {}
        for container in log_containers(pod):
            key = (str(meta.get("uid") or meta.get("name")), container)
            if key in self.seen:
                continue
            self.seen.add(key)
            self.active += 1
            threading.Thread(target=self._pump, args=(pod, container), daemon=True).start()

    def _pump(self, pod: Obj, container: str | None) -> None:
        try:
            for _, line in self.where.lines(pod, follow=True, container=container):
                self.items.put(line)
        except Exception as exc:  # one pod's log failing (e.g. deleted) must not end the others
            log.warning("stopped reading the log of pod %s: %s", pod["metadata"]["name"], exc)
        finally:
            self.items.put(_LOG_ENDED)


def _started(pod: Obj) -> bool:
    # Logs exist once a container ran: a Pending pod's log request is refused (400).
    status = pod.get("status") or {}
    if status.get("phase") in ("Running", "Succeeded", "Failed"):
        return True
    return any(
        "running" in (c.get("state") or {}) or "terminated" in (c.get("state") or {})
        for c in status.get("containerStatuses") or []
    )


def _number(text: str) -> int:
    return int(text) if text.isascii() and text.isdigit() else 0
