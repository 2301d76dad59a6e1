"""`client.preview` answers the hard cases as the offline preview does, against the fake API
server holding the recordings' Kueue objects: a Spot job is not "Fits now" in a flavor without
Spot nodes, and a compact job never fits a queue without a topology."""

from __future__ import annotations

from typing import Any

import pytest

from gkeml_sdk import Verdict

from .kueue_objects import KUEUE, gang, install


@pytest.fixture
def kueue(cluster: Any) -> Any:
    server = install(cluster)
    # A Spot flavor the cluster has, in no queue of team-a's: it tells flavors apart.
    server.store.put({
        "apiVersion": KUEUE, "kind": "ResourceFlavor", "metadata": {"name": "acc-spot"},
        "spec": {"nodeLabels": {"cloud.google.com/gke-spot": "true"}},
    })  # fmt: skip
    return server


def test_a_spot_job_is_told_which_flavor_holds_spot_nodes(kueue: Any, client: Any) -> None:
    found = client.preview(gang("cheap", spot=True))
    assert found.verdict is Verdict.NEVER_FITS
    assert "flavor acc-flavor of cluster queue acc-cq cannot hold these pods" in found.sentence
    assert "Use a queue with quota in flavor acc-spot" in found.sentence
    assert client.preview(gang("plain")).verdict is Verdict.FITS


def test_a_compact_job_never_fits_a_queue_without_topology(kueue: Any, client: Any) -> None:
    found = client.preview(gang("close", placement="compact"))
    assert found.verdict is Verdict.NEVER_FITS
    assert "it has no topology (spec.topologyName)" in found.sentence
