"""Which attempt objects belong to which submission of a run. A run's name is reused when it
is submitted again, so the name and the run-id label alone do not tell a finished submission's
objects from a later one's: the uid its record holds, or the submission annotation every
attempt object carries, does."""

from __future__ import annotations

from gkeml_sdk.backends.kubernetes.api.kube import KubeClient
from gkeml_sdk.backends.kubernetes.runs.attempts import SUBMISSION_ANNOTATION, job_resource
from gkeml_sdk.backends.kubernetes.runs.run_record import RunRecord
from gkeml_sdk.core.labels import RUN_ID_LABEL
from gkeml_sdk.core.objects import ObjView, uid


def submission_of(obj: ObjView) -> str:
    """The submission (its `submitted_at`, as written) an attempt object was made for; ''
    for an object written before attempts carried one.

    Example:
        >>> submission_of({"metadata": {"annotations": {"gkeml.dev/submission": "5.0"}}})
        '5.0'
    """
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    return str(annotations.get(SUBMISSION_ANNOTATION) or "")


def made_by(obj: ObjView, record: RunRecord) -> bool:
    """True when `obj` is an attempt object of the submission `record` holds: its uid is one
    the record lists, or it carries that submission's annotation. An object another
    submission of the same name made (earlier or later) is not.

    Example:
        >>> from gkeml_sdk.backends.kubernetes.runs.run_record import AttemptRecord
        >>> from gkeml_sdk import TrainingJob
        >>> job = TrainingJob(name="ft", image="i", command=["x"], namespace="ml")
        >>> record = RunRecord(job=job, submitted_at=5.0, attempts=(AttemptRecord(1, "ft", False),))
        >>> made_by({"metadata": {"annotations": {"gkeml.dev/submission": "4.0"}}}, record)
        False
    """
    known = {a.uid for a in record.attempts if a.uid}
    if uid(obj) and uid(obj) in known:
        return True
    return submission_of(obj) == repr(record.submitted_at)


def delete_submission(kube: KubeClient, record: RunRecord) -> list[str]:
    """Delete the attempt objects of the submission `record` holds, each on the condition
    that the name still holds the object listed (uid precondition): an object another
    submission made under that name meanwhile is left alone. Returns the names deleted.

    Example:
        >>> delete_submission(kube, run.record)  # doctest: +SKIP
        ['llama-ft', 'llama-ft--r2']
    """
    res, namespace = job_resource(record), record.job.namespace
    found, _ = kube.list(res, namespace, label_selector=f"{RUN_ID_LABEL}={record.name}")
    victims = {str(o["metadata"]["name"]): uid(o) for o in found if made_by(o, record)}
    return [
        name
        for name, known in sorted(victims.items())
        if kube.delete(res, name, namespace, uid=known)
    ]
