"""Cost estimates: accelerator-hours times the price table's cell, plus the VM part of the
machines they run on, per provisioning model, with the sources and dates, the estimates said
as estimates, and when Spot pays (`pricing.breakeven`)."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

from gkeml_sdk.pricing.breakeven import (
    DEFAULT_CHECKPOINT_MINUTES,
    DEFAULT_PREEMPTIONS_PER_DAY,
    DEFAULT_RESTART_MINUTES,
    BreakEven,
    break_even,
)
from gkeml_sdk.pricing.catalog import PROVISIONING_MODELS, PriceBook, PriceOverrides
from gkeml_sdk.pricing.cells import Quote, quote
from gkeml_sdk.pricing.vm import FLEX_START_DISCOUNT, SSD_SOURCE, VM_AS_OF, VM_SOURCE, vm_part
from gkeml_sdk.scheduling.catalog import mode as provisioning_mode

if TYPE_CHECKING:
    from collections.abc import Sequence

    from gkeml_sdk.hardware.protocol import Billing
    from gkeml_sdk.scheduling.catalog import CapacityMode


@dataclass(frozen=True)
class CostLine:
    """One provisioning model: the accelerator's price per unit-hour, the VM part per hour of
    all the job's machines, and the total (None = no price, and `why` says why);
    `price_estimate` and `vm_estimate` say how a derived figure was derived ("" for a list
    price)."""

    model: str
    unit_price: float | None
    total: float | None
    why: str = ""
    price_estimate: str = ""
    vm_price: float | None = None
    vm_estimate: str = ""

    @property
    def estimate(self) -> str:
        """How the line's derived figures were derived ("" when all are list prices)."""
        vm = f"VM part: {self.vm_estimate}" if self.vm_estimate else ""
        return "; ".join(part for part in (self.price_estimate, vm) if part)

    @property
    def is_estimate(self) -> bool:
        """True when the line's total rests on a derived figure."""
        return bool(self.estimate)


@dataclass(frozen=True)
class CostEstimate:
    """What a job costs for `hours`, by provisioning model: the accelerators at the price
    table's cells plus the VM part (vCPUs, memory, Local SSD) of the machines they run on.

    Example:
        >>> from gkeml_sdk import TrainingJob, Accelerator
        >>> job = TrainingJob(name="a", accelerator=Accelerator("l4"), command=["true"])
        >>> round(job.estimate_cost(hours=10).total("on-demand"), 2)
        7.07
        >>> f"{job.estimate_cost().spot_saving:.0%}"
        '60%'
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
    vm: str = ""  # what the VM part covers, or why there is none
    break_even: BreakEven | None = None

    def total(self, model: str = "") -> float | None:
        """Total for a provisioning model (default: the one the job uses)."""
        wanted = model or self.chosen
        return next(line.total for line in self.lines if line.model == wanted)

    @property
    def spot_saving(self) -> float | None:
        """The share of the on-demand total Spot saves (0.7 = 70 %), None without both."""
        od, spot = self.total("on-demand"), self.total("spot")
        return None if not od or spot is None else 1 - spot / od

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
        """Where to give a price the table lacks or only estimates ("" when every figure is a
        list price)."""
        settled = all(line.total is not None for line in self.lines) and not any(
            line.price_estimate for line in self.lines
        )
        if not self.price_key or settled:
            return ""
        return (
            f"set a price with estimate_cost(prices={{{self.price_key!r}: {{'on_demand': ...}}}}) "
            "or a price file (PriceBook.from_file; see the Cost page of the docs)"
        )

    @property
    def footnote(self) -> str:
        """What the prices cover, their sources and their dates, in one sentence."""
        vm = f"VM part: {self.vm}; ~ marks an estimate"
        if not self.price_key:
            return f"no accelerator; {vm}"
        return f"accelerator component: {self.source}, as of {self.as_of}; {vm}"

    def __str__(self) -> str:
        rows = [f"{self.amount} for {self.hours:g} h"]
        for line in self.lines:
            mark = " <- this job" if line.model == self.chosen else ""
            if line.model != self.chosen and line.model in self.may_get:
                mark = " <- this job, when the modes before it are full"
            if line.total is None:
                rows.append(f"  {line.model:<11} no price: {line.why}{mark}")
                continue
            price = f"{'~' if line.price_estimate else ''}${line.unit_price:,.4f}/{self.unit}"
            vm = f"VM {'~' if line.vm_estimate else ''}${line.vm_price:,.4f}/h"
            # A CPU machine's bill is its VM part alone.
            paid = [price] if self.price_key else []
            paid += [vm] if line.vm_price else []
            rows.append(
                f"  {line.model:<11} {' + '.join(paid)}  "
                f"total {'~' if line.is_estimate else ''}${line.total:,.2f}{mark}"
            )
        rows += [f"  ~{line.model}: {line.estimate}" for line in self.lines if line.is_estimate]
        if self.break_even is not None:
            rows.append(f"  {self.break_even}")
        if self.how_to_set_price:
            rows.append(f"  {self.how_to_set_price}")
        rows.append(f"  {self.footnote}")
        return "\n".join(rows)

    def _repr_html_(self) -> str:
        """The bars, then where to set a missing price, then the price sources.

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
                price = "~" if line.price_estimate else ""
                total = "~" if line.is_estimate else ""
                label = f"{total}${line.total:,.2f}"
                if self.price_key:
                    label += f" ({price}${line.unit_price:,.4f}/{self.unit})"
            bars.append(CostBar(line.model, line.total, label, line.model == self.chosen, line.why))
        title = f"{self.amount} for {self.hours:g} h"
        notes = [f"~{line.model}: {line.estimate}" for line in self.lines if line.is_estimate]
        if self.break_even is not None:
            notes.append(str(self.break_even))
        if self.how_to_set_price:
            notes.append(self.how_to_set_price)
        hint = "".join(f"<div><small>{esc(n)}</small></div>" for n in notes)
        # Said once, under the picture: what the prices cover, where they come from, when.
        source = f"<div style='overflow-wrap:anywhere'><small>{esc(self.footnote)}</small></div>"
        return f"<div>{cost_svg(title, bars)}{hint}{source}</div>"


def estimate_cost(
    billed: Billing,
    modes: Sequence[CapacityMode],
    hours: float,
    prices: PriceBook | PriceOverrides | str | None = None,
    *,
    checkpoint_minutes: float = DEFAULT_CHECKPOINT_MINUTES,
    preemptions_per_day: float = DEFAULT_PREEMPTIONS_PER_DAY,
    restart_minutes: float = DEFAULT_RESTART_MINUTES,
) -> CostEstimate:
    """Cost of running `hours` on hardware `billed` as it is, in the order of capacity `modes`
    a job accepts, and when Spot pays (see `TrainingJob.estimate_cost`)."""
    _check_inputs(hours, checkpoint_minutes, preemptions_per_day, restart_minutes)
    book = PriceBook.of(prices)
    # Reserved VMs bill at the on-demand rate: the order of modes, by the price each pays.
    models = tuple(dict.fromkeys(provisioning_mode(m).price_model for m in modes))
    lines = tuple(_line(book, billed, model, hours) for model in PROVISIONING_MODELS)
    od, spot = lines[0].total, lines[1].total
    even = None
    if od and spot:
        even = break_even(
            od / hours,
            spot / hours,
            hours=hours,
            checkpoint_minutes=checkpoint_minutes,
            preemptions_per_day=preemptions_per_day,
            restart_minutes=restart_minutes,
        )
    # A row may carry its own source (TPU v4's list price): the footnote names the row's.
    cell = quote(book, billed.key, "on-demand") if billed.key else None
    return CostEstimate(
        accelerator=billed.name,
        unit=billed.unit,
        units=billed.units,
        hours=hours,
        lines=lines,
        source=cell.source if cell else book.source,
        as_of=cell.as_of if cell else book.as_of,
        chosen=models[0],
        price_key=billed.key,
        may_get=models if len(models) > 1 else (),
        vm=_vm_text(billed),
        break_even=even,
    )


def _line(book: PriceBook, billed: Billing, model: str, hours: float) -> CostLine:
    if model == "on-demand" and not billed.on_demand:
        return CostLine(model, None, None, "this machine type is sold only as Spot or flex-start")
    if not billed.key and not billed.machine_type:
        why = "a CPU-only job names no machine type; accelerator=CpuMachine(...) prices its VMs"
        return CostLine(model, None, None, why)
    # A CPU machine has no accelerator to price: its VM part is the whole bill.
    cell = quote(book, billed.key, model) if billed.key else Quote("", model, 0.0, "", "")
    if cell.value is None:
        return CostLine(model, None, None, cell.why)
    vm_price, notes = 0.0, []
    if billed.machine_type and not billed.vm_included:
        part = vm_part(billed.machine_type)
        per_machine = part.price(model)
        vm_price = per_machine * billed.machines if per_machine is not None else 0.0
        if part.estimate:
            notes.append(part.estimate)
        if model == "flex-start" and per_machine is not None:
            notes.append(f"on-demand less the 'up to {FLEX_START_DISCOUNT:.0%}' flex-start bound")
    total = (cell.value * billed.units + vm_price) * hours
    return CostLine(model, cell.value, total, "", cell.estimate, vm_price, "; ".join(notes))


def _vm_text(billed: Billing) -> str:
    if billed.vm_included:
        return billed.vm_included
    if not billed.machine_type:
        return "not included: the job names no machine type"
    part = vm_part(billed.machine_type)
    if part.missing:
        return f"not included: {part.missing}"
    share = Fraction(billed.machines).limit_denominator(64)
    return (
        f"{share} x {billed.machine_type} (vCPUs, memory, Local SSD) at rates from {VM_SOURCE}, "
        f"as of {VM_AS_OF}; {SSD_SOURCE}"
    )


MAX_HOURS = 1_000_000  # more than a century: beyond it a figure means a typo, not a plan


def _check_inputs(hours: object, checkpoint: object, per_day: object, restart: object) -> None:
    from gkeml_sdk.errors import SpecError, excerpt

    if not _within(hours, MAX_HOURS, zero=False):
        raise SpecError(
            f"hours={excerpt(hours, 40)}",
            rule=f"a cost is for a positive, finite duration of at most {MAX_HOURS:,} hours",
            fix="hours=1",
        )
    # Past 525,600 (the minutes of a year) each of these is a typo, not a plan.
    for name, value, zero, fix in (
        ("checkpoint_minutes", checkpoint, False, "checkpoint_minutes=30"),
        ("preemptions_per_day", per_day, True, "preemptions_per_day=1"),
        ("restart_minutes", restart, True, "restart_minutes=10"),
    ):
        if not _within(value, 525_600, zero=zero):
            least = "0 or more" if zero else "above 0"
            raise SpecError(
                f"{name}={excerpt(value, 40)}",
                rule=f"{name} is a finite number, {least}, of at most 525,600 (a year)",
                fix=fix,
            )


def _within(value: object, most: float, *, zero: bool) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    try:
        number = float(value)
    except OverflowError:  # an int beyond float's range
        return False
    return (number >= 0 if zero else number > 0) and number <= most
