"""Read verbs of kube-apiserver: get, and list with selectors and limit/continue paging."""

from __future__ import annotations

import base64
import json
from typing import Any

from . import errors
from .calls import Call, Reply
from .objects import list_item, view
from .partial_metadata import negotiate, partial_list, partial_object
from .selectors import parse_field_selector, parse_label_selector
from .store import Store


class Reads:
    store: Store

    def _ns(self, call: Call) -> str:
        return call.namespace if call.rt.namespaced else ""

    def _current(self, call: Call) -> dict[str, Any]:
        assert call.name is not None
        obj = self.store.lookup(call.rt.key, self._ns(call), call.name)
        if obj is None:
            raise errors.not_found(call.rt, call.name)
        return obj

    def get(self, call: Call) -> Reply:
        target = negotiate(call.accept)
        obj = self._current(call)
        if target is not None:
            return Reply(200, partial_object(obj, target, call.rt))
        return Reply(200, view(obj, call.rt, call.version))

    def matcher(self, call: Call) -> Any:
        try:
            labels = parse_label_selector(call.q("labelSelector"))
            selectable = call.rt.selectable.get(call.version, frozenset())
            fields = parse_field_selector(call.q("fieldSelector"), call.rt.key, selectable)
        except ValueError as exc:
            raise errors.bad_request(str(exc)) from exc
        return lambda obj: labels(obj) and fields(obj)

    def list(self, call: Call) -> Reply:
        target = negotiate(call.accept)
        rt, match = call.rt, self.matcher(call)
        with self.store.lock:
            rv = self.store.resource_version
            items = [o for o in self.store.items(rt.key, call.namespace or None) if match(o)]
        list_meta: dict[str, Any] = {"resourceVersion": str(rv)}
        token = call.q("continue")
        if token:
            try:
                state = json.loads(base64.urlsafe_b64decode(token.encode()))
                start_rv, after = int(state["rv"]), tuple(state["start"])
            except (ValueError, KeyError, TypeError) as exc:
                raise errors.bad_request(f"continue key is not valid: {exc}") from exc
            if start_rv < self.store.compacted_rv:
                raise errors.expired(
                    "The provided continue parameter is too old to display a "
                    "consistent list result. You can start a new list without "
                    "the continue parameter."
                )
            list_meta["resourceVersion"] = str(start_rv)
            items = [o for o in items if self._sort_key(o) > after]
            rv = start_rv
        limit = int(call.q("limit") or 0)
        if 0 < limit < len(items):
            last = self._sort_key(items[limit - 1])
            state = {"rv": rv, "start": list(last)}
            list_meta["continue"] = base64.urlsafe_b64encode(json.dumps(state).encode()).decode()
            if not (call.q("labelSelector") or call.q("fieldSelector")):
                # With a selector the apiserver cannot know how many match later (ListMeta).
                list_meta["remainingItemCount"] = len(items) - limit
            items = items[:limit]
        if target is not None:
            return Reply(200, partial_list(items, list_meta, target, rt))
        body = {
            "kind": f"{rt.kind}List",
            "apiVersion": rt.api_version(call.version),
            "metadata": list_meta,
            "items": [list_item(o, rt, call.version) for o in items],
        }
        return Reply(200, body)

    @staticmethod
    def _sort_key(obj: dict[str, Any]) -> tuple[str, str]:
        m = obj["metadata"]
        return (m.get("namespace", ""), m["name"])
