"""A tenant's Istio routing: one VirtualService matching `x-tenant-id` and `x-model-name`,
each model split between its primary and its standby Service with retries, and a
DestinationRule per Service whose outlier detection ejects failing pods (istio.io:
"Virtual Service", "Destination Rule")."""

from __future__ import annotations

import copy
from collections.abc import Collection

from gkeml_sdk.catalog.engine_row import SERVICE_PORT
from gkeml_sdk.compile.serving.routing import ISTIO_API, ISTIO_MODEL_HEADER, RETRY_ON, service_host
from gkeml_sdk.compile.tenancy import names
from gkeml_sdk.compile.tenancy.names import Obj
from gkeml_sdk.spec.serving.model import slug
from gkeml_sdk.spec.tenancy.tenant import Tenant, TenantModel

TENANT_HEADER = "x-tenant-id"
RETRY_ATTEMPTS = 3
PER_TRY_TIMEOUT = "5s"


def standby_destination_rule(primary_rule: Obj, model: TenantModel) -> Obj:
    """The primary's DestinationRule, for the standby Service."""
    rule = copy.deepcopy(primary_rule)
    standby = names.standby_name(model.name)
    rule["metadata"]["name"] = standby
    rule["spec"]["host"] = service_host(standby, rule["metadata"]["namespace"])
    return rule


def weights(tenant: Tenant, failed_over: bool) -> tuple[int, int]:
    """(primary, standby) percentages of a model's traffic. Hot standbys take a small share
    to stay warm and proven; sleeping or absent ones none; after a failover the standby all.

    Example:
        >>> from gkeml_sdk import load_specs
        >>> a, b, c = load_specs("examples/tenants.yaml")
        >>> weights(a, False), weights(b, False), weights(c, True)
        ((95, 5), (100, 0), (0, 100))
    """
    if failed_over:
        return 0, 100
    share = tenant.standby_share if tenant.tier.standby_level == "hot" else 0
    return 100 - share, share


def virtual_service(tenant: Tenant, failed_over: Collection[str] = ()) -> Obj:
    """The tenant's VirtualService; models named in `failed_over` route to their standby.

    Example:
        >>> from gkeml_sdk import load_specs
        >>> vs = virtual_service(load_specs("examples/tenants.yaml")[0])
        >>> rule = vs["spec"]["http"][0]
        >>> [r["weight"] for r in rule["route"]], rule["retries"]["attempts"]
        ([95, 5], 3)
    """
    http = [_model_rule(tenant, m, m.name in failed_over) for m in tenant.models]
    http.append(_tenant_default(tenant))
    return {
        "apiVersion": ISTIO_API,
        "kind": "VirtualService",
        "metadata": names.metadata(tenant, names.router_name(tenant)),
        "spec": {"hosts": list(tenant.hosts), "gateways": [tenant.gateway], "http": http},
    }


def _destination(tenant: Tenant, service: str, weight: int) -> Obj:
    host = service_host(service, tenant.namespace)
    return {"destination": {"host": host, "port": {"number": SERVICE_PORT}}, "weight": weight}


def _retries() -> Obj:
    return {"attempts": RETRY_ATTEMPTS, "perTryTimeout": PER_TRY_TIMEOUT, "retryOn": RETRY_ON}


def _model_rule(tenant: Tenant, model: TenantModel, failed_over: bool) -> Obj:
    primary, standby = weights(tenant, failed_over)
    headers = {
        TENANT_HEADER: {"exact": tenant.name},
        ISTIO_MODEL_HEADER: {"exact": model.model.model_name},
    }
    return {
        "name": slug(model.name),
        "match": [{"headers": headers}],
        "route": [
            _destination(tenant, model.name, primary),
            _destination(tenant, names.standby_name(model.name), standby),
        ],
        "retries": _retries(),
    }


def _tenant_default(tenant: Tenant) -> Obj:
    # A request naming no model goes to the tenant's models by weight (their primaries).
    total = sum(m.weight for m in tenant.models)
    shares = [m.weight * 100 // total for m in tenant.models]
    shares[0] += 100 - sum(shares)  # Istio wants weights adding up to 100
    return {
        "name": f"{tenant.name}-by-weight",
        "match": [{"headers": {TENANT_HEADER: {"exact": tenant.name}}}],
        "route": [
            _destination(tenant, m.name, share)
            for m, share in zip(tenant.models, shares, strict=True)
        ],
        "retries": _retries(),
    }
