"""Run records in the cluster: the record ConfigMap of each run, its code ConfigMap, and the
cancel marker that no record write can undo."""

from __future__ import annotations

from dataclasses import replace

from gkeml_sdk.backends.kubernetes.kube import KubeClient
from gkeml_sdk.backends.kubernetes.resources import resource
from gkeml_sdk.backends.kubernetes.run_record import (
    RECORD_LABEL,
    RunRecord,
    cancel_marker,
    record_name,
)
from gkeml_sdk.core import kinds
from gkeml_sdk.core.objects import Obj

CONFIG_MAPS = resource(kinds.CORE, "ConfigMap")


class RunRecords:
    """Read and write run records through `kube`.

    Example:
        >>> records = RunRecords(kube)  # doctest: +SKIP
        >>> records.find("llama-ft", "ml").attempts[-1].name  # doctest: +SKIP
        'llama-ft--r2'
    """

    def __init__(self, kube: KubeClient) -> None:
        self.kube = kube

    def save(self, record: RunRecord) -> None:
        """Write the run record (server-side apply: idempotent)."""
        self.kube.apply(record.to_configmap())

    def find(self, name: str, namespace: str) -> RunRecord | None:
        """The record of run `name`, or None when there is none."""
        found = self.kube.find(CONFIG_MAPS, record_name(name), namespace)
        return None if found is None else self.read(found)

    def all(self, namespace: str) -> list[RunRecord]:
        """Every record in the namespace, newest first."""
        items, _ = self.kube.list(CONFIG_MAPS, namespace, label_selector=f"{RECORD_LABEL}=true")
        return sorted((self.read(i) for i in items), key=lambda r: -r.submitted_at)

    def read(self, obj: Obj) -> RunRecord:
        """The record a ConfigMap holds, with its code files and any cancellation."""
        code = None
        name = RunRecord.code_config_map(obj)
        if name:
            found = self.kube.find(CONFIG_MAPS, name, obj["metadata"]["namespace"])
            code = (found or {}).get("data") or {}
        record = RunRecord.from_configmap(obj, code)
        if not record.cancelled and self.cancel_marked(record.name, record.job.namespace):
            record = replace(record, cancelled=True)
        return record

    def mark_cancelled(self, record: RunRecord) -> RunRecord:
        """Record a cancellation: the marker object first (the truth), then the record."""
        self.kube.apply(cancel_marker(record.name, record.job.namespace))
        record = replace(record, cancelled=True)
        self.save(record)
        return record

    def cancel_marked(self, name: str, namespace: str) -> bool:
        """True when run `name` was cancelled, by any client."""
        marker = cancel_marker(name, namespace)["metadata"]["name"]
        return self.kube.find(CONFIG_MAPS, marker, namespace) is not None

    def unmark_cancelled(self, name: str, namespace: str) -> None:
        """Forget a finished run's cancellation before its name is used again."""
        marker = cancel_marker(name, namespace)["metadata"]["name"]
        self.kube.delete(CONFIG_MAPS, marker, namespace)
