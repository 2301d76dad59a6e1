"""A local run explains itself from its own status, history and exit codes: there is no
queue, no admission and no scheduler on this machine."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from gkeml_sdk.runs.explain.explanation import Category, Evidence, Explanation, Preview, Verdict
from gkeml_sdk.runs.states import FailureCause, RunState, RunStatus, Transition

_CATEGORY = {
    RunState.PENDING: Category.STARTING,
    RunState.QUEUED: Category.STARTING,
    RunState.WAITING_FOR_CAPACITY: Category.STARTING,
    RunState.STARTING: Category.STARTING,
    RunState.RUNNING: Category.RUNNING,
    RunState.RESTARTING: Category.CRASH,
    RunState.PREEMPTED: Category.PREEMPTED,
    RunState.SUCCEEDED: Category.SUCCEEDED,
    RunState.CANCELLED: Category.CANCELLED,
}


def explain_local(
    name: str,
    status: RunStatus,
    history: Sequence[Transition],
    exit_codes: Mapping[str, int | None],
) -> Explanation:
    """Why a local run is where it is.

    Example:
        >>> s = RunStatus(RunState.FAILED, "ProcessFailed", "", FailureCause.USER_CODE)
        >>> explain_local("t", s, [], {"0": 1}).category
        <Category.CRASH: 'crash'>
    """
    evidence = tuple(
        Evidence("LocalRun", name, f"attempt {t.attempt} {t.status.state.value}",
                 t.status.reason, t.status.message, f"+{t.at:.1f}s")
        for t in history
    ) + tuple(
        Evidence("Process", f"{name}[{slot}]", "exit code", "", str(code))
        for slot, code in sorted(exit_codes.items()) if code is not None
    )  # fmt: skip
    said = ": ".join(p for p in (status.reason, status.message) if p)
    said = f" ({said})" if said else ""
    failed = {slot: code for slot, code in exit_codes.items() if code}
    if status.state is RunState.FAILED:
        if status.cause is FailureCause.USER_CODE or failed:
            codes = ", ".join(
                f"process {s} exited with code {c}" for s, c in sorted(failed.items())
            )
            killed = " (137 = killed, often out of memory)" if 137 in failed.values() else ""
            return Explanation(
                Category.CRASH,
                f"Failed: {codes or 'the code failed'}{killed}{said}. Read the logs "
                "(run.logs()), fix the code, and run it again.",
                evidence,
            )
        return Explanation(
            Category.UNKNOWN,
            f"Failed on this machine{said}; the local supervisor stopped. Run it again.",
            evidence,
        )
    category = _CATEGORY.get(status.state, Category.UNKNOWN)
    # Only a run that has not started may seem to wait for something; the others say what
    # happened to their processes.
    after = {
        Category.STARTING: "; locally there is no queue, quota or scheduler to wait for",
        Category.CANCELLED: ": its processes on this machine were stopped",
    }.get(category, "")
    return Explanation(category, f"{status.state.value} as local processes{said}{after}.", evidence)


def preview_local(processes: int) -> Preview:
    """A local run never queues: it starts at once as processes on this machine.

    Example:
        >>> preview_local(2).verdict
        <Verdict.FITS: 'fits now'>
    """
    return Preview(
        Verdict.FITS,
        f"Fits now: the local backend starts it at once as {processes} process"
        f"{'es' if processes != 1 else ''} on this machine; there is no Kueue queue or quota "
        "locally, and accelerators are not reserved (they are shared with whatever else runs "
        "here).",
    )
