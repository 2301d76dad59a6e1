"""Reliability benchmark of the Kubernetes backend against the fake API server (not a timed
test; run `python tests/bench/bench_reliability.py`).

1,000 submissions with no faults, then 1,000 with 20% of requests failing transiently (mixed
429 / 5xx / connection resets / timeouts / resets after the write landed): exactly 1,000 jobs
must exist at the end, none twice, none lost. Reports API requests per submission in both
cases and the watch connections used to wait for 100 runs. Then the races of `races.py` at the
same fault rate: live attempts per run (must be <= 1), runs stuck, runs that ended wrong,
objects of other runs touched (must be 0) and API requests per race.
"""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from gkeml_sdk import (
    Accelerator,
    ApiRetrySettings,
    Client,
    KubernetesSettings,
    RunState,
    TrainingJob,
)
from tests.kubeapi import KubeAPIServer, shared_crds_dir

FAULTS = ("429", "500", "502", "503", "504", "reset", "timeout", "reset-after-write")
COMPLETED = {
    "conditions": [
        {
            "type": "Completed",
            "status": "True",
            "reason": "AllJobsCompleted",
            "message": "jobset completed successfully",
            "lastTransitionTime": "2026-11-29T00:00:00Z",
        }
    ],
    "restarts": 0,
    "terminalState": "Completed",
}


def job(i: int, name: str = "", code: bool = False) -> TrainingJob:
    return TrainingJob(
        name=name or f"job-{i:04d}",
        image="busybox",
        command=["python", "train.py"],
        accelerator=Accelerator("h100", count=8),
        nodes=2,
        queue="team-a",
        stateless=True,  # it keeps no checkpoint, so a RetryPolicy may resubmit it
        # Shipped code travels in the run record's ConfigMap: still two writes.
        files={"train.py": f"print('step {i}')\n"} if code else {},
    )


def server() -> KubeAPIServer:
    crds = shared_crds_dir()
    if crds is None:
        sys.exit("../shared/crds not found: the fake API server needs the CRD schemas")
    api = KubeAPIServer(crds, namespaces=("ml",), validate=True, history_size=20000).start()
    api.store.put(
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "LocalQueue",
            "metadata": {"name": "team-a", "namespace": "ml"},
            "spec": {"clusterQueue": "cq"},
        }
    )
    return api


# The request timeout of an idle 2-core machine, and the median request round trip there.
IDLE_REQUEST_TIMEOUT = 0.3
SUBMISSION_TIMEOUT = 1.0  # ~60 timeout faults in 1,000 submissions: about a minute of waiting
IDLE_ROUND_TRIP = 0.004


def slowness(api: KubeAPIServer) -> float:
    """How much slower than an idle 2-core machine this one answers now (at least 1): the
    median of 30 reads of the fake server against IDLE_ROUND_TRIP. Every timeout of the bench
    scales with it, so a loaded machine measures the same figures instead of giving up."""
    kube = client(api, request_timeout=60.0)._backend.kube  # type: ignore[attr-defined]
    from gkeml_sdk.backends.kubernetes.api.resources import resource

    config_maps = resource("v1", "ConfigMap")
    took = []
    for _ in range(30):
        start = time.perf_counter()
        kube.find(config_maps, "probe", "ml")
        took.append(time.perf_counter() - start)
    return max(1.0, sorted(took)[len(took) // 2] / IDLE_ROUND_TRIP)


SLOWNESS = [1.0]  # measured once in main()


def client(api: KubeAPIServer, request_timeout: float | None = None) -> Client:
    retry = ApiRetrySettings(
        attempts=12, initial_seconds=0.005, max_seconds=0.05, max_retry_after=0.01
    )
    timeout = request_timeout or IDLE_REQUEST_TIMEOUT * SLOWNESS[0]
    settings = KubernetesSettings(
        api_client=api.api_client(), namespace="ml", api_retry=retry, request_timeout=timeout
    )
    return Client(kubernetes=settings)


WRITES = ("POST", "PUT", "PATCH", "DELETE")


def submissions(rate: float, code: bool = False) -> tuple[int, int, int, int]:
    """(API requests, of them writes, JobSets, run records) for 1,000 submissions; requests
    the server saw, faulted ones included (each is a request the client sent)."""
    api = server()
    try:
        # Only injected faults may cost requests: without them a slow answer on a loaded
        # machine is not a fault, so no timeout fires; with them a "timeout" fault answers after
        # twice a timeout long enough that load alone rarely reaches it.
        timeout = (SUBMISSION_TIMEOUT if rate else 30.0) * SLOWNESS[0]
        c = client(api, request_timeout=timeout)
        # The client's checks of the cluster (CRDs, the LocalQueue) are read once per client,
        # not per submission: a first submission of another name pays them.
        c.submit(job(0, name="warm-up"))
        if rate:
            # A "timeout" fault answers after twice the request timeout: it always times out.
            delay = 2 * timeout
            api.faults.random(rate=rate, kinds=FAULTS, seed=7, retry_after=0.01, delay=delay)
        before = len(api.request_log)
        for i in range(1000):
            c.submit(job(i, code=code))
        api.faults.clear()
        log = api.request_log[before:]
        writes = sum(1 for r in log if r.method in WRITES)
        jobsets = api.objects("jobsets", "ml")
        names = [j["metadata"]["name"] for j in jobsets]
        assert len(names) == len(set(names))
        records = api.store.list("configmaps", "ml", "gkeml.dev/run-record=true")
        return len(log), writes, len(jobsets) - 1, len(records) - 1
    finally:
        api.stop()


def watch_connections(runs: int = 100) -> tuple[int, int]:
    """(peak open watch connections, connections opened) while waiting for `runs` runs."""
    api = server()
    try:
        c = client(api)
        handles = [c.submit(job(i)) for i in range(runs)]
        peak = [0]

        def finish() -> None:
            while api.open_watches < 3:
                time.sleep(0.01)
            for h in handles:
                peak[0] = max(peak[0], api.open_watches)
                api.store.update_status("jobsets", "ml", h.name, COMPLETED)

        thread = threading.Thread(target=finish, daemon=True)
        thread.start()
        finals = c.wait_all(handles, timeout=120 * SLOWNESS[0])
        thread.join()
        assert all(f.state is RunState.SUCCEEDED for f in finals)
        opened = c._backend.watch_connections  # type: ignore[attr-defined]
        return peak[0], opened
    finally:
        api.stop()


def race_figures(per_scenario: int = 20) -> None:
    from tests.bench.races import SCENARIOS, WAIT, Harness, run_races, touched

    api = server()
    try:
        start = time.monotonic()
        h = Harness(api, lambda: client(api), wait=WAIT * SLOWNESS[0])
        tally, failures, sent = run_races(
            h,
            lambda name: job(0, name),
            per_scenario,
            0.2,
            FAULTS,
            delay=2 * IDLE_REQUEST_TIMEOUT * SLOWNESS[0],
        )
        took = time.monotonic() - start
        print(
            f"races at 20% faults ({per_scenario} of each of {len(SCENARIOS)} scenarios, "
            f"{tally.runs} runs, {took:.0f}s):"
        )
        print(f"  live attempts per run: {h.live.update(api)} at most (must be <= 1)")
        print(f"  runs stuck: {len(tally.stuck)}; runs that ended wrong: {len(tally.wrong)}")
        others = touched(api, tally.sentinels) + h.foreign_touched
        print(f"  objects of other runs touched: {others} (must be 0)")
        print(f"  API requests per race run: {sent / tally.runs:.1f}")
        for title in SCENARIOS:
            print(f"    {title}: {failures[title]} wrong")
        for line in (tally.stuck + tally.wrong)[:10]:
            print(f"  ! {line}")
    finally:
        api.stop()


def report(title: str, rate: float, most: float, code: bool = False) -> None:
    sent, writes, jobs, records = submissions(rate, code)
    verdict = "ok" if sent / 1000 <= most else f"OVER {most}"
    print(
        f"{title}: {sent} API requests for 1,000 submissions = {sent / 1000:.3f} per submission "
        f"(<= {most}: {verdict}); {writes} writes = {writes / 1000:.3f} per submission; "
        f"{jobs} JobSets, {records} runs (exactly 1,000 expected)"
    )


def main() -> None:
    api = server()
    try:
        SLOWNESS[0] = slowness(api)
    finally:
        api.stop()
    print(f"this machine answers {SLOWNESS[0]:.1f}x slower than an idle one: timeouts scaled")
    report("no faults ", 0.0, 2.0)
    report("20% faults", 0.2, 2.6)
    report("no faults, a job with code files", 0.0, 2.0, code=True)
    report("20% faults, a job with code files", 0.2, 2.6, code=True)
    peak, opened = watch_connections()
    print(f"waiting for 100 runs: {peak} watch connections open at most, {opened} opened in all")
    race_figures()


if __name__ == "__main__":
    main()
