"""`KubeAPIServer`: a fake-but-faithful kube-apiserver on 127.0.0.1 for integration tests."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterable
from http.server import ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any

import yaml

from .api import Api
from .crds import crd_object, load_crd_dir, load_crd_file, select_crds
from .dispatch import Dispatcher
from .faults import FaultInjector
from .handler import Handler
from .kueue_status import UPDATES_BATCH_PERIOD, ClusterQueueStatus, ManualClock
from .podlogs import PodLogs
from .podproxy import PodProxy
from .rbac import Rbac
from .resources import Registry, resource_from_crd
from .store import Store
from .tracking import Tracking
from .validation import latest_k8s_version
from .writes import Writer


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    kube: KubeAPIServer


class KubeAPIServer(Tracking):
    """In-process kube-apiserver: discovery, CRUD, SSA, watch, validation, faults, pod logs."""

    def __init__(
        self,
        crd_dir: Path | None = None,
        *,
        crds: Iterable[str] | None = None,
        exclude_crds: Iterable[str] = (),
        validate: bool = True,
        namespaces: Iterable[str] = ("default", "kube-system"),
        forbidden_namespaces: Iterable[str] = (),
        history_size: int = 1000,
        bookmark_interval: float = 1.0,
        watch_max_seconds: float | None = None,
        k8s_version: str | None = None,
        foreground_delete_seconds: float | None = 0.2,
    ) -> None:
        self.k8s_version = k8s_version or latest_k8s_version()
        self.registry = Registry()
        self.store = Store(self.registry, history_size, foreground_delete_seconds)
        self.writer = Writer(self.store, validate, self.k8s_version)
        self.api = Api(self.store, self.writer)
        self.dispatcher = Dispatcher(self, self.api)
        self.faults = FaultInjector()
        self.pod_logs = PodLogs()
        self.pod_proxy = PodProxy(self.store)
        self.rbac = Rbac(self.store)  # enforced for requests with a registered bearer token
        self.forbidden_namespaces: set[str] = set(forbidden_namespaces)
        # GET answers of aggregated API servers (e.g. Kueue's visibility API), by path.
        self.aggregated: dict[str, Any] = {}
        self.bookmark_interval = bookmark_interval
        self.watch_max_seconds = watch_max_seconds
        self.request_log = []
        self.internal_errors: list[str] = []
        self.stop_event = threading.Event()
        self.cut_generation = 0
        self._lock = threading.Lock()
        self._connections: set[socket.socket] = set()
        self._watches: set[socket.socket] = set()
        self._peak_watches = 0
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None
        if crd_dir is not None:
            for crd in select_crds(load_crd_dir(crd_dir), crds, exclude_crds):
                self.install_crd(crd)
        for ns in namespaces:
            self.create_namespace(ns)

    # ---- lifecycle ------------------------------------------------------------------------
    def start(self) -> KubeAPIServer:
        if self._httpd is not None:
            return self
        httpd = _HTTPServer(("127.0.0.1", 0), Handler)
        httpd.kube = self
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            daemon=True,
            name=f"kubeapi-{self.port}",
        )
        self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        """Stop serving: open watches and log streams end cleanly, idle sockets are closed."""
        if self._httpd is None or self.stop_event.is_set():
            return
        self.stop_event.set()
        self.store.close()
        self.pod_logs.kick()
        self.wait_for(lambda: self.open_watches == 0, timeout=timeout, raise_on_timeout=False)
        self._httpd.shutdown()
        self._httpd.server_close()
        with self._lock:
            conns = list(self._connections)
        for conn in conns:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        if self._thread is not None:
            self._thread.join(timeout)

    def __enter__(self) -> KubeAPIServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def stopping(self) -> bool:
        return self.stop_event.is_set()

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("server not started")
        return int(self._httpd.server_address[1])

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        return f"http://{self.address}"

    # ---- client helpers -------------------------------------------------------------------
    def configuration(self, **attrs: Any) -> Any:
        """A `kubernetes.client.Configuration` for this server; attrs override fields
        (e.g. retries=False to see faults without urllib3's own retries)."""
        from kubernetes import client

        cfg = client.Configuration(host=self.url)
        for key, value in attrs.items():
            setattr(cfg, key, value)
        return cfg

    def api_client(self, **attrs: Any) -> Any:
        from kubernetes import client

        return client.ApiClient(self.configuration(**attrs))

    def kubeconfig(
        self, path: Path | str, namespace: str = "default", context: str = "fake-kube"
    ) -> Path:
        doc = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": context, "cluster": {"server": self.url}}],
            "users": [{"name": context, "user": {"token": "fake-token"}}],
            "contexts": [
                {
                    "name": context,
                    "context": {"cluster": context, "user": context, "namespace": namespace},
                }
            ],
            "current-context": context,
        }
        out = Path(path)
        out.write_text(yaml.safe_dump(doc), encoding="utf-8")
        return out

    # ---- cluster setup --------------------------------------------------------------------
    def install_crd(self, crd: dict[str, Any] | Path) -> None:
        """Serve a CRD (dict or YAML file path); its object appears under apiextensions."""
        docs = load_crd_file(crd) if isinstance(crd, Path) else [crd]
        crd_rt = self.registry.resolve("customresourcedefinitions")
        for doc in docs:
            rt = resource_from_crd(doc)
            self.registry.add(rt)
            self.store.commit(crd_rt, crd_object(doc, rt.crd_name))

    def uninstall_crd(self, name: str) -> None:
        """Stop serving a CRD (by CRD name, e.g. `jobsets.jobset.x-k8s.io`) and drop its objects."""
        rt = self.registry.by_key(name)
        if rt is None:
            raise KeyError(name)
        with self.store.lock:
            for obj in self.store.items(rt.key):
                m = obj["metadata"]
                self.store.delete(rt.key, m.get("namespace"), m["name"])
            self.store.delete("customresourcedefinitions", None, name)
            self.registry.remove(rt.key)

    def create_namespace(self, name: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
        return self.store.put(
            {
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": {
                    "name": name,
                    "labels": {"kubernetes.io/metadata.name": name, **(labels or {})},
                },
                "spec": {"finalizers": ["kubernetes"]},
                "status": {"phase": "Active"},
            }
        )

    def serve_aggregated(self, path: str, answer: Any) -> None:
        """Answer GETs of `path` with `answer` (a JSON document, or a callable returning one),
        as an aggregated API server such as Kueue's visibility API would."""
        self.aggregated[path.rstrip("/")] = answer

    def play_cluster_queue_status(
        self, clock: ManualClock, delay: float = UPDATES_BATCH_PERIOD
    ) -> ClusterQueueStatus:
        """Write ClusterQueue status from the Workloads as Kueue's controller does, `delay`
        seconds of `clock` after the Workload events (see kueue_status.py)."""
        return ClusterQueueStatus(self.store, clock, delay)

    def forbid_namespace(self, namespace: str) -> None:
        self.forbidden_namespaces.add(namespace)

    def allow_namespace(self, namespace: str) -> None:
        self.forbidden_namespaces.discard(namespace)

    # ---- pod logs -------------------------------------------------------------------------
    def set_pod_log(
        self, namespace: str, pod: str, text: str, container: str | None = None,
        at: int | None = None,
    ) -> None:  # fmt: skip
        """Replace a pod's log; its lines arrived at `at` (ns since the epoch; default now)."""
        self.pod_logs.set(namespace, pod, text, container, at)

    def append_pod_log(
        self, namespace: str, pod: str, text: str, container: str | None = None,
        at: int | None = None,
    ) -> None:  # fmt: skip
        """Add to a pod's log; its lines arrived at `at` (ns since the epoch; default now)."""
        self.pod_logs.append(namespace, pod, text, container, at)

    def finish_pod_log(self, namespace: str, pod: str, container: str | None = None) -> None:
        self.pod_logs.close(namespace, pod, container)

    # ---- watches --------------------------------------------------------------------------
    def cut_watches(self) -> int:
        """Drop every open watch connection (no final chunk); returns how many were open."""
        with self._lock:
            self.cut_generation += 1
            n = len(self._watches)
        self.store.kick()
        return n

    def compact(self) -> int:
        """Drop the event history: watches/continue tokens at an older rv now get 410 Expired."""
        return self.store.compact()

    def finish_deletions(self) -> None:
        """Complete the Foreground deletions held by `foreground_delete_seconds=None` whose
        blocking dependents are gone (as the garbage collector would once pods terminated)."""
        self.store.gc.finish()

    @property
    def resource_version(self) -> int:
        return self.store.resource_version

    # ---- introspection --------------------------------------------------------------------
    def objects(self, resource: str, namespace: str | None = None) -> list[dict[str, Any]]:
        return self.store.list(resource, namespace)
