"""The VM part of a price: rates solved from the catalog's whole-machine rows reproduce the
other rows of the same families from the hardware catalog's own vCPUs and memory."""

import pytest

from gkeml_sdk.hardware.gpus import GPUS
from gkeml_sdk.hardware.machines import MACHINES, machine_shape
from gkeml_sdk.pricing.vm import ANCHORS, SSD_GIB_HOUR, family_rates, vm_part

# us-central1 rows of the SkyPilot GCP catalog (catalogs/v8/gcp/vms.csv at 8427bbf, read
# 2026-12-07) that are NOT anchors: (machine type, vCPUs, MemoryGiB, Price, SpotPrice).
HELD_OUT = [
    ("n1-standard-64", 64, 240.0, 3.03998, 0.9284),
    ("n1-standard-96", 96, 360.0, 4.55998, 1.3926),
    ("n1-highmem-32", 32, 208.0, 1.89285, 0.57464),
    ("n1-highmem-64", 64, 416.0, 3.7857, 1.14928),
    ("a2-highgpu-2g", 24, 170.0, 1.47895, 0.7395),
    ("a2-highgpu-8g", 96, 680.0, 5.91582, 2.958),
    ("a2-megagpu-16g", 96, 1360.0, 8.79698, 4.39824),
    ("a2-ultragpu-4g", 48, 680.0, 4.39849, 2.19912),
    ("a3-highgpu-1g", 26, 234.0, 1.18251, 0.34406),
    ("a3-highgpu-4g", 104, 936.0, 4.73003, 1.37623),
    ("a3-megagpu-8g", 208, 1872.0, 9.46006, 2.75246),
    ("a3-edgegpu-8g", 208, 1872.0, 9.46006, 2.75246),
    ("g2-standard-16", 16, 64.0, 0.58717, 0.23494),
    ("g2-standard-24", 24, 96.0, 0.88075, 0.35242),
]


@pytest.mark.parametrize(("name", "vcpus", "gib", "on_demand", "spot"), HELD_OUT)
def test_vm_part_matches_the_catalog_row_from_our_own_shape(name, vcpus, gib, on_demand, spot):
    shape = machine_shape(name)
    assert shape is not None and (shape.vcpus, shape.memory_gb) == (vcpus, gib)
    part = vm_part(name)
    assert part.estimate == "" and part.missing == ""
    # The catalog's rows price vCPUs and memory; bundled Local SSD is billed beside them.
    for model, expected in (("on-demand", on_demand), ("spot", spot)):
        ssd = shape.local_ssd_gb * SSD_GIB_HOUR[model]
        assert part.price(model) - ssd == pytest.approx(expected, rel=1e-4), (name, model)


def test_held_out_rows_cover_three_families_besides_their_anchors():
    anchors = {row[0] for rows in ANCHORS.values() for row in rows}
    families = {machine_shape(row[0]).family for row in HELD_OUT}
    assert not anchors & {row[0] for row in HELD_OUT}
    assert {"n1", "a2", "a3", "g2"} <= families


def test_two_anchors_solve_both_rates_and_one_anchor_needs_one_ratio():
    n1 = family_rates("n1", "on-demand")
    assert n1.vcpu == pytest.approx(0.031610, abs=1e-6) and n1.gib == pytest.approx(0.004237, 1e-3)
    for family, rows in ANCHORS.items():
        if len(rows) > 1:
            continue
        # Priced per vCPU with its memory: every machine of the family carries that ratio.
        ratio = family_rates(family, "on-demand").per_vcpu_gib
        members = [m for m in MACHINES if m.family == family]
        assert members and all(m.memory_gb / m.vcpus == ratio for m in members), family


def test_a_machine_without_a_row_is_estimated_from_a_named_family_and_says_so():
    a4 = vm_part("a4-highgpu-8g")
    assert "no A4 row" in a4.estimate and "A3 rates" in a4.estimate
    shape = machine_shape("a4-highgpu-8g")
    rates = family_rates("a3", "on-demand")
    ssd = shape.local_ssd_gb * SSD_GIB_HOUR["on-demand"]
    assert a4.on_demand == pytest.approx(
        shape.vcpus * rates.vcpu + shape.memory_gb * rates.gib + ssd
    )


def test_every_gpu_machine_has_a_shape_or_its_estimate_says_it_has_none():
    names = {m.name for g in GPUS for m in g.machine_types}
    without = sorted(n for n in names if machine_shape(n) is None)
    assert without == [
        "a4x-maxgpu-4g-metal",
        "g4-standard-192",
        "g4-standard-384",
        "g4-standard-48",
        "g4-standard-96",
    ]
    assert all(vm_part(n).price("spot") is None and vm_part(n).missing for n in without)


# Whole-machine on-demand prices (GPUs, vCPUs, memory and bundled Local SSD together) in
# us-central1 from Google's Cloud Billing Catalog, as Cyclenerd/google-cloud-pricing-cost-
# calculator's pricing.yml published them (generated 2025-03-06): a source independent of the
# rows the rates were solved from.
WHOLE_MACHINES = [("h100", 8, 88.4899999025753), ("a100-40gb", 1, 3.673385)]


@pytest.mark.parametrize(("gpu", "count", "whole"), WHOLE_MACHINES)
def test_one_node_costs_what_the_billing_catalog_charges_for_the_whole_machine(gpu, count, whole):
    from gkeml_sdk import Accelerator, TrainingJob

    job = TrainingJob(name="w", command=["x"], accelerator=Accelerator(gpu, count=count))
    assert job.estimate_cost(hours=1).total("on-demand") == pytest.approx(whole, rel=1e-4)
