"""The rights the controller's `gkeml-rollouts` Role grants are exactly those the rollouts it
drives use: every kind of object a representative set of services owns (server, route,
autoscaler, disruption budget, scrape config; Istio, the inference gateway, KEDA,
LeaderWorkerSets, a canary) has its rule, and no rule is for a kind none of them owns."""

from __future__ import annotations

from gkeml_sdk.backends.kubernetes.api.resources import resource_of
from gkeml_sdk.backends.kubernetes.controller.permissions import ROLLOUT_RULES
from gkeml_sdk.backends.kubernetes.serving.rollout_objects import canary_of, owned
from gkeml_sdk.serving.rollout import Rollout
from gkeml_sdk.serving.routing import Routing
from tests.unit.serving.test_golden import SERVICES
from tests.unit.serving.test_keda_and_spot_mix import ZERO, make


def services() -> list:
    out = list(SERVICES.values())
    out.append(make(replicas=ZERO, routing=Routing(via="istio")))  # KEDA
    canary = make(replicas=2, routing=Routing(via="istio"), rollout=Rollout(strategy="canary"))
    return [*out, canary, canary_of(canary)]


def test_every_object_a_rollout_moves_has_its_rule_and_every_rule_is_used() -> None:
    used = {(resource_of(o).group, resource_of(o).plural) for s in services() for o in owned(s)}
    granted = {
        (group, plural)
        for rule in ROLLOUT_RULES
        for group in rule["apiGroups"]
        for plural in rule["resources"]
        if plural != "pods/proxy"  # read by the canary's metrics, not an object it moves
    }
    assert granted == used
    for rule in ROLLOUT_RULES:
        if rule["resources"] != ["pods/proxy"]:
            # read before a write, created when missing, applied as read, deleted as read
            assert rule["verbs"] == ["get", "create", "patch", "delete"]
