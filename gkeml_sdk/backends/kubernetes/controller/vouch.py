"""Whether the controller may act for a run record. The controller holds rights in every
namespace it manages, but whoever wrote a record may hold only ConfigMap create there: it acts
for a record only when someone who may create the run's workload in that namespace vouched for
it. The submitting client does so by creating the first attempt object (JobSet or Job) itself,
with its own rights, carrying the record's spec digest (`spec_digest`); the controller
recomputes that digest from the record and acts only when an attempt object of the run in the
record's own namespace carries it. Every attempt the controller creates copies the annotation.
So a record written by hand, or one whose spec was edited after it was submitted, makes the
controller create nothing anywhere."""

from __future__ import annotations

import logging
from collections.abc import Iterable

from gkeml_sdk.backends.kubernetes.api.kube import KubeClient
from gkeml_sdk.backends.kubernetes.api.queue_reads import list_pages
from gkeml_sdk.backends.kubernetes.api.resources import Resource
from gkeml_sdk.backends.kubernetes.runs.attempts import job_resource
from gkeml_sdk.backends.kubernetes.runs.run_record import (
    SPEC_DIGEST_ANNOTATION,
    RunRecord,
    record_name,
    spec_digest,
)
from gkeml_sdk.core.labels import RUN_ID_LABEL
from gkeml_sdk.core.objects import Obj, labels
from gkeml_sdk.errors import ClusterError, GkemlError
from gkeml_sdk.version import __version__

log = logging.getLogger(__name__)


class Vouchers:
    """Which records the controller may act for. A record vouched for stays so while its
    digest is the same (its attempt objects may come and go); the answer is read from the
    cluster once per record and digest.

    Example:
        >>> vouchers = Vouchers(kube)  # doctest: +SKIP
        >>> refused = {}  # doctest: +SKIP
        >>> [r.name for r in vouchers.admit("ml", records, refused)]  # doctest: +SKIP
        ['llama-ft']
        >>> refused  # doctest: +SKIP
        {'forged': ClusterError('act for run record ConfigMap ml/forged-gkeml-run: ...')}
    """

    def __init__(self, kube: KubeClient) -> None:
        self.kube = kube
        self._vouched: set[tuple[str, str, str]] = set()  # (namespace, run, digest)
        self._told: dict[str, set[str]] = {}  # namespace -> refusals logged, as said

    def admit(
        self, namespace: str, records: Iterable[RunRecord], refused: dict[str, GkemlError]
    ) -> list[RunRecord]:
        """The records of `namespace` (read from its ConfigMaps) the controller may act for;
        each other one goes into `refused` (run name -> why). One paginated list per kind of
        attempt object, and only while some record is not vouched for yet."""
        records = list(records)
        unknown = {
            r.name: r
            for r in records
            if _claim(r, namespace) is None
            and (namespace, r.name, spec_digest(r)) not in self._vouched
        }
        marks: dict[Resource, dict[str, set[str]]] = {}
        for kind in {job_resource(r) for r in unknown.values()}:
            marks[kind] = _digests(self.kube, kind, namespace, "")
        admitted, told = [], self._told.get(namespace, set())
        self._told[namespace] = set()
        for record in records:
            why = _claim(record, namespace)
            if why is None and record.name in unknown:
                carried = marks[job_resource(record)].get(record.name, set())
                why = self._judge(record, carried)
            if why is None:
                admitted.append(record)
            else:
                refused[record.name] = why
                self._tell(namespace, why, told)
        return admitted

    def check(self, record: RunRecord, namespace: str) -> None:
        """Raise why the controller may not act for `record`, read from a ConfigMap in
        `namespace` (a `ClusterError` naming that ConfigMap); return when it may."""
        why = _claim(record, namespace)
        if why is None and (namespace, record.name, spec_digest(record)) not in self._vouched:
            found = _digests(self.kube, job_resource(record), namespace, record.name)
            why = self._judge(record, found.get(record.name, set()))
        if why is not None:
            self._tell(namespace, why, self._told.get(namespace, set()))
            raise why

    def judge_seen(
        self, record: RunRecord, namespace: str, objects: list[Obj]
    ) -> ClusterError | None:
        """Why the controller may not act for `record` (from a ConfigMap in `namespace`),
        judged from its run's attempt `objects` as the controller's cache holds them (no
        read); None when it may."""
        why = _claim(record, namespace)
        if why is None and (namespace, record.name, spec_digest(record)) not in self._vouched:
            why = self._judge(record, _marks(objects).get(record.name, set()))
        return why

    def _tell(self, namespace: str, why: ClusterError, told: set[str]) -> None:
        """Log a refusal once, not on every pass (it stands until the record changes)."""
        if str(why) not in told:
            log.warning("%s", why)
        self._told.setdefault(namespace, set()).add(str(why))

    def _judge(self, record: RunRecord, carried: set[str]) -> ClusterError | None:
        """Why `record` is refused when its run's attempt objects carry `carried`; None
        (and remembered) when one of them carries its digest."""
        digest = spec_digest(record)
        if digest in carried:
            self._vouched.add((record.job.namespace, record.name, digest))
            return None
        kind = job_resource(record).kind
        if record.spec_digest != digest and record.spec_digest in carried:
            return _refusal(
                record,
                "its spec, retry policy, code or submission time was changed after it was "
                "submitted (its spec digest no longer matches what its first attempt carries)",
                "submit the changed spec as a new run; gkeml never acts on an edited record",
            )
        return _refusal(
            record,
            f"no {kind} of run {record.name!r} in namespace {record.job.namespace!r} carries "
            f"its spec digest, so nobody who may create a {kind} there vouched for it "
            "(whoever submits a run creates its first attempt with their own rights)",
            "submit the run again with Client().submit (or its CLI); a record written by hand "
            "is never acted on",
        )


def _claim(record: RunRecord, namespace: str) -> ClusterError | None:
    """Why `record` is refused whatever the cluster holds, if it is."""
    if record.job.namespace != namespace:
        return _refusal(
            record,
            f"its spec names namespace {record.job.namespace!r}, but it is in {namespace!r}, "
            "and a record is acted on only in its own namespace",
            "submit the run in the namespace it names",
            namespace,
        )
    if not record.spec_digest:
        return _refusal(
            record,
            "it carries no spec digest: a gkeml older than this controller wrote it, and the "
            "controller acts only for records their submitter vouched for",
            f"resubmit the run with this gkeml ({__version__})",
        )
    return None


def _refusal(record: RunRecord, why: str, hint: str, namespace: str = "") -> ClusterError:
    where = f"{namespace or record.job.namespace}/{record_name(record.name)}"
    return ClusterError(
        f"act for run record ConfigMap {where}",
        reason="NotVouchedFor",
        message=f"{why}; the controller creates nothing for it",
        hint=hint,
    )


def _digests(kube: KubeClient, kind: Resource, namespace: str, run: str) -> dict[str, set[str]]:
    """The spec digests the attempt objects of `kind` in `namespace` carry, by run (of run
    `run` only, when given)."""
    selector = f"{RUN_ID_LABEL}={run}" if run else RUN_ID_LABEL
    try:
        found: list[Obj] = list_pages(kube, kind, namespace, label_selector=selector)
    except ClusterError as exc:
        if exc.status == 404:  # the kind is not served (its CRD is gone): none exist
            return {}
        raise
    return _marks(found)


def _marks(found: list[Obj]) -> dict[str, set[str]]:
    """The spec digests `found` (attempt objects) carry, by run."""
    marks: dict[str, set[str]] = {}
    for obj in found:
        annotations = (obj.get("metadata") or {}).get("annotations") or {}
        if SPEC_DIGEST_ANNOTATION in annotations:
            marks.setdefault(labels(obj)[RUN_ID_LABEL], set()).add(
                str(annotations[SPEC_DIGEST_ANNOTATION])
            )
    return marks
