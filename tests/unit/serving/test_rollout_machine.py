"""The rollout state machine, transition by transition, with an explicit clock; and the
version record it keeps."""

from __future__ import annotations

import pytest

from gkeml_sdk.errors import SpecError
from gkeml_sdk.serving.rollout import Rollout
from gkeml_sdk.serving.rollout_machine import (
    Action,
    CanarySample,
    Observation,
    Phase,
    RolloutState,
    VersionRecord,
    advance,
    start,
)

SURGE = Rollout()
CANARY = Rollout(strategy="canary", analysis_seconds=100, max_latency_seconds=5.0)


def begin(rollout: Rollout) -> RolloutState:
    state, actions = start(rollout, version=2, previous=1, now=0.0, deadline_seconds=60)
    assert actions == [Action.APPLY_CANARY if rollout.strategy == "canary" else Action.APPLY_NEW]
    return state


def see(now: float, ready: bool = False, canary: bool = False, **kw) -> Observation:
    return Observation(now=now, server_ready=ready, canary_ready=canary, **kw)


# (strategy, [(observation, phase after, actions)]) walked from the start.
WALKS = {
    "surge completes": (SURGE, [
        (see(10), Phase.STARTING, []),
        (see(20, ready=True), Phase.COMPLETE, []),
    ]),
    "surge misses its deadline": (SURGE, [
        (see(59.9), Phase.STARTING, []),
        (see(60, not_ready_reason="CrashLoopBackOff"), Phase.ROLLING_BACK, [Action.RESTORE]),
        (see(70), Phase.ROLLING_BACK, []),
        (see(80, ready=True), Phase.ROLLED_BACK, []),
    ]),
    "canary passes": (CANARY, [
        (see(10, canary=True), Phase.ANALYSING, [Action.ROUTE_CANARY]),
        (see(50, canary=True, sample=CanarySample(30, 0, 1.0)), Phase.ANALYSING, []),
        (see(110, canary=True, sample=CanarySample(80, 0, 1.0)), Phase.PROMOTING,
         [Action.APPLY_NEW]),
        (see(120), Phase.PROMOTING, []),
        (see(130, ready=True), Phase.COMPLETE, [Action.ROUTE_STABLE, Action.DELETE_CANARY]),
    ]),
    "canary never ready": (CANARY, [
        (see(60), Phase.ROLLING_BACK, [Action.DELETE_CANARY]),
        (see(61, ready=True), Phase.ROLLED_BACK, []),
    ]),
    "canary too slow": (CANARY, [
        (see(10, canary=True), Phase.ANALYSING, [Action.ROUTE_CANARY]),
        (see(20, canary=True, sample=CanarySample(50, 0, 9.0)), Phase.ROLLING_BACK,
         [Action.ROUTE_STABLE, Action.DELETE_CANARY]),
    ]),
    "canary crashes while analysed": (CANARY, [
        (see(10, canary=True), Phase.ANALYSING, [Action.ROUTE_CANARY]),
        (see(20, not_ready_reason="OOMKilled"), Phase.ROLLING_BACK,
         [Action.ROUTE_STABLE, Action.DELETE_CANARY]),
    ]),
    "canary too quiet to judge": (CANARY, [
        (see(10, canary=True), Phase.ANALYSING, [Action.ROUTE_CANARY]),
        (see(110, canary=True, sample=CanarySample(3, 0)), Phase.ROLLING_BACK,
         [Action.ROUTE_STABLE, Action.DELETE_CANARY]),
    ]),
    "promoted server misses its new deadline": (CANARY, [
        (see(10, canary=True), Phase.ANALYSING, [Action.ROUTE_CANARY]),
        (see(110, canary=True, sample=CanarySample(80, 0)), Phase.PROMOTING, [Action.APPLY_NEW]),
        (see(169), Phase.PROMOTING, []),
        (see(170), Phase.ROLLING_BACK,
         [Action.RESTORE, Action.ROUTE_STABLE, Action.DELETE_CANARY]),
    ]),
}  # fmt: skip


@pytest.mark.parametrize("walk", list(WALKS))
def test_transitions(walk):
    rollout, steps = WALKS[walk]
    state = begin(rollout)
    for seen, phase, actions in steps:
        state, done = advance(state, seen, rollout)
        assert (state.phase, done) == (phase, actions), seen
        assert RolloutState.from_json(state.to_json()) == state
    assert advance(state, see(1e9, ready=True), rollout) == (state, []) or not state.done


def test_reasons_name_the_version_the_deadline_and_the_cause():
    state = begin(SURGE)
    state, _ = advance(state, see(60, not_ready_reason="ImagePullBackOff: not found"), SURGE)
    assert state.reason == "version 2 not ready within 60 s: ImagePullBackOff: not found"
    state = begin(CANARY)
    state, _ = advance(state, see(1, canary=True), CANARY)
    state, _ = advance(state, see(2, canary=True, sample=CanarySample(100, 5)), CANARY)
    assert state.reason == (
        "canary of version 2 failed 5 of 100 requests (5.0% > max_error_ratio 1.0%)"
    )


def test_target_version_per_phase():
    state = begin(CANARY)
    assert state.target == 1  # the server keeps the old version while the canary runs
    state, _ = advance(state, see(1, canary=True), CANARY)
    state, _ = advance(state, see(101, canary=True, sample=CanarySample(50, 0)), CANARY)
    assert (state.phase, state.target) == (Phase.PROMOTING, 2)


def test_record_keeps_outcomes_and_the_last_ready_version():
    record = VersionRecord().added({"image": "a"}, outcome="serving", now=0.0)
    record = record.with_outcome(1, "ready", now=1.0)
    record = record.added({"image": "b"}, outcome="rolling-out", now=2.0)
    state = begin(SURGE)
    state, _ = advance(state, see(60), SURGE)
    record = record.with_state(state)
    assert [str(v) for v in record.versions] == [
        "v1 ready",
        "v2 rolled-back: version 2 not ready within 60 s: replicas not ready",
    ]
    assert record.last_ready().version == 1
    record = record.added({"image": "c"}, outcome="rolling-out", now=3.0).with_outcome(3, "ready")
    assert [v.outcome for v in record.versions] == ["superseded", "rolled-back", "ready"]
    assert VersionRecord.from_data(record.to_data()) == record


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"canary_weight": 0}, "1 to 99 percent"),
        ({"canary_weight": 100}, "1 to 99 percent"),
        ({"ready_deadline_seconds": 0}, "ready_deadline_seconds=0"),
        ({"max_error_ratio": 1.0}, "max_error_ratio=1.0"),
        ({"canary_replicas": 0}, "canary_replicas=0"),
    ],
)
def test_rollout_settings_are_checked(kwargs, match):
    with pytest.raises(SpecError, match=match):
        Rollout(**kwargs)
