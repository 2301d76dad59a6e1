"""`RolloutDriver`: the run controller also drives every model server's rollout in its
namespaces, so a version that never gets ready, or a canary that fails its gate, is rolled back
whether or not the client that began the rollout is still there.

It follows the services' version records (`<name>-versions` ConfigMaps) on one stream per
namespace; at rest that is all it costs. Each rollout in progress is stepped every `interval`
seconds on a bounded pool (one slow rollout delays no other) by a `RolloutExecutor` that acts
only for rollouts their submitter vouched for (`rollout_objects.vouched`), and only while the
controller leads: its writes go through the controller's guarded client and each carries the
precondition of what the step read. A damaged record or a refused rollout is that service's
alone: it is said once (`refused`, the log) and looked at again when its record changes."""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Hashable, Sequence

from gkeml_sdk.backends.kubernetes.api.lease import LeaseLost
from gkeml_sdk.backends.kubernetes.api.streams import StreamHub, StreamSpec
from gkeml_sdk.backends.kubernetes.backend import KubernetesBackend
from gkeml_sdk.backends.kubernetes.controller.workqueue import RunQueue
from gkeml_sdk.backends.kubernetes.serving.engine_metrics_source import EngineMetrics
from gkeml_sdk.backends.kubernetes.serving.rollout_executor import (
    CONFIG_MAPS,
    CanaryMetrics,
    RolloutExecutor,
)
from gkeml_sdk.backends.kubernetes.serving.rollout_objects import spec_of
from gkeml_sdk.core.objects import Obj
from gkeml_sdk.errors import ConfigError, GkemlError
from gkeml_sdk.serving.catalog import SERVE_LABEL
from gkeml_sdk.serving.rollout_machine import SUFFIX, VersionRecord

log = logging.getLogger(__name__)
Key = tuple[str, str]  # (namespace, service name)


class RolloutDriver:
    """Steps the rollouts in progress in `namespaces` while `leading()` says so.

    Example:
        >>> driver = RolloutDriver(backend, ["ml"], leading=lambda: True)  # doctest: +SKIP
        >>> driver.pass_once()  # doctest: +SKIP
        {('ml', 'chat'): 'analysing'}
    """

    def __init__(
        self,
        backend: KubernetesBackend,
        namespaces: Sequence[str],
        *,
        leading: Callable[[], bool],
        interval: float = 2.0,
        workers: int = 2,
        clock: Callable[[], float] = time.time,
        metrics: Callable[[Key], CanaryMetrics | None] | None = None,
    ) -> None:
        self.backend, self.namespaces = backend, list(namespaces)
        self.leading, self.interval, self.clock = leading, interval, clock
        # What a canary is judged on (None: its engine's own /metrics through the pods proxy).
        self.metrics = metrics
        self.records: dict[Key, Obj] = {}  # the version records as the stream last showed them
        self.refused: dict[str, str] = {}  # "namespace/name" -> why it is not acted on
        self._refused_at: dict[Key, str] = {}  # the record version that was refused
        self._executors: dict[Key, RolloutExecutor] = {}  # kept: a canary's metrics baseline
        self.states: dict[Key, str] = {}  # the phase each rollout reached at its last step
        self.active: set[Key] = set()  # the rollouts in progress, as their records say
        self._lock = threading.RLock()
        self.queue = RunQueue(workers, self._step)

    def pass_once(self) -> dict[Key, str]:
        """List the version records (one list per namespace) and step each rollout in
        progress once, waiting for the steps; the phase each reached."""
        for namespace in self.namespaces:
            found, _ = self.backend.kube.list(CONFIG_MAPS, namespace, label_selector=SERVE_LABEL)
            with self._lock:
                for key in [k for k in self.records if k[0] == namespace]:
                    del self.records[key]
                    self.active.discard(key)
                for obj in found:
                    self._keep(obj)
        self._step_all()
        self.queue.join()
        with self._lock:
            return dict(self.states)

    def run(self, stop: threading.Event) -> None:
        """Follow the version records and step the rollouts in progress every `interval`
        seconds until `stop`; nothing is done (and nothing followed) while not leading."""
        hub: StreamHub | None = None
        following = contextlib.ExitStack()
        try:
            while not stop.is_set():
                if not self.leading():
                    hub = None
                    following.close()
                    stop.wait(self.interval)
                    continue
                try:
                    if hub is None:
                        with self._lock:
                            self.records.clear()
                            self.active.clear()
                        specs = [StreamSpec(CONFIG_MAPS, ns, SERVE_LABEL) for ns in self.namespaces]
                        hub = following.enter_context(StreamHub(self.backend.streams, specs))
                    end = time.monotonic() + self.interval
                    while (left := end - time.monotonic()) > 0 and not stop.is_set():
                        event = hub.next(timeout=left)
                        if event is not None:
                            with self._lock:
                                self._keep(event.obj, deleted=event.type == "DELETED")
                    self._step_all()
                except GkemlError as exc:  # a stream failed: followed anew next time
                    log.warning("rollouts: %s", exc)
                    hub = None
                    following.close()
                    stop.wait(self.interval)
        finally:
            following.close()
            self.queue.close()

    def _keep(self, obj: Obj, *, deleted: bool = False) -> None:
        """Take one version record as the stream (or a list) shows it: whether its rollout is
        in progress is read once per change of the record, not at every step."""
        meta = obj.get("metadata") or {}
        name = str(meta.get("name", ""))
        if not name.endswith(SUFFIX):
            return  # another object of a service (the selector is its label)
        key = (str(meta.get("namespace", "")), name.removesuffix(SUFFIX))
        self.active.discard(key)
        if deleted:
            self.records.pop(key, None)
            self._executors.pop(key, None)
            self.states.pop(key, None)
            return
        self.records[key] = obj
        version = str(meta.get("resourceVersion", ""))
        if self._refused_at.get(key) == version:
            return  # refused as it is: looked at again once it changes
        self._refused_at.pop(key, None)
        self.refused.pop(f"{key[0]}/{key[1]}", None)
        try:
            state = VersionRecord.from_data(obj.get("data")).state
        except Exception as exc:  # damaged data is this service's alone
            self._refuse(key, version, f"its version record cannot be read: {exc!r}")
            return
        if state is not None and not state.done:
            self.active.add(key)

    def _step_all(self) -> None:
        with self._lock:
            keys = [k for k in self.active if k not in self._refused_at]
        for key in keys:
            self.queue.add(key)

    def _step(self, key: Hashable) -> None:
        assert isinstance(key, tuple)
        namespace, name = key
        if not self.leading():
            return
        with self._lock:
            obj = self.records.get(key)
            executor = self._executors.get(key)
        version = str(((obj or {}).get("metadata") or {}).get("resourceVersion", ""))
        try:
            if executor is None:
                executor = RolloutExecutor(
                    self.backend,
                    name,
                    namespace,
                    clock=self.clock,
                    metrics=self._metrics_for(key, obj),
                    vouched_only=True,
                )
                with self._lock:
                    self._executors[key] = executor
            state = executor.step()
            with self._lock:
                self.states[key] = state.phase.value
        except LeaseLost as exc:
            log.warning("rollout %s/%s: stops: %s", namespace, name, exc)
        except ConfigError as exc:  # not vouched for: refused until its record changes
            self._refuse(key, version, str(exc))
        except GkemlError as exc:  # the API refused or is away: the next step reads again
            log.warning("rollout %s/%s: %s", namespace, name, exc)
        except Exception as exc:  # damaged data or a bug: this service is refused, no other
            log.exception("rollout %s/%s refused", namespace, name)
            self._refuse(key, version, f"{type(exc).__name__}: {exc}")

    def _metrics_for(self, key: Key, obj: Obj | None) -> CanaryMetrics | None:
        """What a canary is judged on: its engine's own /metrics (through the pods proxy)."""
        if self.metrics is not None:
            return self.metrics(key)
        record = VersionRecord.from_data((obj or {}).get("data"))
        if record.state is None:
            return None
        return EngineMetrics(self.backend.kube, spec_of(record, record.state.version).engine_row)

    def _refuse(self, key: Key, version: str, why: str) -> None:
        where = f"{key[0]}/{key[1]}"
        with self._lock:
            if self.refused.get(where) != why:
                log.error("rollout %s refused: %s", where, why)
            self.refused[where] = why
            self._refused_at[key] = version
