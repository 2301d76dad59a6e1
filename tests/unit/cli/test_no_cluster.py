"""With no cluster configured, `gkeml runs` and `gkeml status` show the local runs and say
so in one line, instead of failing with the configuration error."""

from __future__ import annotations

from pathlib import Path

import pytest

from gkeml_sdk import Client, TrainingJob
from gkeml_sdk.cli.main import main


@pytest.fixture(autouse=True)
def one_local_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GKEML_RUN_DIR", str(tmp_path / "runs"))
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "no-kubeconfig"))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    Client(backend="local").submit(TrainingJob(name="here", command=["true"])).wait(60)


@pytest.mark.parametrize("argv", [["runs"], ["status"]])
def test_runs_and_status_list_local_runs_under_one_line(capsys, argv: list[str]) -> None:
    assert main(argv) == 0
    note, header, row = capsys.readouterr().out.splitlines()
    assert note.startswith("no cluster configured (") and "no-kubeconfig does not exist" in note
    assert "gcloud container clusters get-credentials" in note and "--kubeconfig" in note
    assert header.split() == ["name", "state", "reason"] and row.split()[:2] == [
        "here",
        "Succeeded",
    ]


def test_status_of_a_local_run(capsys) -> None:
    assert main(["status", "here"]) == 0
    note, head, *history = capsys.readouterr().out.splitlines()
    assert (
        note.startswith("no cluster configured (")
        and head == "here: Succeeded: Completed: every process exited 0"
    )
    assert history and all("attempt 1" in line for line in history)
