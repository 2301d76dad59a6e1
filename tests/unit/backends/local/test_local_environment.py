"""The local environment contract has exactly the names the compiled pods get."""

from __future__ import annotations

import pytest

from gkeml_sdk import Accelerator, TpuSlice, TrainingJob
from gkeml_sdk.backends.local.plan.local_environment import (
    Slot,
    expand_references,
    local_env,
    slots,
)
from gkeml_sdk.core.environment import LAUNCHER_SETS
from gkeml_sdk.training.pod import pod_template

JOBS = {
    "single": TrainingJob(name="one", command=["x"]),
    "gpu-gang": TrainingJob(
        name="g", command=["x"], accelerator=Accelerator("h100", count=8), nodes=2
    ),
    "tpu-slice": TrainingJob(name="t", command=["x"], accelerator=TpuSlice("v5e", "4x4")),
    "tpu-multislice": TrainingJob(
        name="m", command=["x"], accelerator=TpuSlice("v5e", "4x4", slices=2)
    ),
}


def env_of(job: TrainingJob, node: int, attempt: int = 0) -> dict[str, str]:
    return local_env(
        job, Slot(node), attempt=attempt, master_port=4000, jax_port=4001, checkpoint_dir="/c"
    )


@pytest.mark.parametrize("kind", sorted(JOBS))
def test_same_names_as_the_pods(kind: str) -> None:
    job = JOBS[kind].with_changes(env={"MINE": "1"})
    pod_env = pod_template(job)["spec"]["containers"][0]["env"]
    # The GPUDirect stack's NCCL settings are GKE-only: locally the stack is ignored.
    stack = job.network_choice.stack
    network = {name for name, _ in stack.env} if stack else set()
    gke_names = {e["name"] for e in pod_env} - set(job.env) - network | set(LAUNCHER_SETS)
    for node in range(job.nodes):
        assert set(env_of(job, node)) == gke_names


def test_values_for_local_processes() -> None:
    job = JOBS["gpu-gang"]
    env = env_of(job, 1, attempt=2)
    assert env["MASTER_ADDR"] == "127.0.0.1"
    assert env["MASTER_PORT"] == "4000"
    assert env["JAX_COORDINATOR_ADDRESS"] == "127.0.0.1:4001"
    assert (env["NNODES"], env["NODE_RANK"], env["NPROC_PER_NODE"]) == ("2", "1", "8")
    assert env["WORLD_SIZE"] == "16"
    assert env["GKEML_RESTART_ATTEMPT"] == "2"
    assert env["GKEML_CHECKPOINT_DIR"] == "/c"
    assert env["GKEML_BACKEND"] == "local"
    assert env["GKEML_RUN_ID"] == "g"


def test_multislice_ranks_are_global_and_the_tpu_worker_id_is_per_slice() -> None:
    job = JOBS["tpu-multislice"]
    hosts = job.accelerator.hosts  # type: ignore[union-attr]
    env = env_of(job, hosts + 1)
    assert env["NODE_RANK"] == env["JAX_PROCESS_ID"] == str(hosts + 1)
    assert env["TPU_WORKER_ID"] == env["GKEML_POD_INDEX"] == "1"
    assert (env["MEGASCALE_SLICE_ID"], env["MEGASCALE_NUM_SLICES"]) == ("1", "2")
    assert env["GKEML_JOB_INDEX"] == "1" and env["GKEML_PODS_PER_JOB"] == str(hosts)


def test_spawn_procs_adds_torchrun_ranks() -> None:
    job = TrainingJob(name="p", command=["x"], nodes=2, procs_per_node=3)
    labels = [s.label for s in slots(job, spawn_procs=True)]
    assert labels == ["0.0", "0.1", "0.2", "1.0", "1.1", "1.2"]
    env = local_env(job, Slot(1, 2), attempt=0, master_port=1, jax_port=2, checkpoint_dir="/c")
    assert (env["RANK"], env["LOCAL_RANK"], env["LOCAL_WORLD_SIZE"]) == ("5", "2", "3")
    assert "RANK" not in env_of(job, 0)


def test_kubernetes_style_references() -> None:
    argv = ["run", "--n=$(NNODES)", "$(UNSET)", "$$(NNODES)", "cost $5"]
    assert expand_references(argv, {"NNODES": "4"}) == [
        "run",
        "--n=4",
        "$(UNSET)",
        "$(NNODES)",
        "cost $5",
    ]
