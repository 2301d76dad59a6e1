"""Cost estimates: accelerator-hours times list price, per provisioning model, with the
price source and date."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

from gkeml_sdk.pricing.catalog import (
    MISSING,
    PROVISIONING_MODELS,
    Price,
    PriceBook,
    PriceOverrides,
)
from gkeml_sdk.scheduling.catalog import mode as provisioning_mode

if TYPE_CHECKING:
    from collections.abc import Sequence

    from gkeml_sdk.hardware.protocol import Billing
    from gkeml_sdk.scheduling.catalog import CapacityMode


@dataclass(frozen=True)
class CostLine:
    """One provisioning model's price per accelerator-hour and total (None = no list price,
    and `why` says why)."""

    model: str
    unit_price: float | None
    total: float | None
    why: str = ""


@dataclass(frozen=True)
class CostEstimate:
    """What a job costs for `hours`, by provisioning model.

    Only the accelerator component is counted; the VM's vCPU, memory and disk are billed
    on top of it by Compute Engine.

    Example:
        >>> from gkeml_sdk import TrainingJob, Accelerator
        >>> job = TrainingJob(name="a", accelerator=Accelerator("l4"), command=["true"])
        >>> round(job.estimate_cost(hours=10).total("on-demand"), 2)
        5.6
    """

    accelerator: str
    unit: str  # "GPU-hour" or "chip-hour"
    units: float  # accelerators in use at once
    hours: float
    lines: tuple[CostLine, ...]
    source: str
    as_of: str
    chosen: str  # the provisioning model the job asks for (its first choice)
    price_key: str = ""  # the catalog key a price override uses ("a100-80gb")
    # Every price model a job with a capacity order may be admitted to, in its order.
    may_get: tuple[str, ...] = ()

    def total(self, model: str = "") -> float | None:
        """Total for a provisioning model (default: the one the job uses)."""
        wanted = model or self.chosen
        return next(line.total for line in self.lines if line.model == wanted)

    @property
    def amount(self) -> str:
        """How much hardware, with fractions as fractions ("1/7 of one NVIDIA A100 80GB GPU").

        Example:
            >>> from gkeml_sdk import TrainingJob, Accelerator
            >>> mig = Accelerator("a100-80gb", mig="1g.10gb")
            >>> TrainingJob(name="a", accelerator=mig, command=["true"]).estimate_cost().amount
            '1/7 of one NVIDIA A100 80GB GPU'
        """
        share = Fraction(self.units).limit_denominator(64)
        if share.denominator == 1:
            return f"{share.numerator} x {self.accelerator}"
        return f"{share} {'of one' if share < 1 else 'x'} {self.accelerator}"

    @property
    def how_to_set_price(self) -> str:
        """Where to give a price the catalog lacks ("" when every price is known)."""
        if all(line.total is not None for line in self.lines) or not self.price_key:
            return ""
        return (
            f"set a price with estimate_cost(prices={{{self.price_key!r}: {{'on_demand': ...}}}}) "
            "or a price file (PriceBook.from_file; see the Cost page of the docs)"
        )

    def __str__(self) -> str:
        rows = [f"{self.amount} for {self.hours:g} h"]
        for line in self.lines:
            mark = " <- this job" if line.model == self.chosen else ""
            if line.model != self.chosen and line.model in self.may_get:
                mark = " <- this job, when the modes before it are full"
            if line.total is None:
                rows.append(f"  {line.model:<11} no price: {line.why}{mark}")
            else:
                rows.append(
                    f"  {line.model:<11} ${line.unit_price:,.4f}/{self.unit}  "
                    f"total ${line.total:,.2f}{mark}"
                )
        if self.how_to_set_price:
            rows.append(f"  {self.how_to_set_price}")
        rows.append(f"  accelerator component only; prices: {self.source}, as of {self.as_of}")
        return "\n".join(rows)

    def _repr_html_(self) -> str:
        """The bars, then where to set a missing price, then the price source.

        Example:
            >>> from gkeml_sdk import TrainingJob, Accelerator
            >>> job = TrainingJob(name="a", accelerator=Accelerator("l4"), command=["true"])
            >>> 'data-picture="cost-bars"' in job.estimate_cost(hours=10)._repr_html_()
            True
        """
        # Imported here: only a notebook draws.
        from gkeml_sdk.pictures.bars import CostBar, cost_svg
        from gkeml_sdk.pictures.svg import esc

        bars = []
        for line in self.lines:
            label = ""
            if line.total is not None:
                label = f"${line.total:,.2f} (${line.unit_price:,.4f}/{self.unit})"
            bars.append(CostBar(line.model, line.total, label, line.model == self.chosen, line.why))
        title = f"{self.amount} for {self.hours:g} h"
        how = self.how_to_set_price
        hint = f"<div><small>{esc(how)}</small></div>" if how else ""
        # Said once, under the picture: where the prices come from and what they cover.
        source = (
            f"<div style='overflow-wrap:anywhere'><small>accelerator component only; prices: "
            f"{esc(self.source)}, as of {esc(self.as_of)}</small></div>"
        )
        return f"<div>{cost_svg(title, bars)}{hint}{source}</div>"


def estimate_cost(
    billed: Billing,
    modes: Sequence[CapacityMode],
    hours: float,
    prices: PriceBook | PriceOverrides | str | None = None,
) -> CostEstimate:
    """Cost of running `hours` on hardware `billed` as it is, in the order of capacity `modes`
    a job accepts (see `TrainingJob.estimate_cost`)."""
    from gkeml_sdk.errors import SpecError, excerpt

    if not _is_duration(hours):
        raise SpecError(
            f"hours={excerpt(hours, 40)}",
            rule=f"a cost is for a positive, finite duration of at most {MAX_HOURS:,} hours",
            fix="hours=1",
        )
    book = PriceBook.of(prices)
    # Reserved VMs bill at the on-demand rate: the order of modes, by the price each pays.
    models = tuple(dict.fromkeys(provisioning_mode(m).price_model for m in modes))
    price = book.price(billed.key)
    # A machine sold only as Spot or flex-start has no on-demand price to quote.
    no_on_demand = not billed.on_demand
    lines = []
    for model in PROVISIONING_MODELS:
        unit_price = None if model == "on-demand" and no_on_demand else price.get(model)
        total = None if unit_price is None else unit_price * billed.units * hours
        lines.append(CostLine(model, unit_price, total, _why(model, price, no_on_demand)))
    return CostEstimate(
        accelerator=billed.name,
        unit=billed.unit,
        units=billed.units,
        hours=hours,
        lines=tuple(lines),
        source=book.source,
        as_of=book.as_of,
        chosen=models[0],
        price_key=billed.key,
        may_get=models if len(models) > 1 else (),
    )


def _why(model: str, price: Price, no_on_demand: bool) -> str:
    if model == "on-demand" and no_on_demand:
        return "this machine type is sold only as Spot or flex-start"
    if price.get(model) is not None:
        return ""
    if model == "on-demand" and price.note:
        return price.note
    return MISSING.get(model, f"the price catalog has no {model} price for it")


MAX_HOURS = 1_000_000  # more than a century: beyond it a figure means a typo, not a plan


def _is_duration(hours: object) -> bool:
    if isinstance(hours, bool) or not isinstance(hours, int | float):
        return False
    try:
        return 0 < float(hours) <= MAX_HOURS
    except OverflowError:  # an int beyond float's range
        return False
