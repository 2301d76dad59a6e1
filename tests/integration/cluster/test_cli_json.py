"""`gkeml runs -o json` and `gkeml status NAME -o json` against the fake API server with the
recorded controllers' objects: the same runs and states the text form shows, as JSON."""

from __future__ import annotations

import json
from typing import Any

import pytest

from gkeml_sdk.cli.main import main

from .kueue_objects import gang, install
from .replay import Replayer

EVENTS = ("JobSet", "Job", "Workload", "Pod", "Event")


@pytest.fixture
def kueue(cluster: Any) -> Any:
    return install(cluster)


def test_runs_and_status_as_json_on_a_cluster(kueue: Any, client: Any, tmp_path, capsys) -> None:
    kubeconfig = str(kueue.kubeconfig(tmp_path / "kubeconfig", namespace="ml"))
    client.submit(gang("huge", nodes=4))
    Replayer(kueue, "ml", "huge", 1, "huge").play(
        "jobset-over-quota-pending", "huge", pause=0, kinds=EVENTS
    )
    assert main(["runs", "-o", "json", "--kubeconfig", kubeconfig]) == 0
    out, err = capsys.readouterr()
    (record,) = json.loads(out)
    assert (record["name"], record["namespace"], record["state"]) == ("huge", "ml", "Queued")
    assert record["reason"] == "ExceedsMaxQuota" and err == ""
    assert main(["status", "huge", "-o", "json", "--kubeconfig", kubeconfig]) == 0
    one = json.loads(capsys.readouterr().out)
    assert one["state"] == "Queued" and one["history"][-1]["state"] == "Queued"
    assert main(["runs", "--kubeconfig", kubeconfig]) == 0
    text = capsys.readouterr().out.splitlines()
    assert text[1].split()[:2] == ["huge", "Queued"]
