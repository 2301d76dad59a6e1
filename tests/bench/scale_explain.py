"""What `run.explain()` of a queued run reads as Workloads pile up in its queue (issue 40
item 3; not a timed test): `python tests/bench/scale_explain.py [SIZES...]`.

The recording `jobset-queued-behind-another` replayed onto the test API server (its second
run queued behind the first), then N more pending Workloads in the same LocalQueue (N = 0,
1,000, 4,000), once with Kueue's visibility API answering their order and once without it.
Counted at the server: the requests of one `explain()` and the bytes answered.

The goals: the same requests at every N, and with the visibility API the same bytes (within
1%): it is read up to the run's place only (`diagnosis.pending_workloads`), and the N more wait
behind it. Without it, bytes are bounded by one page of the namespace's Workloads
(`queue_reads.PAGE`, 500): they grow with N only until a page is full, so 1,000 and 4,000
pending read the same bytes.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from gkeml_sdk.backends.kubernetes.api.queue_reads import PAGE
from tests.bench.scale_rows import ScaleRow
from tests.integration.cluster.conftest import queue
from tests.integration.cluster.test_explain_bounded import pile_up, queue_behind, serve_visibility
from tests.kubeapi import KubeAPIServer, shared_crds_dir

SIZES = (0, 1000, 4000)


def rows(sizes: tuple[int, ...] = SIZES) -> list[ScaleRow]:
    """Measure `explain()` at each size, with and without the visibility API (in this call)."""
    found = []
    for served in (True, False):
        measured = {size: measure(size, served) for size in sizes}
        base = measured[sizes[0]]
        full = next((measured[s] for s in sizes if s >= PAGE), None)  # a page full and more
        where = "visibility API served" if served else "no visibility API"
        for size in sizes:
            requests, sent = measured[size]
            goal = f"{base[0]} requests (as at {sizes[0]:,})"
            met = requests == base[0]
            if served:
                goal += f", {base[1] / 1000:.1f} KB (as at {sizes[0]:,}, within 1%)"
                met = met and abs(sent - base[1]) <= base[1] / 100
            elif size >= PAGE and full is not None:
                # One page, whatever its list metadata says of the rest (remainingItemCount).
                goal += f", {full[1] / 1000:.1f} KB (as at a full page, within 1%)"
                met = met and abs(sent - full[1]) <= full[1] / 100
            found.append(
                ScaleRow(
                    f"`explain()` of a queued run, {size:,} more pending ({where})",
                    f"{requests} requests, {sent / 1000:.1f} KB",
                    goal,
                    met,
                )
            )
    return found


def measure(pending: int, served: bool) -> tuple[int, int]:
    """(requests, bytes answered) of one `explain()` with `pending` more Workloads queued."""
    crds = shared_crds_dir()
    assert crds is not None, "the bench needs ../shared/crds"
    cluster = KubeAPIServer(crds, namespaces=["ml", "gkeml-system"]).start()
    cluster.store.put(queue("team-a"))
    try:
        client = queue_behind(cluster)
        others = pile_up(cluster, pending)
        if served:
            serve_visibility(cluster, others)
        run = client.get_run("second")
        cluster.clear_request_log()
        run.explain()
        log = list(cluster.request_log)
        return len(log), sum(r.sent for r in log)
    finally:
        cluster.stop()


if __name__ == "__main__":
    chosen = tuple(int(a) for a in sys.argv[1:]) or SIZES
    print("| what | measured | goal | verdict |\n|---|---|---|---|")
    for row in rows(chosen):
        print(row.line(), flush=True)
