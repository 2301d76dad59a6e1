"""A tenant's routing, matching `x-tenant-id` and `x-model-name` and splitting each model
between its primary and its standby: with Istio one VirtualService (with retries) and a
DestinationRule per Service whose outlier detection ejects failing pods (istio.io:
"Virtual Service", "Destination Rule"); with the GKE Inference Gateway one HTTPRoute over an
InferencePool per primary and per standby (gateway-api.sigs.k8s.io: "HTTPRoute";
gateway-api-inference-extension.sigs.k8s.io: "InferencePool")."""

from __future__ import annotations

import copy
from collections.abc import Collection
from typing import TYPE_CHECKING

from gkeml_sdk.core.objects import Obj
from gkeml_sdk.core.rules import slug
from gkeml_sdk.serving.catalog import SERVE_LABEL, SERVICE_PORT
from gkeml_sdk.serving.traffic import (
    GATEWAY_API,
    ISTIO_API,
    ISTIO_MODEL_HEADER,
    POOL_GROUP,
    RETRY_ON,
    service_host,
)
from gkeml_sdk.tenancy import names

if TYPE_CHECKING:
    from gkeml_sdk.tenancy.fields import TenantFields, TenantModel

TENANT_HEADER = "x-tenant-id"
RETRY_ATTEMPTS = 3
PER_TRY_TIMEOUT = "5s"


def standby_backends(primary: list[Obj], model: TenantModel) -> list[Obj]:
    """The primary's routing targets (DestinationRule, or InferencePool and its GKE
    policies) for the standby Service and pods."""
    standby = names.standby_name(model.name)
    copies = []
    for obj in primary:
        kind = obj["kind"]
        if kind not in (
            "DestinationRule",
            "InferencePool",
            "HealthCheckPolicy",
            "GCPBackendPolicy",
        ):
            continue
        copy_ = copy.deepcopy(obj)
        copy_["metadata"]["name"] = standby
        copy_["metadata"]["labels"][SERVE_LABEL] = standby
        spec = copy_["spec"]
        if kind == "DestinationRule":
            spec["host"] = service_host(standby, copy_["metadata"]["namespace"])
        elif kind == "InferencePool":
            spec["selector"]["matchLabels"][SERVE_LABEL] = standby
            spec["endpointPickerRef"]["name"] = f"{standby}-epp"  # each pool has its picker
        else:
            spec["targetRef"]["name"] = standby
        copies.append(copy_)
    return copies


def router(tenant: TenantFields, failed_over: Collection[str] = ()) -> Obj:
    """The tenant's VirtualService or HTTPRoute; models in `failed_over` go to standbys.

    Example:
        >>> from gkeml_sdk import load_specs
        >>> router(load_specs("examples/tenants.yaml")[0])["kind"]
        'VirtualService'
    """
    if tenant.routing == "inference-gateway":
        return http_route(tenant, failed_over)
    return virtual_service(tenant, failed_over)


def weights(tenant: TenantFields, failed_over: bool) -> tuple[int, int]:
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


def virtual_service(tenant: TenantFields, failed_over: Collection[str] = ()) -> Obj:
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


def _destination(tenant: TenantFields, service: str, weight: int) -> Obj:
    host = service_host(service, tenant.namespace)
    return {"destination": {"host": host, "port": {"number": SERVICE_PORT}}, "weight": weight}


def _retries() -> Obj:
    return {"attempts": RETRY_ATTEMPTS, "perTryTimeout": PER_TRY_TIMEOUT, "retryOn": RETRY_ON}


def _model_rule(tenant: TenantFields, model: TenantModel, failed_over: bool) -> Obj:
    primary, standby = weights(tenant, failed_over)
    headers = {
        TENANT_HEADER: {"exact": tenant.name},
        ISTIO_MODEL_HEADER: {"exact": model.model.model_name},
    }
    return {
        "name": slug(model.name, empty="model"),
        "match": [{"headers": headers}],
        "route": [
            _destination(tenant, model.name, primary),
            _destination(tenant, names.standby_name(model.name), standby),
        ],
        "retries": _retries(),
    }


def _tenant_default(tenant: TenantFields) -> Obj:
    # A request naming no model goes to the tenant's models by weight (their primaries).
    shares = _shares(tenant)
    return {
        "name": f"{tenant.name}-by-weight",
        "match": [{"headers": {TENANT_HEADER: {"exact": tenant.name}}}],
        "route": [
            _destination(tenant, m.name, share)
            for m, share in zip(tenant.models, shares, strict=True)
        ],
        "retries": _retries(),
    }


def http_route(tenant: TenantFields, failed_over: Collection[str] = ()) -> Obj:
    """The tenant's HTTPRoute on the Inference Gateway. Gateway API's standard channel has
    no retries; the GCPBackendPolicy of each pool sets the backend timeout."""
    namespace, _, gateway = tenant.gateway.rpartition("/")
    rules = []
    for model in tenant.models:
        primary, standby = weights(tenant, model.name in failed_over)
        headers = [
            {"type": "Exact", "name": TENANT_HEADER, "value": tenant.name},
            {"type": "Exact", "name": ISTIO_MODEL_HEADER, "value": model.model.model_name},
        ]
        rules.append(
            {
                "name": slug(model.name, empty="model"),
                "matches": [{"path": {"type": "PathPrefix", "value": "/"}, "headers": headers}],
                "backendRefs": [
                    _pool(model.name, primary),
                    _pool(names.standby_name(model.name), standby),
                ],
            }
        )
    tenant_only = [{"type": "Exact", "name": TENANT_HEADER, "value": tenant.name}]
    rules.append(
        {
            "name": f"{tenant.name}-by-weight",
            "matches": [{"path": {"type": "PathPrefix", "value": "/"}, "headers": tenant_only}],
            "backendRefs": [
                _pool(m.name, share)
                for m, share in zip(tenant.models, _shares(tenant), strict=True)
            ],
        }
    )
    return {
        "apiVersion": GATEWAY_API,
        "kind": "HTTPRoute",
        "metadata": names.metadata(tenant, names.router_name(tenant)),
        "spec": {"parentRefs": [{"name": gateway, "namespace": namespace}], "rules": rules},
    }


def _pool(name: str, weight: int) -> Obj:
    return {"group": POOL_GROUP, "kind": "InferencePool", "name": name, "weight": weight}


def _shares(tenant: TenantFields) -> list[int]:
    total = sum(m.weight for m in tenant.models)
    shares = [m.weight * 100 // total for m in tenant.models]
    shares[0] += 100 - sum(shares)  # Istio wants weights adding up to 100
    return shares
