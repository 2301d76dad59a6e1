"""`explain` of a queued run reads what Kueue computed (issue 40 item 3): its place from the
visibility API, read up to that place (pages twice as long each, one page of 500 at most); the
namespace's other Workloads only when that API is not served, and then one page. Its reads do
not grow with the Workloads pending behind it."""

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


def serve_visibility(cluster: Any, others: list[dict[str, Any]], ahead: int = 0) -> None:
    """Kueue's answer as recorded (the run first), with `others` pending behind the run but
    the first `ahead` of them, which Kueue orders before it."""
    path = FIXTURES / f"{SCENARIO}.pendingworkloads.json"
    if not path.is_file():
        pytest.skip(f"Kueue recordings not found at {FIXTURES}")
    recorded = json.loads(path.read_text())
    mine = recorded["items"]
    for item in mine:
        item["metadata"]["namespace"] = "ml"
    behind = [
        {**mine[0], "metadata": {"name": o["metadata"]["name"], "namespace": "ml"}} for o in others
    ]
    items = behind[:ahead] + mine + behind[ahead:]
    for i, item in enumerate(items):
        item["positionInLocalQueue"] = i
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
    assert asked == [{"limit": "1"}]  # the run is first: nothing behind it is read
    assert not unselected_workload_lists(reads)


def pages(*sizes: int) -> list[dict[str, str]]:
    """The queries of consecutive pages of `sizes` items from the front of the queue."""
    asked, offset = [], 0
    for size in sizes:
        asked.append({"limit": str(size)} | ({"offset": str(offset)} if offset else {}))
        offset += size
    return asked


def test_a_run_further_back_is_found_on_pages_twice_as_long_each(cluster, queued):
    serve_visibility(cluster, pile_up(cluster, 600), ahead=60)
    explanation, reads = explained(cluster, queued)
    assert explanation.sentence.startswith("Queued 61st in team-a"), explanation.sentence
    asked = [q for _, p, q in reads if p == VISIBILITY]
    assert asked == pages(1, 2, 4, 8, 16, 32)  # the 61st is on the sixth (items 31 to 62)


def test_a_run_beyond_a_page_is_looked_for_in_one_page_only(cluster, queued):
    serve_visibility(cluster, pile_up(cluster, 600), ahead=550)
    explanation, reads = explained(cluster, queued)
    assert explanation.sentence.startswith("Queued in team-a"), explanation.sentence
    asked = [q for _, p, q in reads if p == VISIBILITY]
    assert asked == pages(1, 2, 4, 8, 16, 32, 64, 128, 245)  # 500 in all, then no place


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
