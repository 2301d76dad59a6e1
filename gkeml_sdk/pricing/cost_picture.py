"""A cost estimate as bars in a notebook: on-demand, Spot and flex-start side by side."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gkeml_sdk.pictures.bars import CostBar, cost_svg
from gkeml_sdk.pictures.svg import esc

if TYPE_CHECKING:
    from gkeml_sdk.pricing.model import CostEstimate


def cost_html(cost: CostEstimate) -> str:
    """The bars, then where to set a missing price, then the price source.

    Example:
        >>> from gkeml_sdk import TrainingJob, Accelerator
        >>> job = TrainingJob(name="a", accelerator=Accelerator("l4"), command=["true"])
        >>> 'data-picture="cost-bars"' in cost_html(job.estimate_cost(hours=10))
        True
    """
    bars = []
    for line in cost.lines:
        label = ""
        if line.total is not None:
            label = f"${line.total:,.2f} (${line.unit_price:,.4f}/{cost.unit})"
        bars.append(CostBar(line.model, line.total, label, line.model == cost.chosen, line.why))
    title = f"{cost.amount} for {cost.hours:g} h"
    footnote = f"accelerator component only; list prices as of {cost.as_of}"
    how = cost.how_to_set_price
    hint = f"<div><small>{esc(how)}</small></div>" if how else ""
    source = f"<div><small>prices: {esc(cost.source)}</small></div>"
    return f"<div>{cost_svg(title, bars, footnote)}{hint}{source}</div>"
