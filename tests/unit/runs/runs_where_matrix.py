"""The matrix of issue 37: every accelerator row x allocation x provisioning mode, for training
and serving, built with the node pool and setup the SDK itself gives for it, and judged by
`where_it_runs`. Each cell runs, is refused at construction with a fix, or never runs."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from gkeml_sdk import Accelerator, ClusterSetup, NodePool, ServeModel, Team, TpuSlice, TrainingJob
from gkeml_sdk.errors import SpecError
from gkeml_sdk.hardware.gpus import GPUS
from gkeml_sdk.hardware.tpus import TPUS
from gkeml_sdk.runs.explain.runs_where import where_it_runs
from gkeml_sdk.scheduling.rules import capacity_mode
from gkeml_sdk.setup.capacity_model import Capacity

TRAINING_MODES = (("standard", False, "standard"), ("spot", True, "standard"),
                  ("flex-start", False, "flex-start"), ("queued", False, "queued"))  # fmt: skip
SERVING_MODES = (("standard", False, "standard"), ("spot", True, "standard"))
SERVED = "TinyLlama/TinyLlama-1.1B-Chat-v1.0"  # small enough for one MIG slice or GPU share
NAMESPACE = "team-a"
JOB_ARGS = {"nodes", "placement", "served"}  # the job's, not the hardware's
LARGE = "meta-llama/Llama-3.1-405B-Instruct"  # more than one node of any GPU row
# What the setup's DRA note has the admin apply: NVIDIA's driver installer DaemonSet, reduced
# to what placement reads. It targets GPU nodes without GKE's driver label (gke-facts 2.1:
# container-engine-accelerators nvidia-driver-installer/cos/daemonset-preloaded.yaml).
DRIVER_INSTALLER = {
    "apiVersion": "apps/v1", "kind": "DaemonSet",
    "metadata": {"name": "nvidia-driver-installer", "namespace": "kube-system"},
    "spec": {"template": {"spec": {
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [
                {"key": "cloud.google.com/gke-accelerator", "operator": "Exists"},
                {"key": "cloud.google.com/gke-gpu-driver-version", "operator": "DoesNotExist"},
            ]}]}}},
        "tolerations": [{"operator": "Exists"}],
    }}},
}  # fmt: skip


@dataclass(frozen=True)
class Cell:
    """One combination and what became of it: "runs", "refused" or "never"."""

    kind: str  # training | serving
    hardware: str  # e.g. "h100 x8", "a100-80gb mig 1g.10gb", "v5e 4x4 x2"
    allocation: str  # devices | mig | time-sharing | mps | dra | tpu
    mode: str
    outcome: str = ""
    why: str = ""


def hardware_rows() -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(label, allocation, constructor arguments) of every accelerator the catalog offers."""
    for row in GPUS:
        for count in row.counts:
            yield f"{row.key} x{count}", "devices", {"model": row.key, "count": count}
            yield f"{row.key} x{count} 2 nodes", "devices", {"model": row.key, "count": count,
                                                             "nodes": 2}  # fmt: skip
            args = {"model": row.key, "count": count, "nodes": 2, "placement": "compact"}
            yield f"{row.key} x{count} 2 nodes compact", "devices", args
        for profile, _ in row.mig_profiles:
            yield f"{row.key} mig {profile}", "mig", {"model": row.key, "mig": profile}
        for sharing in ("time-sharing", "mps"):
            args = {"model": row.key, "sharing": sharing, "clients_per_gpu": 4}
            yield f"{row.key} {sharing}", sharing, args
        for count in row.counts:
            yield f"{row.key} x{count} dra", "dra", {"model": row.key, "count": count,
                                                     "allocation": "dra"}  # fmt: skip
        for profile, _ in row.mig_profiles[:1]:
            args = {"model": row.key, "mig": profile, "allocation": "dra"}
            yield f"{row.key} mig {profile} dra", "dra", args
        # Serving only: a model too large for one node, served by a LeaderWorkerSet group.
        args = {"model": row.key, "count": row.max_gpus_per_node, "served": LARGE}
        yield f"{row.key} x{row.max_gpus_per_node} {LARGE}", "multi-node", args
    for gen in TPUS:
        shapes = [t for t, _, _ in gen.single_host] + list(gen.multi_host_fixed)[:2]
        for topology in shapes:
            yield f"{gen.key} {topology}", "tpu", {"tpu": gen.key, "topology": topology}
        if gen.multi_host_fixed:
            multi = gen.multi_host_fixed[0]
            args = {"tpu": gen.key, "topology": multi, "slices": 2}
            yield f"{gen.key} {multi} x2", "tpu", args


def _hardware(args: dict[str, Any]) -> Accelerator | TpuSlice:
    args = {k: v for k, v in args.items() if k not in JOB_ARGS}
    if "tpu" in args:
        rest = {k: v for k, v in args.items() if k not in ("tpu", "topology")}
        return TpuSlice(args["tpu"], args["topology"], **rest)
    return Accelerator(**args)


def _policies(hardware: Accelerator | TpuSlice) -> dict[str, str]:
    if isinstance(hardware, TpuSlice) and hardware.tpu.uses_workload_policy and hardware.multi_host:
        return {f"wp-{hardware.topology}": hardware.topology}
    return {}


@dataclass(frozen=True)
class Composed:
    """One cell built as the SDK builds it: the setup's objects (with the driver installer the
    setup's notes ask for), the node pool request, the job's manifests and the workload
    policies of its TPU pool."""

    setup: list[dict[str, Any]]
    pools: list[dict[str, Any]]
    manifests: Any
    policies: dict[str, str]


def compose(
    kind: str, args: dict[str, Any], spot: bool, provisioning: str, pool_name: str = "pool"
) -> Composed:
    """The compiled objects of one cell; raises SpecError when the SDK refuses it."""
    hardware = _hardware(args)
    mode = capacity_mode(spot, provisioning)  # type: ignore[arg-type]
    pool_options: dict[str, Any] = {"spot": spot, "provisioning": provisioning}
    policies = _policies(hardware)
    if policies:
        pool_options["placement_policy"] = next(iter(policies))
    if kind == "training":
        job: Any = TrainingJob(
            name="cell", image="img", command=["python", "train.py"], accelerator=hardware,
            spot=spot, provisioning=provisioning, namespace=NAMESPACE, stateless=True,
            queue=Team(name=NAMESPACE).queue(mode),
            **{k: v for k, v in args.items() if k in JOB_ARGS},
        )  # fmt: skip
    else:
        job = ServeModel(
            name="cell", model=args.get("served", SERVED), accelerator=hardware, spot=spot,
            namespace=NAMESPACE, queue=Team(name=NAMESPACE).queue(mode), hf_token_secret="hf",
        )  # fmt: skip
    pods = 1 if isinstance(hardware, TpuSlice) else getattr(job, "nodes", None)
    pods = pods or job.fit.pods  # a model server's replica group
    if pods > 1:
        pool_options["max_nodes"] = pods
    if kind == "serving":  # room on each node for the weights the server downloads
        pool_options["ephemeral_storage"] = job.ephemeral_storage
    pool = NodePool.for_accelerator(hardware, name=pool_name, **pool_options)
    # Topology-aware placement needs a capacity that serves Kueue's TAS (topology=True).
    capacity = Capacity.from_node_pools([pool], topology="placement" in args)
    quota = {c.name: 1000 for c in capacity}
    setup = ClusterSetup(capacity=capacity, teams=[Team(name=NAMESPACE, quota=quota)])
    manifests = job.compile()
    compiled = setup.compile()
    setup_objects = list(compiled.objects)
    if any("driver installer" in note for note in compiled.notes):
        setup_objects = [*setup_objects, DRIVER_INSTALLER]
    return Composed(setup_objects, pool.to_dict()["nodePools"], manifests, policies)


def judge(kind: str, args: dict[str, Any], spot: bool, provisioning: str) -> tuple[str, str]:
    """("runs" | "refused" | "never", why) of one cell."""
    try:
        cell = compose(kind, args, spot, provisioning)
    except SpecError as exc:
        return "refused", str(exc)
    answer = where_it_runs(
        cell.setup, cell.pools, cell.manifests.objects,
        workload=cell.manifests.workload, workload_policies=cell.policies,
    )  # fmt: skip
    return ("runs" if answer.runs else "never"), answer.reason


def cells() -> list[Cell]:
    """Every cell of the matrix, judged."""
    found = []
    for label, allocation, args in hardware_rows():
        serving = allocation not in ("tpu", "dra")
        for kind, modes in (("training", TRAINING_MODES), ("serving", SERVING_MODES)):
            if kind == "serving" and (not serving or set(args) & {"nodes", "placement"}):
                continue
            if kind == "training" and "served" in args:
                continue
            for mode, spot, provisioning in modes:
                outcome, why = judge(kind, args, spot, provisioning)
                found.append(Cell(kind, label, allocation, mode, outcome, why))
    return found


def table(found: list[Cell]) -> str:
    """The matrix in figures: per kind and allocation, cells that run, are refused at
    construction with a fix, and never run."""
    counts = Counter((c.kind, c.allocation, c.outcome) for c in found)
    rows = ["| kind | allocation | cells | run | refused with a fix | never run |",
            "|---|---|---|---|---|---|"]  # fmt: skip
    keys = sorted({(c.kind, c.allocation) for c in found}, key=lambda k: (k[0] != "training", k))
    for kind, allocation in [*keys, ("all", "all")]:
        if kind == "all":
            total = Counter(c.outcome for c in found)
        else:
            total = Counter(
                {o: n for (k, a, o), n in counts.items() if (k, a) == (kind, allocation)}
            )
        rows.append(
            f"| {kind} | {allocation} | {sum(total.values())} | {total['runs']} | "
            f"{total['refused']} | {total['never']} |"
        )
    return "\n".join(rows)
