"""One history per run: the one rule that decides whether a transition is new, so any number
of readers, restarted followers or controllers that see the same cluster build the same list.

A transition is keyed by what it records (the attempt's object uid, the state and reason,
and the cluster's own transition time or Kueue's eviction count), never by when somebody
happened to look.

Example:
    >>> from gkeml_sdk.runs.handle import RunState, RunStatus, Transition
    >>> a = Transition(RunStatus(RunState.RUNNING, "Running"), key="u1/Running//t1")
    >>> merge((a,), [a, Transition(RunStatus(RunState.RUNNING, "Running"), key="u1/x")]) == (a,)
    True
"""

from __future__ import annotations

from collections.abc import Iterable

from gkeml_sdk.runs.handle import RunState, RunStatus, Transition


def transition_key(attempt_uid: str, status: RunStatus, since: str, extra: str = "") -> str:
    """The identity of one transition: `since` is the cluster's transition time of what
    decided the status (a condition's lastTransitionTime); `extra` tells apart repeats that
    Kueue or JobSet count (the JobSet restart number).

    Example:
        >>> transition_key("u1", RunStatus(RunState.RESTARTING, "RestartingJobSet"), "t", "2")
        'u1/Restarting/RestartingJobSet/t/2'
    """
    return "/".join((attempt_uid, status.state.value, status.reason, since, extra)).rstrip("/")


def eviction_key(attempt_uid: str, reason: str, count: int) -> str:
    """The identity of the `count`-th eviction for `reason` (Kueue's cumulative count), the
    same whether the eviction was seen live or inferred from `schedulingStats` later.

    Example:
        >>> eviction_key("u1", "Preempted", 1)
        'u1/evicted/Preempted/1'
    """
    return f"{attempt_uid}/evicted/{reason}/{count}"


def repeats(last: Transition | None, new: Transition) -> bool:
    """True when `new` says nothing that `last` (the newest entry of the same attempt) did not:
    the same state and reason; while waiting for capacity the check's message is the news.

    Example:
        >>> from gkeml_sdk.runs.handle import RunState, RunStatus, Transition
        >>> q = Transition(RunStatus(RunState.QUEUED, "Pending", "position 3"))
        >>> repeats(q, Transition(RunStatus(RunState.QUEUED, "Pending", "position 2")))
        True
    """
    if last is None or last.attempt != new.attempt:
        return False
    old, now = last.status, new.status
    if (old.state, old.reason) != (now.state, now.reason):
        return False
    return now.state is not RunState.WAITING_FOR_CAPACITY or old.message == now.message


def merge(history: Iterable[Transition], new: Iterable[Transition]) -> tuple[Transition, ...]:
    """`history` with every entry of `new` that is new: neither its key is already there nor
    it repeats the newest entry of its attempt. Merging the same entries twice changes
    nothing.

    Example:
        >>> from gkeml_sdk.runs.handle import RunState, RunStatus, Transition
        >>> q = Transition(RunStatus(RunState.QUEUED), key="u/Queued")
        >>> len(merge(merge((), [q]), [q]))
        1
    """
    merged = list(history)
    keys = {t.key for t in merged if t.key}
    for transition in new:
        if transition.key and transition.key in keys:
            continue
        same_attempt = [t for t in merged if t.attempt == transition.attempt]
        if repeats(same_attempt[-1] if same_attempt else None, transition):
            continue
        merged.append(transition)
        if transition.key:
            keys.add(transition.key)
    return tuple(merged)
