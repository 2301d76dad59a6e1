"""What a tenant is: the models it serves (`TenantModel`) and every field of `Tenant` with its
meaning and the facts derived from them. The rules and builders of this folder read a tenant
through `TenantFields`; `tenancy.model.Tenant` adds the checks, its node pools and
`compile()`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, field_validator, model_validator

from gkeml_sdk.core.model import SpecModel, fail
from gkeml_sdk.serving.model import ServeModel
from gkeml_sdk.tenancy.tier import Tier

if TYPE_CHECKING:
    from gkeml_sdk.hardware.gpu_row import GpuModel

# Private Google Access (private.googleapis.com): where Cloud Storage and the other Google APIs
# answer from inside a VPC without public egress.
GOOGLE_API_CIDRS = ("199.36.153.8/30",)


class TenantModel(SpecModel):
    """One model a tenant serves, with its share of the tenant's traffic (requests without an
    `x-model-name` header are split by weight) and its replica bounds.

    Example:
        >>> from gkeml_sdk import Accelerator, ServeModel
        >>> m = TenantModel(model=ServeModel(name="llama-2-7b", model="llama-2-7b",
        ...                 accelerator=Accelerator("l4"), hf_token_secret="hf"),
        ...                 weight=100, min_replicas=3, max_replicas=10)
        >>> m.name, m.gpus_per_replica
        ('llama-2-7b', 1)
    """

    model: ServeModel = Field(description="The model to serve: `ServeModel(...)`.")
    weight: int = Field(
        default=1,
        description="Its share of the tenant's GPUs and traffic, relative to its other models.",
    )
    min_replicas: int = Field(default=1, description="Fewest serving replicas.")
    max_replicas: int = Field(default=1, description="Most serving replicas.")

    @model_validator(mode="after")
    def _check(self) -> TenantModel:
        name = self.model.name
        if self.weight < 1:
            raise fail(
                f"model {name!r}: weight={self.weight}",
                rule="weights are positive: a model that takes no traffic is not served",
                fix="weight=1 or more, or drop the model",
                field="weight",
            )
        if self.min_replicas < 1:
            raise fail(
                f"model {name!r}: min_replicas={self.min_replicas}",
                rule="a served model keeps at least one replica (an HPA's minReplicas >= 1)",
                fix="min_replicas=1",
                field="min_replicas",
            )
        if self.max_replicas < self.min_replicas:
            raise fail(
                f"model {name!r}: max_replicas={self.max_replicas} is below "
                f"min_replicas={self.min_replicas}",
                rule="replicas scale between min_replicas and max_replicas",
                fix=f"max_replicas={self.min_replicas} or more",
                field="max_replicas",
            )
        # The default (1) stands for "not given": model_dump() writes it out.
        if self.model.replicas != 1 and (
            self.model.min_replicas != self.min_replicas
            or self.model.max_replicas != self.max_replicas
        ):
            raise fail(
                f"model {name!r}: ServeModel replicas {self.model.replicas!r} disagree with "
                f"min_replicas={self.min_replicas}, max_replicas={self.max_replicas}",
                rule="a tenant's model takes its replica bounds from TenantModel",
                fix="drop replicas from the ServeModel",
                field="replicas",
            )
        return self

    @property
    def name(self) -> str:
        """The model's ServeModel name (its Deployment and Service)."""
        return self.model.name

    @property
    def gpu(self) -> GpuModel:
        """The catalog row of the model's GPU: its resource name, node label and taint."""
        return self.model.accelerator.gpu

    @property
    def gpus_per_replica(self) -> int:
        """Units of the GPU's resource one replica requests (a MIG slice or shared GPU is one)."""
        fit = self.model.fit
        assert fit is not None  # ServeModel refuses a model that fits nothing
        return fit.gpus_per_pod * fit.pods


class TenantFields(SpecModel):
    """The fields of a `Tenant` and what they imply (its standbys and reserved GPUs)."""

    name: str = Field(
        description="The tenant's name; also its namespace unless `namespace` is set."
    )
    tier: Tier = Field(
        description='Isolation tier "A", "B" or "C", or a `Tier(...)`: sharing, standbys, recovery.'
    )
    gpu_quota: int = Field(description="GPUs the tenant may hold at once, standbys included.")
    models: list[TenantModel] = Field(
        min_length=1,
        description="The tenant's models: `TenantModel(model=ServeModel(...), weight=..., ...)`.",
    )
    namespace: str = Field(
        default="", description='Kubernetes namespace of the tenant; "" means the tenant\'s name.'
    )
    gateway: str = Field(
        default="serving/llm-gateway",
        description="namespace/name of the Istio ingress gateway its routes bind to.",
    )
    hosts: list[str] = Field(
        default_factory=lambda: ["*"], description="Hosts the Istio routing rules bind."
    )
    routing: Literal["istio", "inference-gateway"] = Field(
        default="istio",
        description='How traffic reaches the models: "istio" or "inference-gateway".',
    )
    gateway_cidrs: list[str] = Field(
        default_factory=list,
        description="Inference Gateway: the region's proxy-only subnet, where the load "
        "balancer's requests come from (NetworkPolicies let them in).",
    )
    standby_share: int = Field(
        default=5, description="Percent of a model's traffic a hot standby takes."
    )
    weight_sources: list[str] = Field(
        default_factory=list,
        description="CIDRs the models' weights are pulled from outside Google (the Hugging Face "
        "Hub, a mirror), let out over HTTPS (NetworkPolicy cannot name hosts).",
    )
    google_api_cidrs: list[str] = Field(
        default_factory=lambda: list(GOOGLE_API_CIDRS),
        description="The Google API ranges (Cloud Storage among them) the tenant may reach "
        "over HTTPS.",
    )

    @field_validator("tier", mode="before")
    @classmethod
    def _named_tier(cls, value: Any) -> Any:
        return {"name": value} if isinstance(value, str) else value

    @property
    def gateway_namespace(self) -> str:
        """The namespace whose pods may reach the tenant's servers."""
        return self.gateway.rpartition("/")[0]

    @property
    def standby_pods(self) -> int:
        """Standby pods per model that hold GPUs: the tier's standbys, or for a cold tier the
        placeholder that reserves one replica's GPUs."""
        if self.tier.standby_level == "cold":
            return max(self.tier.standbys, 1)
        return self.tier.standbys

    @property
    def gpu_resources(self) -> tuple[str, ...]:
        """The resource names the models' GPU rows request, in model order, once each.

        Example:
            >>> from gkeml_sdk import load_specs
            >>> load_specs("examples/tenants.yaml")[0].gpu_resources
            ('nvidia.com/gpu',)
        """
        return tuple(dict.fromkeys(m.gpu.resource for m in self.models))

    @property
    def reserved_gpus(self) -> int:
        """GPUs the minimum replicas and the standbys of every model hold."""
        return sum((m.min_replicas + self.standby_pods) * m.gpus_per_replica for m in self.models)

    def model_named(self, name: str) -> TenantModel:
        """The tenant's model of that name; `SpecError` naming the models otherwise."""
        for model in self.models:
            if model.name == name:
                return model
        raise fail(
            f"tenant {self.name!r} serves no model {name!r}",
            fix=f"one of {', '.join(m.name for m in self.models)}",
        )
