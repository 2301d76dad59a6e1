"""GPUs through Dynamic Resource Allocation: the ResourceClaimTemplate, the pod's claims, the
A4X ComputeDomain, and the refusals of what GKE cannot do."""

import pytest

from gkeml_sdk import Accelerator, ServeModel, SpecError, TpuSlice, TrainingJob
from gkeml_sdk.hardware import gpus
from tests.schemas import validate_object


def job(accelerator, **kwargs):
    fields = {"name": "ft", "image": "img", "command": ["python", "train.py"], "spot": True}
    return TrainingJob(**{**fields, "accelerator": accelerator, **kwargs})


def pod_spec(manifests):
    main = manifests.main
    if main["kind"] == "Job":
        return main["spec"]["template"]["spec"]
    return main["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]


def validate(manifests):
    for obj in [*manifests.objects, manifests.workload]:
        validate_object(obj)


@pytest.mark.parametrize(
    ("model", "count"),
    [(g.key, c) for g in gpus.GPUS if g.arch == "amd64" for c in g.counts],
)
@pytest.mark.parametrize("nodes", [1, 2])
def test_every_gpu_shape_compiles_a_claim_instead_of_a_limit(model, count, nodes):
    m = job(Accelerator(model, count=count, allocation="dra"), nodes=nodes).compile()
    validate(m)
    template, main = m.objects[0], m.main
    assert template["kind"] == "ResourceClaimTemplate"
    assert template["apiVersion"] == "resource.k8s.io/v1"
    request = template["spec"]["spec"]["devices"]["requests"][0]
    assert request["exactly"]["deviceClassName"] == "gpu.nvidia.com"
    assert request["exactly"]["count"] == count
    spec = pod_spec(m)
    assert spec["resourceClaims"] == [
        {"name": "gpu", "resourceClaimTemplateName": template["metadata"]["name"]}
    ]
    container = spec["containers"][0]
    assert container["resources"]["claims"] == [{"name": "gpu"}]
    assert "nvidia.com/gpu" not in str(container["resources"])
    assert main["kind"] == ("JobSet" if nodes > 1 else "Job")


def test_the_cel_selector_tells_the_a100_models_apart():
    def expressions(model):
        m = job(Accelerator(model, count=1, allocation="dra")).compile()
        request = m.objects[0]["spec"]["spec"]["devices"]["requests"][0]
        return [s["cel"]["expression"] for s in request["exactly"]["selectors"]]

    small, large = expressions("a100-40gb"), expressions("a100-80gb")
    assert small[0] == "device.attributes['gpu.nvidia.com'].productName.startsWith('NVIDIA A100')"
    assert "quantity('34Gi')" in small[1] and "quantity('68Gi')" in large[1]


def test_a_mig_slice_through_dra_is_refused_with_the_fix():
    # GKE makes no MIG partitions on DRA node pools (GKE "About DRA": not supported with MIG).
    with pytest.raises(SpecError, match="allocation='device-plugin' for MIG slices"):
        Accelerator("a100-80gb", mig="1g.10gb", allocation="dra")


def test_notes_name_the_cluster_and_kueue_prerequisites():
    notes = job(Accelerator("l4", allocation="dra")).compile().notes
    assert any("gke-no-default-nvidia-gpu-device-plugin=true" in n for n in notes)
    assert any("deviceClassMappings" in n and "gpu.nvidia.com" in n for n in notes)
    plain = job(Accelerator("l4")).compile().notes
    assert not any("DRA" in n for n in plain)


def test_a4x_multi_node_gets_a_compute_domain_channel_claim():
    m = job(Accelerator("gb200", count=4), nodes=4).compile()
    validate(m)
    domain = m.of_kind("ComputeDomain")[0]
    assert domain["apiVersion"] == "resource.nvidia.com/v1beta1"
    channel = domain["spec"]["channel"]["resourceClaimTemplate"]["name"]
    spec = pod_spec(m)
    assert spec["resourceClaims"] == [
        {"name": "compute-domain-channel", "resourceClaimTemplateName": channel}
    ]
    container = spec["containers"][0]
    assert container["resources"]["claims"] == [{"name": "compute-domain-channel"}]
    assert container["resources"]["limits"]["nvidia.com/gpu"] == 4  # GPUs stay on the plugin
    assert m.objects.index(domain) < m.objects.index(m.main)
    assert any("compute-domain-default-channel.nvidia.com" in n for n in m.notes)


@pytest.mark.parametrize(("kwargs", "nodes"), [({"network": "standard"}, 4), ({}, 1)])
def test_no_compute_domain_without_multi_node_rdma(kwargs, nodes):
    m = job(Accelerator("gb200", count=4), nodes=nodes, **kwargs).compile()
    assert m.of_kind("ComputeDomain") == []
    assert "resourceClaims" not in pod_spec(m)


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (
            lambda: Accelerator("l4", sharing="time-sharing", clients_per_gpu=2, allocation="dra"),
            "sharing",
        ),
        (lambda: Accelerator("gb200", count=4, allocation="dra"), "device-plugin"),
        (lambda: TpuSlice("v5e", "2x2", allocation="dra"), "TPU"),
        (
            lambda: ServeModel(
                name="qa",
                model="Qwen/Qwen2.5-7B-Instruct",
                accelerator=Accelerator("l4", allocation="dra"),
            ),
            "serving",
        ),
    ],
)
def test_what_gke_cannot_do_is_refused_with_the_fix(build, message):
    with pytest.raises(SpecError, match=message) as info:
        build()
    assert "Try:" in str(info.value)


def test_dra_round_trips_and_leaves_derived_names_alone():
    acc = Accelerator("h100", count=8, allocation="dra")
    assert Accelerator.from_yaml(acc.to_yaml()) == acc
    plain = TrainingJob.from_code("print(1)", image="img", accelerator=Accelerator("l4"))
    assert (
        plain.name
        == TrainingJob.from_code("print(1)", image="img", accelerator={"model": "l4"}).name
    )
    dra = TrainingJob.from_code(
        "print(1)", image="img", accelerator=Accelerator("l4", allocation="dra")
    )
    assert dra.name != plain.name
