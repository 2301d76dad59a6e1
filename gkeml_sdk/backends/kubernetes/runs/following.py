"""What following runs watches and tells: the shared streams of a set of runs and the
progress callback of a waiting caller."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from gkeml_sdk.backends.kubernetes.api.streams import StreamSpec
from gkeml_sdk.backends.kubernetes.runs.attempts import job_resource
from gkeml_sdk.backends.kubernetes.runs.run_record import RECORD_LABEL
from gkeml_sdk.backends.kubernetes.runs.run_records import CONFIG_MAPS
from gkeml_sdk.backends.kubernetes.runs.snapshots import PODS, WORKLOADS
from gkeml_sdk.core.labels import RUN_ID_LABEL
from gkeml_sdk.runs.handle import ProgressCallback

if TYPE_CHECKING:
    from gkeml_sdk.backends.kubernetes.runs.track import RunTrack


def stream_specs(runs: list[RunTrack]) -> list[StreamSpec]:
    """The streams that follow `runs`: per namespace their job kind, the Workloads and the
    pods; and the run records when a controller acts for some of them."""
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
        if any(r.lifecycle is None for r in runs if r.namespace == namespace):
            # A controller acts for these: its resubmissions arrive as record changes.
            specs.append(StreamSpec(CONFIG_MAPS, namespace, f"{RECORD_LABEL}=true"))
        # Kueue builds Workloads itself; they do not carry our labels.
        specs.append(StreamSpec(WORKLOADS, namespace))
        specs.append(StreamSpec(PODS, namespace, RUN_ID_LABEL))
    return specs


def progress_callback(progress: bool | ProgressCallback) -> ProgressCallback | None:
    """The callback `wait(progress=...)` asks for: the caller's, or a terminal line."""
    if callable(progress):
        return progress
    if progress and sys.stderr.isatty():
        # Opt-in terminal progress: one line rewritten in place.
        return lambda status: print(f"\r\033[K{status}", end="", file=sys.stderr, flush=True)
    return None
