"""What the cluster holds in each phase of a rollout, and how an executor brings it there with
writes that cannot outlive what it read.

A phase wants the server at one version (`RolloutState.target`) with a share of its requests
sent to a canary or none, and a canary running or gone (`desired`). Each server object
(Deployment, LeaderWorkerSet) is stamped with the version it runs, the canary's share it routes
and the digests of the rollout's two specs (`stamped`), so one read of the server says whether
the phase is in place; when it is not, every object the phase needs is read, and written only
as read: an apply carries the resourceVersion read, a missing object is created (never applied
over one made meanwhile), a delete carries the uid and resourceVersion read (`Converge`). Those
reads come before the rollout's record is saved, so an executor that stopped leading after its
save finds every object it would write changed by the one that leads now, and writes nothing.

The digests are also how the in-cluster controller knows it may act: it moves a service only
between the two specs whose digests a server object carries, and only its submitter, applying
the first step of a rollout with their own rights, puts them there (`vouched`)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from gkeml_sdk.backends.kubernetes.api.kube import KubeClient
from gkeml_sdk.backends.kubernetes.api.resources import resource_of
from gkeml_sdk.backends.kubernetes.api.shared_apply import split_shared
from gkeml_sdk.backends.kubernetes.serving.serve_apply import refuse_foreign
from gkeml_sdk.core.objects import Obj, uid
from gkeml_sdk.errors import ClusterError
from gkeml_sdk.serving.model import ServeModel
from gkeml_sdk.serving.rollout import CANARY_SUFFIX
from gkeml_sdk.serving.rollout_machine import Phase, RolloutState, VersionRecord
from gkeml_sdk.serving.routing import Route

VERSION_ANNOTATION = "gkeml.dev/version"  # on the server object, never its pod template
WEIGHT_ANNOTATION = "gkeml.dev/canary-weight"  # the canary's share the server routes
SPECS_ANNOTATION = "gkeml.dev/rollout-specs"  # digests of the rollout's new and previous spec
SERVER_KINDS = ("Deployment", "LeaderWorkerSet")
Key = tuple[str, str]  # (kind, name)


def spec_digest(spec: dict[str, Any]) -> str:
    """The sha256 of a version's spec as the record keeps it (canonical JSON).

    Example:
        >>> spec_digest({"b": 1, "a": 2}) == spec_digest({"a": 2, "b": 1})
        True
    """
    text = json.dumps(spec, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def rollout_specs(record: VersionRecord, state: RolloutState) -> str:
    """The value of `SPECS_ANNOTATION` for `state`: the new spec's digest, then the previous."""
    new, old = record.get(state.version).spec, record.get(state.previous).spec
    return f"{spec_digest(new)},{spec_digest(old)}"


def stamped(obj: Obj, version: int, *, weight: int = 0, specs: str = "") -> Obj:
    """`obj` with the version it belongs to (and, in a rollout, the canary's share and the
    rollout's specs) on a server object: never on its pods, so restoring a version restores
    the very pod template its ReplicaSet still has."""
    if obj["kind"] not in SERVER_KINDS:
        return obj
    meta = dict(obj["metadata"])
    notes = {**(meta.get("annotations") or {}), VERSION_ANNOTATION: str(version)}
    if weight:
        notes[WEIGHT_ANNOTATION] = str(weight)
    if specs:
        notes[SPECS_ANNOTATION] = specs
    meta["annotations"] = notes
    return {**obj, "metadata": meta}


def servers(svc: ServeModel) -> list[Obj]:
    """The server objects of `svc` (its Deployment or LeaderWorkerSet)."""
    return [o for o in svc.compile().objects if o["kind"] in SERVER_KINDS]


def canary_of(new: ServeModel) -> ServeModel:
    """The canary of version `new`: the same server under `<name>-canary`, with the rollout's
    canary replicas, on-demand capacity, and no routes of its own (the server's route sends
    it its share)."""
    assert new.routing is not None  # construction refuses a canary without routing
    return new.with_changes(
        name=new.name + CANARY_SUFFIX,
        replicas=new.rollout.canary_replicas,
        spot=False if new.spot_mix is not None else new.spot,
        routing=new.routing.model_copy(update={"routes": [], "backend_only": True}),
        rollout={"strategy": "surge"},
    )


def weighted(stable: ServeModel, percent: int) -> ServeModel:
    """`stable` with `percent` of its requests sent to its canary."""
    routing = stable.routing
    assert routing is not None
    canary = stable.name + CANARY_SUFFIX
    routes = list(routing.routes) or [Route(model=stable.model_name, backends={stable.name: 1})]
    split = []
    for route in routes:
        # Weights are relative: scale every backend by 100 so the canary's share is exact.
        backends = {name: weight * 100 for name, weight in route.backends.items()}
        weight = route.backends.get(stable.name, 0)
        if weight:
            backends[stable.name] = weight * (100 - percent)
            backends[canary] = weight * percent
        split.append(Route(model=route.model, backends=backends))
    return stable.with_changes(routing=routing.model_copy(update={"routes": split}))


@dataclass(frozen=True)
class Desired:
    """What one phase of a rollout wants: the server's objects at `version` (routing `weight`
    percent to the canary), `gone` (objects of the other version the server no longer has),
    and the canary's objects (at `canary_version`), running (`canary`) or deleted
    (`canary_gone`)."""

    version: int
    weight: int
    server: list[Obj]
    gone: list[Obj]
    canary_version: int = 0
    canary: list[Obj] = field(default_factory=list)
    canary_gone: list[Obj] = field(default_factory=list)


def spec_of(record: VersionRecord, version: int) -> ServeModel:
    """The ServeModel of `version` as the record keeps it."""
    return ServeModel.model_validate(record.get(version).spec)


def desired(record: VersionRecord, state: RolloutState) -> Desired:
    """What the cluster holds in `state`'s phase (the machine's actions bring it there;
    this is what a later executor checks and repairs, level-triggered)."""
    new, old = spec_of(record, state.version), spec_of(record, state.previous)
    specs = rollout_specs(record, state)
    canary_phase = state.strategy == "canary" and state.phase in (
        Phase.ANALYSING,
        Phase.PROMOTING,
    )
    weight = new.rollout.canary_weight if canary_phase else 0
    target, other = (new, old) if state.target == state.version else (old, new)
    server_spec = weighted(target, weight) if weight else target
    server = [stamped(o, state.target, weight=weight, specs=specs) for o in owned(server_spec)]
    kept = {(o["kind"], o["metadata"]["name"]) for o in server}
    gone = [o for o in owned(other) if (o["kind"], o["metadata"]["name"]) not in kept]
    if state.strategy != "canary":
        return Desired(state.target, weight, server, gone)
    canary = [stamped(o, state.version, specs=specs) for o in owned(canary_of(new))]
    if state.phase in (Phase.STARTING, Phase.ANALYSING, Phase.PROMOTING):
        return Desired(state.target, weight, server, gone, state.version, canary=canary)
    return Desired(state.target, weight, server, gone, state.version, canary_gone=canary)


def owned(svc: ServeModel) -> list[Obj]:
    """`svc`'s own objects (not the shared weights' volume), in apply order."""
    return split_shared(svc.compile().objects)[1]


def in_place(live: Obj | None, version: int, weight: int) -> bool:
    """Whether the server object read (`live`) is stamped with `version` and `weight`."""
    if live is None or (live.get("metadata") or {}).get("deletionTimestamp"):
        return False
    notes = (live.get("metadata") or {}).get("annotations") or {}
    return notes.get(VERSION_ANNOTATION) == str(version) and notes.get(
        WEIGHT_ANNOTATION, "0"
    ) == str(weight)


def vouched(specs: str, live: list[Obj | None]) -> bool:
    """Whether a server object read (`live`) carries the rollout's spec digests `specs`: the
    mark its submitter's own apply left, which every later step copies."""
    return any(
        ((obj.get("metadata") or {}).get("annotations") or {}).get(SPECS_ANNOTATION) == specs
        for obj in live
        if obj is not None
    )


class Converge:
    """Brings objects to what a phase wants, each write conditional on a read made before.

    `read()` takes every object the writes will touch (before the record is saved); `write()`
    then applies what differs, each only over the object as read. Any write refused because
    the object changed since raises `ClusterError` (409): someone else acts, and the next step
    reads again.

    Example:
        >>> c = Converge(kube, "ml", "chat")  # doctest: +SKIP
        >>> c.read(desired(record, state)); c.write()  # doctest: +SKIP
    """

    def __init__(self, kube: KubeClient, namespace: str, name: str) -> None:
        self.kube, self.namespace, self.name = kube, namespace, name
        self._plan: Desired | None = None
        self._live: dict[Key, Obj | None] = {}

    def read(self, plan: Desired) -> None:
        """Read every object `plan` may write, and refuse (ClusterError) one whose name belongs
        to something other than this service."""
        self._plan, self._live = plan, {}
        canary = self.name + CANARY_SUFFIX
        for obj, owner in [
            *((o, self.name) for o in (*plan.server, *plan.gone)),
            *((o, canary) for o in (*plan.canary, *plan.canary_gone)),
        ]:
            key = (obj["kind"], obj["metadata"]["name"])
            if key in self._live:
                continue
            live = self.kube.find(resource_of(obj), key[1], self.namespace)
            if live is not None:
                refuse_foreign(obj, live, owner)
            self._live[key] = live

    def write(self) -> int:
        """Apply, create and delete what differs from the plan; the number of writes."""
        assert self._plan is not None, "read() first"
        plan = self._plan
        # The server's own stamp goes on last, so a step stopped half-way leaves the phase
        # visibly not in place and the next step does it all again; the canary goes only
        # after the route stopped sending it requests.
        first = [o for o in plan.server if o["kind"] not in SERVER_KINDS]
        stamp = [o for o in plan.server if o["kind"] in SERVER_KINDS]
        writes = sum(self._put(o) for o in first)
        writes += sum(self._delete(o) for o in plan.gone)
        writes += sum(self._put(o) for o in [*stamp, *plan.canary])
        return writes + sum(self._delete(o) for o in plan.canary_gone)

    def _delete(self, obj: Obj) -> int:
        live = self._live.get((obj["kind"], obj["metadata"]["name"]))
        if live is None or (live.get("metadata") or {}).get("deletionTimestamp"):
            return 0
        meta = live["metadata"]
        self.kube.delete(
            resource_of(obj),
            meta["name"],
            self.namespace,
            uid=uid(live),
            resource_version=str(meta.get("resourceVersion", "")),
        )
        return 1

    def _put(self, obj: Obj) -> int:
        live = self._live.get((obj["kind"], obj["metadata"]["name"]))
        if live is None:
            if self.kube.create(obj) is None:
                raise ClusterError(
                    f"create {obj['kind']} {obj['metadata']['name']}",
                    status=409,
                    reason="AlreadyExists",
                    message="made by someone else since it was read",
                )
            return 1
        if (live.get("metadata") or {}).get("deletionTimestamp"):
            raise ClusterError(
                f"apply {obj['kind']} {obj['metadata']['name']}",
                status=409,
                reason="Conflict",
                message="still being deleted: the next step applies it once it is gone",
            )
        meta = {**obj["metadata"], "resourceVersion": live["metadata"]["resourceVersion"]}
        self.kube.apply({**obj, "metadata": meta})
        return 1
