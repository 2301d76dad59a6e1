"""Finding the cluster: an ApiClient given by the caller, a kubeconfig (file and context), or
the in-cluster service account. Never anything else, and never silently."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from gkeml_sdk.errors import ConfigError

NO_CLUSTER = (
    "no Kubernetes configuration found ({why}). Point gkeml at a GKE cluster with "
    "`gcloud container clusters get-credentials CLUSTER --location LOCATION` (or pass "
    "kubeconfig=/context=/api_client=), or run on this machine with Client(backend='local')"
)


def connect(
    *, kubeconfig: str | Path | None, context: str | None, api_client: Any
) -> tuple[Any, str]:
    """(ApiClient, default namespace) for the configuration the caller chose.

    Example:
        >>> connect(kubeconfig="/nonexistent", context=None, api_client=None)
        Traceback (most recent call last):
        ...
        gkeml_sdk.errors.ConfigError: no Kubernetes configuration found (/nonexistent ...
    """
    if api_client is not None:
        return api_client, "default"
    from kubernetes import client, config

    path = str(kubeconfig) if kubeconfig else os.environ.get("KUBECONFIG", "")
    path = path.split(os.pathsep)[0] if path else str(Path.home() / ".kube" / "config")
    if not Path(path).is_file():
        if kubeconfig is None and context is None and os.environ.get("KUBERNETES_SERVICE_HOST"):
            try:
                config.load_incluster_config()
            except config.ConfigException as exc:
                raise ConfigError(NO_CLUSTER.format(why=f"in-cluster: {exc}")) from None
            return client.ApiClient(), _incluster_namespace()
        raise ConfigError(NO_CLUSTER.format(why=f"{path} does not exist"))
    try:
        api = config.new_client_from_config(config_file=path, context=context)
        contexts, active = config.list_kube_config_contexts(config_file=path)
    except (config.ConfigException, ValueError, KeyError, TypeError) as exc:
        raise ConfigError(NO_CLUSTER.format(why=f"{path}: {exc}")) from None
    chosen = next((c for c in contexts if c["name"] == context), active) if context else active
    namespace = (chosen or {}).get("context", {}).get("namespace") or "default"
    return api, str(namespace)


def _incluster_namespace() -> str:
    token_dir = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
    return token_dir.read_text().strip() if token_dir.is_file() else "default"
