"""Starts a run's supervisor as a process of its own: a new interpreter runs
`supervisor_process.main(RUN_PATH)`, which forks, so the supervisor is no child of the caller
and outlives it (a kernel restart does not stop a run)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from gkeml_sdk.backends.local.store.run_store import RunDir
from gkeml_sdk.backends.local.supervision.supervisor_process import GO
from gkeml_sdk.errors import GkemlError

# A submit starts the supervisor within this time or fails.
LAUNCH_TIMEOUT_SECONDS = 60.0
# The folder holding this gkeml_sdk: the new interpreter runs the caller's copy of the code.
_CODE_ROOT = str(Path(__file__).resolve().parents[__name__.count(".")])
# Isolated (-I: no PYTHON* variables, user site or working directory on its path) and without
# `site` (-S): the supervisor needs only the standard library and gkeml_sdk, and site's .pth
# files (editable installs, vendor hooks) cost more than the rest of its start.
_START = (
    "import sys; sys.path.append(sys.argv.pop(1)); "
    "from gkeml_sdk.backends.local.supervision.supervisor_process import main; main(sys.argv[1:])"
)


def supervisor_command(path: Path) -> list[str]:
    """The command that starts the supervisor of the run at `path`: this interpreter, without
    `site`, running this copy of gkeml_sdk.

    Example:
        >>> command = supervisor_command(Path("/runs/default/a"))
        >>> [a for a in command if a in ("-I", "-S")], command[-1]
        (['-I', '-S'], '/runs/default/a')
    """
    # -I ignores PYTHONDONTWRITEBYTECODE: keep this interpreter's choice about .pyc files.
    no_bytecode = ["-B"] if sys.flags.dont_write_bytecode else []
    return [sys.executable, "-I", "-S", *no_bytecode, "-c", _START, _CODE_ROOT, str(path)]


@contextlib.contextmanager
def supervisor_launch(path: Path, secrets: dict[str, str]) -> Iterator[None]:
    """Start the supervisor of the run at `path` (`supervisor_process`, in a process of its
    own) around the block that writes the run's files: its launcher starts at once, so that its
    imports overlap the writing, and forks the supervisor once the block ended. Returns once
    the supervisor is recorded; `GkemlError` when it did not start. An error in the block stops
    the launcher before it forks.

    Example:
        >>> with supervisor_launch(Path("/runs/default/a"), {}):  # doctest: +SKIP
        ...     write_the_run_files()
    """
    # The launcher forks the supervisor and returns at once after recording its identity.
    # Secret values travel in the supervisor's environment only, never through a file.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONSTARTUP"} | secrets
    launcher = subprocess.Popen(
        supervisor_command(path),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    try:
        yield
    except BaseException:
        launcher.kill()  # before it read the word to go on: it forked nothing
        launcher.communicate()
        raise
    try:
        _, stderr = launcher.communicate(GO, timeout=LAUNCH_TIMEOUT_SECONDS)
    except subprocess.TimeoutExpired:
        launcher.kill()
        launcher.communicate()
        raise GkemlError(f"the local supervisor for {path} did not start in time") from None
    if launcher.returncode != 0 or RunDir(path).read_supervisor() is None:
        error = stderr.decode(errors="replace").strip().splitlines()[-1:]
        raise GkemlError(
            f"could not start the local supervisor for {path.name}: "
            f"{error[0] if error else f'exit code {launcher.returncode}'}"
        )
