"""Every accelerator x provisioning-model cell has a price with its source and date, an
estimate that says how it was derived, or the fact that the mode is not offered."""

import pytest

from gkeml_sdk.hardware.gpus import GPUS
from gkeml_sdk.hardware.tpus import TPUS
from gkeml_sdk.pricing.catalog import PriceBook
from gkeml_sdk.pricing.cells import NOT_OFFERED, catalog_keys, price_table, quote


def test_no_cell_is_blank():
    cells = price_table()
    assert len(cells) == 3 * (len(GPUS) + len(TPUS))
    blank = [(c.key, c.model, c.why) for c in cells if c.value is None and c.why != NOT_OFFERED]
    assert not blank, blank
    assert all(c.source and c.as_of for c in cells)
    assert all(c.value is None or c.value > 0 for c in cells)


def test_only_flex_start_is_ever_not_offered_and_only_where_the_row_says_so():
    flex = {g.key: g.flex_start for g in GPUS} | {t.key: t.flex_start for t in TPUS}
    refused = {(c.key, c.model) for c in price_table() if c.why == NOT_OFFERED}
    assert refused == {(key, "flex-start") for key, offered in flex.items() if not offered}


def test_list_prices_are_not_estimates_and_estimates_say_how():
    book = PriceBook.default()
    h100 = quote(book, "h100", "flex-start")
    assert h100.value == pytest.approx(4.20076) and not h100.is_estimate
    h200 = quote(book, "h200", "flex-start")
    assert h200.value == pytest.approx(9.312 * 0.47) and "up to 53%" in h200.estimate
    v4 = quote(book, "v4", "on-demand")
    assert v4.value == 3.22 and not v4.is_estimate and v4.as_of == "2022-08-11"
    assert "tpu/pricing" in v4.source


def test_estimates_follow_the_book_they_are_derived_from():
    book = PriceBook.default()
    gb200 = quote(book, "gb200", "on-demand")
    assert "b200" in gb200.estimate and "186 GB" in gb200.estimate
    dearer = book.with_overrides({"b200": {"on_demand": 2 * 11.277}})
    assert quote(dearer, "gb200", "on-demand").value == pytest.approx(2 * gb200.value)
    a100 = quote(book, "a100-80gb", "on-demand")
    assert a100.value == pytest.approx(1.964 / (1.4341 / 2.93391))
    assert "a100-40gb's Spot/on-demand ratio" in a100.estimate
    # A list price given by the user replaces the estimate.
    mine = book.with_overrides({"gb200": {"on_demand": 12.0}})
    assert quote(mine, "gb200", "on-demand").value == 12.0
    assert not quote(mine, "gb200", "on-demand").is_estimate


def test_a_cell_with_nothing_to_derive_from_says_why():
    book = PriceBook.default().with_overrides({"b200": {"on_demand": None, "spot": None}})
    cell = quote(book, "gb200", "spot")
    assert cell.value is None and "no priced row near it" in cell.why
    assert set(catalog_keys()) >= {"gb200", "tpu7x", "v4"}


def test_an_estimate_names_the_source_of_the_row_it_prices():
    from gkeml_sdk import TpuSlice, TrainingJob

    cost = TrainingJob(
        name="v4", command=["x"], accelerator=TpuSlice("v4", "2x2x1")
    ).estimate_cost()
    assert cost.as_of == "2022-08-11" and "tpu/pricing" in cost.source
    assert cost.total("on-demand") == pytest.approx(4 * 3.22)
    assert "~spot: on-demand x v5p's Spot/on-demand ratio" in str(cost)
