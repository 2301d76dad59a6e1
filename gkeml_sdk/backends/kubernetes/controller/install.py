"""The objects of an in-cluster run controller (`gkeml controller install`): its namespace,
ServiceAccount, a least-privilege Role and RoleBinding in each namespace it manages, a
ClusterRole for what is cluster-scoped (shared volumes; the standby manager when tenants are
managed), the Leases, and a Deployment of two replicas of which one leads."""

from __future__ import annotations

from typing import Any

from gkeml_sdk.backends.kubernetes.controller.liveness import LEASE_NAME
from gkeml_sdk.backends.kubernetes.controller.permissions import (
    RUN_CONTROLLER_CLUSTER_RULES,
    RUN_CONTROLLER_RULES,
)
from gkeml_sdk.backends.kubernetes.standby.rbac import STANDBY_MANAGER_RULES
from gkeml_sdk.core import kinds
from gkeml_sdk.core.labels import sdk_labels
from gkeml_sdk.version import __version__

NAME = "gkeml-controller"
TENANTS_PATH = "/etc/gkeml/tenants.yaml"
DEFAULT_IMAGE = f"ghcr.io/gkeml/controller:{__version__}"
ENTRYPOINT = ["gkeml", "controller", "run"]  # the Dockerfile's, so the Deployment sets args
Obj = dict[str, Any]


def controller_objects(
    namespaces: list[str],
    *,
    controller_namespace: str = "gkeml-system",
    image: str = DEFAULT_IMAGE,
    tenants_yaml: str | None = None,
    replicas: int = 2,
) -> list[Obj]:
    """Everything `gkeml controller install` applies, in apply order.

    Example:
        >>> [o["kind"] for o in controller_objects(["ml"])][:4]
        ['Namespace', 'ServiceAccount', 'ClusterRole', 'ClusterRoleBinding']
    """
    cluster_rules = list(RUN_CONTROLLER_CLUSTER_RULES)
    if tenants_yaml is not None:
        cluster_rules += [dict(rule) for rule in STANDBY_MANAGER_RULES]
    objects: list[Obj] = [
        {"apiVersion": kinds.CORE, "kind": "Namespace", "metadata": _meta(controller_namespace)},
        {
            "apiVersion": kinds.CORE,
            "kind": "ServiceAccount",
            "metadata": _meta(NAME, controller_namespace),
        },
        {
            "apiVersion": kinds.RBAC,
            "kind": "ClusterRole",
            "metadata": _meta(NAME),
            "rules": cluster_rules,
        },
        _binding("ClusterRoleBinding", NAME, None, controller_namespace),
    ]
    for namespace in dict.fromkeys(namespaces):
        objects += [
            {
                "apiVersion": kinds.RBAC,
                "kind": "Role",
                "metadata": _meta(NAME, namespace),
                "rules": list(RUN_CONTROLLER_RULES),
            },
            _binding("RoleBinding", NAME, namespace, controller_namespace),
            # Created empty: the first replica to start takes it.
            {
                "apiVersion": kinds.COORDINATION,
                "kind": "Lease",
                "metadata": _meta(LEASE_NAME, namespace),
                "spec": {},
            },
        ]
    if tenants_yaml is not None:
        objects.append(
            {
                "apiVersion": kinds.CORE,
                "kind": "ConfigMap",
                "metadata": _meta(f"{NAME}-tenants", controller_namespace),
                "data": {"tenants.yaml": tenants_yaml},
            }
        )
    objects.append(_deployment(namespaces, controller_namespace, image, tenants_yaml, replicas))
    return objects


def controller_args(namespaces: list[str], controller_namespace: str, tenants: bool) -> list[str]:
    """The container's arguments, after the image's entrypoint (the Dockerfile's).

    Example:
        >>> ENTRYPOINT + controller_args(["ml"], "gkeml-system", False)
        ['gkeml', 'controller', 'run', '--namespace', 'ml']
    """
    command: list[str] = []
    for namespace in dict.fromkeys(namespaces):
        command += ["--namespace", namespace]
    if tenants:
        command += ["--tenants", TENANTS_PATH, "--lease-namespace", controller_namespace]
    return command


def _deployment(
    namespaces: list[str], namespace: str, image: str, tenants_yaml: str | None, replicas: int
) -> Obj:
    labels = {"app.kubernetes.io/name": NAME}
    container: Obj = {
        "name": "controller",
        "image": image,
        "args": controller_args(namespaces, namespace, tenants_yaml is not None),
        # The Pod's name is its identity in the Leases: unique, and readable in `kubectl get lease`.
        "env": [
            {
                "name": "GKEML_CONTROLLER_ID",
                "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}},
            }
        ],
        "resources": {
            "requests": {"cpu": "100m", "memory": "256Mi"},
            "limits": {"memory": "512Mi"},
        },
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "readOnlyRootFilesystem": True,
            "runAsNonRoot": True,
            "capabilities": {"drop": ["ALL"]},
        },
    }
    pod: Obj = {"serviceAccountName": NAME, "containers": [container]}
    if tenants_yaml is not None:
        container["volumeMounts"] = [
            {"name": "tenants", "mountPath": "/etc/gkeml", "readOnly": True}
        ]
        pod["volumes"] = [{"name": "tenants", "configMap": {"name": f"{NAME}-tenants"}}]
    return {
        "apiVersion": kinds.APPS,
        "kind": "Deployment",
        "metadata": _meta(NAME, namespace),
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": {**labels, **sdk_labels()}}, "spec": pod},
        },
    }


def _binding(kind: str, name: str, namespace: str | None, sa_namespace: str) -> Obj:
    role = "ClusterRole" if kind == "ClusterRoleBinding" else "Role"
    return {
        "apiVersion": kinds.RBAC,
        "kind": kind,
        "metadata": _meta(name, namespace),
        "roleRef": {"apiGroup": kinds.RBAC.split("/")[0], "kind": role, "name": name},
        "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": sa_namespace}],
    }


def _meta(name: str, namespace: str | None = None) -> Obj:
    meta: Obj = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    meta["labels"] = {"app.kubernetes.io/name": NAME, **sdk_labels()}
    return meta
