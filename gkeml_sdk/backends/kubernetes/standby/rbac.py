"""What the standby manager may do, and nothing more: the PolicyRules of its ClusterRole
(`gkeml controller install` binds them to the controller's ServiceAccount). Cluster-wide
because tenants live in namespaces of their own; writes are narrowed to the verbs the manager
sends (`standby.fenced`) and, where Kubernetes allows it, to the object names it owns. A
create cannot be narrowed by name (RBAC: "resourceNames ... cannot restrict create")."""

from __future__ import annotations

from gkeml_sdk.core import kinds
from gkeml_sdk.core.objects import Obj
from gkeml_sdk.tenancy.names import STATUS_CONFIGMAP

LEASE_NAME = "gkeml-standby-manager"  # the manager's Lease
_ISTIO = kinds.ISTIO_NETWORKING.split("/")[0]
_GATEWAY = kinds.GATEWAY.split("/")[0]

STANDBY_MANAGER_RULES: tuple[dict[str, list[str]], ...] = (
    # The watch caches (cluster-wide list + watch); get and patch after a conflict, and the
    # warm standbys' "asleep" annotation.
    {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch", "patch"]},
    # Sleep and wake a warm standby's engine through the API server's pod proxy.
    {"apiGroups": [""], "resources": ["pods/proxy"], "verbs": ["create"]},
    # Standby counts; a standby or placeholder Deployment deleted by hand is created again.
    {
        "apiGroups": ["apps"],
        "resources": ["deployments"],
        "verbs": ["get", "list", "watch", "create", "patch"],
    },
    # The tenant's route: read under the Lease, written with that resourceVersion.
    {"apiGroups": [_ISTIO], "resources": ["virtualservices"], "verbs": ["get", "create", "update"]},
    {"apiGroups": [_GATEWAY], "resources": ["httproutes"], "verbs": ["get", "create", "update"]},
    # The tenant's status ConfigMap, and only it.
    {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["create"]},
    {
        "apiGroups": [""],
        "resources": ["configmaps"],
        "resourceNames": [STATUS_CONFIGMAP],
        "verbs": ["get", "update"],
    },
    # PrimaryLost / FailedOver / FailedBack on the model's Deployment.
    {"apiGroups": [""], "resources": ["events"], "verbs": ["create"]},
    # Leader election and the fence before each write.
    {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["create"]},
    {
        "apiGroups": ["coordination.k8s.io"],
        "resources": ["leases"],
        "resourceNames": [LEASE_NAME],
        "verbs": ["get", "update"],
    },
)


def standby_manager_rbac(
    namespace: str, service_account: str, rules: tuple[dict[str, list[str]], ...] | None = None
) -> list[Obj]:
    """ServiceAccount, ClusterRole and ClusterRoleBinding of a manager running alone (the
    controller's install binds the same rules to its own account).

    Example:
        >>> [o["kind"] for o in standby_manager_rbac("gkeml-system", "gkeml-controller")]
        ['ServiceAccount', 'ClusterRole', 'ClusterRoleBinding']
    """
    name = f"{LEASE_NAME}-{namespace}"
    account = {
        "apiVersion": kinds.CORE,
        "kind": "ServiceAccount",
        "metadata": {"name": service_account, "namespace": namespace},
    }
    role = {
        "apiVersion": kinds.RBAC,
        "kind": "ClusterRole",
        "metadata": {"name": name},
        "rules": [dict(r) for r in (STANDBY_MANAGER_RULES if rules is None else rules)],
    }
    binding = {
        "apiVersion": kinds.RBAC,
        "kind": "ClusterRoleBinding",
        "metadata": {"name": name},
        "subjects": [{"kind": "ServiceAccount", "name": service_account, "namespace": namespace}],
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
    }
    return [account, role, binding]
