"""Per-tenant status in a ConfigMap (`gkeml-tenant-status` in the tenant's namespace):
failover count, last failover, the models failed over right now, the models whose primary
was seen ready, and GPU allocations. A ConfigMap because every API server accepts it with no
CRD installed, `kubectl get cm -o yaml` shows it, and its resourceVersion makes updates
compare-and-swap. Failovers are also reported as core v1 Events on the Deployment.

The ConfigMap lives in the tenant's namespace, where the tenant's admins may edit it: a status
that does not read (a field of the wrong type, a schema from the future, deep or huge JSON)
is a `ConfigError` naming it, which refuses that one tenant, never the manager."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

from gkeml_sdk.backends.kubernetes.api.kube import KubeClient
from gkeml_sdk.backends.kubernetes.api.resources import resource
from gkeml_sdk.core import kinds
from gkeml_sdk.core.labels import sdk_labels
from gkeml_sdk.core.objects import Obj
from gkeml_sdk.core.record_schema import SCHEMA_KEY, record_schema
from gkeml_sdk.errors import ConfigError, excerpt
from gkeml_sdk.tenancy.model import Tenant
from gkeml_sdk.tenancy.names import STATUS_CONFIGMAP, TENANT_LABEL

CONFIGMAPS = resource(kinds.CORE, "ConfigMap")
EVENTS = resource(kinds.CORE, "Event")
COMPONENT = "gkeml-standby-manager"
# The status ConfigMap's layout (data key `schema`, a string as all ConfigMap data); 1 is also
# what a status written before records carried a schema holds.
TENANT_STATUS_SCHEMA = 1
# The most a status may hold: what the API server stores in one ConfigMap (1 MiB).
MAX_STATUS_BYTES = 1 << 20
_COUNT = re.compile(r"[0-9]{1,9}")


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
    def from_data(cls, data: object, where: str = STATUS_CONFIGMAP) -> TenantStatus:
        """Read back `data()` of the ConfigMap `where`. Data without `schema` (written before
        records carried one) reads as before; a newer schema, a field of the wrong type or
        shape, or more than `MAX_STATUS_BYTES` is a `ConfigError` naming the ConfigMap, so no
        manager overwrites a status it cannot read.

        Example:
            >>> TenantStatus.from_data({"failover_count": "many"}, "t/s")  # doctest: +ELLIPSIS
            Traceback (most recent call last):
            ...
            gkeml_sdk.errors.ConfigError: tenant status ConfigMap t/s: failover_count is 'many'...
        """
        record = f"tenant status ConfigMap {where}"
        if not isinstance(data, dict):
            raise _damaged(record, f"its data is {type(data).__name__}, not a mapping")
        record_schema(record, data, TENANT_STATUS_SCHEMA)
        fields = _strings(record, data)
        count = fields.get("failover_count") or "0"
        if not _COUNT.fullmatch(count):
            raise _damaged(record, f"failover_count is {excerpt(count)!r}, not a whole number")

        def names(key: str) -> frozenset[str]:
            return frozenset(n for n in fields.get(key, "").split(",") if n)

        return cls(
            failover_count=int(count),
            last_failover=fields.get("last_failover", ""),
            failing_over=names("failing_over"),
            ready_seen=names("ready_seen"),
            allocations=_allocations(record, fields.get("allocations") or "[]"),
        )


def _damaged(record: str, what: str) -> ConfigError:
    return ConfigError(
        f"{record}: {what}, so the standby manager refuses this tenant (its other tenants go "
        "on). It was edited by hand or by another tool; restore what gkeml wrote, or delete "
        "the ConfigMap (the manager writes it again, counting failovers from 0)"
    )


def _strings(record: str, data: dict[object, object]) -> dict[str, str]:
    """`data` when it holds strings only (as a ConfigMap's data does) within the size limit."""
    size = 0
    for key, value in data.items():
        if not isinstance(key, str) or not isinstance(value, str):
            what = f"{excerpt(key)!r} holds {type(value).__name__}"
            raise _damaged(record, f"{what}, not text")
        size += len(key) + len(value)
        if size > MAX_STATUS_BYTES:
            raise _damaged(record, f"it holds more than {MAX_STATUS_BYTES} characters")
    return {str(k): str(v) for k, v in data.items()}


def _allocations(record: str, text: str) -> tuple[Obj, ...]:
    """The `allocations` rows: a JSON list of flat objects, as `view.allocations` writes."""
    try:
        rows = json.loads(text)
    except (ValueError, RecursionError) as exc:  # RecursionError: nested too deep
        raise _damaged(record, f"allocations is not JSON ({excerpt(str(exc))})") from None
    flat = (str, int, float, bool, type(None))
    if not isinstance(rows, list) or not all(
        isinstance(r, dict) and all(isinstance(v, flat) for v in r.values()) for r in rows
    ):
        raise _damaged(record, "allocations is not a list of flat objects")
    return tuple(rows)


class StatusBook:
    """Reads and compare-and-swaps each tenant's status ConfigMap; `check(point, namespace)`
    (the Lease check) runs right before every write, so a manager that lost its Lease stops
    at its next conflict."""

    def __init__(
        self, kube: KubeClient, check: Callable[[str, str], object] = lambda *_: None
    ) -> None:
        self.kube, self.check = kube, check
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
            self.check("status", tenant.namespace)
            written = self.kube.write_over(body, current)
            if written is not None:
                self._objects[tenant.name] = written
                return after
            self._objects.pop(tenant.name)  # someone else wrote: read it again

    def event(self, tenant: Tenant, deployment: str, reason: str, message: str) -> None:
        """A Normal Event on the model's Deployment, as `kubectl describe` shows it. Named
        after the failover it reports (the status's uid and failover count), so the same
        report sent by two leaders is one Event: the second create is a 409."""
        now = datetime.now(UTC)
        stamp = now.strftime("%Y-%m-%dT%H:%M:%SZ")
        written = self._objects.get(tenant.name) or {}
        uid = str((written.get("metadata") or {}).get("uid", ""))[:8]
        count = self.get(tenant).failover_count
        name = f"{deployment}.{reason.lower()}.{count}" + (f".{uid}" if uid else "")
        self.check("event", tenant.namespace)
        self.kube.create(
            {
                "apiVersion": kinds.CORE,
                "kind": "Event",
                "metadata": {"name": name, "namespace": tenant.namespace},
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
