"""Framework presets (`TrainingJob(framework=...)`): the launcher a framework's users put in
front of their program, built from the job's shape and the environment contract, so that one
command runs the same under the GKE launcher and the local backend."""

from __future__ import annotations

from gkeml_sdk.core import environment as c
from gkeml_sdk.errors import SpecError
from gkeml_sdk.hardware.tpus import TPU_RESOURCE
from gkeml_sdk.training.fields import TrainingJobFields

# The launchers the presets start; the local backend looks for them next to its interpreter.
TORCHRUN = "torchrun"


def preset_command(job: TrainingJobFields, command: list[str]) -> list[str]:
    """`command` (the program one process runs, as written for a single GPU) under the launcher
    of `job.framework`. What differs per pod or per start stays a `$(VAR)` of the environment
    contract, expanded by Kubernetes and gkeml's launcher in a pod, by the supervisor locally.

    torch and deepspeed start `torchrun` with a static rendezvous at the coordinator: torchrun
    gives node rank `--node-rank` only to a static rendezvous (a c10d one ranks nodes by
    arrival), so torch's group rank is gkeml's `NODE_RANK` and `RANK` is
    `NODE_RANK * NPROC_PER_NODE + LOCAL_RANK`. DeepSpeed's `deepspeed.initialize` reads what
    torchrun sets, so it needs no ssh. A `.py` program is torchrun's training script (run with
    torchrun's interpreter); any other program runs as written (`--no-python`). jax starts
    the program itself, one process per node: `jax.distributed.initialize` takes
    `JAX_COORDINATOR_ADDRESS`, `JAX_NUM_PROCESSES` and `JAX_PROCESS_ID`.

    Example:
        >>> from gkeml_sdk import Accelerator, TrainingJob
        >>> job = TrainingJob(name="ft", command=["python", "train.py"], framework="torch",
        ...                   accelerator=Accelerator("h100", count=8), nodes=2)
        >>> print(" ".join(preset_command(job, job.command)))  # doctest: +NORMALIZE_WHITESPACE
        torchrun --nnodes=2 --nproc-per-node=8 --node-rank=$(NODE_RANK) --rdzv-backend=static
        --rdzv-endpoint=$(MASTER_ADDR):$(MASTER_PORT) --rdzv-id=ft --no-python python train.py
    """
    if job.framework not in ("torch", "deepspeed"):
        return list(command)
    launcher = [
        TORCHRUN,
        f"--nnodes={job.nodes}",
        f"--nproc-per-node={job.procs_per_node}",
        f"--node-rank=$({c.NODE_RANK})",
        "--rdzv-backend=static",
        f"--rdzv-endpoint=$({c.MASTER_ADDR}):$({c.MASTER_PORT})",
        f"--rdzv-id={job.name}",
    ]
    if command and command[0].endswith(".py"):
        return [*launcher, *command]
    return [*launcher, "--no-python", *command]


def check_framework(job: TrainingJobFields) -> None:
    """Refuse a preset that does not fit the job's hardware or shape, naming the fix.

    Example:
        >>> from gkeml_sdk import TpuSlice, TrainingJob
        >>> TrainingJob(name="ds", command=["python", "t.py"], framework="deepspeed",
        ...             accelerator=TpuSlice("v5e", "2x2"))  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        gkeml_sdk.errors.SpecError: framework='deepspeed' cannot run on TpuSlice(...) ...
    """
    framework = job.framework
    if framework is None:
        return
    if not job.command:
        raise SpecError(
            f"framework={framework!r} with no command",
            rule=f"the {framework} preset starts your program under its launcher; "
            "the command names that program",
            fix="command=['python', 'train.py'] (what one process runs)",
            field="command",
        )
    # Asked of the hardware's resources, not its type: TPU pods are the ones asking for chips.
    if framework == "deepspeed" and TPU_RESOURCE in job.hardware.resources():
        raise SpecError(
            f"framework='deepspeed' cannot run on {job.accelerator!r}",
            rule="DeepSpeed runs on GPUs (and CPUs) through torch.distributed; it has no TPU "
            "backend",
            fix="framework='jax' (or 'torch' with PyTorch/XLA) on a TPU slice, or "
            "accelerator=Accelerator('h100', count=8) for DeepSpeed",
            field="framework",
        )
    if framework == "jax" and job.procs_per_node != 1:
        raise SpecError(
            f"framework='jax' with procs_per_node={job.procs_per_node}",
            rule="JAX runs one process per node that drives all the node's devices; "
            f"{c.JAX_NUM_PROCESSES} counts nodes",
            fix="leave procs_per_node out (the jax preset makes it 1)",
            field="procs_per_node",
        )
