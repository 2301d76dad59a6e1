"""The availability table: zones as Google's pages list them, refused zones with the nearest
listed ones, and `gkeml catalog where` answering for every catalog row."""

from __future__ import annotations

import pytest

from gkeml_sdk import Accelerator, NodePool, SpecError, TpuSlice, where_offered
from gkeml_sdk.cli.catalog_where import where_report
from gkeml_sdk.cli.main import main
from gkeml_sdk.hardware import availability as table
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
    assert "zones=['us-central1-a']" in text and refused.value.field == "zones"
    # Same region first, then the same continent prefix, then the rest.
    v5e = availability("v5e")
    assert nearest_zones(v5e, "us-west1-a") == ["us-west1-c", "us-central1-a", "us-south1-a",
                                                "us-west4-a"]  # fmt: skip
    assert nearest_zones(availability("v6e"), "europe-west1-b")[0] == "europe-west4-a"
    with pytest.raises(SpecError, match=r"zones=\['europe-west4-a'\]"):
        NodePool(name="t", hardware=TpuSlice("v6e", "2x2"), zones=("europe-west1-b",))


def test_listed_zones_and_unread_sections_are_accepted() -> None:
    assert NodePool(name="a", hardware=TpuSlice("v5e", "2x2"), zones=("us-west4-a",)).zones
    # Europe's v5e zones were not readable: the table does not know, so it does not refuse.
    assert availability("v5e").offers("europe-west4-b") is None
    NodePool(name="b", hardware=TpuSlice("v5e", "2x2"), zones=("europe-west4-b",))
    # No GPU page was found: GPU pools are not refused for any zone, and the row says why.
    h200 = availability("h200")
    assert h200.zones == () and "not found" in h200.note
    NodePool(name="c", hardware=Accelerator("h200", count=8), zones=("europe-north1-a",))


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
