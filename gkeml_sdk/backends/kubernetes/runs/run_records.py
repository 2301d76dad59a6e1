"""Run records in the cluster: the record ConfigMap of each run, its code ConfigMap, and the
cancel marker that no record write can undo. A scan reads them all in two paginated lists.
Every write is conditional on what was read: a save is an update carrying the record's
resourceVersion (`RecordConflict` when someone else wrote since), a delete carries its uid."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from gkeml_sdk.backends.kubernetes.api.kube import KubeClient
from gkeml_sdk.backends.kubernetes.api.queue_reads import list_pages
from gkeml_sdk.backends.kubernetes.api.resources import resource
from gkeml_sdk.backends.kubernetes.runs.run_record import (
    RECORD_LABEL,
    RunRecord,
    listable,
    record_name,
    written_part,
)
from gkeml_sdk.core import kinds
from gkeml_sdk.core.labels import RUN_ID_LABEL, sdk_labels
from gkeml_sdk.core.objects import Obj
from gkeml_sdk.errors import ClusterError, ConfigError, GkemlError, NotFoundError
from gkeml_sdk.runs.handle import Transition
from gkeml_sdk.runs.history import merge

CONFIG_MAPS = resource(kinds.CORE, "ConfigMap")
# Conditional writes of one object tried against as many fresh reads before giving up.
CONFLICT_ROUNDS = 5


def cancel_marker(run: str, namespace: str, submitted_at: float = 0.0) -> dict[str, Any]:
    """The object whose existence says the submission of run `run` made at `submitted_at`
    was cancelled. It is separate from the record, so that a client still writing the record
    can never undo a cancellation, and names its submission, so that a leftover marker never
    cancels a later submission of the same name.

    Example:
        >>> marker = cancel_marker("ft", "ml", 1767225600.5)
        >>> marker["metadata"]["name"], marker["data"]
        ('ft-gkeml-cancelled', {'submitted_at': '1767225600.5'})
    """
    return {
        "apiVersion": kinds.CORE,
        "kind": "ConfigMap",
        "metadata": {
            "name": f"{run}-gkeml-cancelled",
            "namespace": namespace,
            "labels": {RUN_ID_LABEL: run, **sdk_labels()},
        },
        "data": {"submitted_at": repr(submitted_at)},
    }


def cancels(marker: dict[str, Any], record: RunRecord) -> bool:
    """Whether a cancel marker applies to `record`: it names the record's submission. A
    marker written before markers named one applies to a run submitted before it was made.

    Example:
        >>> from gkeml_sdk import TrainingJob
        >>> job = TrainingJob(name="ft", image="i", command=["x"], namespace="ml")
        >>> cancels(cancel_marker("ft", "ml", 5.0), RunRecord(job=job, submitted_at=6.0))
        False
    """
    written = (marker.get("data") or {}).get("submitted_at")
    if written is not None:
        return bool(written == repr(record.submitted_at))
    created = str((marker.get("metadata") or {}).get("creationTimestamp") or "")
    try:
        made = datetime.fromisoformat(created.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return True  # no way to tell: a cancel is never lost
    return record.submitted_at <= made


class RecordConflict(ClusterError):
    """A run record changed (or appeared, or went away) since it was read: this write did not
    land. Whoever holds the old record drops what it believed and reads the record again;
    it never writes the same change over the newer one.

    Example:
        >>> str(RecordConflict("update ConfigMap ml/ft-gkeml-run", reason="Conflict",
        ...     message="it changed since it was read"))
        'update ConfigMap ml/ft-gkeml-run: Conflict: it changed since it was read'
    """


class RunRecords:
    """Read and write run records through `kube`.

    Example:
        >>> records = RunRecords(kube)  # doctest: +SKIP
        >>> records.find("llama-ft", "ml").attempts[-1].name  # doctest: +SKIP
        'llama-ft--r2'
    """

    def __init__(self, kube: KubeClient) -> None:
        self.kube = kube

    def save(self, record: RunRecord) -> RunRecord:
        """Write the run record over the version it was read as (an update with its
        resourceVersion; a create for a record never written) and return it as written.
        `RecordConflict` when the ConfigMap changed since: nothing was written."""
        body = record.to_configmap()
        if not record.resource_version:
            created = self.create(record)
            if created is None:
                return self._ours(record, body, "a record of that name was written meanwhile")
            return created
        body["metadata"]["resourceVersion"] = record.resource_version
        try:
            written = self.kube.replace(body)
        except NotFoundError:
            raise _conflict(body, "it was deleted since it was read") from None
        if written is None:
            return self._ours(record, body, "it changed since it was read")
        return _as_written(record, written)

    def _ours(self, record: RunRecord, body: Obj, why: str) -> RunRecord:
        """After a 409: a request retried after it landed (its answer lost) finds what it
        wrote; anything else is `RecordConflict`."""
        meta = body["metadata"]
        current = self.kube.find(CONFIG_MAPS, meta["name"], meta["namespace"])
        if current is not None and written_part(current) == written_part(body):
            return _as_written(record, current)
        raise _conflict(body, why)

    def create(self, record: RunRecord) -> RunRecord | None:
        """Create the run record and return it as written; None when a ConfigMap of its
        name already exists."""
        created = self.kube.create(record.to_configmap())
        return None if created is None else _as_written(record, created)

    def find(self, name: str, namespace: str) -> RunRecord | None:
        """The record of run `name`, or None when there is none; `ClusterError` naming the
        ConfigMap when one of that name is not a record this SDK can read (another tool's,
        or damaged): only that run is affected."""
        found = self.kube.find(CONFIG_MAPS, record_name(name), namespace)
        return None if found is None else self.read(found)

    def all(self, namespace: str) -> list[RunRecord]:
        """Every readable record in the namespace, newest first."""
        return self.scan(namespace)[0]

    def scan(self, namespace: str) -> tuple[list[RunRecord], dict[str, GkemlError]]:
        """Every record in the namespace read whole, newest first, and the run names whose
        record ConfigMap cannot be read (name -> why): one damaged record never hides the
        others. Two paginated lists whatever the number of runs: the records, and the other
        ConfigMaps gkeml labels with a run (cancel markers, older records' code), joined here."""
        return self._joined(namespace, metadata_only=False)

    def listing(self, namespace: str) -> tuple[list[RunRecord], dict[str, GkemlError]]:
        """What `scan` returns, for showing runs: the records' metadata only is listed (what
        a listing shows is in their annotations, none of their code), so the records it
        returns are not `whole`. A record of an older layout, or whose spec is kept in its
        data, is read whole, one GET each."""
        return self._joined(namespace, metadata_only=True)

    def whole(self, namespace: str, names: Sequence[str]) -> list[RunRecord]:
        """The records of runs `names` read whole, with their code (one GET for one run,
        `scan` for more); those missing or unreadable now are left out (whoever reads them
        next says why).

        Example:
            >>> [r.name for r in records.whole("ml", ["ft"])]  # doctest: +SKIP
            ['ft']
        """
        if len(names) == 1:
            try:
                found = self.find(names[0], namespace)
            except GkemlError:
                return []
            return [] if found is None else [found]
        wanted = set(names)
        return [r for r in self.scan(namespace)[0] if r.name in wanted]

    def _joined(
        self, namespace: str, *, metadata_only: bool
    ) -> tuple[list[RunRecord], dict[str, GkemlError]]:
        items = list_pages(
            self.kube,
            CONFIG_MAPS,
            namespace,
            label_selector=f"{RECORD_LABEL}=true",
            metadata_only=metadata_only,
        )
        others = self._others(namespace) if items else {}
        records: list[RunRecord] = []
        unreadable: dict[str, GkemlError] = {}
        for item in items:
            meta = item["metadata"]
            try:
                shown = item if not metadata_only or listable(item) else self._read_whole(meta)
                if shown is not None:
                    records.append(self.read(shown, others.get))
            except GkemlError as exc:
                run = (meta.get("labels") or {}).get(RUN_ID_LABEL) or meta["name"]
                unreadable[str(run)] = exc
        return sorted(records, key=lambda r: -r.submitted_at), unreadable

    def _others(self, namespace: str) -> dict[str, Obj]:
        """The ConfigMaps gkeml labels with a run that are no record (cancel markers, older
        records' code), by name: one paginated list."""
        selector = f"{RUN_ID_LABEL},{RECORD_LABEL}!=true"
        found = list_pages(self.kube, CONFIG_MAPS, namespace, label_selector=selector)
        return {o["metadata"]["name"]: o for o in found}

    def _read_whole(self, meta: dict[str, Any]) -> Obj | None:
        """The listed record `meta` names, read whole (None when deleted since it was listed)."""
        return self.kube.find(CONFIG_MAPS, meta["name"], meta.get("namespace"))

    def read(self, obj: Obj, near: Callable[[str], Obj | None] | None = None) -> RunRecord:
        """The record a ConfigMap holds, with its code files and any cancellation; `near`
        finds the other ConfigMaps of its namespace by name (default: read each one)."""
        meta = obj.get("metadata") or {}
        where = f"ConfigMap {meta.get('namespace', '')}/{meta.get('name', '')}"
        if (meta.get("labels") or {}).get(RECORD_LABEL) != "true":
            raise ClusterError(
                f"read run record {where}",
                reason="NotARunRecord",
                message="it lacks the label gkeml.dev/run-record=true, so gkeml did not write "
                "it; gkeml never reads or overwrites it",
                hint="choose another run name, or delete or rename that ConfigMap",
            )
        try:
            record = self._read(obj, near or self._reader(meta.get("namespace", "")))
        except ConfigError:
            raise
        except (KeyError, TypeError, ValueError) as exc:  # SpecError, ValidationError too
            why = str(exc) if isinstance(exc, ValueError) else f"{type(exc).__name__}: {exc}"
            raise _unreadable(meta, f"it is damaged ({why})") from exc
        labelled = (meta.get("labels") or {}).get(RUN_ID_LABEL, record.name)
        if (meta.get("namespace"), meta.get("name"), labelled) != (
            record.job.namespace,
            record_name(record.name),
            record.name,
        ):
            # Acted on only where it is: a record in team-a naming namespace team-b (or
            # another run's objects) was written by someone who may not act there.
            raise _unreadable(
                meta,
                f"its spec names run {record.name!r} in namespace {record.job.namespace!r}, "
                "but a record is only read as the run of its own name, label and namespace",
            )
        return record

    def _read(self, obj: Obj, near: Callable[[str], Obj | None]) -> RunRecord:
        code = None
        name = RunRecord.code_config_map(obj)
        if name:
            code = (near(name) or {}).get("data") or {}
        record = RunRecord.from_configmap(obj, code)
        if not record.cancelled and _cancelled_by(near, record):
            record = replace(record, cancelled=True)
        return record

    def _reader(self, namespace: str) -> Callable[[str], Obj | None]:
        return lambda name: self.kube.find(CONFIG_MAPS, name, namespace)

    def mark_cancelled(self, record: RunRecord, notes: Sequence[Transition]) -> RunRecord | None:
        """Cancel the submission `record` holds: the marker first (the truth), then the record
        with `notes` (what the canceller saw, then the cancellation) in its history, each
        written only over what was read (create, or update with the resourceVersion read).
        None when the name holds another submission now: nothing is written then. A marker
        of this submission that is already there (our own create, retried after its answer
        was lost, or another client's cancel at the same moment) is taken as written: the
        rest of the cancel is idempotent.

        Example:
            >>> records.mark_cancelled(run.record, [note]).cancelled  # doctest: +SKIP
            True
        """
        if not self._mark(record):
            return None
        namespace = record.job.namespace
        for _ in range(CONFLICT_ROUNDS):
            obj = self.kube.find(CONFIG_MAPS, record_name(record.name), namespace)
            current = None if obj is None else self.read(obj)
            if obj is None or current is None or current.submitted_at != record.submitted_at:
                return None  # replaced after our read: the marker names only our submission
            cancelled = replace(current, cancelled=True, history=merge(current.history, notes))
            if self.kube.write_over(cancelled.to_configmap(), obj) is not None:
                return cancelled
            # Someone else wrote the record: judge what they wrote, never our stale copy.
        # The marker stands, and every reader folds it in: the run is cancelled.
        return replace(record, cancelled=True, history=merge(record.history, notes))

    def _mark(self, record: RunRecord) -> bool:
        """Make sure the cancel marker of `record`'s submission exists; False when the marker
        names a later submission (left as it is). A leftover marker of an earlier submission
        is replaced, on the condition that it is still the one read."""
        marker = cancel_marker(record.name, record.job.namespace, record.submitted_at)
        meta = marker["metadata"]
        for _ in range(CONFLICT_ROUNDS):
            found = self.kube.find(CONFIG_MAPS, meta["name"], meta["namespace"])
            if found is not None and cancels(found, record):
                return True
            if found is not None and _later(found, record):
                return False
            if self.kube.write_over(marker, found) is not None:
                return True
        raise ClusterError(
            f"write cancel marker ConfigMap {meta['namespace']}/{meta['name']}",
            status=409,
            reason="Conflict",
            message=f"it changed under every one of {CONFLICT_ROUNDS} conditional writes",
            hint="another client is writing it; try the cancel again",
        )

    def cancel_marked(self, record: RunRecord) -> bool:
        """True when this submission of the run was cancelled, by any client."""
        return _cancelled_by(self._reader(record.job.namespace), record)

    def unmark_cancelled(self, name: str, namespace: str) -> None:
        """Forget a finished run's cancellation before its name is used again."""
        marker = cancel_marker(name, namespace)["metadata"]["name"]
        self.kube.delete(CONFIG_MAPS, marker, namespace)


def _unreadable(meta: dict[str, Any], why: str) -> ClusterError:
    name, namespace = meta.get("name", ""), meta.get("namespace", "")
    return ClusterError(
        f"read run record ConfigMap {namespace}/{name}",
        reason="Unreadable",
        message=f"{why}, so its run cannot be followed or resumed",
        hint=f"delete it (kubectl delete configmap {name} -n {namespace}) to forget that run; "
        "other runs are unaffected",
    )


def _later(marker: Obj, record: RunRecord) -> bool:
    """True when `marker` names a submission later than `record`'s (a newer run of its name)."""
    written = (marker.get("data") or {}).get("submitted_at")
    try:
        return written is not None and float(written) > record.submitted_at
    except (TypeError, ValueError):
        return False  # a damaged marker: the conditional write replaces it


def _as_written(record: RunRecord, written: Obj) -> RunRecord:
    meta = written.get("metadata") or {}
    rv, uid = str(meta.get("resourceVersion") or ""), str(meta.get("uid") or "")
    return replace(record, resource_version=rv, uid=uid)


def _conflict(body: Obj, why: str) -> RecordConflict:
    meta = body["metadata"]
    return RecordConflict(
        f"update ConfigMap {meta['namespace']}/{meta['name']}",
        status=409,
        reason="Conflict",
        message=f"{why}; nothing was written",
        hint="read the run again (Client().get_run(name)) and act on what it says now",
    )


def _cancelled_by(near: Callable[[str], Obj | None], record: RunRecord) -> bool:
    found = near(cancel_marker(record.name, record.job.namespace)["metadata"]["name"])
    return found is not None and cancels(found, record)
