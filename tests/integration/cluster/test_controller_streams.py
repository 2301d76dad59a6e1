"""The run controller follows its runs on one stream per kind it reads: a run's end is
recorded when it is seen, a run submitted meanwhile is picked up from its record's event, and
no run's objects are read one by one, neither in a resync nor between them."""

from __future__ import annotations

import threading
import time
from typing import Any

from gkeml_sdk import RunState
from gkeml_sdk.backends.kubernetes.controller.process import RunController

from .conftest import make_client
from .test_scenarios import gang
from .test_shared_streams import end, watch_threads

# run records, cancel markers, JobSets, Jobs, Workloads, pods; and the services' version
# records, for the serving rollouts it drives
STREAMS = 7


def outcome(client: Any, name: str) -> str:
    found = client._backend.records.find(name, "ml")
    return "" if found is None else found.current.outcome


def wait_until(what: str, check: Any, timeout: float = 60.0) -> None:
    end_at = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < end_at, f"timed out waiting for {what}"
        time.sleep(0.02)


def test_the_controller_acts_on_what_the_streams_show_between_passes(cluster, client):
    client.submit(gang("first"))
    backend = make_client(cluster)._backend  # type: ignore[attr-defined]
    controller = RunController(backend, ["ml"], identity="a", interval=0.05, resync=3600.0)
    cluster.reset_peak_watches()
    acting = threading.Thread(target=controller.run, daemon=True)
    acting.start()
    try:
        wait_until("the first pass", lambda: controller.resyncs == 1 and controller.runs)
        cluster.wait_for_watches(STREAMS, timeout=30)
        client.submit(gang("second"))  # after the pass: only its record's event tells
        wait_until("the second run picked up", lambda: ("ml", "second") in controller.runs)
        end(cluster, "first", RunState.SUCCEEDED)
        end(cluster, "second", RunState.FAILED)
        wait_until("both ends recorded", lambda: outcome(client, "second") == "Failed")
        wait_until("both ends recorded", lambda: outcome(client, "first") == "Succeeded")
    finally:
        controller.stop()
        acting.join(timeout=30)
    assert not acting.is_alive()
    assert controller.resyncs == 1  # the ends came from the streams, not from a pass
    # The resync replays the cache: no run's JobSet is read.
    assert cluster.count("GET", path_re=r"/jobsets/first$") == 0
    assert cluster.count("GET", path_re=r"/jobsets/second$") == 0
    assert cluster.peak_watches <= STREAMS
    assert watch_threads() == []
