"""The run values every backend reports behave as the frozen dataclasses they replaced: equal
and hashable by their fields, unchangeable once made (RunCounters stays mutable, as it was)."""

import pytest

from gkeml_sdk.runs.handle import FailureCause, RunCounters, RunState, RunStatus, Transition


def test_statuses_and_transitions_cannot_change_once_made() -> None:
    status = RunStatus(RunState.FAILED, "BackoffLimitExceeded", "exit 1", FailureCause.USER_CODE)
    transition = Transition(status, attempt=2)
    for value, field in ((status, "state"), (transition, "attempt")):
        with pytest.raises(AttributeError, match="frozen"):
            setattr(value, field, None)
        with pytest.raises(AttributeError, match="frozen"):
            delattr(value, field)
    assert status.state is RunState.FAILED and transition.attempt == 2


def test_they_compare_and_hash_by_their_fields() -> None:
    same = [RunStatus(RunState.RUNNING, "Running"), RunStatus(RunState.RUNNING, "Running")]
    assert same[0] == same[1] and len(set(same)) == 1
    assert RunStatus(RunState.RUNNING) != RunStatus(RunState.QUEUED)
    assert RunStatus(RunState.RUNNING) != (RunState.RUNNING, "", "", None)


def test_counters_count_in_place_and_are_not_hashed() -> None:
    counters = RunCounters()
    counters.preemptions += 1
    assert counters == RunCounters(preemptions=1)
    with pytest.raises(TypeError):
        hash(counters)
