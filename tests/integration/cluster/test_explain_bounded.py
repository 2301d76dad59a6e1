"""`explain` of a queued run reads what Kueue computed (issue 40 item 3): its place from the
visibility API, one page of it; the namespace's other Workloads only when that API is not
served, and then one page. Its reads do not grow with the Workloads pending."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from gkeml_sdk import Category

from .conftest import make_client
from .kueue_objects import gang, install, kueue_reports_usage
from .replay import FIXTURES, Replayer

SCENARIO = "jobset-queued-behind-another"
VISIBILITY = (
    "/apis/visibility.kueue.x-k8s.io/v1beta2/namespaces/ml/localqueues/team-a/pendingworkloads"
)


@pytest.fixture
def queued(cluster: Any) -> Any:
    return queue_behind(cluster)


def queue_behind(cluster: Any) -> Any:
    """The recording's second run queued behind the first, and a client to explain it."""
    install(cluster)
    client = make_client(cluster)
    jobs = [gang("second", nodes=1, gang=True), gang("first")]
    for spec in jobs:
        client.submit(spec)
    for spec in jobs:
        Replayer(cluster, "ml", spec.name, 1, spec.name).play(
            SCENARIO, spec.name, pause=0, until=2.0,
            kinds=("JobSet", "Job", "Workload", "Pod", "Event"),
        )  # fmt: skip
    kueue_reports_usage(cluster)
    return client


def pile_up(cluster: Any, count: int) -> list[dict[str, Any]]:
    """`count` more pending Workloads in the queue, behind the run (Kueue's order)."""
    mine = next(w for w in cluster.objects("workloads", "ml") if "second" in w["metadata"]["name"])
    added = []
    for i in range(count):
        other = copy.deepcopy(mine)
        other["metadata"] = {"name": f"other-{i:05d}", "namespace": "ml", "labels": {}}
        other.pop("status", None)
        cluster.store.put(other)
        added.append(other)
    return added


def serve_visibility(cluster: Any, others: list[dict[str, Any]]) -> None:
    path = FIXTURES / f"{SCENARIO}.pendingworkloads.json"
    if not path.is_file():
        pytest.skip(f"Kueue recordings not found at {FIXTURES}")
    recorded = json.loads(path.read_text())
    items = recorded["items"]
    for item in items:
        item["metadata"]["namespace"] = "ml"
    for i, other in enumerate(others, start=len(items)):
        meta = {"name": other["metadata"]["name"], "namespace": "ml"}
        items.append({**items[0], "metadata": meta, "positionInLocalQueue": i})
    cluster.serve_aggregated(VISIBILITY, {**recorded, "items": items})


def explained(cluster: Any, client: Any) -> tuple[Any, list[tuple[str, str, dict[str, str]]]]:
    run = client.get_run("second")
    cluster.clear_request_log()
    explanation = run.explain()
    return explanation, [(r.method, r.path, r.query) for r in cluster.request_log]


def unselected_workload_lists(reads: list[tuple[str, str, dict[str, str]]]) -> list[Any]:
    """The lists of the namespace's Workloads that no selector narrows (the run's own is read
    by its job's uid, those holding quota by the ClusterQueue that admitted them)."""
    return [
        q
        for _, p, q in reads
        if p.endswith("/namespaces/ml/workloads")
        and not ({"labelSelector", "fieldSelector"} & set(q))
    ]


@pytest.mark.parametrize("pending", [0, 600])
def test_the_place_comes_from_one_page_of_kueues_visibility_api(cluster, queued, pending):
    serve_visibility(cluster, pile_up(cluster, pending))
    explanation, reads = explained(cluster, queued)
    assert explanation.category is Category.QUOTA
    assert explanation.sentence.startswith("Queued 1st in team-a"), explanation.sentence
    asked = [q for _, p, q in reads if p == VISIBILITY]
    assert asked == [{"limit": "500"}]
    assert not unselected_workload_lists(reads)


def test_its_reads_are_the_same_with_600_more_pending(cluster, queued):
    serve_visibility(cluster, [])
    _, few = explained(cluster, queued)
    serve_visibility(cluster, pile_up(cluster, 600))
    _, many = explained(cluster, queued)
    assert many == few


def test_without_the_visibility_api_one_page_of_the_namespaces_workloads(cluster, queued):
    pile_up(cluster, 600)
    explanation, reads = explained(cluster, queued)
    assert explanation.category is Category.QUOTA
    # One page; its continue token is left alone.
    assert unselected_workload_lists(reads) == [{"limit": "500"}]
