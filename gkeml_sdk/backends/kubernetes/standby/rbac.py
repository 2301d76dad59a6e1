"""What the standby manager may do, and nothing more: a Role in each tenant's namespace
(`standby_manager_rules`) and one for its Lease in the Lease's namespace, never a ClusterRole.
Writes are narrowed to the verbs the manager sends (`standby.fenced`) and, where Kubernetes
allows it, to the names of the objects the tenant's compiled objects say it owns; a create
and a list or watch cannot be narrowed by name (RBAC: "resourceNames ... cannot restrict
create", and a list names no object)."""

from __future__ import annotations

from collections.abc import Sequence

from gkeml_sdk.core import kinds
from gkeml_sdk.core.objects import Obj
from gkeml_sdk.tenancy import names
from gkeml_sdk.tenancy.fields import TenantFields

LEASE_NAME = "gkeml-standby-manager"  # the manager's Lease
ROLE = "gkeml-standby-manager"
LEASE_ROLE = "gkeml-standby-manager-lease"  # another name: the Lease may share a tenant's namespace
_RBAC_GROUP = kinds.RBAC.split("/")[0]
_LEASES = {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"]}

# A Role in the Lease's namespace: leader election and the fence before each write.
STANDBY_LEASE_RULES: tuple[dict[str, list[str]], ...] = (
    {**_LEASES, "verbs": ["create"]},
    {**_LEASES, "resourceNames": [LEASE_NAME], "verbs": ["get", "update"]},
)


def standby_manager_rules(tenant: TenantFields) -> list[dict[str, list[str]]]:
    """The Role's rules in `tenant`'s namespace.

    Example:
        >>> from gkeml_sdk import load_specs
        >>> rules = standby_manager_rules(load_specs("examples/tenants.yaml")[0])
        >>> [r.get("resourceNames") for r in rules if r["resources"] == ["virtualservices"]]
        [None, ['tenant-a-models']]
    """
    owned = sorted(
        name
        for m in tenant.models
        for name in (names.standby_name(m.name), names.reserve_name(m.name))
    )
    if tenant.routing == "istio":
        route = {
            "apiGroups": [kinds.ISTIO_NETWORKING.split("/")[0]],
            "resources": ["virtualservices"],
        }
    else:
        route = {"apiGroups": [kinds.GATEWAY.split("/")[0]], "resources": ["httproutes"]}
    return [
        # The watch caches of the tenant's pods (whether a warm standby sleeps is asked of its
        # engine, never written on the pod).
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]},
        # Sleep and wake a warm standby's engine through the API server's pod proxy (POST),
        # and ask it whether it sleeps (vLLM's GET /is_sleeping).
        {"apiGroups": [""], "resources": ["pods/proxy"], "verbs": ["create", "get"]},
        # The watch cache of the tenant's Deployments.
        {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["list", "watch"]},
        # A standby or placeholder Deployment deleted by hand is created again.
        {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["create"]},
        # Standby counts: only the standby and placeholder Deployments, by name.
        {
            "apiGroups": ["apps"],
            "resources": ["deployments"],
            "resourceNames": owned,
            "verbs": ["get", "patch"],
        },
        # The tenant's route: created when missing, read under the Lease and written with
        # that resourceVersion.
        {**route, "verbs": ["create"]},
        {**route, "resourceNames": [names.router_name(tenant)], "verbs": ["get", "update"]},
        # The tenant's status ConfigMap, and only it.
        {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["create"]},
        {
            "apiGroups": [""],
            "resources": ["configmaps"],
            "resourceNames": [names.STATUS_CONFIGMAP],
            "verbs": ["get", "update"],
        },
        # PrimaryLost / FailedOver / FailedBack on the model's Deployment.
        {"apiGroups": [""], "resources": ["events"], "verbs": ["create"]},
    ]


def standby_manager_roles(
    tenants: Sequence[TenantFields], lease_namespace: str
) -> list[tuple[str, str, list[dict[str, list[str]]]]]:
    """(name, namespace, rules) of each Role the manager needs: the Lease's, then each
    tenant's."""
    roles = [(LEASE_ROLE, lease_namespace, [dict(r) for r in STANDBY_LEASE_RULES])]
    return roles + [(ROLE, t.namespace, standby_manager_rules(t)) for t in tenants]


def standby_manager_rbac(
    tenants: Sequence[TenantFields], lease_namespace: str, service_account: str
) -> list[Obj]:
    """ServiceAccount, Roles and RoleBindings of a manager running alone (`gkeml controller
    install --tenants` binds the same Roles to the controller's account).

    Example:
        >>> from gkeml_sdk import load_specs
        >>> objects = standby_manager_rbac(load_specs("examples/tenants.yaml"), "gkeml-system", "m")
        >>> [o["kind"] for o in objects][:3], objects[-1]["metadata"]["namespace"]
        (['ServiceAccount', 'Role', 'RoleBinding'], 'tenant-c')
    """
    account = {
        "apiVersion": kinds.CORE,
        "kind": "ServiceAccount",
        "metadata": {"name": service_account, "namespace": lease_namespace},
    }
    objects: list[Obj] = [account]
    for name, namespace, rules in standby_manager_roles(tenants, lease_namespace):
        objects += role_and_binding(name, namespace, rules, service_account, lease_namespace)
    return objects


def role_and_binding(
    name: str,
    namespace: str,
    rules: Sequence[dict[str, list[str]]],
    account: str,
    account_namespace: str,
) -> list[Obj]:
    """A Role of `rules` in `namespace` and its RoleBinding to a ServiceAccount."""
    role = {
        "apiVersion": kinds.RBAC,
        "kind": "Role",
        "metadata": {"name": name, "namespace": namespace},
        "rules": [dict(r) for r in rules],
    }
    subject = {"kind": "ServiceAccount", "name": account, "namespace": account_namespace}
    binding = {
        "apiVersion": kinds.RBAC,
        "kind": "RoleBinding",
        "metadata": {"name": name, "namespace": namespace},
        "subjects": [subject],
        "roleRef": {"apiGroup": _RBAC_GROUP, "kind": "Role", "name": name},
    }
    return [role, binding]
