"""`SpotMix`: a model server with an on-demand floor that Spot reclaims never touch, and Spot
replicas (sized by `replicas`, autoscaled or fixed) for the rest, behind one Service
(SkyServe's `base_ondemand_fallback_replicas`, on one GKE cluster)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import model_validator

from gkeml_sdk.core.model import SpecModel, fail

if TYPE_CHECKING:
    from gkeml_sdk.serving.model import ServeModel

CAPACITY_LABEL = "gkeml.dev/capacity"  # which part of a SpotMix a pod belongs to
SPOT_SUFFIX = "-spot"  # the Spot part's Deployment; the on-demand floor keeps the service name


class SpotMix(SpecModel):
    """`on_demand_min` replicas on on-demand nodes always run; the `ServeModel`'s `replicas`
    (a count or `Autoscaling`) size the Spot part on top of them.

    Example:
        >>> from gkeml_sdk import Accelerator, Autoscaling, ServeModel
        >>> svc = ServeModel(name="chat", model="Qwen/Qwen2.5-7B-Instruct",
        ...                  accelerator=Accelerator("l4"), spot=SpotMix(on_demand_min=1),
        ...                  replicas=Autoscaling(min=1, max=6))
        >>> [o["metadata"]["name"] for o in svc.compile().of_kind("Deployment")]
        ['chat-spot', 'chat']

    Attributes:
        on_demand_min: On-demand replicas that always run, whatever Spot capacity does.
    """

    on_demand_min: int = 1

    @model_validator(mode="after")
    def _check(self) -> SpotMix:
        if self.on_demand_min < 1:
            raise fail(
                f"SpotMix(on_demand_min={self.on_demand_min})",
                rule="the mix keeps at least one on-demand replica; all-Spot is spot=True",
                fix="SpotMix(on_demand_min=1), or spot=True",
                field="spot",
            )
        return self

    def __bool__(self) -> bool:
        return True  # some replicas run on Spot: Spot notes and prices apply

    def __repr__(self) -> str:
        return f"SpotMix(on_demand_min={self.on_demand_min})"


def check_spot_mix(svc: ServeModel) -> None:
    """The Spot part's name fits, and the GPU is sold on-demand for the floor.

    Example:
        >>> from gkeml_sdk import Accelerator, ServeModel
        >>> ServeModel(name="chat", model="Qwen/Qwen2.5-7B-Instruct",
        ...            accelerator=Accelerator("l4"), spot=SpotMix()).spot_mix
        SpotMix(on_demand_min=1)
    """
    from gkeml_sdk.serving.rules import MAX_NAME_LENGTH

    if svc.spot_mix is None:
        return
    if len(svc.name) + len(SPOT_SUFFIX) > MAX_NAME_LENGTH:
        keep = MAX_NAME_LENGTH - len(SPOT_SUFFIX)
        raise fail(
            f"name={svc.name!r} is too long for a Spot part named {svc.name + SPOT_SUFFIX!r}",
            rule=f"derived names stay within {MAX_NAME_LENGTH} characters",
            fix=f"name={svc.name[:keep].rstrip('-')!r}",
            field="name",
        )
    svc.accelerator.check_provisioning(spot=False)  # the floor runs on on-demand nodes
