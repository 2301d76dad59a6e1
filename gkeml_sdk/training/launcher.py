"""Starts the user's command in every pod. Kubernetes cannot give a pod its global node rank
(no arithmetic in env) nor say how often its rank started before (a Kueue preemption or a
resubmission changes no label), so this sets NODE_RANK, JAX_PROCESS_ID and
GKEML_RESTART_ATTEMPT, expands them in the command, and execs it in the environment the
workspace was prepared into. Preparing (`prepare`: the job's workdir unpacked with its hash
checked, its requirements installed into a cached virtual environment) is a start of its own,
without a command: the pod's `bootstrap` init container, a step before the process locally. So
its exit code 3 says only that the workspace could not be prepared, never that the user's
program exited 3, and the job fails at once instead of retrying (a podFailurePolicy rule on
the bootstrap container; the local supervisor alike). Shipped as the source of `python3 -c`
(stdlib only, no dollar sign: Kubernetes would expand it); the local backend calls
`record_start`, so a restart counts the same way on both, and starts a job with requirements
through `main` (the supervisor has set and expanded the rest)."""

from __future__ import annotations

import os
import re
import sys

# Only os, re and sys at the top: the local supervisor imports `record_start` from here and
# must start light; what prepares a workspace is imported where it is used.
STARTS = os.path.join(".gkeml", "starts")
VENVS = os.path.join(".gkeml", "venvs")
READY = ".gkeml-ready"  # written last: a venv without it was cut short and is built again
PREPARE_FAILED = 3  # the exit code of a bootstrap whose workdir or requirements failed
_D = re.escape(chr(36))
_REFERENCE = re.compile(_D + "(?:" + _D + r"|\(([-._a-zA-Z][-._a-zA-Z0-9]*)\))")


def record_start(checkpoint_dir: str, key: str, start_id: str) -> int:
    """Mark start `start_id` of process `key`; return how many other starts of it are marked."""
    folder = os.path.join(checkpoint_dir, STARTS, key)
    os.makedirs(folder, exist_ok=True)
    open(os.path.join(folder, start_id), "a").close()
    return sum(1 for name in os.listdir(folder) if name != start_id)


def expand(arg: str, values: dict[str, str]) -> str:
    """Expand references to `values` as Kubernetes does; others stay as written."""

    def one(match: re.Match[str]) -> str:
        name = match.group(1)
        return chr(36) if name is None else values.get(name, match.group(0))

    return _REFERENCE.sub(one, arg)


def node_rank(env: dict[str, str]) -> int:
    """The pod's rank among all pods: its Job's (slice's) index times pods per Job, plus its
    completion index inside the Job."""
    job, per_job = int(env["GKEML_JOB_INDEX"]), int(env["GKEML_PODS_PER_JOB"])
    return job * per_job + int(env["GKEML_POD_INDEX"])


class PrepareError(Exception):
    """The workspace cannot be prepared; the message says why (pip's own output included)."""


def unpack_workdir(archive: str, sha256: str, dest: str) -> None:
    """Unpack the workdir archive into `dest` once its sha256 is the one the job was compiled
    with, and leave its files read-only (as the ConfigMap code mount is)."""
    import hashlib
    import shutil
    import tarfile

    try:
        with open(archive, "rb") as f:
            data = f.read()
    except OSError as exc:
        raise PrepareError(f"cannot read the workdir archive {archive}: {exc.strerror}") from None
    found = hashlib.sha256(data).hexdigest()
    if found != sha256:
        raise PrepareError(
            f"the workdir archive {archive} has sha256 {found}, not the {sha256} this job was "
            "compiled with: submit the job again to upload its workdir"
        )
    os.makedirs(dest, exist_ok=True)
    with tarfile.open(archive, "r:gz") as tar:
        for member in tar.getmembers():
            parts = member.name.split("/")
            if not member.isfile() or member.name.startswith("/") or ".." in parts:
                raise PrepareError(f"the workdir archive holds {member.name!r}, not a file")
            target = os.path.join(dest, *parts)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            source = tar.extractfile(member)
            if source is None:
                raise PrepareError(f"the workdir archive holds {member.name!r} without data")
            with source, open(target, "wb") as out:
                shutil.copyfileobj(source, out)
            os.chmod(target, 0o555 if member.mode & 0o100 else 0o444)


def venv_key(requirements: str) -> str:
    """What a cached virtual environment is keyed by: the requirements and the interpreter."""
    import hashlib
    import platform

    tag = f"{sys.version_info[0]}.{sys.version_info[1]}-{platform.machine()}"
    return hashlib.sha256(f"{tag}\n{requirements}".encode()).hexdigest()[:20]


def install_requirements(requirements: str, file: str, cache: str) -> None:
    """Make the virtual environment of `requirements` (the text of `file`) under `cache`,
    unless an earlier start made it there."""
    import contextlib
    import shutil

    venv = os.path.join(cache, VENVS, venv_key(requirements))
    os.makedirs(os.path.dirname(venv), exist_ok=True)
    with open(venv + ".lock", "a") as lock:
        # Processes of the same run share the cache: one builds, the others wait and reuse.
        with contextlib.suppress(OSError):  # a file system without locks: builds may overlap
            import fcntl

            fcntl.flock(lock, fcntl.LOCK_EX)
        if os.path.exists(os.path.join(venv, READY)):
            print(f"gkeml: requirements from the cache at {venv}", file=sys.stderr)
            return
        shutil.rmtree(venv, ignore_errors=True)
        print(f"gkeml: installing requirements into {venv}", file=sys.stderr)
        made = [sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", venv]
        _run(made, "cannot make a virtual environment")
        # pip of the interpreter's own site-packages, visible to the environment.
        pip = [os.path.join(venv, "bin", "python"), "-m", "pip", "install"]
        _run([*pip, "--disable-pip-version-check", "-r", file], "pip could not install")
        open(os.path.join(venv, READY), "w").close()


def prepare(env: dict[str, str]) -> None:
    """Unpack the workdir and install the requirements the env names (the bootstrap's work).
    Called in the working directory the user's command will run in."""
    archive = env.get("GKEML_WORKDIR_ARCHIVE")
    if archive:
        unpack_workdir(archive, env["GKEML_WORKDIR_SHA256"], env["GKEML_WORKSPACE"])
        os.chdir(env["GKEML_WORKSPACE"])
    text = _requirements(env)
    if text is None:
        return
    cache = env["GKEML_CHECKPOINT_DIR"]
    file = env.get("GKEML_REQUIREMENTS_FILE")
    if not file:  # listed: pip reads them from a file next to the environment
        file = os.path.join(cache, VENVS, venv_key(text) + ".txt")
        os.makedirs(os.path.dirname(file), exist_ok=True)
        with open(file, "w", encoding="utf-8") as f:
            f.write(text)
    install_requirements(text, os.path.abspath(file), cache)


def prepared(env: dict[str, str]) -> dict[str, str]:
    """The variables that put the virtual environment the bootstrap made first on PATH;
    none for a job without requirements."""
    text = _requirements(env)
    if text is None:
        return {}
    venv = os.path.join(env["GKEML_CHECKPOINT_DIR"], VENVS, venv_key(text))
    if not os.path.exists(os.path.join(venv, READY)):
        raise PrepareError(f"the requirements were not installed into {venv}: no bootstrap ran")
    bin_dir = os.path.join(venv, "bin")
    return {"VIRTUAL_ENV": venv, "PATH": bin_dir + os.pathsep + env.get("PATH", "")}


def _requirements(env: dict[str, str]) -> str | None:
    """The text of the job's requirements (its file's, or the listed ones), or None."""
    file = env.get("GKEML_REQUIREMENTS_FILE")
    if file:
        try:
            with open(file, encoding="utf-8") as f:
                return f.read()
        except OSError as exc:
            raise PrepareError(f"cannot read the requirements file {file}: {exc}") from None
    return env.get("GKEML_REQUIREMENTS")


def _run(command: list[str], what: str) -> None:
    import subprocess

    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise PrepareError(f"{what}:\n{done.stdout}{done.stderr}".rstrip())


def main(argv: list[str], env: dict[str, str]) -> int:
    """Without `argv`, prepare the workspace (the bootstrap) and return 0, or PREPARE_FAILED
    with the reason (pip's own output) on stderr. With it, set the computed variables and exec
    `argv`; returns only if it cannot. A local process (GKEML_BACKEND=local) has its
    variables set already."""
    if not argv:
        try:
            prepare(env)
        except (PrepareError, OSError) as exc:
            # The same workdir and requirements fail the same way at every start.
            print(f"gkeml: {exc}", file=sys.stderr)
            return PREPARE_FAILED
        return 0
    values: dict[str, str] = {}
    command = argv
    if env.get("GKEML_BACKEND") != "local":
        node = node_rank(env)
        try:
            attempt = record_start(env["GKEML_CHECKPOINT_DIR"], str(node), env["GKEML_START_ID"])
        except OSError as exc:
            print(f"gkeml: cannot mark this start in GKEML_CHECKPOINT_DIR: {exc}", file=sys.stderr)
            return 1
        values = {"NODE_RANK": str(node), "JAX_PROCESS_ID": str(node)}
        values["GKEML_RESTART_ATTEMPT"] = str(attempt)
        command = [expand(arg, values) for arg in argv]
    try:
        values.update(prepared(env))
    except (PrepareError, OSError) as exc:
        print(f"gkeml: {exc}", file=sys.stderr)
        return 1
    try:
        os.execvpe(command[0], command, {**env, **values})
    except OSError as exc:
        print(f"gkeml: cannot start {command[0]!r}: {exc.strerror}", file=sys.stderr)
    return 127


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], dict(os.environ)))
