"""The run directory a local submit writes for its supervisor: the job's files, the job, the
plan the supervisor follows (`launch.json`) and the first state (PENDING)."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from gkeml_sdk.backends.local.plan.launch_plan import plan_launch
from gkeml_sdk.backends.local.plan.local_workdir import (
    bootstrap_argv,
    pack_local_workdir,
    place_workdir,
    requirements_argv,
)
from gkeml_sdk.backends.local.store.run_state import LocalRunState
from gkeml_sdk.backends.local.store.run_store import JOB, RunDir
from gkeml_sdk.backends.local.system.confined import READ_ONLY_MODE, make_private_dir, write_private
from gkeml_sdk.runs.states import RunState, RunStatus
from gkeml_sdk.training.frameworks import preset_command
from gkeml_sdk.training.workdir_job import requirements_variables

if TYPE_CHECKING:
    from gkeml_sdk.backends.local.plan.local_options import LocalOptions
    from gkeml_sdk.training.model import TrainingJob

_PYTHON_NAMES = ("python", "python3", f"python3.{sys.version_info.minor}")


def write_run(
    job: TrainingJob, namespace: str, run: RunDir, folders: dict[str, str], options: LocalOptions
) -> LocalRunState:
    """Write the run directory of `job` that its supervisor reads; `folders` are the
    GKEML_VOLUME_* folders. Returns the state written (PENDING).

    Example:
        >>> import tempfile
        >>> from gkeml_sdk import LocalOptions, TrainingJob
        >>> run = RunDir(Path(tempfile.mkdtemp()) / "default" / "hi")
        >>> job = TrainingJob(name="hi", command=["python", "-c", "pass"])
        >>> write_run(job, "default", run, {}, LocalOptions()).status.state
        <RunState.PENDING: 'Pending'>
        >>> run.read_launch().argv[0] == sys.executable
        True
    """
    packed = pack_local_workdir(job)  # refused before the run directory exists
    path = Path(run.path)
    make_private_dir(path.parent)
    code = Path(run.code)
    for folder in (path, code, Path(run.checkpoints), Path(run.logs)):
        make_private_dir(folder)
    for rel, text in job.files.items():
        target = code / rel
        make_private_dir(target.parent)
        write_private(target, text, READ_ONLY_MODE)  # read-only, as the ConfigMap mount
    if packed is not None:
        place_workdir(packed, path, code)
    write_private(path / JOB, job.to_yaml())
    plan = plan_launch(
        job,
        options,
        argv=requirements_argv(job, _argv(job)),
        bootstrap=bootstrap_argv(job),
        # With shipped files the code directory is the working directory, as in the pod.
        cwd=run.code if job.files or job.workdir is not None else str(Path.cwd()),
        # GKEML_VOLUME_<NAME> -> the folder standing for the mount; what the launcher installs
        volumes={**folders, **requirements_variables(job)},
        checkpoint_dir=run.checkpoints,
    )
    run.write_launch(plan)
    run.reserve_space()
    record = LocalRunState(job.name, namespace, time.time())
    record.move(RunStatus(RunState.PENDING, message=f"run directory {path}"))
    run.write(record)
    return record


def _argv(job: TrainingJob) -> list[str]:
    # A command starting with `python` runs with this interpreter: the same installed packages
    # (with requirements, the launcher's virtual environment of this interpreter finds it).
    program = [*(job.command or []), *job.args]
    if program[0] in _PYTHON_NAMES and job.requirements is None:
        program[0] = sys.executable
    argv = preset_command(job, program)
    # The preset's launcher (torchrun) is installed with the framework, into the environment of
    # this interpreter, whose bin folder a notebook kernel's PATH may lack.
    beside = Path(sys.executable).parent / argv[0]
    if len(argv) > len(program) and beside.is_file():
        argv[0] = str(beside)
    return argv
