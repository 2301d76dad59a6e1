"""Names of the environment every training process sees, on GKE and locally.

Defined once here because the spec rejects user env that would shadow them and the
compiler and local backend set them. Documented in docs/environment.md.
"""

from __future__ import annotations

from typing import Literal

# torchrun-compatible
MASTER_ADDR = "MASTER_ADDR"
MASTER_PORT = "MASTER_PORT"
NNODES = "NNODES"
NODE_RANK = "NODE_RANK"
NPROC_PER_NODE = "NPROC_PER_NODE"
WORLD_SIZE = "WORLD_SIZE"  # processes in the job: NNODES * NPROC_PER_NODE
# JAX (jax.distributed.initialize() reads these)
JAX_COORDINATOR_ADDRESS = "JAX_COORDINATOR_ADDRESS"
JAX_NUM_PROCESSES = "JAX_NUM_PROCESSES"
JAX_PROCESS_ID = "JAX_PROCESS_ID"
# gkeml's own
RUN_ID = "GKEML_RUN_ID"
RESTART_ATTEMPT = "GKEML_RESTART_ATTEMPT"
CHECKPOINT_DIR = "GKEML_CHECKPOINT_DIR"
BACKEND = "GKEML_BACKEND"
# What the launcher (training/launcher.py) reads to set NODE_RANK = JOB_INDEX * PODS_PER_JOB +
# POD_INDEX (and JAX_PROCESS_ID), and RESTART_ATTEMPT: the starts of that rank marked under
# CHECKPOINT_DIR/STARTS_DIR other than this one (START_ID).
START_ID = "GKEML_START_ID"  # the pod's UID; locally, one id per process start
JOB_INDEX = "GKEML_JOB_INDEX"  # the pod's Job in its JobSet (its TPU slice); 0 for a Job
POD_INDEX = "GKEML_POD_INDEX"  # the pod's completion index inside its Job
PODS_PER_JOB = "GKEML_PODS_PER_JOB"
STARTS_DIR = ".gkeml/starts"
LAUNCHER_PYTHON = "python3"  # the interpreter a training image must have to run the launcher
# Set by the launcher, not declared on the pod: Kubernetes leaves $(NODE_RANK) in a command for
# the launcher to expand.
LAUNCHER_SETS = (NODE_RANK, JAX_PROCESS_ID, RESTART_ATTEMPT)

# Names the compiler derives from a run's name (their lengths are what the JobSet webhook checks:
# kubernetes-sigs/jobset pkg/webhooks/jobset_webhook.go).
REPLICATED_JOB = "node"  # the JobSet's one replicatedJob: child Jobs are <run>-node-<i>
# The init container that unpacks the workdir and installs the requirements
# (training.bootstrap), and its exit code when it cannot (training.launcher.PREPARE_FAILED).
BOOTSTRAP_CONTAINER = "bootstrap"
BOOTSTRAP_FAILED = 3
# Resubmissions a RetryPolicy may ask for: attempt names then add at most '--r99' to the run
# name (core.labels.attempt_name), and the spec keeps run names short enough for every
# attempt's derived names to fit.
MAX_RESUBMITS = 98
ATTEMPT_NAME_ALLOWANCE = len(f"--r{MAX_RESUBMITS + 1}")

DEFAULT_MASTER_PORT = 29500
JAX_COORDINATOR_PORT = 1234
CHECKPOINT_MOUNT = "/gkeml/checkpoints"
# User code shipped with the job (TrainingJob.files) is mounted here, read-only, and is the
# working directory of the process; locally it is the run directory's code/ folder.
CODE_MOUNT = "/gkeml/code"
# A ConfigMap (how code files travel to pods) holds at most 1 MiB, metadata included; the
# code shares its ConfigMap with the run record (spec, attempts, history), hence the room.
CONFIGMAP_MAX_BYTES = 1024 * 1024
CODE_METADATA_ALLOWANCE = 128 * 1024
# Of the record's 1 MiB, what its attempts and history may take (the history is capped at
# RECORD_HISTORY_MAX_BYTES, oldest entries dropped first); code and spec get the rest.
RECORD_STATE_ALLOWANCE = 96 * 1024
RECORD_HISTORY_MAX_BYTES = 64 * 1024

# TPU slices (what the TPU runtime and JAX's megascale read)
TPU_WORKER_ID = "TPU_WORKER_ID"
TPU_WORKER_HOSTNAMES = "TPU_WORKER_HOSTNAMES"
MEGASCALE_COORDINATOR_ADDRESS = "MEGASCALE_COORDINATOR_ADDRESS"
MEGASCALE_NUM_SLICES = "MEGASCALE_NUM_SLICES"
MEGASCALE_SLICE_ID = "MEGASCALE_SLICE_ID"

# What a variable that the hardware adds carries; the compiler writes it as a pod field or
# DNS name, the local backend as a value. `slice_hosts`: the hosts of the process's slice,
# `coordinator`: the rank-0 host, `slices`/`slice_index`: the slice count and this one's.
WorkerValue = Literal["rank", "slice_hosts", "coordinator", "slices", "slice_index"]

TPU_ENV = frozenset(
    {
        TPU_WORKER_ID,
        TPU_WORKER_HOSTNAMES,
        MEGASCALE_COORDINATOR_ADDRESS,
        MEGASCALE_NUM_SLICES,
        MEGASCALE_SLICE_ID,
    }
)
# What every process gets, on GKE and locally.
CONTRACT_ENV = frozenset(
    {
        MASTER_ADDR,
        MASTER_PORT,
        NNODES,
        NODE_RANK,
        NPROC_PER_NODE,
        WORLD_SIZE,
        JAX_COORDINATOR_ADDRESS,
        JAX_NUM_PROCESSES,
        JAX_PROCESS_ID,
        RUN_ID,
        RESTART_ATTEMPT,
        CHECKPOINT_DIR,
        BACKEND,
        START_ID,
        JOB_INDEX,
        POD_INDEX,
        PODS_PER_JOB,
    }
)
# What the launcher reads to prepare the workspace of a job with workdir= or requirements=
# (training/workdir_job.py): the archive, its sha256, where to unpack it, the requirements.
WORKDIR_ARCHIVE = "GKEML_WORKDIR_ARCHIVE"
WORKDIR_SHA256 = "GKEML_WORKDIR_SHA256"
WORKSPACE = "GKEML_WORKSPACE"
REQUIREMENTS = "GKEML_REQUIREMENTS"
REQUIREMENTS_FILE = "GKEML_REQUIREMENTS_FILE"
WORKSPACE_ENV = frozenset(
    {WORKDIR_ARCHIVE, WORKDIR_SHA256, WORKSPACE, REQUIREMENTS, REQUIREMENTS_FILE}
)
# What user env may not set: gkeml sets it (TPU names only on TPU slices, but never a user's).
RESERVED_ENV = CONTRACT_ENV | TPU_ENV | WORKSPACE_ENV

# Attempt k > 1 of run `a` is named `a--r<k>`; run names may not contain the separator, so an
# attempt can never carry the name of another run.
ATTEMPT_SEPARATOR = "--"
