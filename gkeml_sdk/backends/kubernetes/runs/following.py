"""What following runs watches and tells: the shared streams of a set of runs, which of their
objects is an attempt the follower does not know of yet, and the progress callback of a
waiting caller."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from gkeml_sdk.backends.kubernetes.api.streams import StreamSpec
from gkeml_sdk.backends.kubernetes.runs.attempts import job_resource
from gkeml_sdk.backends.kubernetes.runs.snapshots import PODS, WORKLOADS
from gkeml_sdk.core.labels import ATTEMPT_LABEL, RUN_ID_LABEL
from gkeml_sdk.core.objects import ObjView, labels
from gkeml_sdk.runs.handle import ProgressCallback

if TYPE_CHECKING:
    from gkeml_sdk.backends.kubernetes.runs.track import RunTrack


def stream_specs(runs: list[RunTrack]) -> list[StreamSpec]:
    """The streams that follow `runs`: per namespace their job kind, the Workloads and the
    pods. No run records: what a run controller does to a run shows on its attempt objects
    (see `later_attempt`), so three streams a namespace follow any number of runs."""
    specs = []
    for namespace in sorted({r.namespace for r in runs}):
        kinds = {job_resource(r.record) for r in runs}
        for kind in sorted(kinds, key=lambda k: k.kind):
            # Attempts created before the stream lists: one deleted meanwhile is reported.
            mine = [r for r in runs if r.namespace == namespace and job_resource(r.record) == kind]
            known = tuple(
                {"metadata": {"name": a.name, "namespace": namespace, "uid": a.uid}}
                for a in (r.record.current for r in mine)
                if a.uid
            )
            specs.append(StreamSpec(kind, namespace, RUN_ID_LABEL, known))
        # Kueue builds Workloads itself; they do not carry our labels.
        specs.append(StreamSpec(WORKLOADS, namespace))
        specs.append(StreamSpec(PODS, namespace, RUN_ID_LABEL))
    return specs


def later_attempt(number: int, obj: ObjView) -> bool:
    """True when `obj`, an object of a run's job kind, is an attempt after `number` (the one
    its follower holds): whoever acts for the run resubmitted it, and its record, which
    reserves an attempt before creating it, says so now. The Jobs a JobSet owns are none.

    Example:
        >>> attempt = {"metadata": {"labels": {"gkeml.dev/attempt": "2"}}}
        >>> later_attempt(1, attempt), later_attempt(2, attempt)
        (True, False)
    """
    if (obj.get("metadata") or {}).get("ownerReferences"):
        return False
    found = labels(obj).get(ATTEMPT_LABEL, "")
    return found.isdigit() and int(found) > number


def progress_callback(progress: bool | ProgressCallback) -> ProgressCallback | None:
    """The callback `wait(progress=...)` asks for: the caller's, or a terminal line."""
    if callable(progress):
        return progress
    if progress and sys.stderr.isatty():
        # Opt-in terminal progress: one line rewritten in place.
        return lambda status: print(f"\r\033[K{status}", end="", file=sys.stderr, flush=True)
    return None
