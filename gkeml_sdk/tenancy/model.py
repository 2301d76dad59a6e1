"""`Tenant` and `TenantModel`: who is served, on which tier, within which GPU quota, and
which models with which weights and replica bounds."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, field_validator, model_validator

from gkeml_sdk.core.model import DNS1123_LABEL, DNS1123_SUBDOMAIN, SpecModel, fail
from gkeml_sdk.serving.model import ServeModel
from gkeml_sdk.tenancy import rules as checks
from gkeml_sdk.tenancy.tier import Tier

if TYPE_CHECKING:
    from gkeml_sdk.core.manifests import Manifests
    from gkeml_sdk.hardware.gpu_row import GpuModel
    from gkeml_sdk.nodepools.model import NodePool

# Private Google Access (private.googleapis.com): where Cloud Storage and the other Google APIs
# answer from inside a VPC without public egress.
GOOGLE_API_CIDRS = ("199.36.153.8/30",)

MAX_STANDBY_SHARE = 50


class TenantModel(SpecModel):
    """One model a tenant serves: its relative weight among the tenant's models (requests
    without an `x-model-name` header are split by it) and its replica bounds.

    Example:
        >>> from gkeml_sdk import Accelerator, ServeModel
        >>> m = TenantModel(model=ServeModel(name="llama-2-7b", model="llama-2-7b",
        ...                 accelerator=Accelerator("l4"), hf_token_secret="hf"),
        ...                 weight=100, min_replicas=3, max_replicas=10)
        >>> m.name, m.gpus_per_replica
        ('llama-2-7b', 1)

    Attributes:
        model: The model to serve: `ServeModel(...)`.
        weight: Its share of the tenant's GPUs and traffic, relative to its other models.
        min_replicas: Fewest serving replicas.
        max_replicas: Most serving replicas.
    """

    model: ServeModel
    weight: int = 1
    min_replicas: int = 1
    max_replicas: int = 1

    @model_validator(mode="after")
    def _check(self) -> TenantModel:
        checks.check_replicas(self)
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


class Tenant(SpecModel):
    """A tenant: its namespace, tier, GPU quota and models.

    Example:
        >>> from gkeml_sdk import Accelerator, ServeModel
        >>> llama = ServeModel(name="llama-2-7b", model="llama-2-7b",
        ...                    accelerator=Accelerator("l4"), hf_token_secret="hf")
        >>> t = Tenant(name="tenant-a", tier="A", gpu_quota=12,
        ...            models=[TenantModel(model=llama, weight=100, min_replicas=3,
        ...                                max_replicas=10)])
        >>> t.tier.standbys, t.tier.rto_seconds, t.reserved_gpus
        (2, 5.0, 5)

    Attributes:
        name: The tenant's name; also its namespace unless `namespace` is set.
        tier: Isolation tier "A", "B" or "C", or a `Tier(...)`: sharing, standbys, recovery.
        gpu_quota: GPUs the tenant may hold at once, standbys included.
        models: The tenant's models: `TenantModel(model=ServeModel(...), weight=..., ...)`.
        namespace: Kubernetes namespace of the tenant; "" means the tenant's name.
        gateway: namespace/name of the Istio ingress gateway its routes bind to.
        hosts: Hosts the Istio routing rules bind.
        routing: How traffic reaches the models: "istio" or "inference-gateway".
        gateway_cidrs: Inference Gateway's proxy-only subnet, let in by NetworkPolicies.
        standby_share: Percent of a model's traffic a hot standby takes.
        weight_sources: CIDRs the models' weights are pulled from, let out over HTTPS
            (NetworkPolicy cannot name hosts: declare the source's address ranges).
        google_api_cidrs: The Google API ranges the tenant may reach over HTTPS.
    """

    name: str
    tier: Tier
    gpu_quota: int
    models: list[TenantModel] = Field(min_length=1)
    namespace: str = ""  # default: the tenant's name
    gateway: str = "serving/llm-gateway"  # namespace/name of the Istio ingress gateway
    hosts: list[str] = Field(default_factory=lambda: ["*"])  # Istio: hosts the rules bind
    routing: Literal["istio", "inference-gateway"] = "istio"
    # Inference Gateway: the region's proxy-only subnet, where the load balancer's requests
    # come from (NetworkPolicies must let them in).
    gateway_cidrs: list[str] = Field(default_factory=list)
    standby_share: int = 5  # percent of a model's traffic a hot standby takes
    # Egress beyond DNS and the tenant's own pods: HTTPS to these ranges only. Weights from
    # outside Google (the Hugging Face Hub, a mirror) need their ranges declared here;
    # Cloud Storage answers from `google_api_cidrs`.
    weight_sources: list[str] = Field(default_factory=list)
    google_api_cidrs: list[str] = Field(default_factory=lambda: list(GOOGLE_API_CIDRS))

    @field_validator("tier", mode="before")
    @classmethod
    def _named_tier(cls, value: Any) -> Any:
        return {"name": value} if isinstance(value, str) else value

    @model_validator(mode="before")
    @classmethod
    def _default_namespace(cls, data: Any) -> Any:
        if isinstance(data, dict) and not data.get("namespace") and "name" in data:
            return {**data, "namespace": data["name"]}
        return data

    @model_validator(mode="after")
    def _check(self) -> Tenant:
        if not DNS1123_LABEL.match(self.name) or len(self.name) > 40:
            raise fail(
                f"tenant name {self.name!r}",
                rule="the name labels objects and names the ClusterQueue: lower-case letters, "
                "digits and '-', at most 40",
                fix="name='tenant-a'",
                field="name",
            )
        if not DNS1123_LABEL.match(self.namespace) or len(self.namespace) > 63:
            raise fail(
                f"namespace {self.namespace!r}",
                rule="namespace names are DNS labels",
                fix=f"namespace={self.name!r}",
                field="namespace",
            )
        ns, _, gw = self.gateway.rpartition("/")
        if not (ns and DNS1123_LABEL.match(ns) and DNS1123_SUBDOMAIN.match(gw)):
            raise fail(
                f"gateway={self.gateway!r}",
                rule="an Istio VirtualService in another namespace names its gateway "
                "namespace/name",
                fix="gateway='serving/llm-gateway'",
                field="gateway",
            )
        if not 1 <= self.standby_share <= MAX_STANDBY_SHARE:
            raise fail(
                f"standby_share={self.standby_share}",
                rule=f"a hot standby takes a small share (1-{MAX_STANDBY_SHARE} %) to stay proven",
                fix="standby_share=5",
                field="standby_share",
            )
        checks.check_routing(self)
        checks.check_egress(self)
        checks.check_models(self)
        return self

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

    def node_pools(self) -> list[NodePool]:
        """The node pools the tenant's pods run on: its own, labelled and tainted with its
        name, for an exclusive tier (never Spot); shared ones otherwise (`tenancy.nodes`).

        Example:
            >>> from gkeml_sdk import load_specs
            >>> (pool,) = load_specs("examples/tenants.yaml")[0].node_pools()
            >>> pool.name, pool.labels, pool.spot
            ('tenant-a-nvidia-l4', {'gkeml.dev/dedicated-to': 'tenant-a'}, False)
        """
        from gkeml_sdk.tenancy.nodes import node_pools

        return node_pools(self)

    def compile(self) -> Manifests:
        """The tenant's Kubernetes objects (`gkeml_sdk.tenancy.manifests`)."""
        from gkeml_sdk.tenancy.manifests import compile_tenant

        return compile_tenant(self)

    def __repr__(self) -> str:
        models = ", ".join(m.name for m in self.models)
        return f"Tenant({self.name!r}, tier={self.tier.name!r}, models=[{models}])"

    __str__ = __repr__
