"""`RunCache`: what the run controller knows of its namespaces, kept by one list+watch per
kind and namespace (run records, cancel markers, JobSets, Jobs, Workloads, pods), shared by
every run, and indexed by run so that a reconcile reads nothing from the API server.

Read-your-writes: after a write of a run record the controller holds the record the write
returned, newer than the cache until the stream shows it (`behind`); the cache is not taken
over it meanwhile. A cache is never a reason to act on stale state: every write still carries
its precondition (a record's resourceVersion, an object's uid), and one that fails reads again."""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from gkeml_sdk.backends.kubernetes.api.informer import Informer
from gkeml_sdk.backends.kubernetes.api.kube import KubeClient
from gkeml_sdk.backends.kubernetes.api.queue_reads import list_pages
from gkeml_sdk.backends.kubernetes.api.resources import Resource
from gkeml_sdk.backends.kubernetes.api.streams import Event, SharedStreams, StreamSpec
from gkeml_sdk.backends.kubernetes.controller.slim import slim
from gkeml_sdk.backends.kubernetes.runs.attempts import JOBS, JOBSETS
from gkeml_sdk.backends.kubernetes.runs.run_record import RECORD_LABEL
from gkeml_sdk.backends.kubernetes.runs.run_records import CONFIG_MAPS
from gkeml_sdk.backends.kubernetes.runs.snapshots import PODS, WORKLOADS
from gkeml_sdk.core.labels import ATTEMPT_LABEL, RUN_ID_LABEL
from gkeml_sdk.core.objects import Obj, labels, uid
from gkeml_sdk.errors import ClusterError
from gkeml_sdk.scheduling.kueue import JOB_UID_LABEL

Key = tuple[str, str]  # (namespace, run name)
RECORDS = f"{RECORD_LABEL}=true"
MARKERS = f"{RUN_ID_LABEL},{RECORD_LABEL}!=true"  # cancel markers (and older records' code)


@dataclass(frozen=True)
class Change:
    """One event of the cache's streams and the run it concerns (None: no run of ours);
    `record`: the event is of the run's record, `job`: of one of its JobSets or Jobs."""

    key: Key | None
    event: Event
    record: bool = False
    job: bool = False


@dataclass
class Watching:
    """The record versions of one run the stream showed during one turn (`RunCache.watch`)."""

    key: Key
    shown: list[str]


def cache_specs(namespace: str) -> list[StreamSpec]:
    """The streams the controller follows in one namespace: six, whatever the number of runs.

    Example:
        >>> [s.resource.kind for s in cache_specs("ml")]
        ['ConfigMap', 'ConfigMap', 'JobSet', 'Job', 'Workload', 'Pod']
    """
    return [
        StreamSpec(CONFIG_MAPS, namespace, RECORDS, transform=slim),
        StreamSpec(CONFIG_MAPS, namespace, MARKERS, transform=slim),
        StreamSpec(JOBSETS, namespace, RUN_ID_LABEL, transform=slim),
        StreamSpec(JOBS, namespace, RUN_ID_LABEL, transform=slim),
        # Kueue makes the Workloads; they carry the job's uid, not our labels.
        StreamSpec(WORKLOADS, namespace, JOB_UID_LABEL, transform=slim),
        StreamSpec(PODS, namespace, RUN_ID_LABEL, transform=slim),
    ]


class RunCache:
    """The objects of every run in `namespaces`, by run. Filled from lists (`load`) or kept
    current by the backend's shared streams (`follow`); `next` hands out what changed.

    Example:
        >>> cache = RunCache(["ml"])
        >>> cache.apply(Event("ConfigMap", "ADDED", {"metadata": {"name": "a-gkeml-run",
        ...     "namespace": "ml", "resourceVersion": "7",
        ...     "labels": {"gkeml.dev/run-id": "a", "gkeml.dev/run-record": "true"}}}))
        ('ml', 'a')
        >>> cache.version(("ml", "a"))
        '7'
    """

    def __init__(self, namespaces: Sequence[str]) -> None:
        self.namespaces = list(namespaces)
        self._lock = threading.Lock()
        self._records: dict[Key, Obj] = {}
        self._markers: dict[tuple[str, str], Obj] = {}  # (namespace, ConfigMap name)
        self._jobs: dict[Key, dict[tuple[str, str], Obj]] = {}  # (kind, name) -> object
        self._by_uid: dict[str, Key] = {}  # attempt object uid -> its run
        self._workloads: dict[str, dict[str, Obj]] = {}  # job uid -> name -> Workload
        self._pods: dict[Key, dict[str, Obj]] = {}
        # Record versions this process wrote (or read) that the stream has not shown yet.
        self._ahead: dict[Key, str] = {}
        self._watching: dict[Key, Watching] = {}  # runs in a turn now
        self._changes: queue.Queue[Change] = queue.Queue()
        self._subscriptions: list[tuple[SharedStreams, Informer, Callable[[Event], None]]] = []
        self._unserved: set[str] = set()  # kinds the cluster does not serve (no CRD)
        self._synced: list[threading.Event] = []
        self._loaded: set[str] = set()  # namespaces listed in full
        self._failed: dict[str, str] = {}  # namespace -> why one of its streams gave up

    # -- filling -----------------------------------------------------------------------

    def load(self, kube: KubeClient, namespace: str) -> None:
        """Fill the cache with `namespace` from one paginated list per kind (no watch): what
        a single pass (`RunController.reconcile_once`) reads."""
        for spec in cache_specs(namespace):
            try:
                items = list_pages(
                    kube, spec.resource, namespace, label_selector=spec.label_selector
                )
            except ClusterError as exc:
                if exc.status != 404:  # a kind this cluster does not serve: none exist
                    raise
                items = []
            for item in items:
                self.apply(Event(spec.resource.kind, "SYNCED", item))
        self._loaded.add(namespace)

    def follow(self, streams: SharedStreams) -> None:
        """Subscribe to the streams of every namespace; their events update the cache as
        they come (on the streams' threads) and queue a `Change` for `next`."""
        for namespace in self.namespaces:
            for spec in cache_specs(namespace):
                sink = partial(self._sink, namespace)
                informer = streams.subscribe(spec, sink)
                self._subscriptions.append((streams, informer, sink))
                self._synced.append(informer.synced)

    def wait_synced(self, timeout: float) -> bool:
        """True once every stream has listed (False when `timeout` passed first)."""
        if not all(s.wait(timeout) for s in self._synced):
            return False
        self._loaded.update(self.namespaces)
        return True

    def holds(self, namespace: str) -> bool:
        """True when `namespace` was listed in full and none of its streams gave up."""
        return namespace in self._loaded and namespace not in self._failed

    @property
    def failed(self) -> str:
        """Why streams gave up ("" when none did)."""
        return "; ".join(f"{ns}: {why}" for ns, why in sorted(self._failed.items()))

    def drain(self) -> None:
        """Drop the changes not handed out yet (the cache holds what they did)."""
        while True:
            try:
                change = self._changes.get_nowait()
            except queue.Empty:
                return
            if change.event.type == "ERROR":
                self._changes.put(change)  # (said by `next`)
                return

    def close(self) -> None:
        """Leave the streams (the last subscriber of each stops it)."""
        subscriptions, self._subscriptions = self._subscriptions, []
        for streams, informer, sink in subscriptions:
            streams.unsubscribe(informer, sink)

    def next(self, timeout: float) -> Change | None:
        """The next change, or None after `timeout` seconds without one."""
        try:
            return self._changes.get(timeout=max(timeout, 0.0))
        except queue.Empty:
            return None

    def _sink(self, namespace: str, event: Event) -> None:
        if event.type == "ERROR":
            error = event.obj["error"]
            if isinstance(error, ClusterError) and error.status == 404:
                self._unserved.add(event.kind)
            else:
                self._failed[namespace] = str(error)
            return
        record = event.kind == "ConfigMap" and labels(event.obj).get(RECORD_LABEL) == "true"
        job = event.kind in (JOBSETS.kind, JOBS.kind)
        self._changes.put(Change(self.apply(event), event, record, job))

    def apply(self, event: Event) -> Key | None:
        """Take one event into the cache; the run it concerns (None when none of ours)."""
        obj, gone = event.obj, event.type == "DELETED"
        meta = obj.get("metadata") or {}
        namespace, name = str(meta.get("namespace", "")), str(meta.get("name", ""))
        run = labels(obj).get(RUN_ID_LABEL)
        with self._lock:
            if event.kind == "Workload":
                return self._workload(obj, gone)
            if not run:
                return None
            key = (namespace, str(run))
            if event.kind == "ConfigMap" and labels(obj).get(RECORD_LABEL) == "true":
                self._record(key, obj, gone, event.type)
            elif event.kind == "ConfigMap":
                _put(self._markers, (namespace, name), obj, gone)
            elif event.kind == "Pod":
                _put(self._pods.setdefault(key, {}), name, obj, gone)
            else:
                _put(self._jobs.setdefault(key, {}), (event.kind, name), obj, gone)
                if uid(obj):
                    if gone:
                        self._by_uid.pop(uid(obj), None)
                    else:
                        self._by_uid[uid(obj)] = key
            return key

    def _record(self, key: Key, obj: Obj, gone: bool, event_type: str) -> None:
        _put(self._records, key, obj, gone)
        version = str((obj.get("metadata") or {}).get("resourceVersion") or "")
        # Our own write shown (or the stream listed again): the cache caught up.
        if gone or event_type == "SYNCED" or self._ahead.get(key) == version:
            self._ahead.pop(key, None)
        if key in self._watching and not gone:
            self._watching[key].shown.append(version)

    def _workload(self, obj: Obj, gone: bool) -> Key | None:
        job_uid = labels(obj).get(JOB_UID_LABEL)
        if not job_uid:
            return None
        name = str((obj.get("metadata") or {}).get("name", ""))
        _put(self._workloads.setdefault(str(job_uid), {}), name, obj, gone)
        if not self._workloads[str(job_uid)]:
            del self._workloads[str(job_uid)]
        return self._by_uid.get(str(job_uid))

    # -- reading -----------------------------------------------------------------------

    def keys(self) -> list[Key]:
        """Every run with a record in the cache."""
        with self._lock:
            return list(self._records)

    def record(self, key: Key) -> Obj | None:
        """The run's record ConfigMap as last seen."""
        with self._lock:
            return self._records.get(key)

    def version(self, key: Key) -> str:
        """The resourceVersion of the run's record as last seen ("" when none)."""
        found = self.record(key) or {}
        return str((found.get("metadata") or {}).get("resourceVersion") or "")

    def marker(self, namespace: str, name: str) -> Obj | None:
        """A ConfigMap labelled with a run (cancel marker, older records' code) by name."""
        with self._lock:
            return self._markers.get((namespace, name))

    def attempts(self, key: Key, resource: Resource) -> list[Obj]:
        """The run's objects of `resource` (JobSets or Jobs labelled with its run id)."""
        with self._lock:
            found = self._jobs.get(key, {})
            return [o for (kind, _), o in found.items() if kind == resource.kind]

    def served(self, resource: Resource) -> bool:
        """False once the cluster said it does not serve `resource` (its CRD is absent)."""
        return resource.kind not in self._unserved

    def attempt(
        self, key: Key, resource: Resource, name: str, number: int
    ) -> tuple[Obj | None, list[Obj], list[Obj]]:
        """The attempt object `name` of the run, its Workloads and the pods of attempt
        `number`, as `read_attempt` reads them (the object None when the cache lacks it)."""
        with self._lock:
            job = self._jobs.get(key, {}).get((resource.kind, name))
            if job is None:
                return None, [], []
            workloads = list(self._workloads.get(uid(job), {}).values())
            pods = self._pods.get(key, {}).values()
            return job, workloads, [p for p in pods if labels(p).get(ATTEMPT_LABEL) == str(number)]

    # -- read-your-writes --------------------------------------------------------------

    def watch(self, key: Key) -> Watching:
        """Note the record versions the stream shows from now until `hold` (one turn)."""
        with self._lock:
            watching = self._watching[key] = Watching(key, [])
            return watching

    def hold(self, watching: Watching, version: str) -> None:
        """At the end of a turn: the controller holds the run's record at `version` (its own
        write's answer, or a read after a conflict, or the cache's). Unless the stream showed
        that version already, the cache's older one is not taken over it (`behind`) until
        it does."""
        key = watching.key
        with self._lock:
            if self._watching.get(key) is watching:
                del self._watching[key]
            seen = str(
                ((self._records.get(key) or {}).get("metadata") or {}).get("resourceVersion") or ""
            )
            if version and version != seen and version not in watching.shown:
                self._ahead[key] = version
            elif version in watching.shown or version == seen:
                self._ahead.pop(key, None)

    def behind(self, key: Key) -> bool:
        """True while the controller holds a newer record of the run than the cache."""
        with self._lock:
            return key in self._ahead


def _put(where: dict[Any, Obj], key: object, obj: Obj, gone: bool) -> None:
    if gone:
        where.pop(key, None)
    else:
        where[key] = obj
