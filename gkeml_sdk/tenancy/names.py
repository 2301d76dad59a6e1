"""Names and labels every tenancy object and the standby manager agree on."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gkeml_sdk.core.labels import sdk_labels
from gkeml_sdk.core.objects import Obj
from gkeml_sdk.tenancy.tier import Tier

if TYPE_CHECKING:
    from gkeml_sdk.tenancy.fields import TenantFields

TENANT_LABEL = "gkeml.dev/tenant"
TIER_LABEL = "gkeml.dev/tier"
MODEL_LABEL = "gkeml.dev/tenant-model"  # the primary's and its standbys' pods alike
ROLE_LABEL = "gkeml.dev/serving-role"  # primary | standby | reserve
LEVEL_LABEL = "gkeml.dev/standby-level"
WORKLOAD_PRIORITY_LABEL = "kueue.x-k8s.io/priority-class"
COHORT = "gkeml-tenants"
RESERVE_CLASS = "gkeml-standby-reserve"
SERVICE_ACCOUNT = "tenant-serving"
STATUS_CONFIGMAP = "gkeml-tenant-status"


def tier_class(tier: Tier) -> str:
    """PriorityClass and WorkloadPriorityClass name of a tier: the tier and its value, and
    everything in those objects follows from the two, so tenants compiled apart can never
    define one name two ways (`Tier(name="a", like="C")` beside tier A is another class).

    Example:
        >>> tier_class(Tier(name="A")), tier_class(Tier(name="a", like="C"))
        ('gkeml-tier-a-100000', 'gkeml-tier-a-10')
    """
    return f"gkeml-tier-{tier.key}-{tier.priority}"


def standby_name(model: str) -> str:
    """Deployment and Service of a model's standbys.

    Example:
        >>> standby_name("llama-2-7b")
        'llama-2-7b-standby'
    """
    return f"{model}-standby"


def reserve_name(model: str) -> str:
    """Deployment of placeholder pods holding a cold standby's GPUs.

    Example:
        >>> reserve_name("qwen-7b")
        'qwen-7b-reserve'
    """
    return f"{model}-reserve"


def router_name(tenant: TenantFields) -> str:
    """The tenant's VirtualService (one per tenant, a rule per model)."""
    return f"{tenant.name}-models"


def tenant_labels(tenant: TenantFields) -> dict[str, str]:
    """Labels on every namespaced object of a tenant."""
    return {**sdk_labels(), TENANT_LABEL: tenant.name, TIER_LABEL: tenant.tier.key}


def metadata(tenant: TenantFields, name: str, **labels: str) -> Obj:
    """`metadata` of a namespaced tenant object."""
    return {
        "name": name,
        "namespace": tenant.namespace,
        "labels": {**tenant_labels(tenant), **labels},
    }
