"""The run controller as the public API offers it: started from cluster settings, and its
install objects as `Manifests` (see docs/controller.md)."""

from __future__ import annotations

from collections.abc import Sequence

from gkeml_sdk.backends.kubernetes.api.config import KubernetesSettings
from gkeml_sdk.backends.kubernetes.backend import KubernetesBackend
from gkeml_sdk.backends.kubernetes.controller.install import controller_objects
from gkeml_sdk.backends.kubernetes.controller.process import RunController
from gkeml_sdk.core.manifests import Manifests
from gkeml_sdk.tenancy.fields import TenantFields


def run_controller(
    namespaces: Sequence[str],
    *,
    settings: KubernetesSettings | None = None,
    identity: str | None = None,
    interval: float = 2.0,
    resync: float = 60.0,
    rollouts: bool = True,
) -> RunController:
    """A run controller for `namespaces`: `run()` follows their runs on watch streams (with a
    full pass every `resync` seconds) until stopped, acting only while it holds the Lease
    `gkeml-run-controller` in `settings.controller_namespace` (renewed every `interval`
    seconds). With `rollouts` it also drives the serving rollouts of those namespaces (its
    installed Role `gkeml-rollouts` allows it).

    Example:
        >>> from gkeml_sdk import KubernetesSettings, run_controller
        >>> controller = run_controller(["ml"], settings=KubernetesSettings())  # doctest: +SKIP
        >>> controller.reconcile_once()  # doctest: +SKIP
        {'ml': True}
    """
    settings = settings or KubernetesSettings()
    return RunController(
        KubernetesBackend(settings),
        namespaces,
        identity=identity,
        controller_namespace=settings.controller_namespace,
        interval=interval,
        resync=resync,
        rollouts=rollouts,
    )


def controller_manifests(
    namespaces: Sequence[str],
    *,
    image: str,
    controller_namespace: str = "gkeml-system",
    tenants: Sequence[TenantFields] = (),
    tenants_yaml: str | None = None,
    replicas: int = 2,
    rollouts: bool = True,
) -> Manifests:
    """What `gkeml controller install` applies: namespace, ServiceAccount, least-privilege
    Roles and RoleBindings and the Deployment of `image` (the one you built from the
    repository's Dockerfile and pushed: none is published). With the tenants' file
    (`tenants_yaml`, and its `tenants` as `load_specs` reads them) also the standby manager's
    Roles in the tenants' namespaces; with `rollouts` the Role for the serving rollouts it
    drives. `SpecError` without an image or with `replicas` outside 1..10.

    Example:
        >>> from gkeml_sdk import controller_manifests
        >>> objects = controller_manifests(["ml"], image="registry.example/gkeml:1").objects
        >>> [o["kind"] for o in objects][-3:]
        ['Role', 'RoleBinding', 'Deployment']
    """
    return Manifests(
        controller_objects(
            list(namespaces),
            image=image,
            controller_namespace=controller_namespace,
            tenants=tenants,
            tenants_yaml=tenants_yaml,
            replicas=replicas,
            rollouts=rollouts,
        )
    )


def install_controller(
    manifests: Manifests, *, settings: KubernetesSettings | None = None
) -> list[str]:
    """Server-side apply `controller_manifests(...)` in order; the objects applied, as
    "Kind namespace/name".

    Example:
        >>> from gkeml_sdk import controller_manifests, install_controller
        >>> install_controller(controller_manifests(["ml"], image="r/c:1"))[:1]  # doctest: +SKIP
        ['Namespace gkeml-system']
    """
    kube = KubernetesBackend(settings).kube
    applied = []
    for obj in manifests.objects:
        kube.apply(obj)
        meta = obj["metadata"]
        where = f"{meta['namespace']}/" if "namespace" in meta else ""
        applied.append(f"{obj['kind']} {where}{meta['name']}")
    return applied
