"""What the run controller keeps of an object (`slim`) is all its classification reads: every
real recording replayed from slim objects gives the history, status and counts the whole
objects give."""

from __future__ import annotations

import pytest

from gkeml_sdk.backends.kubernetes.controller.slim import slim
from gkeml_sdk.runs.status import StatusTracker
from tests.unit.runs.test_status import CASES, Case, load, needs_fixtures, select


def replayed(case: Case, keep: bool) -> StatusTracker:
    tracker = StatusTracker(attempt=2)
    for e in select(load(case.stem), case.job):
        obj = slim({"kind": e["kind"], **e["object"]}) if keep else e["object"]
        tracker.observe(e["kind"], e["type"], obj, at=e["t"])
    return tracker


@needs_fixtures
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.stem}:{c.job or 'job'}")
def test_a_recording_replayed_from_slim_objects_reads_the_same(case: Case) -> None:
    whole, kept = replayed(case, keep=False), replayed(case, keep=True)
    assert kept.history == whole.history
    assert kept.status == whole.status
    assert kept.counters == whole.counters
    assert kept.is_resubmittable() is whole.is_resubmittable()


def test_a_pod_keeps_whose_it_is_and_what_judges_it() -> None:
    pod = {
        "kind": "Pod",
        "metadata": {
            "name": "p", "uid": "u", "annotations": {"a": "b"}, "ownerReferences": [{}],
            "labels": {"gkeml.dev/run-id": "r", "jobset.sigs.k8s.io/jobset-name": "r",
                       "jobset.sigs.k8s.io/job-key": "k"},
        },
        "spec": {"containers": [{"name": "main"}]},
        "status": {
            "phase": "Failed", "podIP": "10.0.0.1", "qosClass": "Burstable",
            "conditions": [{"type": "DisruptionTarget", "status": "True", "reason": "x"},
                           {"type": "PodScheduled", "status": "True"}],
            "containerStatuses": [{"name": "main", "image": "i", "imageID": "d",
                                   "state": {"terminated": {"exitCode": 3}}}],
        },
    }  # fmt: skip
    assert slim(pod) == {
        "kind": "Pod",
        "metadata": {
            "name": "p", "uid": "u",
            "labels": {"gkeml.dev/run-id": "r", "jobset.sigs.k8s.io/jobset-name": "r"},
        },
        "status": {
            "phase": "Failed",
            "conditions": [{"type": "DisruptionTarget", "status": "True", "reason": "x"}],
            "containerStatuses": [{"name": "main", "state": {"terminated": {"exitCode": 3}}}],
        },
    }  # fmt: skip
