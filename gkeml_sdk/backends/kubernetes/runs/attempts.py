"""The objects of a run's attempts: created (never applied over), only when the name is free or
already this attempt's; kept once finished while their run lives, so a late create of an old
name collides instead of starting it again; deleted with the uid they were read with; and
objects of a run that are no attempt of it (`strays`) found for deletion."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

from gkeml_sdk.backends.kubernetes.api.kube import KubeClient
from gkeml_sdk.backends.kubernetes.api.resources import Resource, resource, resource_of
from gkeml_sdk.backends.kubernetes.api.shared_apply import (
    ensure_shared,
    require_claims,
    split_shared,
)
from gkeml_sdk.backends.kubernetes.runs.run_record import (
    SPEC_DIGEST_ANNOTATION,
    AttemptRecord,
    RunRecord,
    spec_digest,
)
from gkeml_sdk.core import kinds
from gkeml_sdk.core.labels import ATTEMPT_LABEL, RUN_ID_LABEL, record_name
from gkeml_sdk.core.objects import Obj, labels, uid
from gkeml_sdk.errors import ClusterError

JOBSETS = resource(kinds.JOBSET, "JobSet")
SUBMISSION_ANNOTATION = "gkeml.dev/submission"  # submitted_at of the run that made the attempt
JOBS = resource(kinds.BATCH, "Job")


def job_resource(record: RunRecord) -> Resource:
    """The kind a run's attempts are made of (JobSet or batch Job)."""
    return JOBSETS if record.job.uses_jobset else JOBS


class Attempts:
    """Create and delete attempt objects safely next to Kueue, other clients and the garbage
    collector.

    Example:
        >>> attempts = Attempts(kube, deletion_timeout=300)  # doctest: +SKIP
        >>> attempt = attempts.create(record, record.current)  # doctest: +SKIP
        >>> attempt.uid  # doctest: +SKIP
        'f2c1...'
    """

    def __init__(
        self,
        kube: KubeClient,
        *,
        deletion_timeout: float = 300.0,
        sleep: Callable[[float], None] = time.sleep,
        wait_for_dying: bool = True,
    ) -> None:
        self.kube = kube
        self.deletion_timeout = deletion_timeout
        self._sleep = sleep
        # False for a controller: a name held by a dying object is `AttemptNameBusy` at once
        # and the run is looked at again later, so one stuck run holds no worker.
        self.wait_for_dying = wait_for_dying

    def create(
        self, record: RunRecord, attempt: AttemptRecord, *, adopt: bool = True
    ) -> AttemptRecord | None:
        """Create `attempt`'s objects and return it with its object's uid.

        An object of that name that belongs to this attempt (a retried request, a client that
        died after creating it) is adopted; one that is being deleted is waited out, because
        whatever lands on a dying object dies with it; one that belongs to anything else is
        never touched (`ClusterError`). Without `adopt`, a taken name returns None at once
        (the caller finds out whose it is). Earlier attempts are left as they are: finished,
        they hold their names against a late create by a leader that lost its Lease."""
        job = record.job
        if attempt.spot != job.spot:
            job = job.with_changes(spot=attempt.spot)
        manifests = job.compile(attempt=attempt.attempt)
        # Data volumes first, as they are if they exist: no run owns them, no attempt deletes them.
        shared, owned = split_shared(manifests.objects)
        if attempt.attempt > 1:
            # A later attempt (the controller's) uses the volumes, code and claims the
            # submission created with the submitter's rights; it may create only attempts.
            require_claims(self.kube, shared, f"create attempt {attempt.attempt} of {record.name}")
            owned = [manifests.main]
        else:
            ensure_shared(self.kube, shared)
        for obj in owned:
            meta = obj["metadata"]
            # The code ConfigMap is the run record's: the record's own write carries the code.
            carried_by_record = obj["kind"] == "ConfigMap" and meta["name"] == record_name(
                record.name
            )
            if obj is not manifests.main and not carried_by_record:
                found = self.kube.find(resource_of(obj), meta["name"], meta["namespace"])
                if found is not None and labels(found).get(RUN_ID_LABEL) != record.name:
                    _refuse(found)
                self.kube.apply(obj)
        main = _of_submission(manifests.main, record)
        end = time.monotonic() + self.deletion_timeout
        while True:
            created = self.kube.create(main)
            if created is not None:
                return replace(attempt, uid=uid(created))
            res, name = resource_of(main), main["metadata"]["name"]
            existing = self.kube.find(res, name, record.job.namespace)
            if not adopt:
                # Only our own create, retried after it landed, is taken as ours.
                return replace(attempt, uid=uid(existing)) if _ours(existing, main) else None
            if existing is None:
                if time.monotonic() >= end:
                    raise ClusterError(
                        f"create {main['kind']} {name}",
                        reason="Conflict",
                        message="the name stays taken but the object cannot be read",
                    )
                continue  # it went away between the create and the read: create again
            _check_owner(existing, record.name, attempt.attempt)
            if not (existing.get("metadata") or {}).get("deletionTimestamp"):
                return replace(attempt, uid=uid(existing))
            if not self.wait_for_dying:
                raise AttemptNameBusy(
                    f"create {main['kind']} {name}",
                    status=409,
                    reason="AlreadyExists",
                    message=f"the name is held by a {main['kind']} being deleted (finalizers: "
                    f"{', '.join(_finalizers(existing)) or 'none'})",
                    hint="the run is looked at again at the next event or resync",
                )
            self.wait_gone(res, name, record.job.namespace, uid(existing), end)

    def delete_run(self, record: RunRecord, *, wait: bool = False) -> None:
        """Delete every attempt object of the run: those its record knows and any other
        labelled with its run id (an attempt another client created after this record was
        read), each with the uid it was seen with, so an object made since under the same
        name is left alone. With `wait`, return only once they are gone."""
        res, ns = job_resource(record), record.job.namespace
        found, _ = self.kube.list(res, ns, label_selector=f"{RUN_ID_LABEL}={record.name}")
        victims = {a.name: a.uid for a in record.attempts}
        victims.update({o["metadata"]["name"]: uid(o) for o in found})
        for name, known in sorted(victims.items()):
            self.kube.delete(res, name, ns, uid=known)
        if wait:
            end = time.monotonic() + self.deletion_timeout
            for name, known in sorted(victims.items()):
                self.wait_gone(res, name, ns, known, end)

    def wait_gone(self, res: Resource, name: str, namespace: str, old_uid: str, end: float) -> None:
        """Return once the object `name` with uid `old_uid` no longer exists (any uid when
        `old_uid` is empty); `ClusterError` at `end` (a `time.monotonic()` instant)."""
        pause = 0.05
        while True:
            current = self.kube.find(res, name, namespace)
            if current is None or (old_uid and uid(current) != old_uid):
                return
            if time.monotonic() >= end:
                finalizers = _finalizers(current)
                raise ClusterError(
                    f"wait for {res.kind} {name} to be deleted",
                    reason="Timeout",
                    message=f"still there after {self.deletion_timeout:g} s "
                    f"(finalizers: {', '.join(finalizers) or 'none'})",
                    hint="its pods may still be terminating or a finalizer holds it; try again "
                    f"later, or check `kubectl get {res.plural} {name} -n {namespace} -o yaml`",
                )
            self._sleep(min(pause, max(0.0, end - time.monotonic())))
            pause = min(pause * 2, 2.0)


class AttemptNameBusy(ClusterError):
    """The next attempt's name is held by an object that is being deleted: try later.

    Example:
        >>> AttemptNameBusy("create JobSet a--r2", reason="AlreadyExists").reason
        'AlreadyExists'
    """


def strays(record: RunRecord, found: list[Obj]) -> list[Obj]:
    """The attempt objects of `record`'s run (`found`, labelled with its run id) that are no
    attempt of it: made by an earlier submission, or under a name its record does not hold,
    or under a recorded name with another uid (made by a writer that had lost its Lease), or
    any of a cancelled run (a late create that landed after the cancel deleted its objects).
    An object of a newer submission than the record (being submitted now) and one not marked
    with a submission (older gkeml) are never strays.

    Example:
        >>> from gkeml_sdk import TrainingJob
        >>> job = TrainingJob(name="a", image="i", command=["x"])
        >>> record = RunRecord(job=job, submitted_at=5.0, attempts=(AttemptRecord(1, "a", True),))
        >>> def obj(name, at):
        ...     return {"metadata": {"name": name, "uid": name, "labels": {RUN_ID_LABEL: "a"},
        ...             "annotations": {SUBMISSION_ANNOTATION: repr(at)}}}
        >>> [o["metadata"]["name"] for o in strays(record, [obj("a", 5.0), obj("a--r2", 5.0),
        ...     obj("a--r3", 4.0), obj("a--r9", 6.0)])]
        ['a--r2', 'a--r3']
    """
    recorded = {a.name: a.uid for a in record.attempts}
    out = []
    for obj in found:
        meta = obj.get("metadata") or {}
        made_at = _made_at(meta)
        # Objects a controller made for an attempt (a JobSet's Jobs) are never attempts.
        if labels(obj).get(RUN_ID_LABEL) != record.name or meta.get("ownerReferences"):
            continue
        if made_at is None or made_at > record.submitted_at:
            continue  # older gkeml's, or a submission in progress (its record comes after)
        name = str(meta.get("name") or "")
        known = recorded.get(name)
        stale = made_at < record.submitted_at or record.cancelled
        if stale or known is None or known not in ("", uid(obj)):
            out.append(obj)
    return out


def _made_at(meta: Obj) -> float | None:
    """The submission that made an attempt object (its `submitted_at`), None when unmarked."""
    mark = (meta.get("annotations") or {}).get(SUBMISSION_ANNOTATION)
    try:
        return None if mark is None else float(str(mark))
    except ValueError:
        return None


def _finalizers(obj: Obj) -> list[str]:
    return list((obj.get("metadata") or {}).get("finalizers") or [])


def _of_submission(main: Obj, record: RunRecord) -> Obj:
    """The attempt's object marked with the submission that made it, so that a create
    retried after it landed is recognised without reading the run record, and with the
    record's spec digest, which vouches for the record to the controller (the first attempt's
    from the submitting client's rights, each later one copying it). The digest is the one the
    record's content gives, not the one it states: an edit of that key alone changes nothing."""
    meta = main["metadata"]
    digest = {SPEC_DIGEST_ANNOTATION: spec_digest(record)} if record.spec_digest else {}
    annotations = {
        **(meta.get("annotations") or {}),
        SUBMISSION_ANNOTATION: repr(record.submitted_at),
        **digest,
    }
    return {**main, "metadata": {**meta, "annotations": annotations}}


def _ours(existing: Obj | None, main: Obj) -> bool:
    if existing is None or (existing.get("metadata") or {}).get("deletionTimestamp"):
        return False
    mark = ((existing.get("metadata") or {}).get("annotations") or {}).get(SUBMISSION_ANNOTATION)
    wanted = main["metadata"]["annotations"][SUBMISSION_ANNOTATION]
    same = labels(existing).get(RUN_ID_LABEL) == labels(main).get(RUN_ID_LABEL)
    return bool(same and mark == wanted)


def _check_owner(existing: Obj, run: str, attempt: int) -> None:
    found = labels(existing)
    if found.get(RUN_ID_LABEL) != run or found.get(ATTEMPT_LABEL) != str(attempt):
        _refuse(existing)


def _owner(obj: Obj) -> str:
    found = labels(obj)
    if RUN_ID_LABEL not in found:
        return "something other than gkeml"
    if ATTEMPT_LABEL not in found:
        return f"gkeml run {found[RUN_ID_LABEL]!r}"
    return f"attempt {found[ATTEMPT_LABEL]} of gkeml run {found[RUN_ID_LABEL]!r}"


def _refuse(existing: Obj) -> None:
    kind, name, owner = (
        existing.get("kind", "object"),
        existing["metadata"]["name"],
        _owner(existing),
    )
    raise ClusterError(
        f"create {kind} {name}",
        status=409,
        reason="AlreadyExists",
        message=f"a {kind} named {name!r} already exists and belongs to {owner}",
        hint="gkeml never changes objects of another run; choose another run name, or delete "
        "that object first",
    )
