"""The objects of an in-cluster run controller (`gkeml controller install`): its namespace,
ServiceAccount, least-privilege Roles and RoleBindings (each managed namespace; its own
namespace for its Lease and for everyone's read of that Lease; with tenants, the standby
manager's in each tenant's namespace), never a ClusterRole, and a Deployment of the image the
user built and pushed, of which one replica leads."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gkeml_sdk.backends.kubernetes.controller.permissions import (
    LEASE_READER_RULES,
    ROLLOUT_RULES,
    RUN_CONTROLLER_LEASE_RULES,
    RUN_CONTROLLER_RULES,
)
from gkeml_sdk.backends.kubernetes.standby.rbac import role_and_binding, standby_manager_roles
from gkeml_sdk.core import kinds
from gkeml_sdk.core.labels import sdk_labels
from gkeml_sdk.errors import SpecError
from gkeml_sdk.tenancy.fields import TenantFields
from gkeml_sdk.version import __version__

NAME = "gkeml-controller"
RUN_ROLE = "gkeml-run-controller"
LEASE_ROLE = "gkeml-run-controller-lease"
LEASE_READER = "gkeml-run-controller-lease-reader"
ROLLOUT_ROLE = "gkeml-rollouts"
TENANTS_PATH = "/etc/gkeml/tenants.yaml"
ENTRYPOINT = ["gkeml", "controller", "run"]  # the Dockerfile's, so the Deployment sets args
MAX_REPLICAS = 10  # one leads; the others only wait for its Lease
BUILD_STEPS = (
    "build the image from the repository's Dockerfile and push it where the cluster pulls "
    f"from: `docker build -t REGISTRY/gkeml-controller:{__version__} .` then `docker push "
    f"REGISTRY/gkeml-controller:{__version__}`, then pass --image REGISTRY/gkeml-controller:"
    f'{__version__} (docs/controller.md, "Install")'
)
Obj = dict[str, Any]


def controller_objects(
    namespaces: list[str],
    *,
    image: str,
    controller_namespace: str = "gkeml-system",
    tenants: Sequence[TenantFields] = (),
    tenants_yaml: str | None = None,
    replicas: int = 2,
    rollouts: bool = True,
) -> list[Obj]:
    """Everything `gkeml controller install` applies, in apply order. With `tenants_yaml`
    (the file the Deployment mounts) `tenants` are its Tenants: the standby manager's Roles
    name their namespaces and objects. With `rollouts` (the default) the controller drives
    the serving rollouts of its namespaces too, with a Role there for the objects it moves.

    Example:
        >>> [o["kind"] for o in controller_objects(["ml"], image="r/c:1")][:4]
        ['Namespace', 'ServiceAccount', 'Role', 'RoleBinding']
    """
    check_install(image, replicas, tenants, tenants_yaml)
    objects: list[Obj] = [
        {"apiVersion": kinds.CORE, "kind": "Namespace", "metadata": _meta(controller_namespace)},
        {
            "apiVersion": kinds.CORE,
            "kind": "ServiceAccount",
            "metadata": _meta(NAME, controller_namespace),
        },
    ]
    account = (NAME, controller_namespace)
    objects += _labelled(
        role_and_binding(LEASE_ROLE, controller_namespace, RUN_CONTROLLER_LEASE_RULES, *account)
    )
    reader = role_and_binding(LEASE_READER, controller_namespace, LEASE_READER_RULES, *account)
    # Every authenticated user (clients check whether a controller acts), not only ours.
    reader[1]["subjects"] = [
        {"apiGroup": kinds.RBAC.split("/")[0], "kind": "Group", "name": "system:authenticated"}
    ]
    objects += _labelled(reader)
    for namespace in dict.fromkeys(namespaces):
        objects += _labelled(role_and_binding(RUN_ROLE, namespace, RUN_CONTROLLER_RULES, *account))
        if rollouts:
            objects += _labelled(role_and_binding(ROLLOUT_ROLE, namespace, ROLLOUT_RULES, *account))
    if tenants_yaml is not None:
        for name, namespace, rules in standby_manager_roles(tenants, controller_namespace):
            objects += _labelled(role_and_binding(name, namespace, rules, *account))
        objects.append(
            {
                "apiVersion": kinds.CORE,
                "kind": "ConfigMap",
                "metadata": _meta(f"{NAME}-tenants", controller_namespace),
                "data": {"tenants.yaml": tenants_yaml},
            }
        )
    objects.append(
        _deployment(namespaces, controller_namespace, image, tenants_yaml, replicas, rollouts)
    )
    return objects


def check_install(
    image: str, replicas: int, tenants: Sequence[TenantFields], tenants_yaml: str | None
) -> None:
    """`SpecError` for an install nobody could run: no image, a replica count out of range,
    a tenants file without its tenants.

    Example:
        >>> check_install("", 2, (), None)
        Traceback (most recent call last):
        ...
        gkeml_sdk.errors.SpecError: --image is required: no controller image is published ...
    """
    if not image.strip():
        raise SpecError(
            "--image is required: no controller image is published for you to pull, so the "
            "Deployment must run one you built",
            fix=BUILD_STEPS,
        )
    if not 1 <= replicas <= MAX_REPLICAS:
        raise SpecError(
            f"--replicas {replicas}",
            rule=f"between 1 and {MAX_REPLICAS}: one replica leads and the others wait to take "
            "its Lease, so more only add pods (2 survive the loss of one)",
            fix="--replicas 2",
        )
    if tenants_yaml is not None and not tenants:
        raise SpecError(
            "a tenants file without its tenants",
            rule="the standby manager's Roles name the tenants' namespaces and objects",
            fix="pass tenants=load_specs(FILE) with tenants_yaml=Path(FILE).read_text()",
        )


def controller_args(
    namespaces: list[str], controller_namespace: str, tenants: bool, rollouts: bool = True
) -> list[str]:
    """The container's arguments, after the image's entrypoint (the Dockerfile's).

    Example:
        >>> ENTRYPOINT + controller_args(["ml"], "gkeml-system", False, rollouts=False)
        ['gkeml', 'controller', 'run', '--namespace', 'ml', '--no-rollouts']
    """
    command: list[str] = []
    for namespace in dict.fromkeys(namespaces):
        command += ["--namespace", namespace]
    if tenants:
        command += ["--tenants", TENANTS_PATH, "--lease-namespace", controller_namespace]
    if not rollouts:
        command.append("--no-rollouts")
    return command


def _deployment(
    namespaces: list[str],
    namespace: str,
    image: str,
    tenants_yaml: str | None,
    replicas: int,
    rollouts: bool,
) -> Obj:
    labels = {"app.kubernetes.io/name": NAME}
    container: Obj = {
        "name": "controller",
        "image": image,
        "args": controller_args(namespaces, namespace, tenants_yaml is not None, rollouts),
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


def _labelled(objects: list[Obj]) -> list[Obj]:
    for obj in objects:
        obj["metadata"]["labels"] = _meta("")["labels"]
    return objects


def _meta(name: str, namespace: str | None = None) -> Obj:
    meta: Obj = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    meta["labels"] = {"app.kubernetes.io/name": NAME, **sdk_labels()}
    return meta
