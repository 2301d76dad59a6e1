"""Submitting a job: two requests when its name is free (the job, created so that a taken
name is found without a read first, then its record with the job's uid); otherwise the run of
that name is replaced when finished, resumed when it is this same submission, or refused."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Protocol

from gkeml_sdk.backends.kubernetes.api.kube import KubeClient
from gkeml_sdk.backends.kubernetes.runs.attempts import Attempts, job_resource
from gkeml_sdk.backends.kubernetes.runs.run_record import (
    AttemptRecord,
    RunRecord,
    record_name,
    written_part,
)
from gkeml_sdk.backends.kubernetes.runs.run_records import CONFIG_MAPS, RunRecords
from gkeml_sdk.errors import ConfigError, GkemlError
from gkeml_sdk.runs.retry import RetryPolicy
from gkeml_sdk.training.model import TrainingJob


class Submitter(Protocol):
    """What a submission reads and writes through (the run service)."""

    kube: KubeClient
    attempts: Attempts
    records: RunRecords

    def save(self, record: RunRecord) -> RunRecord: ...

    def ended(self, record: RunRecord) -> bool: ...


def submit_job(backend: Submitter, job: TrainingJob, retry: RetryPolicy | None) -> RunRecord:
    """Record and create attempt 1 of `job` (checked already); idempotent for an identical
    spec.

    Example:
        >>> submit_job(service, job, None).current.attempt  # doctest: +SKIP
        1
    """
    first = AttemptRecord(1, job.name, job.spot)
    # Sealed: the digest the first attempt object carries, made with the submitter's rights,
    # is what lets the controller act for this record (and for no edited copy of it).
    record = RunRecord(job=job, submitted_at=time.time(), retry=retry, attempts=(first,)).sealed()
    # Two requests when the name is free: the job (created, so a taken name is found
    # without reading first), then the record with its uid. A client that dies in between
    # leaves a job that runs without a record; submitting it again adopts it.
    made = backend.attempts.create(record, first, adopt=False)
    if made is None:
        return _name_taken(backend, record)
    record = record.with_attempt(made)
    created = backend.records.create(record)
    return created or _record_taken(backend, record)


def _name_taken(backend: Submitter, record: RunRecord) -> RunRecord:
    """The job's name is taken: replace a finished run of that name, resume this same
    submission, adopt this run's own job (a retried create), refuse anything else."""
    job = record.job
    existing = backend.records.find(job.name, job.namespace)
    if existing is not None:
        if not backend.ended(existing):  # read: a run nobody followed records no end
            if existing.job != job or existing.retry != record.retry:
                raise _still_active(job)
            current = existing.current
            if existing.cancelled or current.outcome or current.uid:
                return existing  # the same submission again
            record = existing
        else:
            # A finished run of that name is replaced, as `kubectl apply` would; its
            # objects must be gone first, or the new attempt would land on a dying one.
            backend.attempts.delete_run(existing, wait=True)
            backend.records.unmark_cancelled(job.name, job.namespace)
            # The new record is written over the one read (conditional on its version).
            record = replace(record, resource_version=existing.resource_version)
    created = backend.attempts.create(record, record.current)
    assert created is not None  # adopting: a taken name is this attempt's or refused
    return backend.save(record.with_attempt(created))


def _record_taken(backend: Submitter, record: RunRecord) -> RunRecord:
    """Our job was created but a record of its name exists: replace a finished run's,
    complete this same submission's when its first attempt was never created, and otherwise
    remove the job just made (a stray of a run that moved on, or of another spec)."""
    job = record.job
    written = backend.kube.find(CONFIG_MAPS, record_name(job.name), job.namespace)
    if written is not None and written_part(written) == written_part(record.to_configmap()):
        meta = written["metadata"]  # our own create, retried after it landed
        return replace(record, resource_version=meta["resourceVersion"], uid=meta.get("uid", ""))
    try:
        existing = None if written is None else backend.records.read(written)
    except GkemlError:
        # Another tool's ConfigMap, or a damaged record: the job just made must not run
        # without a record, and the ConfigMap is never overwritten.
        _remove_ours(backend, record)
        raise
    if existing is not None and not backend.ended(existing):
        same = existing.job == job and existing.retry == record.retry
        ours = existing.current.attempt == 1 and existing.current.uid in ("", record.current.uid)
        if not (same and ours):
            _remove_ours(backend, record)
            if not same:
                raise _still_active(job)
            return existing
        record = existing.with_attempt(record.current)
    elif existing is not None:  # a finished run's record, written over as read
        record = replace(record, resource_version=existing.resource_version)
    return backend.save(record)


def _remove_ours(backend: Submitter, record: RunRecord) -> None:
    """Delete the job this submission just made, and only that one (its uid)."""
    job, current = record.job, record.current
    backend.kube.delete(job_resource(record), current.name, job.namespace, uid=current.uid)


def _still_active(job: TrainingJob) -> ConfigError:
    return ConfigError(
        f"a run named {job.name!r} is still active in namespace {job.namespace!r} "
        "with a different spec: choose another name, or cancel it first "
        f"(Client().get_run({job.name!r}).cancel())"
    )
