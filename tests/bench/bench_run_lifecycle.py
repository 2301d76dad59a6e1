"""What one two-attempt run costs, in counts (not times): a Spot job timed out by PodsReady,
deactivated by Kueue after its requeue limit, resubmitted on demand, then succeeded, followed
by one client with no controller. Prints the calls between the backend and the run handle,
the job validations, the record writes, and the history lines of consecutive `gkeml status`
calls from fresh clients.

    python tests/bench/bench_run_lifecycle.py
"""

from __future__ import annotations

import collections
import contextlib
import io
import json
import sys
import tempfile
import threading
from pathlib import Path
from types import FrameType
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from gkeml_sdk import RetryPolicy, RunState
from gkeml_sdk.cli.main import main
from tests.integration.cluster.conftest import make_client, queue
from tests.integration.cluster.replay import Replayer
from tests.integration.cluster.test_scenarios import gang
from tests.kubeapi import KubeAPIServer, shared_crds_dir
from tests.record_fields import record_field

BACKEND = str(Path(__file__).resolve().parents[2] / "gkeml_sdk" / "backends" / "kubernetes")
HANDLE = str(Path(__file__).resolve().parents[2] / "gkeml_sdk" / "runs" / "handle.py")


class Calls:
    """Counts calls that cross between the backend's modules (every module under
    `backends/kubernetes/`) and the run handle's (`runs/handle.py`)."""

    def __init__(self) -> None:
        self.counts: collections.Counter[str] = collections.Counter()

    def __call__(self, frame: FrameType, event: str, arg: Any) -> None:
        if event != "call" or frame.f_back is None:
            return
        callee, caller = frame.f_code.co_filename, frame.f_back.f_code.co_filename
        if "gkeml_sdk" not in callee:
            return
        if caller.startswith(BACKEND) and callee == HANDLE:
            self.counts["backend -> handle"] += 1
        elif caller == HANDLE and callee.startswith(BACKEND):
            self.counts["handle -> backend"] += 1
        if frame.f_code.co_name == "_check" and frame.f_code.co_filename.endswith(
            "training/model.py"
        ):
            self.counts["job validations"] += 1


def two_attempt_run() -> dict[str, int]:
    api = KubeAPIServer(shared_crds_dir(), namespaces=("default", "ml"), validate=True).start()
    try:
        api.store.put(queue("team-a"))
        client = make_client(api)
        calls = Calls()
        policy = RetryPolicy(max_resubmits=2, fallback_to_on_demand_after=1, backoff_seconds=0.05)
        threading.setprofile(calls)
        sys.setprofile(calls)
        try:
            run = client.submit(gang(spot=True), retry=policy)
            first = Replayer(api, "ml", "train", 1, "train")
            thread = first.play_in_background(
                "jobset-podsready-timeout-deactivated", "stuck", watchers=3, pause=0.005
            )
            second = Replayer(api, "ml", "train", 2, "train--r2")

            def on_status(status: Any) -> None:
                if status.reason == "Resubmitted":
                    second.play_in_background("jobset-succeeded", "train", watchers=0, pause=0.005)

            final = run.wait(timeout=120, progress=on_status)
        finally:
            sys.setprofile(None)
            threading.setprofile(None)  # type: ignore[arg-type]
        thread.join()
        assert final.state is RunState.SUCCEEDED and run.attempt == 2
        record_writes = api.count(method="PUT", path_re=r"/configmaps/train-gkeml-run$")
        lines = []
        with tempfile.TemporaryDirectory() as tmp:
            kubeconfig = str(api.kubeconfig(Path(tmp) / "kubeconfig", namespace="ml"))
            for _ in range(4):
                out = io.StringIO()
                with contextlib.redirect_stdout(out):
                    main(["status", "train", "--kubeconfig", kubeconfig])
                lines.append(len(out.getvalue().splitlines()) - 1)
        return {
            **calls.counts,
            "record writes": record_writes,
            "history lines per status call": lines[-1],
            "history lines changed across 4 status calls": int(len(set(lines)) > 1),
        }
    finally:
        api.stop()


def status_lines_while_running(calls: int = 4) -> tuple[list[int], int]:
    """History lines printed by `calls` consecutive `gkeml status` calls on a running run
    nobody follows, and the record's history entries afterwards."""
    api = KubeAPIServer(shared_crds_dir(), namespaces=("default", "ml"), validate=True).start()
    try:
        api.store.put(queue("team-a"))
        make_client(api).submit(gang())
        Replayer(api, "ml", "train", 1, "train").play(
            "jobset-succeeded", "train", pause=0, until=2.215
        )
        lines = []
        with tempfile.TemporaryDirectory() as tmp:
            kubeconfig = str(api.kubeconfig(Path(tmp) / "kubeconfig", namespace="ml"))
            for _ in range(calls):
                out = io.StringIO()
                with contextlib.redirect_stdout(out):
                    main(["status", "train", "--kubeconfig", kubeconfig])
                lines.append(len(out.getvalue().splitlines()) - 1)
        record = api.store.get("configmaps", "ml", "train-gkeml-run")
        return lines, len(json.loads(record_field(record, "history.json")))
    finally:
        api.stop()


FIGURES = (
    "backend -> handle",
    "handle -> backend",
    "job validations",
    "record writes",
    "history lines per status call",
    "history lines changed across 4 status calls",
)

if __name__ == "__main__":
    figures = two_attempt_run()
    print("one two-attempt run (Spot, deactivated, resubmitted on demand, succeeded):")
    for name in FIGURES:
        print(f"  {name}: {figures.get(name, 0)}")
    lines, entries = status_lines_while_running()
    print("a running run nobody follows, read by 4 consecutive `gkeml status` calls:")
    print(f"  history lines printed: {', '.join(map(str, lines))}; record entries after: {entries}")
