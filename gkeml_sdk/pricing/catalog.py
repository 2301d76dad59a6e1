"""Accelerator list prices (USD per GPU-hour / chip-hour) with their source and date
(the SkyPilot GCP catalog, https://github.com/skypilot-org/skypilot-catalog). Prices change:
users override them with a dict or a YAML/JSON file.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from gkeml_sdk.errors import SpecError, excerpt

DEFAULT_SOURCE = (
    "SkyPilot GCP catalog (github.com/skypilot-org/skypilot-catalog, catalogs/v8/gcp/vms.csv), "
    "us-central1 accelerator component; list prices at cloud.google.com/compute/gpus-pricing "
    "and cloud.google.com/tpu/pricing"
)
DEFAULT_AS_OF = "2026-08-26"

PROVISIONING_MODELS = ("on-demand", "spot", "flex-start")
# Google's GPU and TPU pricing pages are JavaScript-rendered, and no dated public source listing
# Dynamic Workload Scheduler (flex-start) prices was found (searched 2026-12-01 and 2026-12-07);
# the reference catalog carries one flex-start figure (H100). A cell without a figure is
# estimated by `pricing.cells`, which says how.
TPU_V4_SOURCE = (
    "cloud.google.com/tpu/pricing, v4 on-demand $3.22 per chip-hour, as quoted by "
    "infer-pub.com question 1114"
)
_PRICE_FILE = "YAML or JSON `prices: {h100: {on_demand: 9.8, spot: 2.9}}` (source, as_of optional)"
PriceOverrides = Mapping[str, Mapping[str, float | None]]


@dataclass(frozen=True)
class Price:
    """Per-accelerator-hour prices for one GPU model or TPU generation; None = not known."""

    on_demand: float | None
    spot: float | None = None
    flex_start: float | None = None
    note: str = ""
    # Where this row's figures come from when not the book's own source ("" = the book's).
    source: str = ""
    as_of: str = ""

    def get(self, model: str) -> float | None:
        """Price for a provisioning model: 'on-demand', 'spot' or 'flex-start'."""
        return {"on-demand": self.on_demand, "spot": self.spot, "flex-start": self.flex_start}[
            model
        ]


_DEFAULT_PRICES: dict[str, Price] = {
    "t4": Price(0.35, 0.175),
    "p4": Price(0.60, 0.2236),
    "v100": Price(2.48, 0.74, note="older list price"),
    "p100": Price(1.46, 0.43, note="older list price"),
    "l4": Price(0.56004, 0.2231),
    "a100-40gb": Price(2.93391, 1.4341),
    "a100-80gb": Price(None, 1.964, note="catalog on-demand row unreliable (spot above it)"),
    "h100": Price(9.79655, 2.9926, 4.20076, note="on-demand read from us-east4"),
    "h100-mega": Price(10.344, 3.16),
    "h200": Price(9.312, 4.656),
    "b200": Price(11.277, 4.076),
    "v4": Price(3.22, source=TPU_V4_SOURCE, as_of="2022-08-11"),
    "v5e": Price(1.20, 0.245),
    "v5p": Price(4.20, 0.836),
    "v6e": Price(2.70, 0.544),
}


@dataclass(frozen=True)
class PriceBook:
    """Prices by catalog key, with where they came from.

    Example:
        >>> book = PriceBook.default().with_overrides({"h100": {"on_demand": 11.0}})
        >>> book.price("h100").on_demand, book.price("h100").spot
        (11.0, 2.9926)
    """

    prices: Mapping[str, Price] = field(default_factory=lambda: dict(_DEFAULT_PRICES))
    source: str = DEFAULT_SOURCE
    as_of: str = DEFAULT_AS_OF

    @classmethod
    def default(cls) -> PriceBook:
        """The built-in list prices."""
        return cls()

    @classmethod
    def from_file(cls, path: str | Path) -> PriceBook:
        """Defaults overlaid with a YAML or JSON file.

        The file holds `{source?, as_of?, prices: {h100: {on_demand: .., spot: ..}, ...}}`.
        """
        from gkeml_sdk.core.spec_text import load_yaml, read_spec_file

        file, text = read_spec_file(path, fix=f"pass a price file: {_PRICE_FILE}")
        # JSON is YAML 1.2; the YAML reader gives JSON's errors with a line and column too.
        data = load_yaml(text, str(file))
        if not isinstance(data, dict) or not isinstance(data.get("prices"), dict):
            raise SpecError(f"{file}: expected a mapping with a 'prices' mapping", fix=_PRICE_FILE)
        book = cls.default().with_overrides(data["prices"])
        return replace(
            book,
            source=str(data.get("source", f"{path} over {DEFAULT_SOURCE}")),
            as_of=str(data.get("as_of", book.as_of)),
        )

    @classmethod
    def of(cls, prices: PriceBook | PriceOverrides | str | Path | None) -> PriceBook:
        """A price book from whatever a caller passed: a book, overrides, a file, or None.

        Example:
            >>> PriceBook.of({"l4": {"spot": 0.2}}).price("l4").spot
            0.2
        """
        if prices is None:
            return cls.default()
        if isinstance(prices, PriceBook):
            return prices
        if isinstance(prices, (str, Path)):
            return cls.from_file(prices)
        return cls.default().with_overrides(prices)

    def with_overrides(self, overrides: PriceOverrides) -> PriceBook:
        """A copy with some prices replaced; keys are catalog keys, fields
        `on_demand`, `spot`, `flex_start`."""
        if not isinstance(overrides, Mapping):
            raise SpecError(
                f"prices={excerpt(overrides, 80)} is not a mapping of prices", fix=_PRICE_FILE
            )
        merged = dict(self.prices)
        for key, fields in overrides.items():
            if not isinstance(key, str) or not isinstance(fields, Mapping):
                raise SpecError(
                    f"price for {excerpt(key)}: expected a catalog key and a mapping of prices",
                    fix=_PRICE_FILE,
                )
            unknown = set(fields) - {"on_demand", "spot", "flex_start"}
            if unknown:
                names = excerpt(sorted(map(str, unknown)))
                raise SpecError(
                    f"price for {excerpt(key)}: unknown fields {names}",
                    fix="use on_demand, spot, flex_start",
                )
            for name, value in fields.items():
                if value is not None and (
                    isinstance(value, bool)
                    or not isinstance(value, (int, float))
                    or not 0 <= value < float("inf")
                ):
                    raise SpecError(
                        f"price for {excerpt(key)}: {name}={excerpt(value)} is not a price",
                        rule="prices are USD per accelerator-hour, 0 or more",
                        fix=f"{name}: 1.25",
                    )
            base = merged.get(key, Price(None))
            merged[key] = replace(base, note="user override", source="", as_of="", **fields)
        return replace(self, prices=merged, source=f"user overrides over {self.source}")

    def price(self, key: str) -> Price:
        """Prices of one catalog key; all None when unknown."""
        return self.prices.get(key, Price(None, note="no list price in the catalog"))
