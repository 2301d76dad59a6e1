"""Ranks are unique across slices and nodes: for every multislice shape of the catalog (each
TPU generation and topology, 1 to 4 slices) and multi-node GPU shapes, the process ids that
the pods get on GKE (through the launcher) and the local processes get are exactly
range(world size), and each local process matches the pod of the same rank."""

from __future__ import annotations

import pytest

from gkeml_sdk import Accelerator, TpuSlice, TrainingJob
from gkeml_sdk.backends.local.plan.local_environment import local_env, slots
from gkeml_sdk.hardware import gpus, tpus
from gkeml_sdk.training.launcher import node_rank
from tests.pod_env import container_env, jobset_pod_metadata

SLICES = (1, 2, 3, 4)
TPU_SHAPES = [
    (row.key, topology, slices)
    for row in tpus.TPUS
    for topology in row.topologies()
    for slices in SLICES
    if slices == 1 or row.hosts(topology) > 1  # multislice needs multi-host slices
]
GPU_SHAPES = [
    (row.key, count, nodes)
    for row in gpus.GPUS
    for count in (max(row.counts),)
    for nodes in (2, 3, 4, 8)
]
# Per slice: each pod's TPU VM index, as libtpu wants it; across slices: the slice index.
PER_POD = ("NODE_RANK", "JAX_PROCESS_ID", "TPU_WORKER_ID", "MEGASCALE_SLICE_ID")
SHARED = ("NNODES", "JAX_NUM_PROCESSES", "WORLD_SIZE", "NPROC_PER_NODE", "MEGASCALE_NUM_SLICES")


def tpu_job(generation: str, topology: str, slices: int) -> TrainingJob:
    return TrainingJob(
        name="r",
        image="img",
        command=["x"],
        accelerator=TpuSlice(generation, topology, slices=slices),
    )


def gke_pods(job: TrainingJob) -> list[dict[str, str]]:
    """The env each pod of `job` runs its command with on GKE (launcher values included)."""
    main = job.compile().main
    if main["kind"] != "JobSet":
        return []
    replicated = main["spec"]["replicatedJobs"][0]
    template = replicated["template"]["spec"]
    container = template["template"]["spec"]["containers"][0]
    pods = []
    for job_index in range(replicated["replicas"]):
        for index in range(template["completions"]):
            uid = f"{job_index}-{index}"
            env = container_env(container, jobset_pod_metadata(main, job_index, index, uid))
            rank = str(node_rank(env))
            pods.append({**env, "NODE_RANK": rank, "JAX_PROCESS_ID": rank})
    return pods


def local_processes(job: TrainingJob) -> list[dict[str, str]]:
    return [
        local_env(job, slot, attempt=0, master_port=1, jax_port=2, checkpoint_dir="/c")
        for slot in slots(job, spawn_procs=False)
    ]


def assert_globally_consistent(job: TrainingJob, processes: list[dict[str, str]]) -> None:
    world = int(processes[0]["JAX_NUM_PROCESSES"])
    assert world == job.nodes == len(processes)
    ranks = [int(p["JAX_PROCESS_ID"]) for p in processes]
    assert sorted(ranks) == list(range(world)), "duplicate or missing process ids"
    assert [p["NODE_RANK"] for p in processes] == [p["JAX_PROCESS_ID"] for p in processes]
    for name in SHARED:
        assert len({p.get(name) for p in processes}) == 1, name
    slices = job.hardware.slices
    per_slice = job.nodes // slices
    if "TPU_WORKER_ID" in processes[0]:
        for p in processes:
            slice_id, worker = divmod(int(p["JAX_PROCESS_ID"]), per_slice)
            assert int(p["TPU_WORKER_ID"]) == worker
            assert int(p.get("MEGASCALE_SLICE_ID", 0)) == slice_id
    # torchrun: RANK = NODE_RANK * NPROC_PER_NODE + LOCAL_RANK covers range(WORLD_SIZE) once.
    procs = int(processes[0]["NPROC_PER_NODE"])
    ranks = [int(p["NODE_RANK"]) * procs + local for p in processes for local in range(procs)]
    assert sorted(ranks) == list(range(int(processes[0]["WORLD_SIZE"])))


def by_rank(processes: list[dict[str, str]]) -> dict[str, dict[str, str | None]]:
    return {p["NODE_RANK"]: {n: p.get(n) for n in PER_POD + SHARED} for p in processes}


@pytest.mark.parametrize("generation", [row.key for row in tpus.TPUS])
def test_every_tpu_shape_of_a_generation(generation: str) -> None:
    shapes = [s for s in TPU_SHAPES if s[0] == generation]
    assert shapes
    layouts: set[tuple[int, int, str]] = set()
    for shape in shapes:
        job = tpu_job(*shape)
        if job.nodes == 1:
            continue  # one pod: a Job, rank 0 (test_single_pod_jobs_are_rank_zero)
        layouts.add(compiled_layout(job))
        # Every pod resolved as the kubelet would, and every local process, for the shapes a
        # test can start in full; the larger ones share their layout's arithmetic below.
        if job.nodes <= 64:
            pods, local = gke_pods(job), local_processes(job)
            assert_globally_consistent(job, pods)
            assert_globally_consistent(job, local)
            assert by_rank(local) == by_rank(pods), shape
    for replicas, per_job, pods_per_job in layouts:
        env = {"GKEML_PODS_PER_JOB": pods_per_job}
        ranks = []
        for job_index in range(replicas):
            for index in range(per_job):
                env["GKEML_JOB_INDEX"], env["GKEML_POD_INDEX"] = str(job_index), str(index)
                ranks.append(node_rank(env))
        assert sorted(ranks) == list(range(replicas * per_job)), (replicas, per_job)


def compiled_layout(job: TrainingJob) -> tuple[int, int, str]:
    """Slices, pods per slice and the launcher's pods-per-Job of the compiled JobSet, after
    checking that its pods take their indices from the labels JobSet and the Job controller
    set and that the world sizes are the job's."""
    replicated = job.compile().main["spec"]["replicatedJobs"][0]
    spec = replicated["template"]["spec"]
    container = spec["template"]["spec"]["containers"][0]
    env = {
        e["name"]: e.get("value") or e["valueFrom"]["fieldRef"]["fieldPath"]
        for e in container["env"]
    }
    assert replicated["replicas"] == job.hardware.slices
    assert spec["parallelism"] == spec["completions"] == job.nodes // job.hardware.slices
    assert env["GKEML_JOB_INDEX"] == "metadata.labels['jobset.sigs.k8s.io/job-index']"
    assert env["GKEML_POD_INDEX"] == (
        "metadata.annotations['batch.kubernetes.io/job-completion-index']"
    )
    assert env["NNODES"] == env["JAX_NUM_PROCESSES"] == str(job.nodes)
    return replicated["replicas"], spec["completions"], env["GKEML_PODS_PER_JOB"]


@pytest.mark.parametrize(("gpu", "count", "nodes"), GPU_SHAPES)
def test_multi_node_gpu(gpu: str, count: int, nodes: int) -> None:
    job = TrainingJob(
        name="g", image="img", command=["x"], accelerator=Accelerator(gpu, count=count),
        nodes=nodes,
    )  # fmt: skip
    pods = gke_pods(job)
    assert_globally_consistent(job, pods)
    local = local_processes(job)
    assert_globally_consistent(job, local)
    assert by_rank(local) == by_rank(pods)
    # With spawn_procs the local backend starts every torchrun process itself.
    spawned = [
        local_env(job, slot, attempt=0, master_port=1, jax_port=2, checkpoint_dir="/c")
        for slot in slots(job, spawn_procs=True)
    ]
    assert sorted(int(p["RANK"]) for p in spawned) == list(range(nodes * count))


def test_single_pod_jobs_are_rank_zero() -> None:
    job = tpu_job("v5e", "2x4", 1)
    (pod,) = local_processes(job)
    assert (pod["NODE_RANK"], pod["JAX_PROCESS_ID"], pod["JAX_NUM_PROCESSES"]) == ("0", "0", "1")


def test_the_table_covers_every_multislice_shape_of_the_catalog() -> None:
    multislice = [s for s in TPU_SHAPES if s[2] > 1]
    assert len({s[0] for s in multislice}) == len(tpus.TPUS)
    assert {s[2] for s in multislice} == {2, 3, 4}
    assert len(TPU_SHAPES) == 2290  # 580 topologies; multi-host ones also with 2, 3, 4 slices
