"""Per-tenant status in a ConfigMap (`gkeml-tenant-status` in the tenant's namespace):
failover count, last failover, the models failed over right now, the models whose primary
was seen ready, and GPU allocations. A ConfigMap because every API server accepts it with no
CRD installed, `kubectl get cm -o yaml` shows it, and its resourceVersion makes updates
compare-and-swap. Failovers are also reported as core v1 Events on the Deployment."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

from gkeml_sdk.backends.kubernetes.kube import KubeClient
from gkeml_sdk.backends.kubernetes.resources import resource
from gkeml_sdk.core import kinds
from gkeml_sdk.core.labels import sdk_labels
from gkeml_sdk.core.objects import Obj
from gkeml_sdk.core.record_schema import SCHEMA_KEY, record_schema
from gkeml_sdk.tenancy.model import Tenant
from gkeml_sdk.tenancy.names import STATUS_CONFIGMAP, TENANT_LABEL

CONFIGMAPS = resource(kinds.CORE, "ConfigMap")
EVENTS = resource(kinds.CORE, "Event")
COMPONENT = "gkeml-standby-manager"
# The status ConfigMap's layout (data key `schema`, a string as all ConfigMap data); 1 is also
# what a status written before records carried a schema holds.
TENANT_STATUS_SCHEMA = 1


@dataclass(frozen=True)
class TenantStatus:
    """What the manager records for one tenant.

    Example:
        >>> TenantStatus().with_failover("llama", "2026-01-01T00:00:00Z").failover_count
        1
    """

    failover_count: int = 0
    last_failover: str = ""
    failing_over: frozenset[str] = frozenset()
    ready_seen: frozenset[str] = frozenset()
    allocations: tuple[Obj, ...] = field(default=(), compare=False)

    def with_failover(self, model: str, when: str) -> TenantStatus:
        """One more failover, of `model`, now in progress."""
        return replace(
            self,
            failover_count=self.failover_count + 1,
            last_failover=when,
            failing_over=self.failing_over | {model},
        )

    def data(self) -> dict[str, str]:
        """The ConfigMap's `data`."""
        return {
            SCHEMA_KEY: str(TENANT_STATUS_SCHEMA),
            "failover_count": str(self.failover_count),
            "last_failover": self.last_failover,
            "failing_over": ",".join(sorted(self.failing_over)),
            "ready_seen": ",".join(sorted(self.ready_seen)),
            "allocations": json.dumps(list(self.allocations), sort_keys=True),
        }

    @classmethod
    def from_data(cls, data: dict[str, str], where: str = STATUS_CONFIGMAP) -> TenantStatus:
        """Read back `data()` of the ConfigMap `where`. Data without `schema` (written before
        records carried one) reads as before; a newer schema is a `ConfigError`, so no
        manager overwrites a status it cannot read."""
        record_schema(f"tenant status ConfigMap {where}", data, TENANT_STATUS_SCHEMA)

        def names(key: str) -> frozenset[str]:
            return frozenset(n for n in data.get(key, "").split(",") if n)

        return cls(
            failover_count=int(data.get("failover_count") or 0),
            last_failover=data.get("last_failover", ""),
            failing_over=names("failing_over"),
            ready_seen=names("ready_seen"),
            allocations=tuple(json.loads(data.get("allocations") or "[]")),
        )


class StatusBook:
    """Reads and compare-and-swaps each tenant's status ConfigMap; `fence` (the Lease check)
    runs before every write, so a manager that lost its Lease stops at its next conflict."""

    def __init__(self, kube: KubeClient, fence: Callable[[], object] = lambda: None) -> None:
        self.kube, self.fence = kube, fence
        self._objects: dict[str, Obj | None] = {}

    def reread(self, tenant: Tenant) -> None:
        """Forget what we last saw of the tenant's status (a resync reads it again)."""
        self._objects.pop(tenant.name, None)

    def get(self, tenant: Tenant) -> TenantStatus:
        """The tenant's status (read once, then kept from our own writes)."""
        if tenant.name not in self._objects:
            self._objects[tenant.name] = self.kube.find(
                CONFIGMAPS, STATUS_CONFIGMAP, tenant.namespace
            )
        found = self._objects[tenant.name]
        where = f"{tenant.namespace}/{STATUS_CONFIGMAP}"
        return TenantStatus.from_data((found or {}).get("data") or {}, where)

    def update(
        self, tenant: Tenant, change: Callable[[TenantStatus], TenantStatus]
    ) -> TenantStatus:
        """Apply `change` to the current status and write it; on a conflict (another writer)
        read again and re-apply, so no count is lost or doubled."""
        while True:
            before = self.get(tenant)
            after = change(before)
            if after.data() == before.data():
                return before
            current = self._objects[tenant.name]
            body: Obj = {
                "apiVersion": kinds.CORE,
                "kind": "ConfigMap",
                "metadata": {
                    "name": STATUS_CONFIGMAP,
                    "namespace": tenant.namespace,
                    "labels": {**sdk_labels(), TENANT_LABEL: tenant.name},
                },
                "data": after.data(),
            }
            self.fence()
            written = self.kube.write_over(body, current)
            if written is not None:
                self._objects[tenant.name] = written
                return after
            self._objects.pop(tenant.name)  # someone else wrote: read it again

    def event(self, tenant: Tenant, deployment: str, reason: str, message: str) -> None:
        """A Normal Event on the model's Deployment, as `kubectl describe` shows it."""
        now = datetime.now(UTC)
        stamp = now.strftime("%Y-%m-%dT%H:%M:%SZ")
        self.fence()
        self.kube.create(
            {
                "apiVersion": kinds.CORE,
                "kind": "Event",
                "metadata": {
                    "name": f"{deployment}.{time.time_ns():x}",
                    "namespace": tenant.namespace,
                },
                "involvedObject": {
                    "apiVersion": kinds.APPS,
                    "kind": "Deployment",
                    "name": deployment,
                    "namespace": tenant.namespace,
                },
                "reason": reason,
                "message": message,
                "type": "Normal",
                "source": {"component": COMPONENT},
                "reportingComponent": COMPONENT,
                "reportingInstance": COMPONENT,
                "firstTimestamp": stamp,
                "lastTimestamp": stamp,
                "count": 1,
            }
        )


def now_text() -> str:
    """The current time as RFC 3339 (UTC)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
