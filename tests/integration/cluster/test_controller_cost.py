"""What the run controller costs the API server (issue 40 item 1), counted at the server: at
rest its resyncs replay its cache and read nothing (only its Lease is renewed), and one run's
state change costs at most 3 requests, whatever the number of runs it manages."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

from gkeml_sdk import RunState
from gkeml_sdk.backends.kubernetes.controller.process import RunController

from .conftest import make_client
from .test_controller_streams import wait_until
from .test_scenarios import gang
from .test_shared_streams import end

RUNS = 50


def requests(cluster: Any) -> list[str]:
    """The requests logged, but for watches and the controller's Lease renewals."""
    return [
        f"{r.method} {r.path}"
        for r in cluster.request_log
        if not r.watch and "/leases/" not in r.path
    ]


@pytest.fixture
def acting(cluster: Any, client: Any) -> Iterator[RunController]:
    for i in range(RUNS):
        client.submit(gang(f"r{i:02d}"))
    backend = make_client(cluster)._backend  # type: ignore[attr-defined]
    controller = RunController(backend, ["ml"], identity="a", interval=0.05, resync=3600.0)
    thread = threading.Thread(target=controller.run, daemon=True)
    thread.start()
    try:
        wait_until("the first resync", lambda: controller.resyncs == 1)
        wait_until("every run taken", lambda: len(controller.runs) == RUNS)
        assert controller.queue.join(timeout=60)
        yield controller
    finally:
        controller.stop()
        thread.join(timeout=30)
    assert not thread.is_alive()


def resync(controller: RunController) -> None:
    before = controller.resyncs
    controller.resync_now()
    wait_until("a resync", lambda: controller.resyncs == before + 1)
    assert controller.queue.join(timeout=60)


def test_resyncs_at_rest_read_nothing_from_the_api_server(cluster, acting):
    resync(acting)  # what the first turns wrote has come back on the streams
    cluster.clear_request_log()
    resync(acting)
    resync(acting)
    assert requests(cluster) == []
    assert cluster.count("PUT", path_re=r"/leases/") >= 1  # it kept leading meanwhile
    assert cluster.count("GET", path_re=r"/leases/") == 0  # renewed without reading it
    assert acting.leading and len(acting.runs) == RUNS


def test_one_runs_state_change_costs_at_most_three_requests(cluster, acting):
    resync(acting)
    cluster.clear_request_log()
    end(cluster, "r07", RunState.SUCCEEDED)  # the JobSet controller's write, no request
    run = acting.runs[("ml", "r07")]
    wait_until("its end recorded", lambda: run.record.current.outcome == "Succeeded")
    assert acting.queue.join(timeout=60)
    # The record's save, conditional on the version the controller holds; nothing read.
    assert requests(cluster) == ["PUT /api/v1/namespaces/ml/configmaps/r07-gkeml-run"]
