"""A local job's workdir and requirements, as a pod has them: the workdir packed as for an
upload and unpacked from that archive (hash checked) into the run's code folder, so a local
run and a GKE run see the same bytes; requirements installed by the same launcher code, into
a virtual environment cached in the run's checkpoints folder."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from gkeml_sdk.backends.local.confined import open_private
from gkeml_sdk.core.model import fail
from gkeml_sdk.training.contract_env import launcher_source
from gkeml_sdk.training.launcher import PrepareError, unpack_workdir
from gkeml_sdk.training.workdir_job import uploaded_archive

if TYPE_CHECKING:
    from gkeml_sdk.training.model import TrainingJob

ARCHIVE = "workdir.tar.gz"  # in the run directory: the bytes a pod would download


def place_workdir(job: TrainingJob, run_path: Path, code: Path) -> str:
    """Pack the job's workdir into the run directory and unpack that archive into `code`;
    returns the archive's sha256.

    Example:
        >>> import tempfile
        >>> from gkeml_sdk import TrainingJob
        >>> project, run = Path(tempfile.mkdtemp()), Path(tempfile.mkdtemp())
        >>> _ = (project / "train.py").write_text("print(1)")
        >>> job = TrainingJob(name="a", command=["python", "train.py"], workdir=str(project))
        >>> len(place_workdir(job, run, run / "code")), (run / "code" / "train.py").read_text()
        (64, 'print(1)')
    """
    from gkeml_sdk.training.workdir_job import pack_job_workdir

    if job.workdir is not None and uploaded_archive(job.workdir):
        raise fail(
            f"workdir={job.workdir!r} is an uploaded archive",
            rule="a local run packs the workdir folder on this machine",
            fix="workdir= the project's folder",
            field="workdir",
        )
    packed = pack_job_workdir(job)
    archive = run_path / ARCHIVE
    fd = open_private(archive, flags=os.O_WRONLY | os.O_TRUNC)
    with open(fd, "wb") as f:
        f.write(packed.data)
    try:
        unpack_workdir(str(archive), packed.sha256, str(code))
    except PrepareError as exc:
        raise fail(
            str(exc), rule="the workdir is unpacked from its archive", field="workdir"
        ) from None
    return packed.sha256


def requirements_argv(job: TrainingJob, argv: list[str]) -> list[str]:
    """`argv` started through the launcher when the job has requirements: it installs them
    (or finds them cached) and runs `argv` in their virtual environment.

    Example:
        >>> from gkeml_sdk import TrainingJob
        >>> job = TrainingJob(name="a", command=["python", "t.py"], requirements=["six"])
        >>> requirements_argv(job, ["python", "t.py"])[3:]
        ['python', 't.py']
    """
    if job.requirements is None:
        return argv
    return [sys.executable, "-c", launcher_source(), *argv]
