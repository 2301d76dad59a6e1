"""REST semantics of kube-apiserver for one resource: get, list, create, update, patch, delete."""

from __future__ import annotations

import json
from typing import Any

from . import errors
from .calls import Call, Reply
from .managed import ApplyConflict, apply, conflict_message
from .objects import generated_name, json_copy, list_item, meta, now_rfc3339, parse_bool, view
from .patches import PatchError, json_patch, merge_patch, strategic_merge_patch
from .reads import Reads
from .resources import ResourceType
from .store import Store
from .writes import Writer, scope_of

NAMESPACES_KEY = "namespaces"
# DeleteOptions.preconditions as kube-apiserver's rest.BeforeDelete checks them (uid first).
_PRECONDITIONS = (
    ("uid", "UID", "The object might have been deleted and then recreated"),
    ("resourceVersion", "ResourceVersion", "The object might have been modified"),
)


class Api(Reads):
    def __init__(self, store: Store, writer: Writer) -> None:
        self.store = store
        self.writer = writer

    # ---- helpers -----------------------------------------------------------------------
    def require_namespace(self, call: Call) -> None:
        if (
            call.rt.namespaced
            and call.namespace
            and self.store.lookup(NAMESPACES_KEY, "", call.namespace) is None
        ):
            raise errors.not_found(self.store.registry.resolve(NAMESPACES_KEY), call.namespace)

    def _check_identity(self, call: Call, body: dict[str, Any]) -> None:
        rt = call.rt
        api_version, kind = body.get("apiVersion"), body.get("kind")
        # Built-ins accept any version of their group (converted); CRs need the exact one.
        expected = rt.group if rt.builtin else rt.api_version(call.version)
        got = api_version.rpartition("/")[0] if api_version and rt.builtin else api_version
        if api_version and got != expected:
            raise errors.bad_request(
                f"the API version in the data ({api_version}) does not match the expected API "
                f"version ({rt.api_version(call.version)})"
            )
        if kind and kind != rt.kind:
            raise errors.bad_request(
                f"the kind in the data ({kind}) does not match the expected kind ({rt.kind})"
            )
        ns = (body.get("metadata") or {}).get("namespace")
        if rt.namespaced and ns and ns != call.namespace:
            raise errors.bad_request(
                "the namespace of the provided object does not match the "
                "namespace sent on the request"
            )

    # ---- writes ---------------------------------------------------------------------------
    def create(self, call: Call) -> Reply:
        body = call.object_body()
        self._check_identity(call, body)
        m = meta(body)
        if m.get("resourceVersion"):
            raise errors.rv_set_on_create()
        if not m.get("name"):
            if not m.get("generateName"):
                raise errors.invalid(
                    call.rt,
                    "",
                    [
                        {
                            "reason": "FieldValueRequired",
                            "field": "metadata.name",
                            "message": "Required value: name or generateName is required",
                        }
                    ],
                )
            m["name"] = generated_name(m["generateName"])
        with self.store.lock:
            self.require_namespace(call)
            if self.store.lookup(call.rt.key, self._ns(call), m["name"]) is not None:
                raise errors.already_exists(call.rt, m["name"])
            call.name = m["name"]
            return self.writer.save(call, body, None)

    def replace(self, call: Call) -> Reply:
        body = call.object_body()
        self._check_identity(call, body)
        m = meta(body)
        if m.get("name") and m["name"] != call.name:
            raise errors.bad_request(
                f"the name of the object ({m['name']}) does not match the "
                f"name on the URL ({call.name})"
            )
        m["name"] = call.name
        with self.store.lock:
            old = self._current(call)
            rv = m.get("resourceVersion")
            if rv and rv != old["metadata"]["resourceVersion"]:
                raise errors.stale(call.rt, old["metadata"]["name"])
            if not rv and not call.rt.builtin:
                raise errors.invalid(
                    call.rt,
                    old["metadata"]["name"],
                    [
                        {
                            "reason": "FieldValueInvalid",
                            "field": "metadata.resourceVersion",
                            "message": "Invalid value: 0x0: must be specified for an update",
                        }
                    ],
                )
            return self.writer.save(call, body, old)

    def patch(self, call: Call) -> Reply:
        media = call.media_type
        if media == "application/apply-patch+yaml":
            return self.apply(call)
        body = call.json_body()
        with self.store.lock:
            old = self._current(call)
            base = json_copy(old)
            try:
                if media == "application/json-patch+json":
                    patched = json_patch(base, body)
                elif media == "application/merge-patch+json":
                    patched = merge_patch(base, body)
                elif media == "application/strategic-merge-patch+json" and call.rt.builtin:
                    patched = strategic_merge_patch(base, body)
                else:
                    raise errors.unsupported_media_type(media)
            except PatchError as exc:
                raise errors.ApiError(422, "Invalid", str(exc)) from exc
            if not isinstance(patched, dict):
                raise errors.bad_request("patch result is not an object")
            rv = (patched.get("metadata") or {}).get("resourceVersion")
            if rv and rv != old["metadata"]["resourceVersion"]:
                raise errors.stale(call.rt, old["metadata"]["name"])
            meta(patched)["name"] = call.name
            self._check_identity(call, patched)
            return self.writer.save(call, patched, old)

    def apply(self, call: Call) -> Reply:
        if not call.q("fieldManager"):
            raise errors.bad_request("PATCH /apply requests require fieldManager to be set")
        body = call.object_body()
        if not body.get("apiVersion") or not body.get("kind"):
            raise errors.bad_request("apply patch must set apiVersion and kind")
        self._check_identity(call, body)
        if body["apiVersion"] != call.rt.api_version(call.version):
            raise errors.bad_request(
                f"apply patch apiVersion {body['apiVersion']} does not match "
                f"the request version {call.rt.api_version(call.version)}"
            )
        m = meta(body)
        if m.get("name") and m["name"] != call.name:
            raise errors.bad_request(
                f"the name of the object ({m['name']}) does not match the "
                f"name on the URL ({call.name})"
            )
        assert call.name is not None
        rt, sub, ns = call.rt, call.subresource, self._ns(call)
        with self.store.lock:
            old = self.store.lookup(rt.key, ns, call.name)
            rv = m.get("resourceVersion")
            if rv and old is None:
                raise errors.rv_set_on_create()
            if rv and old is not None and rv != old["metadata"]["resourceVersion"]:
                raise errors.stale(rt, call.name)
            if old is None:
                if sub:
                    raise errors.not_found(rt, call.name)
                self.require_namespace(call)
            try:
                merged, managed = apply(
                    self.store.managed(rt.key, ns, call.name) if old else [],
                    old,
                    body,
                    call.manager,
                    parse_bool(call.q("force")),
                    sub,
                    rt.api_version(call.version),
                    scope_of(rt, sub),
                    now_rfc3339(),
                )
            except ApplyConflict as exc:
                msg, causes = conflict_message(exc.conflicts)
                raise errors.ApiError(
                    409,
                    "Conflict",
                    msg,
                    {"causes": causes},  # as kube-apiserver: no name/group/kind here
                ) from exc
            meta(merged)["name"] = call.name
            return self.writer.save(call, merged, old, managed=managed)

    def delete(self, call: Call) -> Reply:
        opts = self._delete_options(call)
        with self.store.lock:
            old = self._current(call)
            pre = opts.get("preconditions") or {}
            om = old["metadata"]
            for field, label, why in _PRECONDITIONS:
                if pre.get(field) and pre[field] != om.get(field):
                    raise errors.precondition_failed(
                        call.rt,
                        om["name"],
                        f"the {label} in the precondition ({pre[field]}) "
                        f"does not match the {label} in record ({om.get(field)}). {why}",
                    )
            if call.dry_run:
                return Reply(200, view(old, call.rt, call.version))
            result = self.store.delete_object(call.rt, old, self._policy(call.rt, opts))
        warnings = []
        if call.rt.key == "jobs.batch" and not opts.get("propagationPolicy"):
            warnings.append(
                "child pods are preserved by default when jobs are deleted; set "
                "propagationPolicy=Background to remove them or set propagationPolicy=Orphan to "
                "suppress this warning"
            )
        # Custom resources and most built-ins answer a Status once the object is gone.
        if result is not None or call.rt.key in ("pods", NAMESPACES_KEY):
            return Reply(200, view(result or old, call.rt, call.version)).warn(warnings)
        details = {"name": om["name"], "kind": call.rt.plural, "uid": om.get("uid")}
        if call.rt.group:
            details["group"] = call.rt.group
        return Reply(
            200,
            {
                "kind": "Status",
                "apiVersion": "v1",
                "metadata": {},
                "status": "Success",
                "details": details,
            },
        ).warn(warnings)

    def delete_collection(self, call: Call) -> Reply:
        opts, match = self._delete_options(call), self.matcher(call)
        with self.store.lock:
            victims = [o for o in self.store.items(call.rt.key, call.namespace or None) if match(o)]
            if not call.dry_run:
                for obj in victims:
                    self.store.delete_object(call.rt, obj, self._policy(call.rt, opts))
        items = [list_item(o, call.rt, call.version) for o in victims]
        return Reply(
            200,
            {
                "kind": f"{call.rt.kind}List",
                "apiVersion": call.rt.api_version(call.version),
                "metadata": {"resourceVersion": str(self.store.resource_version)},
                "items": items,
            },
        )

    @staticmethod
    def _delete_options(call: Call) -> dict[str, Any]:
        opts: dict[str, Any] = {}
        if call.body.strip():
            try:
                loaded = json.loads(call.body)
                opts = loaded if isinstance(loaded, dict) else {}
            except ValueError as exc:
                raise errors.bad_request(f"invalid DeleteOptions: {exc}") from exc
        for key in ("propagationPolicy", "orphanDependents"):
            if call.q(key) is not None:
                opts[key] = call.q(key)
        return opts

    @staticmethod
    def _policy(rt: ResourceType, opts: dict[str, Any]) -> str:
        if opts.get("propagationPolicy"):
            return str(opts["propagationPolicy"])
        if str(opts.get("orphanDependents", "")).lower() == "true":
            return "Orphan"
        # batch/v1 Jobs still default to orphaning their pods, unlike everything else.
        return "Orphan" if rt.key == "jobs.batch" else "Background"
