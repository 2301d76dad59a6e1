"""Every accelerator x provisioning-model cell of the price table: the price book's figure with
its source and date, or an estimate that says how it was derived, or the fact that the mode
is not offered on that hardware. No cell is left blank.

Estimates, in the order tried:
- flex-start: on-demand less the documented "up to 53 %" flex-start discount (GKE "About
  flex-start provisioning"): the lowest a flex-start price can be;
- Spot: on-demand times the Spot/on-demand ratio of the nearest row with both list figures;
- on-demand: Spot divided by that ratio, or, with neither figure, the nearest row's price per
  GB of accelerator memory times this row's memory.
"""

from __future__ import annotations

from dataclasses import dataclass

from gkeml_sdk.hardware.gpus import GPUS
from gkeml_sdk.hardware.tpus import TPUS
from gkeml_sdk.pricing.catalog import PROVISIONING_MODELS, PriceBook
from gkeml_sdk.pricing.vm import FLEX_START_DISCOUNT

# The nearest row with list figures, for a row the catalog read has none of (same GPU
# generation or the TPU generation before).
SIBLINGS = {
    "a100-80gb": "a100-40gb",
    "gb200": "b200",
    "gb300": "b200",
    "rtx-pro-6000": "l4",
    "tpu7x": "v6e",
    "v4": "v5p",
}
NOT_OFFERED = (
    "not offered: flex-start VMs do not come on this hardware (Compute Engine "
    "'About Flex-start VMs'; GKE 'About flex-start provisioning')"
)


@dataclass(frozen=True, slots=True)
class Quote:
    """One cell: `value` per accelerator-hour; `estimate` says how it was derived ("" for a
    list price); `why` says why there is no value (a mode not offered).

    Example:
        >>> q = quote(PriceBook.default(), "gb200", "spot")
        >>> q.is_estimate, q.estimate
        (True, "no list price found: b200's spot price per GB of accelerator memory x 186 GB")
    """

    key: str
    model: str
    value: float | None
    source: str
    as_of: str
    estimate: str = ""
    why: str = ""

    @property
    def is_estimate(self) -> bool:
        """True when the value is derived, not read from a price list."""
        return bool(self.estimate)


def catalog_keys() -> list[str]:
    """Price keys of every accelerator row: GPUs, then TPU generations."""
    return [g.key for g in GPUS] + [t.key for t in TPUS]


def price_table(book: PriceBook | None = None) -> list[Quote]:
    """Every accelerator x provisioning-model cell, in catalog order.

    Example:
        >>> cells = price_table()
        >>> len(cells) == 3 * len(catalog_keys()), all(c.value or c.why for c in cells)
        (True, True)
    """
    book = book or PriceBook.default()
    return [quote(book, key, model) for key in catalog_keys() for model in PROVISIONING_MODELS]


def quote(book: PriceBook, key: str, model: str) -> Quote:
    """The cell of `key` (a catalog price key) and `model` ('on-demand', 'spot', 'flex-start').

    Example:
        >>> q = quote(PriceBook.default(), "h200", "flex-start")
        >>> round(q.value, 4), q.estimate[:24]
        (4.3766, 'lowest it can be: on-dem')
    """
    row = book.price(key)
    source, as_of = row.source or book.source, row.as_of or book.as_of
    listed = row.get(model)
    if listed is not None:
        return Quote(key, model, listed, source, as_of)
    if model == "flex-start" and not _flex_start_offered(key):
        return Quote(key, model, None, source, as_of, why=NOT_OFFERED)
    if model == "flex-start":
        base = quote(book, key, "on-demand")
        if base.value is None:
            return Quote(key, model, None, source, as_of, why=base.why)
        how = (
            f"lowest it can be: on-demand less the documented 'up to "
            f"{FLEX_START_DISCOUNT:.0%}' flex-start discount"
        )
        if base.estimate:
            how += f", on an estimated on-demand price ({base.estimate})"
        return Quote(key, model, base.value * (1 - FLEX_START_DISCOUNT), source, as_of, how)
    return _from_sibling(book, key, model, source, as_of)


def _from_sibling(book: PriceBook, key: str, model: str, source: str, as_of: str) -> Quote:
    name = SIBLINGS.get(key, "")
    near = book.price(name) if name else None
    if near is None or near.on_demand is None or near.spot is None:
        why = "no list price in the catalog read, and no priced row near it to estimate from"
        return Quote(key, model, None, source, as_of, why=why)
    ratio = near.spot / near.on_demand
    row = book.price(key)
    if model == "spot" and row.on_demand is not None:
        how = f"on-demand x {name}'s Spot/on-demand ratio ({ratio:.3f})"
        return Quote(key, model, row.on_demand * ratio, source, as_of, how)
    if model == "on-demand" and row.spot is not None:
        how = f"Spot / {name}'s Spot/on-demand ratio ({ratio:.3f})"
        return Quote(key, model, row.spot / ratio, source, as_of, how)
    memory = _memory_gb(key) / _memory_gb(name)
    base = near.on_demand if model == "on-demand" else near.spot
    how = (
        f"no list price found: {name}'s {model} price per GB of accelerator memory x "
        f"{_memory_gb(key):g} GB"
    )
    return Quote(key, model, base * memory, source, as_of, how)


def _flex_start_offered(key: str) -> bool:
    rows = {g.key: g.flex_start for g in GPUS} | {t.key: t.flex_start for t in TPUS}
    return rows.get(key, True)


def _memory_gb(key: str) -> float:
    rows = {g.key: g.memory_gb for g in GPUS} | {t.key: t.hbm_gb for t in TPUS}
    return float(rows[key])
