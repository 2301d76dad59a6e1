"""The environment contract for local processes: the same names as the pods get on GKE
(`gkeml_sdk.training.contract_env`), with values for processes on this machine. Light to import:
the supervisor uses it without loading `TrainingJob` (its plan is made at submit)."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gkeml_sdk.core import environment as c
from gkeml_sdk.errors import ConfigError, SpecError
from gkeml_sdk.training.launcher import record_start

if TYPE_CHECKING:
    # Annotations only: the supervisor imports this module and never the spec layer.
    from collections.abc import Mapping

    from gkeml_sdk.core.environment import WorkerValue
    from gkeml_sdk.training.model import TrainingJob

LOOPBACK = "127.0.0.1"
BACKEND_NAME = "local"
# torchrun sets these inside a pod; locally they exist only with LocalOptions(spawn_procs=True).
TORCHRUN_RANK = "RANK"
TORCHRUN_LOCAL_RANK = "LOCAL_RANK"
TORCHRUN_LOCAL_WORLD_SIZE = "LOCAL_WORLD_SIZE"
_REFERENCE = re.compile(r"\$\$|\$\(([-._a-zA-Z][-._a-zA-Z0-9]*)\)")


@dataclass(frozen=True, slots=True)
class Slot:
    """One local process: its node (the pod it stands for) and, with spawn_procs, its local
    rank inside that node.

    Example:
        >>> Slot(0, 3).label, Slot(1) == Slot(1, None)
        ('0.3', True)
    """

    node: int
    local_rank: int | None = None

    @property
    def label(self) -> str:
        """Log prefix and log file stem: `0`, or `0.3` for node 0, local rank 3."""
        return str(self.node) if self.local_rank is None else f"{self.node}.{self.local_rank}"


def slots(job: TrainingJob, spawn_procs: bool) -> list[Slot]:
    """The processes a local run starts: one per node, or one per node and local rank.

    Example:
        >>> from gkeml_sdk import TrainingJob
        >>> [s.label for s in slots(TrainingJob(name="a", command=["x"], nodes=2), False)]
        ['0', '1']
    """
    if not spawn_procs:
        return [Slot(n) for n in range(job.nodes)]
    return [Slot(n, r) for n in range(job.nodes) for r in range(job.procs_per_node)]


def local_env(
    job: TrainingJob,
    slot: Slot,
    *,
    attempt: int,
    master_port: int,
    jax_port: int,
    checkpoint_dir: str,
    start_id: str = "0",
) -> dict[str, str]:
    """Contract variables of one local process; names and meaning match the GKE pods: those
    of `slot_env` (the same at every start) with those of `start_env` (new at each start).

    `attempt` and `start_id` come from `record_local_start`: the starts of this slot marked in
    the checkpoint folder before this one, counted as the launcher counts them in a pod.

    Example:
        >>> from gkeml_sdk import TrainingJob
        >>> env = local_env(TrainingJob(name="a", command=["x"], nodes=2), Slot(1), attempt=0,
        ...                 master_port=29500, jax_port=1234, checkpoint_dir="/tmp/ckpt")
        >>> env["MASTER_ADDR"], env["NODE_RANK"], env["WORLD_SIZE"], env["GKEML_BACKEND"]
        ('127.0.0.1', '1', '2', 'local')
    """
    return {
        **slot_env(job, slot, checkpoint_dir),
        **start_env(attempt=attempt, master_port=master_port, jax_port=jax_port, start_id=start_id),
    }


def slot_env(job: TrainingJob, slot: Slot, checkpoint_dir: str) -> dict[str, str]:
    """The contract variables of `slot` that stay the same at every start of the run.

    Example:
        >>> from gkeml_sdk import TrainingJob
        >>> env = slot_env(TrainingJob(name="a", command=["x"], nodes=2), Slot(1), "/tmp/c")
        >>> env["NODE_RANK"], c.MASTER_PORT in env
        ('1', False)
    """
    slices = job.hardware.slices
    per_job = job.nodes // slices
    # On GKE the launcher makes the node rank global: job (slice) index * pods per job +
    # the pod's completion index inside its Job.
    job_index, pod_index = divmod(slot.node, per_job)
    rank = str(slot.node)
    env = {
        c.MASTER_ADDR: LOOPBACK,
        c.NNODES: str(job.nodes),
        c.NODE_RANK: rank,
        c.NPROC_PER_NODE: str(job.procs_per_node),
        c.WORLD_SIZE: str(job.nodes * job.procs_per_node),
        c.JAX_NUM_PROCESSES: str(job.nodes),
        c.JAX_PROCESS_ID: rank,
        c.RUN_ID: job.name,
        c.CHECKPOINT_DIR: checkpoint_dir,
        c.BACKEND: BACKEND_NAME,
        c.JOB_INDEX: str(job_index),
        c.POD_INDEX: str(pod_index),
        c.PODS_PER_JOB: str(per_job),
    }
    # What the hardware's variables carry, for processes that all run on this machine.
    values: dict[WorkerValue, str] = {
        "rank": str(pod_index),
        "slice_hosts": ",".join([LOOPBACK] * per_job),
        "coordinator": LOOPBACK,
        "slices": str(slices),
        "slice_index": str(job_index),
    }
    for name, carries in job.hardware.worker_env():
        env[name] = values[carries]
    if slot.local_rank is not None:
        env[TORCHRUN_RANK] = str(slot.node * job.procs_per_node + slot.local_rank)
        env[TORCHRUN_LOCAL_RANK] = str(slot.local_rank)
        env[TORCHRUN_LOCAL_WORLD_SIZE] = str(job.procs_per_node)
    return env


def start_env(*, attempt: int, master_port: int, jax_port: int, start_id: str) -> dict[str, str]:
    """The contract variables new at each start: the gang's ports and this start's count.

    Example:
        >>> start_env(attempt=1, master_port=29500, jax_port=1234, start_id="s")["MASTER_PORT"]
        '29500'
    """
    return {
        c.MASTER_PORT: str(master_port),
        c.JAX_COORDINATOR_ADDRESS: f"{LOOPBACK}:{jax_port}",
        c.RESTART_ATTEMPT: str(attempt),
        c.START_ID: start_id,
    }


def record_local_start(checkpoint_dir: str, label: str) -> tuple[str, int]:
    """A new start id for the slot `label` and its restart attempt: how many other starts of
    the slot are marked in the checkpoint folder (`training.launcher.record_start`, as in a
    pod).

    Example:
        >>> import tempfile
        >>> folder = tempfile.mkdtemp()
        >>> [record_local_start(folder, Slot(0).label)[1] for _ in range(3)]
        [0, 1, 2]
    """
    start_id = os.urandom(16).hex()  # as unique as uuid4, whose module costs more to import
    return start_id, record_start(checkpoint_dir, label, start_id)


def secret_values(job: TrainingJob, environ: Mapping[str, str]) -> dict[str, str]:
    """Values of `job.secret_env` for a local run: each comes from the caller's environment
    variable of the same name (there is no cluster to read the Secret from). They are handed
    to the processes through their environment only, never written to the run directory.

    Example:
        >>> from gkeml_sdk import TrainingJob
        >>> job = TrainingJob(name="a", command=["x"], secret_env={"HF_TOKEN": "hf/token"})
        >>> secret_values(job, {"HF_TOKEN": "hf_abc"})
        {'HF_TOKEN': 'hf_abc'}
        >>> secret_values(job, {})  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        gkeml_sdk.errors.ConfigError: secret_env HF_TOKEN (Secret hf, key token) is not set ...
    """
    missing = [name for name in job.secret_env if name not in environ]
    if missing:
        refs = ", ".join(
            f"{n} (Secret {job.secret_env[n].name}, key {job.secret_env[n].key})" for n in missing
        )
        raise ConfigError(
            f"secret_env {refs} is not set in this process's environment (rule: a local run "
            "reads each secret_env value from the environment variable of the same name of "
            "the process that submits it; on GKE it comes from the Secret). Try: export "
            f"{missing[0]}=... before starting Python, or os.environ[{missing[0]!r}] = ... in "
            "the notebook"
        )
    return {name: environ[name] for name in job.secret_env}


def check_secrets_stay_out_of_argv(job: TrainingJob) -> None:
    """Refuse `$(NAME)` of a `secret_env` name in a local run's command: expanded, the value
    would be in the process's argv, which every user of this machine reads with `ps`.

    Example:
        >>> from gkeml_sdk import TrainingJob
        >>> job = TrainingJob(name="a", command=["login", "--token=$(HF_TOKEN)"],
        ...                   secret_env={"HF_TOKEN": "hf/token"})
        >>> check_secrets_stay_out_of_argv(job)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        gkeml_sdk.errors.SpecError: $(HF_TOKEN) in the command of local run 'a' ...
    """
    for arg in [*(job.command or []), *job.args]:
        for match in _REFERENCE.finditer(arg):
            if match.group(1) in job.secret_env:
                name = match.group(1)
                raise SpecError(
                    f"$({name}) in the command of local run {job.name!r} would put the secret "
                    "in the process's arguments",
                    rule="a process's arguments are visible to every user of the machine "
                    "(ps, /proc); secrets reach local processes through their environment only",
                    fix=f"read it in the program (os.environ[{name!r}]), where it is set",
                    field="args",
                )


def expand_references(argv: list[str], env: dict[str, str]) -> list[str]:
    """Expand `$(VAR)` in a command as Kubernetes does for container command and args:
    defined variables are replaced, undefined ones stay as written, `$$` is a literal `$`.
    No shell is involved, so the user's code never passes through one.

    Example:
        >>> expand_references(["torchrun", "--nnodes=$(NNODES)", "$(NOPE)", "$$(X)"],
        ...                   {"NNODES": "2"})
        ['torchrun', '--nnodes=2', '$(NOPE)', '$(X)']
    """

    def one(match: re.Match[str]) -> str:
        name = match.group(1)
        if name is None:
            return "$"
        return env.get(name, match.group(0))

    return [_REFERENCE.sub(one, arg) for arg in argv]
