"""`EngineMetrics`: the `CanaryMetrics` a rollout reads by default: each ready canary pod's own
/metrics, fetched through the API server's pods proxy (no Prometheus needed), summed, and
compared with the first read of the analysis."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gkeml_sdk.backends.kubernetes.api.resources import resource
from gkeml_sdk.core import kinds
from gkeml_sdk.core.objects import Obj
from gkeml_sdk.errors import ClusterError
from gkeml_sdk.serving.catalog import HTTP_PORT_NAME, SERVE_LABEL, Engine
from gkeml_sdk.serving.readiness import Totals, read_totals, sample_between
from gkeml_sdk.serving.rollout_machine import CanarySample

if TYPE_CHECKING:
    from gkeml_sdk.backends.kubernetes.api.kube import KubeClient

PODS = resource(kinds.CORE, "Pod")


class EngineMetrics:
    """Reads a canary's requests, failures and p95 latency from its engine.

    Example:
        >>> metrics = EngineMetrics(kube, svc.engine_row)  # doctest: +SKIP
        >>> metrics.sample("ml", "chat-canary", since=0.0)  # doctest: +SKIP
        CanarySample(requests=0, errors=0, latency_p95_seconds=None)
    """

    def __init__(self, kube: KubeClient, engine: Engine) -> None:
        self._kube, self._engine = kube, engine
        self._baselines: dict[tuple[str, str, float], Totals] = {}

    def sample(self, namespace: str, name: str, since: float) -> CanarySample | None:
        """The canary's answers since the first read of this analysis (None: no counters)."""
        outcomes = self._engine.outcomes
        if outcomes is None:
            return None
        totals = Totals()
        pods, _ = self._kube.list(PODS, namespace, label_selector=f"{SERVE_LABEL}={name}")
        for pod in pods:
            if not _ready(pod):
                continue
            path = PODS.path(namespace, f"{pod['metadata']['name']}:{self._port()}", "proxy")
            try:
                text = self._kube.raw(path + self._engine.metrics_path, action="read metrics")
            except ClusterError:
                continue  # a pod going away mid-read: the next step reads again
            totals = totals + read_totals(str(text or ""), outcomes)
        baseline = self._baselines.setdefault((namespace, name, since), totals)
        return sample_between(baseline, totals)

    def _port(self) -> int:
        name = self._engine.metrics_port
        return self._engine.port if name == HTTP_PORT_NAME else dict(self._engine.extra_ports)[name]


def _ready(pod: Obj) -> bool:
    conditions = (pod.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)
