"""Failover drill of the standby manager on the fake API server, with traffic (not a timed
test; run `python tests/bench/bench_failover.py`).

Two copies of the manager run (the short standby Lease); per tier the last primary's
readiness is taken away (1) with the leader alive and (2) with the leader killed at the same
moment, so the standby copy must take the Lease and fail over; then (3) tier A again with the
leader killed while tier C's route writes fail. Each row: the tier's RTO, the time until the
route points at a ready standby, the failed requests `gkeml tenant drill` reports (its own
users, routed as the route routes them, each try asked of the cluster), and requests sent
every 20 ms over HTTP through a loopback router that routes as the compiled route does
(`tests/bench/traffic.py`: destination picked once by weight, retries stay with it): time to
the first request the standby served after the loss and how many failed / were served by the
primary / by the standby from the loss until the route moved.
"""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from gkeml_sdk import ApiRetrySettings, KubernetesSettings, load_specs
from gkeml_sdk.backends.kubernetes.api.kube import KubeClient
from gkeml_sdk.backends.kubernetes.api.transport import Transport
from gkeml_sdk.backends.kubernetes.standby.drill import DrillRow
from gkeml_sdk.backends.kubernetes.standby.manager import StandbyManager
from gkeml_sdk.backends.kubernetes.standby.tenant_apply import apply_tenants
from tests.bench.traffic import Router, Traffic
from tests.kubeapi import KubeAPIServer, shared_crds_dir
from tests.kubeapi.kubelet import FakeKubelet

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "tenants.yaml"
RETRY = ApiRetrySettings(attempts=6, initial_seconds=0.01, max_seconds=0.05)
STANDBY_START, COLD_START = 1.0, 2.0  # as in tests/integration/cluster/test_tenants.py


def start_seconds(deployment: dict[str, Any]) -> float:
    if not deployment["metadata"]["name"].endswith("-standby"):
        return 0.0
    return COLD_START if deployment["metadata"]["namespace"] == "tenant-c" else STANDBY_START


class Managers:
    """A leader and a standby copy; `kill()` crashes the leader and starts a new copy."""

    def __init__(self, server: KubeAPIServer, tenants: Any) -> None:
        self.server, self.tenants, self.count = server, tenants, 0
        self.copies = [self._new(), self._new()]

    def _new(self) -> StandbyManager:
        self.count += 1
        settings = KubernetesSettings(
            api_client=self.server.api_client(), api_retry=RETRY, watch_seconds=30
        )
        m = StandbyManager(self.tenants, settings=settings, identity=f"copy-{self.count}")
        return m.start()

    def leader(self) -> StandbyManager:
        while True:
            for m in self.copies:
                if m.leading and m.ready.is_set():
                    return m
            threading.Event().wait(0.05)

    def survivor(self) -> StandbyManager:
        leader = self.leader()
        return next(m for m in self.copies if m is not leader)

    def kill_leader(self) -> None:
        leader = self.leader()
        leader.stop(release=False, wait=False)  # a crash: the Lease is left to expire
        self.copies.remove(leader)

    def replace_killed(self) -> None:
        while len(self.copies) < 2:
            self.copies.append(self._new())

    def stop(self) -> None:
        for m in self.copies:
            m.stop()


def drill(
    managers: Managers, router: Router, tenant: str, model: str, kill: bool
) -> tuple[DrillRow, dict[str, Any]]:
    survivor = managers.survivor() if kill else managers.leader()
    lost: list[float] = []

    def on_loss() -> None:
        lost.append(time.monotonic())
        if kill:
            managers.kill_leader()

    with Traffic(router.port(model)) as traffic:
        row = survivor.drill(tenant, model, timeout=60, on_loss=on_loss).rows[0]
    managers.replace_killed()
    return row, traffic.since(lost[0], lost[0] + row.recovery_seconds)


def main() -> None:
    with KubeAPIServer(shared_crds_dir(), namespaces=("default", "kube-system", "serving")) as srv:
        tenants = load_specs(EXAMPLE)
        apply_tenants(KubeClient(Transport(srv.api_client(), api_retry=RETRY)), tenants)
        kubelet = FakeKubelet(srv, [t.namespace for t in tenants], start_seconds, 0.2)
        kubelet.start()
        managers = Managers(srv, tenants)
        models = [(t.name, t.models[0].name) for t in tenants]
        router = Router(kubelet, models).__enter__()
        rows = []
        try:
            for kill in (False, True):
                for t in tenants:
                    case = "leader killed" if kill else "leader alive"
                    rows.append((case, t, *drill(managers, router, t.name, t.models[0].name, kill)))
            # Tier C's route writes fail from now on; its primary is lost meanwhile.
            srv.faults.inject("500", count=None, match=("PUT", "/tenant-c/virtualservices"))
            for pod in srv.store.list("pods", "tenant-c", "gkeml.dev/serve=qwen-7b"):
                lost = {"status": {"conditions": [{"type": "Ready", "status": "False"}]}}
                srv.store.patch("pods", "tenant-c", pod["metadata"]["name"], lost)
            a = tenants[0]
            case = "killed, C failing"
            rows.append((case, a, *drill(managers, router, a.name, a.models[0].name, True)))
        finally:
            router.__exit__()
            managers.stop()
            kubelet.stop()
    print(table(rows))


def table(rows: list[Any]) -> str:
    head = ["tier", "case", "RTO", "route moved", "met", "drill failed"]
    head += ["first served", "failed", "primary", "standby"]
    lines = []
    for case, tenant, row, counts in rows:
        line = [
            tenant.tier.name,
            case,
            f"{row.objective_seconds:g} s",
            f"{row.recovery_seconds:.2f} s",
            "yes" if row.met else "NO",
            f"{row.failed}/{row.requests}",
        ]
        first = counts["first_served"]
        line += [
            "-" if first is None else f"{first:.2f} s",
            str(counts["failed"]),
            str(counts["primary"]),
            str(counts["standby"]),
        ]
        lines.append(line)
    widths = [max(len(r[i]) for r in [head, *lines]) for i in range(len(head))]
    return "\n".join(
        "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
        for r in [head, *lines]
    )


if __name__ == "__main__":
    main()
