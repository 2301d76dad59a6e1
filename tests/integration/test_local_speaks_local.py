"""A run on this machine is told in local words: no HTTP statuses, no ClusterError, and a
finished run's `why` says what happened to its processes, not that there is no queue."""

from __future__ import annotations

from pathlib import Path

import pytest

from gkeml_sdk import (
    Client,
    ClusterError,
    LocalSettings,
    NotFoundError,
    RunExistsError,
    TrainingJob,
)
from gkeml_sdk.runs.explain.local_reasons import explain_local
from gkeml_sdk.runs.states import RunState, RunStatus

HTTP_WORDS = ("404", "409", "NotFound", "AlreadyExists")


def test_an_unknown_local_run_is_not_found_in_local_words(tmp_path: Path) -> None:
    with pytest.raises(NotFoundError) as caught:
        Client(local=LocalSettings(run_dir=tmp_path)).get_run("nope")
    text = str(caught.value)
    assert text.startswith(f"get local run 'nope': no run of that name under {tmp_path}")
    assert not any(word in text for word in HTTP_WORDS) and caught.value.status == 0


def test_an_active_name_is_a_run_exists_error_in_local_words(tmp_path: Path) -> None:
    client = Client(local=LocalSettings(run_dir=tmp_path))
    run = client.submit(TrainingJob(name="keep", command=["sleep", "60"]))
    try:
        with pytest.raises(RunExistsError) as caught:
            client.submit(TrainingJob(name="keep", command=["true"]))
    finally:
        run.cancel()
    text = str(caught.value)
    assert text.startswith("submit local run 'keep': a run of that name is ")
    assert not any(word in text for word in HTTP_WORDS)
    assert isinstance(caught.value, ClusterError)  # still caught as a cluster's 409 is
    assert type(caught.value).__name__ != "ClusterError"


@pytest.mark.parametrize(
    ("state", "reason", "says", "never"),
    [
        (RunState.CANCELLED, "Cancelled", "its processes on this machine were stopped", "queue"),
        (RunState.SUCCEEDED, "Completed", "Succeeded as local processes", "queue"),
        (RunState.RUNNING, "Running", "Running as local processes", "queue"),
        (RunState.PENDING, "", "no queue, quota or scheduler to wait for", "stopped"),
    ],
)
def test_why_of_a_local_run_talks_of_queues_only_before_it_starts(
    state: RunState, reason: str, says: str, never: str
) -> None:
    sentence = explain_local("t", RunStatus(state, reason), [], {}).sentence
    assert says in sentence and never not in sentence, sentence


def test_why_of_a_cancelled_local_run(tmp_path: Path) -> None:
    client = Client(local=LocalSettings(run_dir=tmp_path))
    run = client.submit(TrainingJob(name="stop", command=["sleep", "60"]))
    run.cancel()
    sentence = run.explain().sentence
    assert sentence.startswith("Cancelled as local processes") and "queue" not in sentence
