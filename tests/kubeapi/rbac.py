"""RBAC on the fake API server, off until a test registers a token: a request whose
`Authorization: Bearer <token>` names a registered ServiceAccount is authorized as
kube-apiserver's RBAC authorizer does; a request without one, or with a token no test
registered (the kubeconfig's), stays the admin every other test relies on.

Followed from Kubernetes: request attributes as `k8s.io/apiserver/pkg/endpoints/request/
requestinfo.go` derives them (GET on a collection is list, `watch=true` or `/watch/` is
watch, PUT update, PATCH patch, DELETE on a collection deletecollection; the `proxy`
subresource of pods with `name:port`), rule matching as `plugin/pkg/auth/authorizer/rbac/
rbac.go` and `pkg/apis/rbac/v1/evaluation_helpers.go` (`VerbMatches`, `APIGroupMatches`,
`ResourceMatches` incl. `*/subresource`, `ResourceNameMatches`: a rule with resourceNames
never allows a request without a name), subjects as `appliesToUser` (ServiceAccount by
namespace and name, Group, User), and the Forbidden message of `responsewriters.
forbiddenMessage`. Discovery and other non-resource paths are allowed to every
authenticated user, as the default `system:discovery` binding does."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from . import errors
from .objects import parse_bool
from .podproxy import PROXY_PATH
from .routing import parse_resource_path
from .store import Store

_VERB = {"POST": "create", "PUT": "update", "PATCH": "patch"}


@dataclass(frozen=True)
class User:
    name: str
    groups: tuple[str, ...]
    namespace: str  # of a ServiceAccount
    account: str


@dataclass(frozen=True)
class Attributes:
    verb: str
    group: str
    resource: str
    subresource: str
    namespace: str
    name: str
    resource_request: bool
    path: str


class Rbac:
    """Tokens -> ServiceAccounts, and the authorizer over the stored RBAC objects."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._tokens: dict[str, tuple[str, str]] = {}
        self._lock = threading.Lock()

    def add_token(self, token: str, namespace: str, service_account: str) -> None:
        """Requests with this bearer token act as `namespace`/`service_account`."""
        with self._lock:
            self._tokens[token] = (namespace, service_account)

    def check(
        self, method: str, path: str, query: Mapping[str, str], headers: Mapping[str, str]
    ) -> None:
        """Raise a 403 `ApiError` unless the request is allowed."""
        token = headers.get("authorization", "").removeprefix("Bearer ").strip()
        with self._lock:
            found = self._tokens.get(token)
        if found is None:
            return  # the admin of every other test
        user = service_account(*found)
        attrs = attributes(method, path, query)
        if not attrs.resource_request or self.allowed(user, attrs):
            return
        raise forbidden(user, attrs)

    def allowed(self, user: User, attrs: Attributes) -> bool:
        bindings = [(b, "") for b in self.store.list("clusterrolebindings")]
        if attrs.namespace:
            bindings += [
                (b, attrs.namespace) for b in self.store.list("rolebindings", attrs.namespace)
            ]
        return any(
            _binds(binding, user) and any(_allows(r, attrs) for r in self._rules(binding, ns))
            for binding, ns in bindings
        )

    def _rules(self, binding: dict[str, Any], namespace: str) -> list[dict[str, Any]]:
        ref = binding.get("roleRef") or {}
        if ref.get("kind") == "ClusterRole":
            role = self.store.get("clusterroles", "", ref.get("name", ""))
        else:
            role = self.store.get("roles", namespace, ref.get("name", ""))
        return list((role or {}).get("rules") or [])


def service_account(namespace: str, account: str) -> User:
    """The user a ServiceAccount's token authenticates as, with its groups."""
    groups = ("system:serviceaccounts", f"system:serviceaccounts:{namespace}")
    return User(
        f"system:serviceaccount:{namespace}:{account}",
        (*groups, "system:authenticated"),
        namespace,
        account,
    )


def attributes(method: str, path: str, query: Mapping[str, str]) -> Attributes:
    """The authorizer's view of a request (requestinfo.go)."""
    proxy = PROXY_PATH.match(unquote(path))
    if proxy:
        ns, name, port, _ = proxy.groups()
        verb = _VERB.get(method, "delete" if method == "DELETE" else "get")
        full = f"{name}:{port}" if port else name
        return Attributes(verb, "", "pods", "proxy", ns, full, True, path)
    route = parse_resource_path(path.rstrip("/"))
    if route is None:
        return Attributes(method.lower(), "", "", "", "", "", False, path)
    if method == "GET":
        if route.name is None or route.legacy_watch:
            watch = route.legacy_watch or parse_bool(query.get("watch"))
            verb = "watch" if watch else "list"
        else:
            verb = "get"
    elif method == "DELETE":
        verb = "delete" if route.name else "deletecollection"
    else:
        verb = _VERB.get(method, method.lower())
    return Attributes(
        verb,
        route.group,
        route.plural,
        route.subresource,
        route.namespace,
        route.name or "",
        True,
        path,
    )


def forbidden(user: User, attrs: Attributes) -> errors.ApiError:
    resource = f"{attrs.resource}/{attrs.subresource}" if attrs.subresource else attrs.resource
    where = f'in the namespace "{attrs.namespace}"' if attrs.namespace else "at the cluster scope"
    reason = (
        f'User "{user.name}" cannot {attrs.verb} resource "{resource}" in API group '
        f'"{attrs.group}" {where}'
    )
    qualified = f"{attrs.resource}.{attrs.group}" if attrs.group else attrs.resource
    subject = f'{qualified} "{attrs.name}"' if attrs.name else qualified
    details: dict[str, Any] = {"group": attrs.group, "kind": attrs.resource}
    if attrs.name:
        details["name"] = attrs.name
    return errors.ApiError(403, "Forbidden", f"{subject} is forbidden: {reason}", details)


def _binds(binding: dict[str, Any], user: User) -> bool:
    for subject in binding.get("subjects") or []:
        kind = subject.get("kind")
        if kind == "ServiceAccount":
            ns = subject.get("namespace") or (binding.get("metadata") or {}).get("namespace")
            if (ns, subject.get("name")) == (user.namespace, user.account):
                return True
        elif (kind == "User" and subject.get("name") == user.name) or (
            kind == "Group" and subject.get("name") in user.groups
        ):
            return True
    return False


def _allows(rule: dict[str, Any], attrs: Attributes) -> bool:
    def has(values: list[str], value: str) -> bool:
        return "*" in values or value in values

    if not has(rule.get("verbs") or [], attrs.verb):
        return False
    if not has(rule.get("apiGroups") or [], attrs.group):
        return False
    combined = f"{attrs.resource}/{attrs.subresource}" if attrs.subresource else attrs.resource
    resources = rule.get("resources") or []
    matched = "*" in resources or combined in resources
    if attrs.subresource and f"*/{attrs.subresource}" in resources:
        matched = True
    if not matched:
        return False
    names = rule.get("resourceNames") or []
    return not names or attrs.name in names
