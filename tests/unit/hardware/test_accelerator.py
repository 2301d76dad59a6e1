import pytest

from gkeml_sdk import Accelerator, SpecError, TpuSlice
from gkeml_sdk.hardware import gpus, tpus

GPU_COUNTS = [(g.key, c) for g in gpus.GPUS for c in g.counts]
MIG = [(g.key, p, n) for g in gpus.GPUS for p, n in g.mig_profiles]
TPU_TOPOLOGIES = [(t.key, topo) for t in tpus.TPUS for topo in t.topologies()]


@pytest.mark.parametrize(("model", "count"), GPU_COUNTS)
def test_every_offered_gpu_count_is_accepted(model, count):
    accelerator = Accelerator(model, count=count)
    assert accelerator.node_machine.gpus == count
    assert accelerator.gpu_memory_gb == count * accelerator.gpu.memory_gb


@pytest.mark.parametrize(("model", "profile", "instances"), MIG)
def test_every_mig_profile_is_accepted(model, profile, instances):
    if "+" in profile:  # not a label value: GKE nodes cannot be selected by it
        with pytest.raises(SpecError, match="cannot contain"):
            Accelerator(model, mig=profile)
        return
    accelerator = Accelerator(model, mig=profile)
    assert accelerator.physical_gpus == pytest.approx(1 / instances)


@pytest.mark.parametrize(("generation", "topology"), TPU_TOPOLOGIES)
def test_every_tpu_topology_is_accepted(generation, topology):
    tpu = TpuSlice(generation, topology)
    assert tpu.hosts * tpu.chips_per_host == tpu.chips
    assert tpu.multi_host == (tpu.hosts > 1)


def test_issue_examples():
    assert Accelerator("h100", count=8).machine_type_name == "a3-highgpu-8g"
    assert Accelerator("h100", count=8).label == "nvidia-h100-80gb"
    assert Accelerator("h100", mig="1g.10gb").gpu_memory_gb == 10
    shared = Accelerator("l4", sharing="time-sharing", clients_per_gpu=4)
    assert shared.physical_gpus == 0.25
    tpu = TpuSlice("v5e", "4x4")
    assert (tpu.chips, tpu.hosts, tpu.multi_host) == (16, 4, True)


@pytest.mark.parametrize(
    ("kwargs", "message", "alternatives"),
    [
        (dict(model="h100", count=9), "9 x NVIDIA H100 80GB per node is not offered", "1/2/4/8"),
        (dict(model="h100", count=3), "not offered", "count=4"),
        (dict(model="h200", count=4), "not offered", "count=8"),
        (dict(model="h100", mig="1g.5gb"), "not accepted for NVIDIA H100", "1g.10gb, 1g.20gb"),
        (dict(model="a100-40gb", mig="4g.20gb"), "not accepted", "3g.20gb"),
        (dict(model="t4", mig="1g.5gb"), "no Multi-Instance GPU support", "a100-40gb"),
        (dict(model="l4", sharing="mps", clients_per_gpu=49), "clients_per_gpu=49", "2 to 48"),
        (dict(model="l4", sharing="mps", clients_per_gpu=1), "clients_per_gpu=1", "2 to 48"),
        (dict(model="l4", sharing="mps"), "clients_per_gpu=None", "clients_per_gpu=4"),
        (dict(model="l4", clients_per_gpu=4), "without a sharing strategy", "sharing='mps'"),
        (
            dict(model="l4", sharing="time-sharing", clients_per_gpu=4, count=2),
            "time-shared GPU container",
            "count=1",
        ),
        (
            dict(
                model="l4", sharing="mps", clients_per_gpu=4, count=2, machine_type="g2-standard-24"
            ),
            "MPS",
            "1-GPU machine type",
        ),
        (dict(model="h100", count=8, machine_type="a2-highgpu-8g"), "does not come on", "a3-"),
        (
            dict(model="h100", count=4, machine_type="a3-highgpu-8g"),
            "carries 8 NVIDIA H100",
            "count=8",
        ),
        (dict(model="h100", mig="1g.10gb", count=57), "exceed one node's 56", "count<=56"),
        (dict(model="h1000"), "unknown GPU 'h1000'", "h100"),
        (dict(model="h100", count=0), "at least one GPU", "count=1"),
    ],
)
def test_invalid_accelerators(kwargs, message, alternatives):
    with pytest.raises(SpecError) as err:
        Accelerator(**kwargs)
    assert isinstance(err.value, ValueError)
    assert message in str(err.value)
    assert alternatives in str(err.value)


def test_mps_may_take_several_shares_on_a_one_gpu_node():
    assert Accelerator("l4", sharing="mps", clients_per_gpu=4, count=3).count == 3


def test_mig_and_sharing_combine():
    both = Accelerator("a100-40gb", mig="1g.5gb", sharing="time-sharing", clients_per_gpu=3)
    assert both.physical_gpus == pytest.approx(1 / 21)


@pytest.mark.parametrize(
    ("args", "message", "alternatives"),
    [
        (("v5e", "3x3"), "not offered for TPU v5e", "4x4"),
        (("v5p", "8x4x4"), "not offered", "topology='4x4x8'"),
        (("v4", "4x4"), "not offered", "2x2x1"),
        (("v9", "2x2"), "unknown TPU generation", "v5e"),
    ],
)
def test_invalid_tpu_slices(args, message, alternatives):
    with pytest.raises(SpecError) as err:
        TpuSlice(*args)
    assert message in str(err.value) and alternatives in str(err.value)


def test_multislice_needs_multi_host_slices():
    with pytest.raises(SpecError, match="multislice") as err:
        TpuSlice("v5e", "2x2", slices=2)
    assert "4x4" in str(err.value)
    assert TpuSlice("v5e", "4x4", slices=2).total_hosts == 8


def test_round_trip():
    for spec in (Accelerator("h100", mig="3g.40gb"), TpuSlice("trillium", "4x8", slices=2)):
        assert type(spec).from_yaml(spec.to_yaml()) == spec
        assert type(spec).model_validate(spec.model_dump()) == spec
    assert TpuSlice("trillium", "4x8").generation == "v6e"
    assert hash(Accelerator("h100")) == hash(Accelerator("H100"))
