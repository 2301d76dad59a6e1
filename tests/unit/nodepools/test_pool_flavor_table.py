"""The cross-check of node pools, Kueue flavors and jobs: for every node pool of the pool table
(every GPU and TPU row x provisioning mode GKE offers), the ResourceFlavor `ClusterSetup`
derives from that pool selects the pool's nodes and tolerates their taints, and a job with the
same hardware and mode lands there. The nodes' labels and taints are written out here from
GKE's docs (what GKE puts on a node of such a pool request), not from the SDK's own helpers.
https://cloud.google.com/kubernetes-engine/docs/how-to/gpus,
https://cloud.google.com/kubernetes-engine/docs/concepts/plan-tpus,
https://cloud.google.com/kubernetes-engine/docs/concepts/dws,
https://cloud.google.com/kubernetes-engine/docs/how-to/nccl-fast-socket."""

from __future__ import annotations

from typing import Any

import pytest
from google.cloud import container_v1

from gkeml_sdk import (
    Accelerator,
    Capacity,
    ClusterSetup,
    NodePool,
    SpecError,
    Team,
    TpuSlice,
    TrainingJob,
)
from gkeml_sdk.backends.gke.messages import node_pool_messages
from tests.unit.nodepools.test_pool_table import GPU_TABLE, MODES, TPU_TABLE

Obj = dict[str, Any]
TRUE = "true"
# The GKE node label of each TPU machine family (cloud.google.com/gke-tpu-accelerator).
TPU_LABEL = {
    "ct4p": "tpu-v4-podslice",
    "ct5lp": "tpu-v5-lite-podslice",
    "ct5p": "tpu-v5p-slice",
    "ct6e": "tpu-v6e-slice",
    "tpu7x": "tpu7x",
}


def _cases(offered: bool) -> list[tuple[str, Accelerator | TpuSlice, str]]:
    cases: list[tuple[str, Accelerator | TpuSlice, str]] = []
    for key, (_, count, outcome) in GPU_TABLE.items():
        gpu = Accelerator(key, count=count)
        cases += [(f"{key}-{m}", gpu, m) for m in MODES if outcome[m] == offered]
    for (gen, topo), (_, _, outcome) in TPU_TABLE.items():
        tpu = TpuSlice(gen, topo)
        cases += [(f"{gen}-{topo}-{m}", tpu, m) for m in MODES if outcome[m] == offered]
    return cases


CASES, REFUSED = _cases(True), _cases(False)


def _pool(hardware: Accelerator | TpuSlice, mode: str) -> NodePool:
    extra: Obj = {"labels": {"team": "a"}}
    if isinstance(hardware, TpuSlice) and hardware.generation == "tpu7x" and hardware.multi_host:
        extra["placement_policy"] = "ironwood"
    return NodePool.for_accelerator(hardware, name="pool", provisioning=mode, **extra)


def _node_labels(message: container_v1.NodePool, hardware: Accelerator | TpuSlice) -> Obj:
    """What GKE labels a node of `message` with."""
    config = message.config
    labels: Obj = {**config.labels, "cloud.google.com/gke-nodepool": message.name}
    labels["kubernetes.io/arch"] = "arm64" if config.machine_type.startswith("a4x") else "amd64"
    for accelerator in config.accelerators:
        labels["cloud.google.com/gke-accelerator"] = accelerator.accelerator_type
        labels["cloud.google.com/gke-accelerator-count"] = str(accelerator.accelerator_count)
        if accelerator.gpu_partition_size:
            labels["cloud.google.com/gke-gpu-partition-size"] = accelerator.gpu_partition_size
    if isinstance(hardware, TpuSlice):
        labels["cloud.google.com/gke-tpu-accelerator"] = TPU_LABEL[
            config.machine_type.split("-")[0]
        ]
        # Multi-host: the placement policy's topology; single host: the VM's own chips.
        topology = message.placement_policy.tpu_topology or hardware.topology
        labels["cloud.google.com/gke-tpu-topology"] = topology
    if config.spot:
        labels["cloud.google.com/gke-spot"] = TRUE
    if config.flex_start:
        labels["cloud.google.com/gke-flex-start"] = TRUE
    if message.queued_provisioning.enabled:
        labels["cloud.google.com/gke-queued"] = TRUE
    if config.fast_socket.enabled:
        labels["cloud.google.com/gke-nccl-fastsocket"] = TRUE
    return labels


def _node_taints(message: container_v1.NodePool) -> list[Obj]:
    """The pool's taints, and the one GKE adds to queued-provisioning nodes itself."""
    taints = [
        {"key": t.key, "value": t.value, "effect": "NoSchedule"} for t in message.config.taints
    ]
    assert all(t.effect == container_v1.NodeTaint.Effect.NO_SCHEDULE for t in message.config.taints)
    if message.queued_provisioning.enabled:
        taints.append({"key": "cloud.google.com/gke-queued", "value": TRUE, "effect": "NoSchedule"})
    return taints


def _tolerates(tolerations: list[Obj], taint: Obj) -> bool:
    for t in tolerations:
        if t.get("key") != taint["key"] or t.get("effect", taint["effect"]) != taint["effect"]:
            continue
        if t.get("operator") == "Exists" or t.get("value") == taint["value"]:
            return True
    return False


def _flavor(pool: NodePool) -> Obj:
    (capacity,) = Capacity.from_node_pools([pool])
    setup = ClusterSetup(capacity=[capacity], teams=[Team(name="a", quota={capacity.name: 1})])
    flavors = setup.compile().of_kind("ResourceFlavor")
    (mode,) = capacity.provisioning
    (flavor,) = [f for f in flavors if f["metadata"]["name"] == capacity.flavor(mode)]
    return flavor


def _pod_specs(obj: Any) -> list[Obj]:
    if isinstance(obj, dict):
        if "containers" in obj:
            return [obj]
        return [spec for value in obj.values() for spec in _pod_specs(value)]
    if isinstance(obj, list):
        return [spec for value in obj for spec in _pod_specs(value)]
    return []


@pytest.mark.parametrize(("hardware", "mode"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_flavor_selects_the_pool_and_a_job_lands_on_it(
    hardware: Accelerator | TpuSlice, mode: str
) -> None:
    pool = _pool(hardware, mode)
    (message,) = node_pool_messages(pool)
    labels, taints = _node_labels(message, hardware), _node_taints(message)

    flavor = _flavor(pool)["spec"]
    missing = {k: v for k, v in flavor["nodeLabels"].items() if labels.get(k) != v}
    assert not missing, f"the flavor selects labels the pool's nodes lack: {missing}"
    untolerated = [t for t in taints if not _tolerates(flavor["tolerations"], t)]
    assert not untolerated, f"the flavor does not tolerate the pool's taints {untolerated}"

    # Two nodes where the hardware leaves it open: a multi-node job gets its network stack.
    nodes: Obj = {} if isinstance(hardware, TpuSlice) else {"nodes": 2}
    job = TrainingJob(
        name="j", image="i", command=["x"], accelerator=hardware, provisioning=mode, **nodes
    )
    (spec, *others) = _pod_specs(job.compile().objects)
    assert all(o.get("nodeSelector") == spec.get("nodeSelector") for o in others)
    selector = spec.get("nodeSelector", {})
    missing = {k: v for k, v in selector.items() if labels.get(k) != v}
    assert not missing, f"the job selects labels the pool's nodes lack: {missing}"
    # Kueue adds the flavor's tolerations to the admitted pods; the job carries its own too.
    for tolerations in (
        spec.get("tolerations", []),
        spec.get("tolerations", []) + flavor["tolerations"],
    ):
        untolerated = [t for t in taints if not _tolerates(tolerations, t)]
        assert not untolerated, f"the job's pods do not tolerate {untolerated}"


@pytest.mark.parametrize(
    ("hardware", "mode"), [c[1:] for c in REFUSED], ids=[c[0] for c in REFUSED]
)
def test_a_job_is_refused_where_no_pool_can_be_made(
    hardware: Accelerator | TpuSlice, mode: str
) -> None:
    # A job accepted here would wait forever for nodes no pool provides.
    with pytest.raises(SpecError, match="flex-start") as job_error:
        TrainingJob(name="j", image="i", command=["x"], accelerator=hardware, provisioning=mode)
    with pytest.raises(SpecError) as pool_error:
        _pool(hardware, mode)
    assert str(job_error.value) == str(pool_error.value)
