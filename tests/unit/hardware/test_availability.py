"""The availability table: zones as Google's pages (TPUs) and SkyPilot's GCP catalog (GPUs)
list them, refused zones with the nearest listed ones, and `gkeml catalog where` answering
for every catalog row."""

from __future__ import annotations

import pytest

from gkeml_sdk import (
    Accelerator,
    Capacity,
    ClusterSetup,
    NodePool,
    SpecError,
    Team,
    TpuSlice,
    where_offered,
)
from gkeml_sdk.cli.catalog_where import where_report
from gkeml_sdk.cli.main import main
from gkeml_sdk.hardware import availability as table
from gkeml_sdk.hardware import gpu_zones
from gkeml_sdk.hardware.availability import availability, nearest_zones
from gkeml_sdk.hardware.gpus import GPUS
from gkeml_sdk.hardware.tpus import TPUS


def test_every_row_names_its_source_and_date_and_lists_only_its_sections_zones() -> None:
    for row in table.TABLE:
        assert row.source.startswith("https://") and row.read_on == table.READ_ON
        # A listed zone lies in a section that was read, so refusals elsewhere never happen.
        assert row.zones and all(row.knows(zone) for zone in row.zones), row.key
        assert len(set(row.zones)) == len(row.zones)


def test_a_zone_the_page_does_not_list_is_refused_with_the_nearest_listed_zones() -> None:
    with pytest.raises(SpecError) as refused:
        NodePool(name="v5e", hardware=TpuSlice("v5e", "2x2"), zones=("us-east1-b",))
    text = str(refused.value)
    assert "us-east1-b" in text and "types-zones" in text and "2026-12-07" in text
    assert "zones=['us-east5-a']" in text and refused.value.field == "zones"
    # Same region first, then the same area (us-west), the same continent prefix, the rest.
    v5e = availability("v5e")
    assert nearest_zones(v5e, "us-west1-a") == ["us-west1-c", "us-west4-a", "us-central1-a",
                                                "us-south1-a"]  # fmt: skip
    assert nearest_zones(availability("v6e"), "europe-west1-b")[0] == "europe-west4-a"
    with pytest.raises(SpecError, match=r"zones=\['europe-west4-a'\]"):
        NodePool(name="t", hardware=TpuSlice("v6e", "2x2"), zones=("europe-west1-b",))


def test_listed_zones_and_unread_sections_are_accepted() -> None:
    assert NodePool(name="a", hardware=TpuSlice("v5e", "2x2"), zones=("us-west4-a",)).zones
    # Europe's v5e zones were not readable: the table does not know, so it does not refuse.
    assert availability("v5e").offers("europe-west4-b") is None
    NodePool(name="b", hardware=TpuSlice("v5e", "2x2"), zones=("europe-west4-b",))
    # No source lists GB200's zones: its pools are refused nowhere, and the row says why.
    gb200 = availability("gb200")
    assert gb200.zones == () and "none refused" in gb200.note
    NodePool(name="c", hardware=Accelerator("gb200", count=4), zones=("europe-north1-a",))


def test_gpu_zones_come_from_the_pinned_catalog_and_refuse_what_it_does_not_list() -> None:
    assert gpu_zones.COMMIT in availability("h200").source
    # The case: an A3 Ultra (H200) pool in europe-north1-a is refused, naming the
    # European zones that have H200 first.
    with pytest.raises(SpecError) as refused:
        NodePool(name="h200", hardware=Accelerator("h200", count=8), zones=("europe-north1-a",))
    text = str(refused.value)
    assert "SkyPilot's GCP catalog" in text and "vms.csv" in text and "2026-12-07" in text
    assert "only in europe-west1-b, europe-west4-a" in text
    assert "zones=['europe-west1-b'] (nearest listed: europe-west1-b, europe-west4-a, " in text
    NodePool(name="h200", hardware=Accelerator("h200", count=8), zones=("europe-west4-a",))
    # Every continent was read: Asia and South America refuse too.
    with pytest.raises(SpecError, match=r"zones=\['asia-south1-a'\]"):
        NodePool(name="l4", hardware=Accelerator("l4"), zones=("asia-south2-a",))
    with pytest.raises(SpecError, match="NVIDIA V100 in zone 'southamerica-east1-a'"):
        NodePool(name="v", hardware=Accelerator("v100"), zones=("southamerica-east1-a",))
    # A zone only the machine-type rows list (a3-highgpu-1g in europe-west8-c) is kept.
    NodePool(name="h", hardware=Accelerator("h100", count=8), zones=("europe-west8-c",))
    assert "machine rows" in dict(availability("h100").zone_notes)["europe-west8-c"]


def test_a_region_without_the_gpu_is_refused_for_a_cluster_setup() -> None:
    setup = ClusterSetup(
        capacity=[Capacity(accelerator=Accelerator("b200", count=8))],
        teams=[Team(name="a", quota={"b200": 8})],
    )
    setup.check_region("us-west3")
    setup.check_region("europe-north1-b")
    with pytest.raises(SpecError, match="a region with it: europe-west4, europe-north1"):
        setup.check_region("europe-west1")


def test_where_answers_for_every_catalog_row(capsys: pytest.CaptureFixture[str]) -> None:
    for key in [g.key for g in GPUS] + [t.key for t in TPUS]:
        heading, rows, lines = where_report(key)
        assert heading.startswith(f"{key}: modes offered: ")
        assert lines[-1].startswith("source: https://") and lines[-1].endswith("2026-12-07")
        assert (rows == []) == (availability(key).zones == ())
    assert main(["catalog", "where", "trillium"]) == 0
    out = capsys.readouterr().out
    assert "us-south1-ai1b   us-south1     North America" in out and "europe-west4-a" in out
    assert "sections read in full: North America, Europe" in out
    assert main(["catalog", "where", "nvidia-h200-141gb"]) == 0
    out = capsys.readouterr().out
    assert "us-east5-a      us-east5      North America  no Spot price in the source" in out
    assert "europe-north1" not in out and "skypilot-catalog/blob/8427bbf" in out
    assert main(["catalog", "where", "gb300"]) == 0
    assert "zones: none recorded" in capsys.readouterr().out
    assert main(["catalog", "where", "a100"]) == 1
    assert "ambiguous" in capsys.readouterr().err


def test_modes_follow_the_catalogs_rules() -> None:
    # GB200 has no flex-start; TPU v4 has no Dynamic Workload Scheduler; H100's 1-4 GPU
    # machines are Spot/flex-start only, its 8-GPU one is on-demand too.
    assert where_offered("gb200").modes == ("reservation", "standard", "spot")
    assert where_offered("v4").modes == ("reservation", "standard", "spot")
    assert where_offered("h100").modes == ("reservation", "standard", "spot", "flex-start",
                                           "queued")  # fmt: skip
    with pytest.raises(SpecError, match="unknown GPU 'h900'"):
        where_offered("h900")
