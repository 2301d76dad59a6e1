"""A local job's workdir and requirements, as a pod has them: the workdir packed as for an
upload and unpacked from that archive (hash checked) into the run's code folder, so a local
run and a GKE run see the same bytes; requirements installed by the same launcher code, into
a virtual environment cached in the run's checkpoints folder."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from gkeml_sdk.backends.local.system.confined import open_private
from gkeml_sdk.core.model import fail
from gkeml_sdk.training.contract_env import launcher_source
from gkeml_sdk.training.launcher import PrepareError, unpack_workdir
from gkeml_sdk.training.workdir import PackedWorkdir
from gkeml_sdk.training.workdir_job import pack_job_workdir, uploaded_archive

if TYPE_CHECKING:
    from gkeml_sdk.training.model import TrainingJob

ARCHIVE = "workdir.tar.gz"  # in the run directory: the bytes a pod would download


def pack_local_workdir(job: TrainingJob) -> PackedWorkdir | None:
    """The job's workdir packed as for an upload (None without one), before anything of the
    run is written: what cannot travel is refused first.

    Example:
        >>> from gkeml_sdk import TrainingJob
        >>> pack_local_workdir(TrainingJob(name="a", command=["x"])) is None
        True
    """
    if job.workdir is None:
        return None
    if uploaded_archive(job.workdir):
        raise fail(
            f"workdir={job.workdir!r} is an uploaded archive",
            rule="a local run packs the workdir folder on this machine",
            fix="workdir= the project's folder",
            field="workdir",
        )
    return pack_job_workdir(job)


def place_workdir(packed: PackedWorkdir, run_path: Path, code: Path) -> None:
    """Keep the archive in the run directory and unpack it into `code`, hash checked, as the
    launcher does in a pod.

    Example:
        >>> import tempfile
        >>> from gkeml_sdk import TrainingJob
        >>> project, run = Path(tempfile.mkdtemp()), Path(tempfile.mkdtemp())
        >>> _ = (project / "train.py").write_text("print(1)")
        >>> job = TrainingJob(name="a", command=["python", "train.py"], workdir=str(project))
        >>> place_workdir(pack_local_workdir(job), run, run / "code")
        >>> (run / "code" / "train.py").read_text(), (run / ARCHIVE).exists()
        ('print(1)', True)
    """
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


def requirements_argv(job: TrainingJob, argv: list[str]) -> list[str]:
    """`argv` started through the launcher when the job has requirements: it runs `argv` in
    the virtual environment `bootstrap_argv` installed (or found cached).

    Example:
        >>> from gkeml_sdk import TrainingJob
        >>> job = TrainingJob(name="a", command=["python", "t.py"], requirements=["six"])
        >>> requirements_argv(job, ["python", "t.py"])[3:]
        ['python', 't.py']
    """
    if job.requirements is None:
        return argv
    return [sys.executable, "-c", launcher_source(), *argv]


def bootstrap_argv(job: TrainingJob) -> list[str]:
    """What installs the job's requirements before each start (empty without any): the
    launcher without a program, as the pod's bootstrap container runs it. The workdir needs
    no step of its own here: it was unpacked from its archive at submit.

    Example:
        >>> from gkeml_sdk import TrainingJob
        >>> len(bootstrap_argv(TrainingJob(name="a", command=["x"], requirements=["six"])))
        3
    """
    if job.requirements is None:
        return []
    return [sys.executable, "-c", launcher_source()]
