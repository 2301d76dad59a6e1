"""Plan and apply a `ClusterSetup`: what each object would change on the cluster (read-only),
then server-side apply of the objects that differ."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from gkeml_sdk.backends.kubernetes.api.kube import KubeClient
from gkeml_sdk.backends.kubernetes.api.resources import resource_of
from gkeml_sdk.core.manifests import dump_yaml
from gkeml_sdk.core.objects import Obj
from gkeml_sdk.errors import SpecError
from gkeml_sdk.setup.model import ClusterSetup
from gkeml_sdk.setup.multikueue import kubeconfig_secret

Action = Literal["create", "update", "unchanged"]
_MARK = {"create": "+", "update": "~", "unchanged": "="}


@dataclass(frozen=True)
class SetupChange:
    """One object of a setup and what applying it would do (`diff`: live -> desired)."""

    action: Action
    obj: Obj
    diff: str = ""

    @property
    def title(self) -> str:
        """`Kind name` (with the namespace of namespaced objects)."""
        meta = self.obj["metadata"]
        where = f" (namespace {meta['namespace']})" if meta.get("namespace") else ""
        return f"{self.obj['kind']} {meta['name']}{where}"


@dataclass(frozen=True)
class SetupPlan:
    """What `gkeml setup apply` does: every object of the setup, created, updated or left.

    Example:
        >>> plan = Client().plan_setup(ClusterSetup.from_file("setup.yaml"))  # doctest: +SKIP
        >>> print(plan)  # doctest: +SKIP
        + create ResourceFlavor h100-queued
        = unchanged LocalQueue team-a (namespace ml)
    """

    changes: tuple[SetupChange, ...]

    @property
    def pending(self) -> list[SetupChange]:
        """The changes that apply would make (creates and updates)."""
        return [c for c in self.changes if c.action != "unchanged"]

    def objects(self) -> list[Obj]:
        """The desired objects, in order."""
        return [c.obj for c in self.changes]

    def __str__(self) -> str:
        lines = []
        for change in self.changes:
            lines.append(f"{_MARK[change.action]} {change.action} {change.title}")
            lines += [f"    {line}" for line in change.diff.splitlines()]
        creates = sum(c.action == "create" for c in self.changes)
        updates = sum(c.action == "update" for c in self.changes)
        lines.append(f"{creates} to create, {updates} to update, {len(self.changes)} objects")
        return "\n".join(lines)


def plan_setup(kube: KubeClient, setup: ClusterSetup) -> SetupPlan:
    """Compare each object of `setup` with the cluster's (reads only)."""
    changes = []
    for obj in setup.compile().objects:
        meta = obj["metadata"]
        live = kube.find(resource_of(obj), meta["name"], meta.get("namespace"))
        changes.append(_change(obj, live))
    return SetupPlan(tuple(changes))


def apply_setup(
    kube: KubeClient, setup: ClusterSetup, worker_kubeconfigs: Mapping[str, str] | None = None
) -> SetupPlan:
    """Server-side apply the objects of `setup` that differ from the cluster, in order;
    returns the plan that was carried out. `worker_kubeconfigs` (worker name -> kubeconfig
    text) are written first as the Secrets MultiKueue reads; they never appear in a plan."""
    workers = {w.name: w for w in setup.workers}
    for name, text in (worker_kubeconfigs or {}).items():
        if name not in workers:
            raise SpecError(
                f"a kubeconfig for {name!r}, which is no worker of the setup",
                rule="MultiKueue reads one kubeconfig Secret per MultiKueueCluster",
                fix=f"one of {', '.join(workers) or '(none: add workers=[...])'}",
            )
        kube.apply(kubeconfig_secret(workers[name], text), force=False)
    plan = plan_setup(kube, setup)
    for change in plan.pending:
        # Not forced: a field another manager owns (someone edited the queue by hand) is a
        # conflict to show, not to overwrite silently.
        kube.apply(change.obj, force=False)
    return plan


def _change(desired: Obj, live: Obj | None) -> SetupChange:
    if live is None:
        return SetupChange("create", desired)
    seen = _project(live, desired)
    if seen == desired:
        return SetupChange("unchanged", desired)
    before, after = dump_yaml([seen]).splitlines(), dump_yaml([desired]).splitlines()
    diff = difflib.unified_diff(before, after, "cluster", "setup", lineterm="", n=2)
    return SetupChange("update", desired, "\n".join(diff))


def _project(live: Any, desired: Any) -> Any:
    """The part of `live` that `desired` speaks about (server defaults and status left out)."""
    if isinstance(desired, dict) and isinstance(live, dict):
        return {k: _project(live[k], v) for k, v in desired.items() if k in live}
    if isinstance(desired, list) and isinstance(live, list) and len(desired) == len(live):
        return [_project(x, d) for x, d in zip(live, desired, strict=True)]
    return live
