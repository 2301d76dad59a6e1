"""Shared watch streams against the fake API server: reconnects back off when the server
closes watches at once, and a relist after 410 Gone reports what vanished meanwhile."""

from __future__ import annotations

import dataclasses
import random
import time
from typing import Any

from gkeml_sdk.backends.kubernetes.api.resources import resource
from gkeml_sdk.backends.kubernetes.api.streams import Backoff, Event, StreamHub, StreamSpec

from .conftest import make_client

CONFIG_MAPS = resource("v1", "ConfigMap")


def config_map(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "ml", "labels": {"app": "x"}},
        "data": {"k": "v"},
    }


def next_event(hub: StreamHub, kind: str, name: str, timeout: float) -> Event | None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        event = hub.next(timeout=end - time.monotonic())
        if event is not None and (event.type, event.obj["metadata"]["name"]) == (kind, name):
            return event
    return None


@dataclasses.dataclass(frozen=True)
class CountingBackoff(Backoff):
    """A Backoff that records the failure count of every delay it is asked for."""

    asked: list[int] = dataclasses.field(default_factory=list, compare=False)

    def delay(self, failures: int) -> float:
        self.asked.append(failures)
        return super().delay(failures)


def test_reconnects_to_a_server_that_closes_watches_at_once_back_off(kube_api_factory):
    server = kube_api_factory(watch_max_seconds=0)
    kube = make_client(server)._backend.kube
    backoff = CountingBackoff(first=0.2, cap=2.0, rng=random.Random(7))
    with StreamHub(kube, [StreamSpec(CONFIG_MAPS, "ml", "app")], backoff=backoff) as hub:
        server.wait_for(lambda: server.count("GET", watch=True) >= 4, timeout=120)
        watches = server.count("GET", watch=True)  # first: every later watch asked first
        asked = list(backoff.asked)
        # Every reconnect waited for the backoff first, each one longer (counts, not seconds:
        # without backoff this loop opened hundreds of watches in 3 s).
        assert watches <= len(asked) + 1, (watches, asked)
        assert asked[:3] == [1, 2, 3], asked
        server.store.put(config_map("later"))
        # Resumed from the last version, so the write made between two watches still arrives.
        assert next_event(hub, "ADDED", "later", timeout=60.0) is not None


def test_a_watch_that_delivered_events_resets_the_backoff():
    backoff = Backoff(first=1.0, cap=30.0, rng=random.Random(1))
    assert all(backoff.delay(1) <= 1.0 for _ in range(100))
    assert max(backoff.delay(10) for _ in range(200)) > 20.0
    assert all(backoff.delay(10_000) <= 30.0 for _ in range(100))  # no overflow, capped


def test_a_relist_after_410_reports_objects_deleted_while_the_watch_was_down(kube_api):
    kube = make_client(kube_api)._backend.kube
    kube_api.store.put(config_map("stays"))
    kube_api.store.put(config_map("goes"))
    kube_api.store.put(config_map("renewed"))
    with StreamHub(kube, [StreamSpec(CONFIG_MAPS, "ml", "app")]) as hub:
        assert next_event(hub, "SYNCED", "goes", timeout=5.0) is not None
        kube_api.wait_for_watches(1)
        old_uid = kube_api.store.get("configmaps", "ml", "renewed")["metadata"]["uid"]
        # The watch goes down, and its resume reaches the server only after the changes
        # below and a compaction: it gets 410 Gone and must relist.
        kube_api.faults.inject("slow", delay=1.0, match=lambda info: info.is_watch)
        kube_api.cut_watches()
        kube_api.store.delete("configmaps", "ml", "goes")
        kube_api.store.delete("configmaps", "ml", "renewed")
        kube_api.store.put(config_map("renewed"))  # same name, new uid
        kube_api.compact()
        gone = next_event(hub, "DELETED", "goes", timeout=10.0)
        assert gone is not None and gone.obj["data"] == {"k": "v"}  # the last known object
        replaced = next_event(hub, "DELETED", "renewed", timeout=1.0)
        assert replaced is not None and replaced.obj["metadata"]["uid"] == old_uid
        assert next_event(hub, "SYNCED", "renewed", timeout=1.0) is not None
    assert kube_api.count("GET", path_re=r"configmaps$", watch=False) >= 2  # it relisted


def test_an_outage_longer_than_the_request_retries_does_not_end_the_stream(kube_api_factory):
    server = kube_api_factory()
    kube = make_client(server)._backend.kube  # gives up on a request after 6 tries
    backoff = Backoff(first=0.05, cap=0.2, rng=random.Random(3))
    with StreamHub(kube, [StreamSpec(CONFIG_MAPS, "ml", "app")], backoff=backoff) as hub:
        server.wait_for_watches(1)
        outage = server.faults.inject(kind="503", count=20, match=lambda info: info.is_watch)
        server.cut_watches()
        server.wait_for(lambda: outage.hits == 20, timeout=20)
        server.store.put(config_map("after-the-outage"))
        assert next_event(hub, "ADDED", "after-the-outage", timeout=10) is not None
