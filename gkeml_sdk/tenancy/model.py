"""`Tenant`: who is served, on which tier, within which GPU quota, and which models
(`TenantModel`, defined with the tenant's fields in `tenancy.fields`), checked at construction
and compiled to its Kubernetes objects."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import model_validator

from gkeml_sdk.core.model import DNS1123_LABEL, DNS1123_SUBDOMAIN, fail
from gkeml_sdk.tenancy import rules as checks
from gkeml_sdk.tenancy.fields import TenantFields
from gkeml_sdk.tenancy.fields import TenantModel as TenantModel

if TYPE_CHECKING:
    from gkeml_sdk.core.manifests import Manifests
    from gkeml_sdk.nodepools.model import NodePool

MAX_STANDBY_SHARE = 50


class Tenant(TenantFields):
    """A tenant: its namespace, tier, GPU quota and models.

    Example:
        >>> from gkeml_sdk import Accelerator, ServeModel
        >>> llama = ServeModel(name="llama-2-7b", model="llama-2-7b",
        ...                    accelerator=Accelerator("l4"), hf_token_secret="hf")
        >>> t = Tenant(name="tenant-a", tier="A", gpu_quota=12,
        ...            models=[TenantModel(model=llama, weight=100, min_replicas=3,
        ...                                max_replicas=10)], weight_sources=["10.0.0.0/24"])
        >>> t.tier.standbys, t.tier.rto_seconds, t.reserved_gpus
        (2, 5.0, 5)
    """

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
        checks.check_namespace(self)
        checks.check_routing(self)
        checks.check_models(self)
        checks.check_egress(self)
        return self

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
