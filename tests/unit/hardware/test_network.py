"""Networking chosen by the machine type: every GPU machine type of the catalog x every
network mode either compiles to objects the API server and the webhooks accept, or fails with
a SpecError naming the fix."""

import json

import pytest

from gkeml_sdk import Accelerator, ServeModel, SpecError, TpuSlice, TrainingJob
from gkeml_sdk.hardware import gpus
from tests.schemas import validate_object

# What GKE documents per machine type, written out here independently of the catalog rows:
# GPUDirect-TCPX on A3 High / A3 Edge 8g, TCPXO on A3 Mega, RDMA on A3 Ultra, A4 and A4X
# (https://cloud.google.com/kubernetes-engine/docs/how-to/gpu-bandwidth-gpudirect-tcpx,
# https://cloud.google.com/ai-hypercomputer/docs/nccl/test-gke-custom-a3-edge); NCCL Fast
# Socket on the other GPU node pools of N1, G2 and A2.
GPUDIRECT = {
    # machine: (daemon, pod interfaces with eth0)
    "a3-highgpu-8g": ("tcpx-daemon", 5),
    "a3-edgegpu-8g": ("tcpx-daemon", 5),
    "a3-megagpu-8g": ("tcpxo-daemon", 9),
    "a3-ultragpu-8g": (None, 10),
    "a4-highgpu-8g": (None, 10),
    "a4x-highgpu-4g": (None, 6),
}
FAST_SOCKET_FAMILIES = ("n1-", "g2-", "a2-")
FAST_SOCKET_LABEL = "cloud.google.com/gke-nccl-fastsocket"
MACHINES = sorted(
    {(g.key, m.name, m.gpus) for g in gpus.GPUS for m in g.machine_types},
    key=lambda row: (row[0], row[1], row[2]),
)
MODES = ("auto", "standard", "gpudirect")


def job(accelerator, **kwargs):
    fields = {"name": "ft", "image": "img", "command": ["python", "train.py"], "spot": True}
    return TrainingJob(**{**fields, "accelerator": accelerator, **kwargs})


def pod(manifests):
    main = manifests.main
    if main["kind"] == "Job":
        return main["spec"]["template"]
    return main["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]


def interfaces(template):
    text = template["metadata"].get("annotations", {}).get("networking.gke.io/interfaces")
    return json.loads(text) if text else []


def expected(machine, mode):
    """'gpudirect' / 'fast-socket' / 'standard', or 'refused'."""
    if mode == "standard":
        return "standard"
    if machine in GPUDIRECT:
        return "gpudirect"
    if mode == "gpudirect":
        return "refused"
    return "fast-socket" if machine.startswith(FAST_SOCKET_FAMILIES) else "standard"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("model", "machine", "count"), MACHINES)
def test_every_gpu_machine_type_and_mode(model, machine, count, mode):
    accelerator = Accelerator(model, count=count, machine_type=machine)
    outcome = expected(machine, mode)
    if outcome == "refused":
        with pytest.raises(SpecError, match="no GPUDirect networking") as info:
            job(accelerator, nodes=2, network=mode)
        assert "Try:" in str(info.value)
        return
    m = job(accelerator, nodes=2, network=mode).compile()
    for obj in [*m.objects, m.workload]:
        validate_object(obj)
    template = pod(m)
    spec = template["spec"]
    names = [c["name"] for c in spec.get("initContainers", [])]
    fast_socket = spec["nodeSelector"].get(FAST_SOCKET_LABEL) == "true"
    if outcome == "gpudirect":
        daemon, nics = GPUDIRECT[machine]
        assert len(interfaces(template)) == nics
        assert names == ([daemon] if daemon else [])
        assert any("GKENetworkParamSet" in note for note in m.notes)
        env = {e["name"] for e in spec["containers"][0]["env"]}
        assert "NCCL_CROSS_NIC" in env
    else:
        assert interfaces(template) == [] and names == []
    assert fast_socket == (outcome == "fast-socket")


def test_table_covers_every_gpudirect_machine_of_the_catalog():
    machines = {name for _, name, _ in MACHINES}
    assert set(GPUDIRECT) <= machines


@pytest.mark.parametrize(("model", "machine", "count"), MACHINES)
def test_single_node_jobs_are_unchanged_by_auto(model, machine, count):
    accelerator = Accelerator(model, count=count, machine_type=machine)
    auto = job(accelerator).compile()
    assert auto.to_yaml() == job(accelerator, network="standard").compile().to_yaml()
    assert auto.notes == job(accelerator, network="standard").compile().notes


def test_tcpxo_pod_fragment():
    m = job(Accelerator("h100-mega", count=8), nodes=2).compile()
    template = pod(m)
    annotations = template["metadata"]["annotations"]
    assert annotations["networking.gke.io/default-interface"] == "eth0"
    assert [i["network"] for i in interfaces(template)] == [
        "default",
        *(f"vpc{i}" for i in range(1, 9)),
    ]
    assert "/dev/dmabuf_import_helper" in annotations["devices.gke.io/container.tcpxo-daemon"]
    spec = template["spec"]
    daemon = spec["initContainers"][0]
    assert daemon["restartPolicy"] == "Always"  # a native sidecar: the Job still completes
    assert daemon["securityContext"]["capabilities"]["add"] == ["NET_ADMIN", "NET_BIND_SERVICE"]
    hosts = {v["name"]: v.get("hostPath", {}).get("path") for v in spec["volumes"]}
    assert hosts["aperture-devices"] == "/dev/aperture_devices"
    assert hosts["nvidia"] == "/home/kubernetes/bin/nvidia"
    env = {e["name"]: e.get("value") for e in spec["containers"][0]["env"]}
    assert env["NCCL_FASTRAK_IFNAME"] == ",".join(f"eth{i}" for i in range(1, 9))
    assert env["NCCL_FASTRAK_LLCM_DEVICE_DIRECTORY"] == "/dev/aperture_devices"


def test_rdma_pod_fragment_has_no_sidecar_and_the_gib_libraries():
    m = job(Accelerator("b200", count=8), nodes=4).compile()
    template = pod(m)
    nets = [i["network"] for i in interfaces(template)]
    assert nets == ["default", "gvnic-1", *(f"rdma-{i}" for i in range(8))]
    spec = template["spec"]
    assert "initContainers" not in spec
    mounts = {v["name"]: v["mountPath"] for v in spec["containers"][0]["volumeMounts"]}
    assert mounts["gib"] == "/usr/local/gib"
    env = {e["name"]: e.get("value") for e in spec["containers"][0]["env"]}
    assert env["NCCL_NET"] == "gIB"
    assert env["NCCL_TUNER_CONFIG_PATH"].endswith("tuner_config_a4.txtpb")


def test_user_env_wins_over_the_stack_env():
    m = job(Accelerator("h100", count=8), nodes=2, env={"NCCL_ALGO": "Tree"}).compile()
    env = [e for e in pod(m)["spec"]["containers"][0]["env"] if e["name"] == "NCCL_ALGO"]
    assert env == [{"name": "NCCL_ALGO", "value": "Tree"}]


@pytest.mark.parametrize(
    ("accelerator", "message"),
    [
        (Accelerator("h100", count=4), "count=8"),
        (Accelerator("h100-mega", mig="1g.10gb"), "all 8 GPUs"),
        (Accelerator("l4", count=8), "no GPUDirect"),
        (TpuSlice("v5e", "4x4"), "network='auto'"),
        (None, "network='auto'"),
    ],
)
def test_gpudirect_refusals_name_the_fix(accelerator, message):
    with pytest.raises(SpecError, match=message):
        job(accelerator, nodes=2 if accelerator is None else None, network="gpudirect")


def test_auto_falls_back_for_mig_slices_and_says_why():
    m = job(Accelerator("h100-mega", mig="1g.10gb"), nodes=2).compile()
    assert interfaces(pod(m)) == []
    assert any("chose standard pod networking" in note for note in m.notes)


def test_a_multi_node_model_server_gets_the_stack_on_leader_and_workers():
    svc = ServeModel(
        name="big",
        model="meta-llama/Llama-3.1-405B-Instruct",
        accelerator=Accelerator("h100-mega", count=8),
        hf_token_secret="hf",
    )
    m = svc.compile()
    for obj in m.objects:
        validate_object(obj)
    group = m.main["spec"]["leaderWorkerTemplate"]
    for role in ("leaderTemplate", "workerTemplate"):
        assert len(interfaces(group[role])) == 9
        assert [c["name"] for c in group[role]["spec"]["initContainers"]] == ["tcpxo-daemon"]
    assert any("GPUDirect-TCPXO" in note for note in m.notes)
    plain = svc.model_copy(update={"network": "standard"}).compile()
    assert (
        "initContainers" not in plain.main["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]
    )


def test_a_single_node_model_server_keeps_plain_networking():
    svc = ServeModel(name="qa", model="Qwen/Qwen2.5-7B-Instruct", accelerator=Accelerator("h100"))
    template = svc.compile().main["spec"]["template"]
    assert interfaces(template) == []


def test_a_model_server_refuses_gpudirect_on_part_of_a_machine():
    with pytest.raises(SpecError, match="network="):
        ServeModel(
            name="qa",
            model="Qwen/Qwen2.5-7B-Instruct",
            accelerator=Accelerator("l4"),
            network="gpudirect",
        )
