"""`FakeKubelet`: plays the ReplicaSet controller and the kubelet for Deployments in some
namespaces, so that a standby manager sees pods come and go: `replicas` pods per Deployment,
Ready after `start_seconds(deployment)`, the excess deleted newest first. Pods whose engine
runs with vLLM's `--enable-sleep-mode` answer POST /sleep and /wake_up and GET /is_sleeping
(`{"is_sleeping": bool}`) through `pods/proxy`, as vLLM's server does; others 404, as vLLM
does without the flag. An engine starts awake, as vLLM does."""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

from .server import KubeAPIServer

Obj = dict[str, Any]


class FakeKubelet(threading.Thread):
    def __init__(
        self,
        server: KubeAPIServer,
        namespaces: Iterable[str],
        start_seconds: Callable[[Obj], float] = lambda d: 0.0,
        wake_seconds: float = 0.0,
    ) -> None:
        super().__init__(daemon=True, name="fake-kubelet")
        self.server, self.namespaces = server, tuple(namespaces)
        self.start_seconds, self.wake_seconds = start_seconds, wake_seconds
        self._stop_event = threading.Event()
        self._due: dict[tuple[str, str], float] = {}  # pod -> when it turns Ready
        self._ips = itertools.count(2)
        self.engine_calls: list[tuple[str, str]] = []  # (pod, path) of sleep/wake requests
        self.sleeping: dict[tuple[str, str], bool] = {}  # (namespace, pod) -> engine asleep

    def stop(self) -> None:
        self._stop_event.set()
        self.join(timeout=5)

    def run(self) -> None:
        store = self.server.store
        while not self._stop_event.is_set():
            with store.changed:
                store.changed.wait(0.02)
            for ns in self.namespaces:
                for deployment in store.list("deployments", ns):
                    self._sync(deployment)
            now = time.monotonic()
            for (ns, name), when in list(self._due.items()):
                if when <= now:
                    del self._due[(ns, name)]
                    pod = store.get("pods", ns, name)
                    if pod is not None:
                        pod["status"] = _running(pod["status"]["podIP"])
                        store.put(pod)

    def _sync(self, deployment: Obj) -> None:
        store = self.server.store
        meta, spec = deployment["metadata"], deployment["spec"]
        ns, name = meta["namespace"], meta["name"]
        owned = sorted(
            (p for p in store.list("pods", ns) if p["metadata"]["name"].rsplit("-", 1)[0] == name),
            key=lambda p: int(p["metadata"]["name"].rsplit("-", 1)[1]),
        )
        want = int(spec.get("replicas", 1))
        for pod in owned[want:][::-1]:
            store.delete("pods", ns, pod["metadata"]["name"])
        used = {int(p["metadata"]["name"].rsplit("-", 1)[1]) for p in owned[:want]}
        free = (i for i in itertools.count() if i not in used)
        for _ in range(want - min(len(owned), want)):
            self._create(deployment, f"{name}-{next(free)}")

    def _create(self, deployment: Obj, pod_name: str) -> None:
        ns = deployment["metadata"]["namespace"]
        template = deployment["spec"]["template"]
        ip = f"10.8.0.{next(self._ips)}"
        delay = self.start_seconds(deployment)
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": pod_name,
                "namespace": ns,
                "labels": {**template["metadata"].get("labels", {}), "pod-template-hash": "h"},
            },
            "spec": {**template["spec"], "nodeName": f"node-{ip.rsplit('.', 1)[1]}"},
            "status": _running(ip) if delay <= 0 else {"phase": "Pending", "podIP": ip},
        }
        self.server.store.put(pod)
        if delay > 0:
            self._due[(ns, pod_name)] = time.monotonic() + delay
        container = template["spec"]["containers"][0]
        for port in container.get("ports") or []:
            self.sleeping[(ns, pod_name)] = False
            engine = self._engine(ns, pod_name, container.get("args") or [])
            self.server.pod_proxy.serve(ns, pod_name, port["containerPort"], engine)

    def _engine(
        self, ns: str, pod: str, args: list[str]
    ) -> Callable[[str, str, bytes], tuple[int, Any]]:
        routes = {("POST", "/sleep"), ("POST", "/wake_up"), ("GET", "/is_sleeping")}

        def answer(method: str, path: str, body: bytes) -> tuple[int, Any]:
            route = path.split("?")[0]
            if (method, route) not in routes or "--enable-sleep-mode" not in args:
                return 404, {"detail": "Not Found"}
            if route == "/is_sleeping":
                return 200, {"is_sleeping": self.sleeping[(ns, pod)]}
            self.engine_calls.append((pod, path))
            if route == "/wake_up":
                time.sleep(self.wake_seconds)
            self.sleeping[(ns, pod)] = route == "/sleep"
            return 200, {}

        return answer


def _running(ip: str) -> Obj:
    stamp = "2026-01-01T00:00:00Z"
    return {
        "phase": "Running",
        "podIP": ip,
        "conditions": [
            {"type": t, "status": "True", "lastTransitionTime": stamp}
            for t in ("PodScheduled", "Initialized", "ContainersReady", "Ready")
        ],
    }
