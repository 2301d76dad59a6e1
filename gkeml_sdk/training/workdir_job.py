"""A job's `workdir=`, `code_bucket=` and `requirements=`: their checks, where the archive
goes, what pods mount and read to unpack it and install the requirements, and the small-code
path without a bucket (the files travel in the run record's ConfigMap, as `files=` do)."""

from __future__ import annotations

import posixpath
import re
from typing import TYPE_CHECKING, TypeVar

from gkeml_sdk.core.environment import (
    REQUIREMENTS,
    REQUIREMENTS_FILE,
    WORKDIR_ARCHIVE,
    WORKDIR_SHA256,
)
from gkeml_sdk.core.environment import WORKSPACE as WORKSPACE_VAR
from gkeml_sdk.core.model import fail
from gkeml_sdk.core.objects import Obj
from gkeml_sdk.training.workdir import ARCHIVE_FOLDER, PackedWorkdir, pack_workdir

if TYPE_CHECKING:
    from gkeml_sdk.training.fields import TrainingJobFields

WORKSPACE = "/workspace"  # where pods find the unpacked workdir: their working directory
ARCHIVE_MOUNT = "/gkeml/workdir"  # the code bucket's archive folder, read-only
_ARCHIVE_URI = re.compile(
    r"^gs://([^/]+)/(?:(.+)/)?" + ARCHIVE_FOLDER + r"/([0-9a-f]{64})\.tar\.gz\Z"
)
_BUCKET = re.compile(r"^gs://([a-z0-9][-_.a-z0-9]{1,61}[a-z0-9])(?:/(.*))?\Z")
# Lines of a requirements file that are pip options or a local path, not a requirement.
_OPTION_WITH_FILE = ("-r", "--requirement", "-c", "--constraint")
_Job = TypeVar("_Job", bound="TrainingJobFields")


def check_workdir_fields(job: TrainingJobFields) -> None:
    """The checks of `workdir=`, `code_bucket=` and `requirements=` that need no file.

    Example:
        >>> from gkeml_sdk import TrainingJob
        >>> TrainingJob(name="a", command=["x"], requirements="req.txt")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        gkeml_sdk.errors.SpecError: requirements='req.txt' names a file, but the job has no ...
    """
    if job.workdir is not None and job.files:
        raise fail(
            "the job has both workdir= and files=",
            rule="both ship code to the working directory; a pod has one",
            fix="put the files into the workdir, or drop workdir=",
            field="workdir",
        )
    if job.code_bucket is not None:
        if job.workdir is None:
            raise fail(
                f"code_bucket={job.code_bucket!r} without workdir=",
                rule="the code bucket holds packed workdirs",
                fix="workdir='.' (your project's folder), or drop code_bucket=",
                field="code_bucket",
            )
        bucket_location(job.code_bucket, "code_bucket")
    if isinstance(job.requirements, str) and job.workdir is None:
        raise fail(
            f"requirements={job.requirements!r} names a file, but the job has no workdir=",
            rule="a requirements file is read from the workdir the job ships",
            fix=f"workdir='.', requirements={job.requirements!r}; or list them: "
            "requirements=['numpy==2.1', ...]",
            field="requirements",
        )
    if isinstance(job.requirements, list):
        _check_lines(job.requirements, "requirements", None, "")


def bucket_location(uri: str, field: str) -> tuple[str, str]:
    """(bucket, prefix) of `gs://BUCKET[/PREFIX]`.

    Example:
        >>> bucket_location("gs://team-code/llama", "code_bucket")
        ('team-code', 'llama')
    """
    match = _BUCKET.match(uri)
    if not match:
        raise fail(
            f"{field}={uri!r} is not a Cloud Storage location",
            rule="a bucket is gs://BUCKET or gs://BUCKET/PREFIX, BUCKET of 3-63 lowercase "
            "letters, digits, '-', '_' and '.'",
            fix=f"{field}='gs://my-bucket/code'",
            field=field,
        )
    return match[1], (match[2] or "").strip("/")


def code_location(job: TrainingJobFields) -> tuple[str, str] | None:
    """Where the job's packed workdir goes: `code_bucket`, else the bucket of a gs://
    checkpoint_dir (at its root); None when there is neither.

    Example:
        >>> from gkeml_sdk import TrainingJob
        >>> job = TrainingJob(name="a", command=["x"], checkpoint_dir="gs://ckpt/runs/a")
        >>> code_location(job)
        ('ckpt', '')
    """
    if job.code_bucket:
        return bucket_location(job.code_bucket, "code_bucket")
    if job.checkpoint_dir and job.checkpoint_dir.startswith("gs://"):
        return bucket_location(job.checkpoint_dir, "checkpoint_dir")[0], ""
    return None


def archive_uri(location: tuple[str, str], packed: PackedWorkdir) -> str:
    """The gs:// name of the archive in its bucket, which a submitted job's workdir becomes.

    Example:
        >>> archive_uri(("b", "code"), PackedWorkdir(b"", "0" * 64, (), 0))[:28]
        'gs://b/code/gkeml-code/00000'
    """
    bucket, prefix = location
    return f"gs://{bucket}/{posixpath.join(prefix, packed.object_name)}"


def uploaded_archive(workdir: str) -> tuple[str, str, str] | None:
    """(bucket, folder, sha256) when `workdir` is an uploaded archive's gs:// name.

    Example:
        >>> uploaded_archive("gs://b/code/gkeml-code/" + "a" * 64 + ".tar.gz")[:2]
        ('b', 'code/gkeml-code')
    """
    match = _ARCHIVE_URI.match(workdir)
    if not match:
        return None
    return match[1], posixpath.join(match[2] or "", ARCHIVE_FOLDER), match[3]


def pack_job_workdir(job: TrainingJobFields) -> PackedWorkdir:
    """Pack the job's local workdir and check its requirements file against what it holds.

    Example:
        >>> import tempfile
        >>> from pathlib import Path
        >>> from gkeml_sdk import TrainingJob
        >>> root = Path(tempfile.mkdtemp())
        >>> _ = (root / "requirements.txt").write_text("numpy==2.1.3\\n")
        >>> job = TrainingJob(name="a", command=["x"], workdir=str(root),
        ...                   requirements="requirements.txt")
        >>> pack_job_workdir(job).names
        ('requirements.txt',)
    """
    if job.workdir is None or uploaded_archive(job.workdir):
        raise fail(
            f"workdir={job.workdir!r} is not a local directory",
            rule="only a folder on this machine is packed",
            fix="workdir='path/to/project'",
            field="workdir",
        )
    packed = pack_workdir(job.workdir)
    if isinstance(job.requirements, str):
        check_requirements_file(job.requirements, job.workdir, packed)
    return packed


def check_requirements_file(name: str, workdir: str, packed: PackedWorkdir) -> None:
    """Refuse a requirements file that is not in the packed workdir or does not parse.

    Example:
        >>> check_requirements_file("r.txt", ".", PackedWorkdir(b"", "", (), 0))
        ... # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        gkeml_sdk.errors.SpecError: requirements='r.txt' is not a file of the workdir '.' ...
    """
    rel = posixpath.normpath(name)
    if rel not in packed.names:
        raise fail(
            f"requirements={name!r} is not a file of the workdir {workdir!r}",
            rule="the requirements file travels in the packed workdir and is read there",
            fix="a path relative to the workdir, not left out by .gitignore or .gkemlignore",
            field="requirements",
        )
    import tarfile
    from io import BytesIO

    with tarfile.open(fileobj=BytesIO(packed.data), mode="r:gz") as tar:
        member = tar.extractfile(rel)
        text = member.read().decode("utf-8", "replace") if member else ""
    _check_lines(text.splitlines(), f"requirements={name!r}", packed, posixpath.dirname(rel))


def _check_lines(lines: list[str], where: str, packed: PackedWorkdir | None, folder: str) -> None:
    from packaging.requirements import InvalidRequirement, Requirement

    for number, raw in enumerate(lines, 1):
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        words = line.split()
        if words[0] in _OPTION_WITH_FILE and len(words) > 1:
            target = posixpath.normpath(posixpath.join(folder, words[1]))
            if packed is not None and target not in packed.names:
                raise fail(
                    f"{where} line {number}: {line!r} names a file the workdir does not hold",
                    rule="files a requirements file includes travel in the packed workdir",
                    fix="add the file to the workdir, or drop the line",
                    field="requirements",
                )
            continue
        if line.startswith(("-", ".", "/")) or "://" in line:
            continue  # a pip option, a local path or a URL: pip reads it as written
        try:
            Requirement(line)
        except InvalidRequirement as exc:
            raise fail(
                f"{where} line {number}: {line!r} is not a requirement ({exc})",
                rule="pip reads each line as a requirement (PEP 508) or an option",
                fix="e.g. 'numpy==2.1.3', 'torch>=2.4', or '-r other.txt'",
                field="requirements",
            ) from None


def workdir_pod_parts(
    job: TrainingJobFields,
) -> tuple[list[Obj], list[Obj], list[Obj], dict[str, str]]:
    """The volumes, mounts, env entries and pod annotations that let the launcher unpack the
    job's workdir and install its requirements; empty for a job with neither.

    Example:
        >>> from gkeml_sdk import TrainingJob
        >>> uri = "gs://team-code/gkeml-code/" + "a" * 64 + ".tar.gz"
        >>> volumes, mounts, env, _ = workdir_pod_parts(TrainingJob(name="a", command=["x"],
        ...                                          image="i", workdir=uri))
        >>> [m["mountPath"] for m in mounts], env[0]["value"][-11:]
        (['/gkeml/workdir', '/workspace'], 'aaaa.tar.gz')
    """
    volumes: list[Obj] = []
    mounts: list[Obj] = []
    env: list[Obj] = []
    annotations: dict[str, str] = {}
    if job.workdir is not None:
        bucket, folder, sha256 = _archive_of(job)
        from gkeml_sdk.storage.manifests import pod_volumes
        from gkeml_sdk.storage.volumes import GcsFuse

        archive = GcsFuse(bucket, path=folder, name="workdir", mount=ARCHIVE_MOUNT, read_only=True)
        parts = pod_volumes([archive], env=False)
        volumes += parts.volumes
        mounts += parts.mounts
        annotations.update(parts.annotations)
        volumes.append({"name": "workspace", "emptyDir": {}})
        mounts.append({"name": "workspace", "mountPath": WORKSPACE})
        env += [
            _value(WORKDIR_ARCHIVE, f"{ARCHIVE_MOUNT}/{sha256}.tar.gz"),
            _value(WORKDIR_SHA256, sha256),
            _value(WORKSPACE_VAR, WORKSPACE),
        ]
    env += [_value(k, v) for k, v in requirements_variables(job).items()]
    return volumes, mounts, env, annotations


def requirements_variables(job: TrainingJobFields) -> dict[str, str]:
    """What tells the launcher the job's requirements: the file's path in the workdir, or
    the listed lines.

    Example:
        >>> from gkeml_sdk import TrainingJob
        >>> job = TrainingJob(name="a", command=["x"], requirements=["six", "idna"])
        >>> requirements_variables(job)
        {'GKEML_REQUIREMENTS': 'six\\nidna\\n'}
    """
    if isinstance(job.requirements, str):
        return {REQUIREMENTS_FILE: job.requirements}
    if job.requirements is not None:
        return {REQUIREMENTS: "\n".join(job.requirements) + "\n"}
    return {}


def as_files(job: _Job) -> _Job:
    """`job` with its local workdir as `files=` (the run record's ConfigMap) when it has no
    code bucket; the job itself otherwise. Refused when the workdir is not small UTF-8 text.

    Example:
        >>> from gkeml_sdk import TrainingJob
        >>> as_files(TrainingJob(name="a", command=["x"])).files
        {}
    """
    if job.workdir is None or uploaded_archive(job.workdir) or code_location(job) is not None:
        return job
    import tarfile
    from io import BytesIO

    from gkeml_sdk.training.code import check_files

    packed = pack_job_workdir(job)
    files: dict[str, str] = {}
    with tarfile.open(fileobj=BytesIO(packed.data), mode="r:gz") as tar:
        for name in packed.names:
            member = tar.extractfile(name)
            try:
                files[name] = member.read().decode("utf-8") if member else ""
            except UnicodeDecodeError:
                raise _needs_bucket(job, f"{name!r} is not UTF-8 text") from None
    try:
        check_files(files)
    except ValueError as exc:
        raise _needs_bucket(job, str(exc)) from None
    return job.model_copy(update={"workdir": None, "files": files})


def _needs_bucket(job: TrainingJobFields, why: str) -> ValueError:
    return fail(
        f"workdir={job.workdir!r} cannot travel without a bucket: {why}",
        rule="without code_bucket= or a gs:// checkpoint_dir, the workdir travels in the run "
        "record's ConfigMap (UTF-8 text, under 1 MiB)",
        fix="code_bucket='gs://YOUR-BUCKET/code' (uploaded once per content), or a gs:// "
        "checkpoint_dir",
        field="workdir",
    )


def _archive_of(job: TrainingJobFields) -> tuple[str, str, str]:
    assert job.workdir is not None
    uploaded = uploaded_archive(job.workdir)
    if uploaded:
        return uploaded
    location = code_location(job)
    if location is None:
        raise _needs_bucket(job, "it was not turned into files= first (as_files)")
    bucket, prefix = location
    return bucket, posixpath.join(prefix, ARCHIVE_FOLDER), pack_job_workdir(job).sha256


def _value(name: str, value: str) -> Obj:
    return {"name": name, "value": value}
