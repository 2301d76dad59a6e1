"""Finding the cluster (an ApiClient given by the caller, a kubeconfig file and context, or the
in-cluster service account; never anything else, and never silently) and the settings of the
Kubernetes backend."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from gkeml_sdk.backends.kubernetes.api.transport import ApiRetrySettings
from gkeml_sdk.core.model import DNS1123_LABEL
from gkeml_sdk.core.rules import INT32_MAX, check_name, check_number
from gkeml_sdk.errors import NoClusterError, SpecError, excerpt

if TYPE_CHECKING:
    from gkeml_sdk.training.fields import TrainingJobFields


class JobQuotas(Protocol):
    """What a submission asks of the cluster's project quotas (`gkeml_sdk.backends.gke.quotas.
    QuotaCheck`): raises `ConfigError` for a job no quota could ever hold, else returns the
    sentences to warn with."""

    def for_job(self, job: TrainingJobFields) -> list[str]: ...


@dataclass(frozen=True)
class KubernetesSettings:
    """How `Client(kubernetes=KubernetesSettings(...))` reaches and talks to a cluster.

    - `namespace`: where runs go (default: the kubeconfig context's namespace, else
      `default`; a job's own `namespace=` wins).
    - `context`, `kubeconfig`: which kubeconfig entry to use (default: `$KUBECONFIG`, else
      `~/.kube/config`, its current context; in a pod, the service account).
    - `api_client`: a `kubernetes.client.ApiClient` you already have; it is used as given,
      never modified (gkeml sends its requests through it with its own retries).
    - `api_retry`: retries of transient API faults (429/5xx, resets, timeouts).
    - `request_timeout`: seconds per API request; `watch_seconds`: how long one watch stays
      open before it is renewed.
    - `deletion_timeout`: seconds to wait for a finished run's objects to be deleted before
      a run of the same name is submitted again.
    - `controller_namespace`: where the run controller holds its Lease; a client whose
      namespace it manages defers to it while it renews (see docs/controller.md).
    - `quotas`: the Compute Engine quotas of the cluster's project and region, read before a
      submission (`QuotaCheck(project, region)` from `gkeml_sdk.backends.gke.quotas`, with
      the `gke` extra): a job asking more GPUs or TPU chips at once than a quota's limit is
      refused, one beyond what is left is logged as a warning; answers are kept as the other
      checks' are (`PREFLIGHT_SECONDS`). None (the default): quotas are not read.

    Example:
        >>> from gkeml_sdk import KubernetesSettings
        >>> KubernetesSettings(namespace="ml", watch_seconds=60).api_retry.attempts
        8
        >>> KubernetesSettings(request_timeout=0)
        Traceback (most recent call last):
        ...
        gkeml_sdk.errors.SpecError: request_timeout=0 (rule: a finite number more than 0). Try: ...
    """

    namespace: str | None = None
    context: str | None = None
    kubeconfig: str | Path | None = None
    api_client: Any = field(default=None, repr=False)
    api_retry: ApiRetrySettings = field(default_factory=ApiRetrySettings)
    request_timeout: float = 30.0
    watch_seconds: int = 300
    deletion_timeout: float = 300.0
    controller_namespace: str = "gkeml-system"
    quotas: JobQuotas | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        check_number("request_timeout", self.request_timeout, above=True)
        check_number("watch_seconds", self.watch_seconds, low=1, high=INT32_MAX, integer=True)
        check_number("deletion_timeout", self.deletion_timeout)
        if self.namespace is not None:
            check_name("namespace", _text(self.namespace), DNS1123_LABEL, 63)
        check_name("controller_namespace", _text(self.controller_namespace), DNS1123_LABEL, 63)
        for name in ("context", "kubeconfig"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str | Path):
                raise SpecError(f"{name}={excerpt(value, 40)} is not a name or a path")
        if self.quotas is not None and not callable(getattr(self.quotas, "for_job", None)):
            raise SpecError(
                f"quotas={excerpt(self.quotas, 40)}",
                rule="it reads the project's quotas for a job (for_job)",
                fix='quotas=QuotaCheck("PROJECT", "REGION") (gkeml_sdk.backends.gke.quotas)',
            )
        if not isinstance(self.api_retry, ApiRetrySettings):
            raise SpecError(
                f"api_retry={excerpt(self.api_retry, 40)}", fix="api_retry=ApiRetrySettings(...)"
            )


def _text(value: object) -> str:
    return value if isinstance(value, str) else repr(value)


def connect(
    *, kubeconfig: str | Path | None, context: str | None, api_client: Any
) -> tuple[Any, str]:
    """(ApiClient, default namespace) for the configuration the caller chose.

    Example:
        >>> connect(kubeconfig="/nonexistent", context=None, api_client=None)
        Traceback (most recent call last):
        ...
        gkeml_sdk.errors.NoClusterError: no Kubernetes configuration found (/nonexistent ...
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
                raise NoClusterError(f"in-cluster: {exc}") from None
            return client.ApiClient(), _incluster_namespace()
        raise NoClusterError(f"{path} does not exist")
    try:
        api = config.new_client_from_config(config_file=path, context=context)
        contexts, active = config.list_kube_config_contexts(config_file=path)
    except (config.ConfigException, ValueError, KeyError, TypeError) as exc:
        raise NoClusterError(f"{path}: {exc}") from None
    chosen = next((c for c in contexts if c["name"] == context), active) if context else active
    namespace = (chosen or {}).get("context", {}).get("namespace") or "default"
    return api, str(namespace)


def _incluster_namespace() -> str:
    token_dir = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
    return token_dir.read_text().strip() if token_dir.is_file() else "default"
