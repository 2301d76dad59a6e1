"""`ServeHandle`: a model server on the cluster, applied with the same client as training;
follows its rollout and says why replicas are not ready."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from gkeml_sdk.backends.kubernetes.api.resources import resource, resource_of
from gkeml_sdk.backends.kubernetes.api.shared_apply import split_shared
from gkeml_sdk.backends.kubernetes.api.streams import StreamHub, StreamSpec, deadline
from gkeml_sdk.backends.kubernetes.serving.engine_metrics_source import EngineMetrics
from gkeml_sdk.backends.kubernetes.serving.rollout_executor import (
    CONFIG_MAPS,
    CanaryMetrics,
    RolloutExecutor,
)
from gkeml_sdk.backends.kubernetes.serving.rollout_objects import stamped
from gkeml_sdk.backends.kubernetes.serving.serve_apply import ServingCluster, apply_owned
from gkeml_sdk.core import kinds
from gkeml_sdk.core.objects import Obj
from gkeml_sdk.errors import ConfigError, NotFoundError, RunTimeoutError, SpecError
from gkeml_sdk.serving.catalog import SERVE_LABEL
from gkeml_sdk.serving.model import ServeModel
from gkeml_sdk.serving.readiness import ServingStatus, serving_status
from gkeml_sdk.serving.rollout import Autoscaling
from gkeml_sdk.serving.rollout_machine import SUFFIX, Version

if TYPE_CHECKING:
    from collections.abc import Callable


PODS = resource(kinds.CORE, "Pod")
BUILTIN_APIS = frozenset(
    {kinds.CORE, kinds.APPS, kinds.BATCH, kinds.POLICY, kinds.AUTOSCALING, kinds.STORAGE}
)


class ServeHandle:
    """A deployed `ServeModel`. Returned by `Client().serve(svc)`.

    Example:
        >>> handle = Client().serve(svc)  # doctest: +SKIP
        >>> handle.wait_ready(timeout=1800).ready, handle.endpoint  # doctest: +SKIP
        (True, 'http://chat.default.svc.cluster.local:8000')
    """

    def __init__(self, backend: ServingCluster, svc: ServeModel) -> None:
        self._backend = backend
        self.svc = svc
        self.name = svc.name
        self.namespace = svc.namespace

    @property
    def endpoint(self) -> str:
        """The in-cluster URL of the OpenAI-compatible (or engine) HTTP API."""
        service = self.svc.compile().of_kind("Service")[0]
        port = service["spec"]["ports"][0]["port"]
        return f"http://{service['metadata']['name']}.{self.namespace}.svc.cluster.local:{port}"

    @property
    def status(self) -> ServingStatus:
        """Readiness now, with the reason replicas are not ready (image pull, OOM, no GPU...)."""
        kube = self._backend.kube
        server = kube.find(self._server_kind(), self.name, self.namespace)
        if server is None:
            raise NotFoundError(
                f"model server {self.name!r}",
                status=404,
                reason="NotFound",
                message=f"no {self._server_kind().kind} {self.name} in {self.namespace}",
                hint="serve it first with Client().serve(svc)",
            )
        pods, _ = kube.list(PODS, self.namespace, label_selector=f"{SERVE_LABEL}={self.name}")
        return serving_status(server, pods)

    def wait_ready(
        self,
        timeout: float | None = None,
        progress: Callable[[ServingStatus], None] | None = None,
    ) -> ServingStatus:
        """Follow the rollout (watch streams, no polling) until every replica is ready; raise
        `RunTimeoutError` with the last reason when `timeout` seconds pass first."""
        kind = self._server_kind()
        selector = f"{SERVE_LABEL}={self.name}"
        specs = [
            StreamSpec(kind, self.namespace, selector),
            StreamSpec(PODS, self.namespace, selector),
        ]
        server: Obj | None = None
        pods: dict[str, Obj] = {}
        last: ServingStatus | None = None
        left = deadline(timeout)
        with StreamHub(self._backend.streams, specs) as hub:
            while True:
                if server is not None:
                    current = serving_status(server, pods.values())
                    if progress is not None and (last is None or str(current) != str(last)):
                        progress(current)
                    last = current
                    if current.ready:
                        return current
                if left() <= 0:
                    why = str(last) if last else f"{kind.kind} {self.name} not seen"
                    raise RunTimeoutError(f"model server {self.name} not ready: {why}")
                event = hub.next(timeout=min(left(), 3600.0))
                if event is None:
                    continue
                key = event.obj["metadata"]["name"]
                if event.kind == kind.kind:
                    server = None if event.type == "DELETED" else event.obj
                elif event.type == "DELETED":
                    pods.pop(key, None)
                else:
                    pods[key] = event.obj

    def scale(self, replicas: int) -> None:
        """Run `replicas` replicas. On an autoscaled service this raises the autoscaler's floor
        to `replicas` (the HPA may still add more under load, up to its max); `scale(0)`
        stops the service and removes its autoscaler."""
        autoscaling = self.svc.autoscaling
        if replicas < 0:
            raise SpecError(f"scale({replicas})", rule="a replica count", fix="scale(0) or more")
        target: int | Autoscaling = replicas
        if autoscaling is not None and replicas > 0:
            bounds = {"min": replicas, "max": max(autoscaling.max, replicas)}
            target = Autoscaling.model_validate({**autoscaling.model_dump(), **bounds})
        before = split_shared(self.svc.compile().objects)[1]
        self.svc = self.svc.with_changes(replicas=target)
        after = self.svc.compile().objects
        number = self.rollouts().served(self.svc).latest.version  # the new count is a version
        apply_owned(self._backend, [stamped(o, number) for o in after], self.name)
        kept = {(o["kind"], o["metadata"]["name"]) for o in after}
        for obj in before:  # e.g. the HPA of a service scaled to zero
            if (obj["kind"], obj["metadata"]["name"]) not in kept:
                meta = obj["metadata"]
                self._backend.kube.delete(resource_of(obj), meta["name"], meta.get("namespace"))

    def update(
        self,
        new: ServeModel,
        *,
        wait: bool = True,
        clock: Callable[[], float] | None = None,
        metrics: CanaryMetrics | None = None,
        poll_seconds: float = 2.0,
    ) -> RolloutExecutor:
        """Move the running server to `new` (image, model revision, engine args) as
        `new.rollout` says; a version not ready within its deadline, or a canary that fails
        its gate, is rolled back to the last ready version and `history()` says why. A
        canary is judged on `metrics` (default: its engine's own /metrics).

        This call makes the first step with your rights. Where the run controller acts for
        the namespace, it drives the rest (and the rollback), whether or not this process
        stays: with `wait=True` this call only follows the record until the rollout ends.
        Without a controller, `wait=True` drives it from here, and with `wait=False` the
        returned executor's `step()` does. A `metrics` source is read only where this process
        drives: the controller judges a canary on its engine's own /metrics."""
        if "namespace" not in new.model_fields_set:
            new = new.with_changes(namespace=self.namespace)
        if new.name != self.name or new.namespace != self.namespace:
            raise SpecError(
                f"update to {new.namespace}/{new.name} from {self.namespace}/{self.name}",
                rule="an update moves one service to a new version",
                fix=f"name={self.name!r}; serve another name with Client().serve()",
            )
        if metrics is None:  # the canary's own engine counters, through the pods proxy
            metrics = EngineMetrics(self._backend.kube, new.engine_row)
        executor = self.rollouts(clock=clock, metrics=metrics)
        executor.begin(new)
        if wait and self._backend.controller.acts_for(self.namespace, rollouts=True):
            while (state := executor.record().state) is not None and not state.done:
                time.sleep(poll_seconds)
        elif wait:
            executor.run(poll_seconds=poll_seconds)
        record = executor.record()
        self.svc = ServeModel.model_validate(record.get(record.state.target).spec)  # type: ignore[union-attr]
        return executor

    def rollouts(
        self, *, clock: Callable[[], float] | None = None, metrics: CanaryMetrics | None = None
    ) -> RolloutExecutor:
        """The executor of this service's rollouts (to resume or step one)."""
        options: dict[str, Any] = {"metrics": metrics}
        if clock is not None:
            options["clock"] = clock
        return RolloutExecutor(self._backend, self.name, self.namespace, **options)

    def history(self) -> list[Version]:
        """Every recorded version, oldest first, with its outcome (`ready`, `rolled-back` and
        why, `superseded`, `rolling-out`, `serving`)."""
        return list(self.rollouts().record().versions)

    def delete(self) -> None:
        """Delete every object of the service (the server last, so traffic stops first) and
        its version record; the weights' claim and what fills it stay, for the next service
        that loads them."""
        self.rollouts().remove_canary()
        for obj in split_shared(self.svc.compile().objects)[1]:
            res = resource_of(obj)
            self._backend.kube.delete(
                res, obj["metadata"]["name"], obj["metadata"].get("namespace")
            )
        self._backend.kube.delete(CONFIG_MAPS, self.name + SUFFIX, self.namespace)

    def _server_kind(self) -> Any:
        main = self.svc.compile().main
        return resource(main["apiVersion"], main["kind"])

    def __repr__(self) -> str:
        return f"<ServeHandle {self.namespace}/{self.name}>"


def serve(backend: ServingCluster, svc: ServeModel) -> ServeHandle:
    """Check the cluster can run `svc`, apply its objects in order, return the handle."""
    if "namespace" not in svc.model_fields_set:
        svc = svc.with_changes(namespace=backend.namespace)
    manifests = svc.compile()
    backend.preflight.check_namespace(svc.namespace)
    if svc.queue:
        backend.preflight.check_queue(svc.namespace, svc.queue)
    extension_apis = {o["apiVersion"] for o in manifests.objects} - BUILTIN_APIS
    for api in sorted(extension_apis):
        if not backend.kube.raw(f"/apis/{api}", action=f"discover {api}", missing_ok=True):
            raise ConfigError(
                f"{api} is not served by this cluster, but {svc.name} needs it: install that "
                "API (CRD or GKE feature) or drop the option that uses it"
            )
    executor = RolloutExecutor(backend, svc.name, svc.namespace)
    number = executor.served(svc).latest.version
    apply_owned(backend, [stamped(o, number) for o in manifests.objects], svc.name)
    return ServeHandle(backend, svc)
