"""DWS provisioning modes and topology placement: the rules a TrainingJob is checked against."""

from __future__ import annotations

import pytest

from gkeml_sdk import Accelerator, SpecError, TopologyPlacement, TpuSlice, TrainingJob


def job(**kw: object) -> TrainingJob:
    fields = {"name": "ft", "image": "img", "command": ["x"],
              "accelerator": Accelerator("h100", count=8), "nodes": 2, **kw}  # fmt: skip
    return TrainingJob(**fields)  # type: ignore[arg-type]


def test_default_is_standard_and_round_trips_through_yaml() -> None:
    assert job().provisioning == "standard"
    queued = job(provisioning="queued", placement=TopologyPlacement("subblock", mode="required"))
    assert TrainingJob.from_yaml(queued.to_yaml()) == queued
    assert TrainingJob.from_yaml(job(placement="compact").to_yaml()).placement == "compact"


@pytest.mark.parametrize("mode", ["flex-start", "queued"])
def test_spot_with_dws_is_refused_with_the_fix(mode: str) -> None:
    with pytest.raises(SpecError, match=r"spot=True with provisioning.*drop spot=True"):
        job(spot=True, provisioning=mode)


def test_unknown_mode_is_refused() -> None:
    with pytest.raises(SpecError, match="provisioning"):
        job(provisioning="reserved")


@pytest.mark.parametrize("mode", ["flex-start", "queued"])
def test_run_duration_over_seven_days_is_refused(mode: str) -> None:
    assert job(provisioning=mode, max_runtime="7d").max_runtime == 604800
    with pytest.raises(SpecError, match=r"7 days \(604800 s\).*max_runtime='7d'"):
        job(provisioning=mode, max_runtime="7d1s")
    assert job(max_runtime="8d").max_runtime == 8 * 86400  # standard capacity has no such limit


def test_queued_refuses_a_multislice_shape_with_the_fix() -> None:
    tpu = TpuSlice("v5e", "4x4", slices=2)
    with pytest.raises(SpecError, match=r"one PodSet per ProvisioningRequest.*slices=1"):
        TrainingJob(name="ms", image="i", command=["x"], accelerator=tpu, provisioning="queued")
    one = TrainingJob(name="s", image="i", command=["x"], accelerator=TpuSlice("v5e", "4x4"),
                      provisioning="queued")  # fmt: skip
    assert one.nodes == 4


def test_tpu_generations_without_dws_and_multi_host_flex_start_are_refused() -> None:
    with pytest.raises(SpecError, match=r"does not offer TPU v4.*v5p, v6e, h4d-standard-192"):
        TrainingJob(name="a", command=["x"], accelerator=TpuSlice("v4", "2x2x1"),
                    provisioning="flex-start")  # fmt: skip
    with pytest.raises(SpecError, match=r"multi-host.*provisioning='queued'"):
        TrainingJob(name="a", command=["x"], accelerator=TpuSlice("v6e", "4x4"),
                    provisioning="flex-start")  # fmt: skip
    single = TrainingJob(name="a", command=["x"], accelerator=TpuSlice("v6e", "2x2"),
                         provisioning="flex-start")  # fmt: skip
    assert single.provisioning == "flex-start"


def test_a_machine_sold_only_as_spot_or_flex_start_accepts_dws() -> None:
    with pytest.raises(SpecError, match="not sold on-demand"):
        job(accelerator=Accelerator("h100", count=1))
    assert job(accelerator=Accelerator("h100", count=1), provisioning="flex-start").nodes == 2


@pytest.mark.parametrize(("mode", "model"), [("standard", "on-demand"), ("flex-start",
                         "flex-start"), ("queued", "flex-start")])  # fmt: skip
def test_cost_is_quoted_for_the_chosen_mode(mode: str, model: str) -> None:
    estimate = job(provisioning=mode).estimate_cost(hours=2)
    assert estimate.chosen == model
    assert estimate.total() == estimate.total(model)
    marked = next(line for line in str(estimate).splitlines() if "<- this job" in line)
    assert marked.split()[0] == model


def test_placement_levels_and_combinations() -> None:
    assert TopologyPlacement("cloud.google.com/gce-topology-block").level == "block"
    with pytest.raises(SpecError, match=r"not a GKE topology level.*'subblock'"):
        TopologyPlacement("rack")
    with pytest.raises(SpecError, match="mode"):
        TopologyPlacement("block", mode="strict")
    with pytest.raises(SpecError, match=r"required for 2 nodes.*mode='preferred'"):
        job(placement=TopologyPlacement("host", mode="required"))
    assert job(nodes=1, gang=False, placement=TopologyPlacement("host", mode="required"))
    with pytest.raises(SpecError, match=r"exclusive='subblock' on a single-pod job"):
        job(nodes=1, gang=False, placement=TopologyPlacement("block", exclusive="subblock"))
    tpu = TpuSlice("v5e", "4x4")
    with pytest.raises(SpecError, match=r"multi-host TPU slice is one node pool"):
        TrainingJob(name="t", command=["x"], accelerator=tpu,
                    placement=TopologyPlacement("block", exclusive="subblock"))  # fmt: skip
    ok = TrainingJob(name="t", command=["x"], accelerator=tpu,
                     placement=TopologyPlacement("block", exclusive="nodepool"))  # fmt: skip
    assert ok.placement is not None
    with pytest.raises(SpecError, match="placement"):
        job(placement="tight")


def test_placement_and_a_topology_annotation_of_ones_own_conflict() -> None:
    own = {"kueue.x-k8s.io/podset-required-topology": "kubernetes.io/hostname"}
    with pytest.raises(SpecError, match=r"one topology annotation.*drop"):
        job(placement="compact", annotations=own)
    assert job(annotations=own).placement is None


def test_dws_needs_an_accelerator() -> None:
    with pytest.raises(SpecError, match=r"without an accelerator.*provisioning='standard'"):
        TrainingJob(name="cpu", command=["x"], provisioning="flex-start")


def test_provisioning_spot_is_spot_true_on_jobs_and_pools() -> None:
    from gkeml_sdk import NodePool

    spot = job(spot=True)
    assert job(provisioning="spot") == spot  # compiled the same, on Spot nodes
    assert "cloud.google.com/gke-spot" in spot.compile().to_yaml()
    l4 = Accelerator("l4")
    assert NodePool(name="p", hardware=l4, provisioning="spot") == NodePool(
        name="p", hardware=l4, spot=True
    )


def test_a_job_asks_dws_only_for_gpus_it_offers() -> None:
    with pytest.raises(SpecError, match=r"does not offer NVIDIA T4.*provisioning='standard'"):
        job(accelerator=Accelerator("t4"), provisioning="flex-start")
