"""The common write path: server-owned metadata, status rules, defaults, validation, commit."""

from __future__ import annotations

import base64
import itertools
from typing import Any

from . import admission, errors
from .calls import Call, Reply
from .managed import Entry, record_update
from .objects import comparable, json_copy, meta, new_uid, now_rfc3339, spec_changed, view
from .resources import ResourceType
from .storage import storage_defaults, storage_update_causes
from .store import Store
from .validation import metadata_causes, validate_builtin, validate_custom

_ip_counter = itertools.count(10)


def scope_of(rt: ResourceType, subresource: str) -> str:
    if subresource == "status":
        return "status"
    return "main" if rt.has_status else "all"


def _same_owners(a: list[Entry], b: list[Entry]) -> bool:
    def key(es: list[Entry]) -> set[tuple[str, str, str, frozenset[tuple[str, ...]]]]:
        return {(e.manager, e.operation, e.subresource, e.fields) for e in es}

    return key(a) == key(b)


def _job_defaults(obj: dict[str, Any]) -> None:
    spec = obj.setdefault("spec", {})
    if "completions" not in spec and "parallelism" not in spec:
        spec["completions"] = 1
    spec.setdefault("parallelism", 1)
    if "backoffLimitPerIndex" not in spec:
        spec.setdefault("backoffLimit", 6)
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("suspend", False)
    spec.setdefault("podReplacementPolicy", "TerminatingOrFailed")
    m = obj["metadata"]
    if not spec.get("manualSelector"):
        uid = m["uid"]
        spec["selector"] = {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
        tpl_meta = spec.setdefault("template", {}).setdefault("metadata", {})
        labels = tpl_meta.setdefault("labels", {})
        labels.update(
            {
                "batch.kubernetes.io/controller-uid": uid,
                "controller-uid": uid,
                "batch.kubernetes.io/job-name": m["name"],
                "job-name": m["name"],
            }
        )


def create_defaults(rt: ResourceType, obj: dict[str, Any]) -> None:
    """The few built-in defaults that callers commonly observe; the rest is not modelled."""
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else None
    if rt.key == "pods":
        obj["status"] = {"phase": "Pending", "qosClass": "BestEffort"}
        if spec is not None:
            spec.setdefault("restartPolicy", "Always")
            spec.setdefault("dnsPolicy", "ClusterFirst")
            spec.setdefault("schedulerName", "default-scheduler")
            spec.setdefault("terminationGracePeriodSeconds", 30)
    elif rt.key == "namespaces":
        obj["status"] = {"phase": "Active"}
        obj.setdefault("spec", {}).setdefault("finalizers", ["kubernetes"])
        meta(obj).setdefault("labels", {})["kubernetes.io/metadata.name"] = obj["metadata"]["name"]
    elif rt.key == "jobs.batch":
        _job_defaults(obj)
    elif rt.key == "deployments.apps" and spec is not None:
        spec.setdefault("replicas", 1)
        spec.setdefault("revisionHistoryLimit", 10)
        spec.setdefault("progressDeadlineSeconds", 600)
    elif rt.key == "services" and spec is not None:
        spec.setdefault("type", "ClusterIP")
        spec.setdefault("sessionAffinity", "None")
        if spec.get("clusterIP") is None:
            n = next(_ip_counter)
            spec["clusterIP"] = f"10.96.{n // 250}.{n % 250 + 1}"


def _secret_data(obj: dict[str, Any]) -> None:
    string_data = obj.pop("stringData", None)
    if isinstance(string_data, dict):
        data = obj.setdefault("data", {})
        for k, v in string_data.items():
            data[k] = base64.b64encode(str(v).encode()).decode()
    obj.setdefault("type", "Opaque")


_CEL_SKIPPED = {
    "reason": "FieldValueInvalid",
    "message": "Invalid value: null: some validation rules were not checked because the object "
    "was invalid; correct the existing errors to complete validation",
    "field": "<nil>",
}


def _no_new_finalizers(rt: ResourceType, old: dict[str, Any], new: dict[str, Any]) -> None:
    """ObjectMeta update rule: a terminating object may lose finalizers but gain none."""
    if not old["metadata"].get("deletionTimestamp"):
        return
    before = set(old["metadata"].get("finalizers") or [])
    if set(meta(new).get("finalizers") or []) - before:
        cause = {
            "reason": "FieldValueForbidden",
            "message": "Forbidden: no new finalizers can be added if the object is being deleted",
            "field": "metadata.finalizers",
        }
        raise errors.invalid(rt, old["metadata"]["name"], [cause])


class Writer:
    def __init__(self, store: Store, validate: bool, k8s_version: str) -> None:
        self.store = store
        self.validate = validate
        self.k8s_version = k8s_version
        self._has_cel: dict[tuple[str, str], bool] = {}

    def validate_obj(
        self, call: Call, obj: dict[str, Any], name: str, old: dict[str, Any] | None = None
    ) -> list[str]:
        if not self.validate:
            return []
        causes = metadata_causes(call.rt, obj)
        if call.rt.builtin:
            more, warnings = validate_builtin(call.rt, obj, self.k8s_version, call.field_validation)
        else:
            more, warnings = validate_custom(call.rt, call.version, obj, call.field_validation)
        causes.extend(more)
        if old is not None and not call.subresource:
            causes.extend(storage_update_causes(call.rt, old, obj))
        if not call.rt.builtin:
            causes.extend(self._cel_causes(call, obj, old, bool(causes)))
        if causes:
            raise errors.invalid(call.rt, name, causes)
        return warnings

    def _cel_causes(
        self, call: Call, obj: dict[str, Any], old: dict[str, Any] | None, invalid: bool
    ) -> list[dict[str, str]]:
        """CEL runs only on a schema-valid object; otherwise the apiserver says it skipped."""
        schema = call.rt.schemas.get(call.version) or {}
        key = (call.rt.key, call.version)
        if key not in self._has_cel:
            self._has_cel[key] = admission.has_rules(schema)
        if not self._has_cel[key]:
            return []
        if invalid:
            return [_CEL_SKIPPED]
        base = admission.ABSENT if old is None else old
        return [e.cause() for e in admission.cel_errors(schema, obj, base)]

    def _review(self, call: Call, new: dict[str, Any], old: dict[str, Any] | None) -> Any:
        store = self.store
        return admission.Review(
            "UPDATE" if old is not None else "CREATE",
            call.rt,
            new,
            old,
            call.namespace,
            lambda key, ns: store.items(key, ns),
            lambda key: store.registry.by_key(key) is not None,
        )

    def save(
        self,
        call: Call,
        new: dict[str, Any],
        old: dict[str, Any] | None,
        managed: list[Entry] | None = None,
        created_code: int = 201,
    ) -> Reply:
        """Persist `new` (caller-owned, mutable) as the next state of the object `old`."""
        rt, sub = call.rt, call.subresource
        m = meta(new)
        new["apiVersion"], new["kind"] = rt.api_version(call.version), rt.kind
        if rt.namespaced:
            m["namespace"] = call.namespace
        else:
            m.pop("namespace", None)
        m.pop("managedFields", None)
        m.pop("resourceVersion", None)
        for key in ("labels", "annotations", "finalizers", "ownerReferences"):
            if m.get(key) in ({}, []):
                del m[key]  # ObjectMeta's omitempty: kube-apiserver never shows them empty
        name = m["name"]
        if old is not None:
            if sub == "status":
                status = new.get("status")
                new = json_copy(old)
                m = new["metadata"]
                new["apiVersion"] = rt.api_version(call.version)
                if status is None:
                    new.pop("status", None)
                else:
                    new["status"] = status
            else:
                om = old["metadata"]
                for key in (
                    "uid",
                    "creationTimestamp",
                    "deletionTimestamp",
                    "deletionGracePeriodSeconds",
                    "generateName",
                ):
                    if key in om:
                        m[key] = om[key]
                    else:
                        m.pop(key, None)
                _no_new_finalizers(rt, old, new)
                if rt.has_status:
                    if "status" in old:
                        new["status"] = old["status"]
                    else:
                        new.pop("status", None)
        else:
            m["uid"] = new_uid()
            m["creationTimestamp"] = now_rfc3339()
            m["generation"] = 1
            m.pop("deletionTimestamp", None)
            if rt.has_status:
                new.pop("status", None)
            create_defaults(rt, new)
        if rt.key == "secrets":
            _secret_data(new)
        if not sub:
            storage_defaults(rt, new, creating=old is None)
        review = self._review(call, new, old) if self.validate and not sub else None
        if review is not None:
            admission.mutate(review)
        warnings = self.validate_obj(call, new, name, old)  # prunes and defaults, so comes first
        if review is not None:
            denials = admission.validate(review)
            if denials:
                raise denials[0]
        if old is not None:
            m["generation"] = old["metadata"].get("generation", 1) + int(spec_changed(old, new))
        ns = call.namespace if rt.namespaced else ""
        before = self.store.managed(rt.key, ns, name) if old is not None else []
        if managed is None:
            managed = record_update(
                before,
                old,
                new,
                call.manager,
                sub,
                rt.api_version(call.version),
                scope_of(rt, sub),
                now_rfc3339(),
            )
        if old is not None and comparable(old) == comparable(new) and _same_owners(before, managed):
            return Reply(200, view(old, rt, call.version)).warn(warnings)  # no-op: no new rv
        if call.dry_run:
            return Reply(200 if old else created_code, new).warn(warnings)
        stored = self.store.commit(rt, new, managed=managed)
        code = 200 if old is not None else created_code
        return Reply(code, view(stored, rt, call.version)).warn(warnings)
