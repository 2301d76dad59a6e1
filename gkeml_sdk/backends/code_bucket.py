"""A job's workdir on its way to a cluster: packed, uploaded once per content to the code
bucket with `google-cloud-storage` (an archive already there, asked by name, is not sent
again), and the job's `workdir` turned into the archive's gs:// name, which pods unpack. A
job without a code bucket ships a small workdir as files in its run record instead."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from gkeml_sdk.errors import ConfigError, excerpt
from gkeml_sdk.training.workdir_job import (
    archive_uri,
    as_files,
    code_location,
    pack_job_workdir,
    uploaded_archive,
)

if TYPE_CHECKING:
    from gkeml_sdk.training.model import TrainingJob

log = logging.getLogger(__name__)


def ship_workdir(job: TrainingJob, storage_client: Any = None) -> TrainingJob:
    """`job` ready for a cluster: its local workdir uploaded (unless the bucket has the same
    archive) and named by its gs:// archive, or, without a code bucket, carried as files.
    `storage_client`: a `google.cloud.storage.Client`; None makes one from the default
    credentials (or `STORAGE_EMULATOR_HOST`).

    Example:
        >>> from gkeml_sdk import TrainingJob
        >>> job = TrainingJob(name="a", image="i", command=["x"])
        >>> ship_workdir(job) is job
        True
    """
    if job.workdir is None or uploaded_archive(job.workdir):
        return job
    location = code_location(job)
    if location is None:
        # Validated again: the record must hold the files.
        return _changed(job, workdir=None, files=as_files(job).files)
    packed = pack_job_workdir(job)
    uri = archive_uri(location, packed)
    bucket, _, name = uri.removeprefix("gs://").partition("/")
    sent = upload_once(bucket, name, packed.data, storage_client)
    log.info(
        "workdir %s: %s (%d bytes)",
        job.workdir,
        "uploaded" if sent else "unchanged",
        len(packed.data),
    )
    return _changed(job, workdir=uri)


def upload_once(bucket: str, name: str, data: bytes, storage_client: Any = None) -> bool:
    """Upload `data` as `gs://bucket/name` unless an object of that name exists (names are
    content hashes, so it holds the same bytes). Returns whether it uploaded."""
    try:
        import google.cloud.storage as storage
        from google.api_core import exceptions
    except ImportError:
        raise ConfigError(
            "workdir= needs google-cloud-storage to upload the packed workdir (rule: the "
            "archive goes to your Cloud Storage bucket before the pods start). Try: pip "
            "install 'gkeml[storage]'"
        ) from None
    client = storage_client if storage_client is not None else storage.Client()
    blob = client.bucket(bucket).blob(name)
    where = f"gs://{bucket}/{name}"
    try:
        if blob.exists():
            return False
        # Another submit of the same tree may race this one: the first upload wins, the
        # second finds the object there (412) and has nothing to send.
        blob.upload_from_string(data, content_type="application/gzip", if_generation_match=0)
    except exceptions.PreconditionFailed:
        return False
    except exceptions.Forbidden as exc:
        raise ConfigError(
            f"cannot write the workdir archive {where}: {excerpt(str(exc.message), 300)} "
            "(rule: the credentials that submit a job upload its workdir to the code bucket). "
            f"Try: grant them roles/storage.objectCreator and roles/storage.objectViewer on "
            f"gs://{bucket}, or code_bucket= a bucket they can write"
        ) from None
    except exceptions.NotFound as exc:
        raise ConfigError(
            f"cannot write the workdir archive {where}: {excerpt(str(exc.message), 300)} "
            f"(rule: the code bucket must exist). Try: gcloud storage buckets create "
            f"gs://{bucket}, or code_bucket= an existing bucket"
        ) from None
    return True


def _changed(job: TrainingJob, **changes: Any) -> TrainingJob:
    # Validated as a new job with only the fields the user set marked as set: a namespace
    # left out still follows the client's.
    return type(job).model_validate({**job.model_dump(exclude_unset=True), **changes})
