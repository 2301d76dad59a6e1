"""One tenant never stops failover for all: a damaged `gkeml-tenant-status` (a schema from
the future, a count that is no number, wrong types, deep or huge JSON) refuses that tenant
alone, with an error naming the ConfigMap in `manager.refused` and the log, while tier A's
primary loss still fails over; a pass that fails for a reason nobody foresaw, or a worker
thread that ends, is said the same way and never silent."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from gkeml_sdk.backends.kubernetes.standby.tenant_status import MAX_STATUS_BYTES
from gkeml_sdk.cli.main import main
from gkeml_sdk.errors import ConfigError, GkemlError
from gkeml_sdk.version import __version__
from tests.integration.cluster.test_standby_fencing import STEADY, Clock, named_manager
from tests.integration.cluster.test_tenants import (
    EXAMPLE,
    cluster,
    lose_primaries,
    status,
    wait,
    weights,
)

__all__ = ["cluster"]
WHERE = "tenant status ConfigMap tenant-b/gkeml-tenant-status"
DEEP = "[" * 100_000 + "]" * 100_000

DAMAGED = {
    "schema-99": (
        {"schema": "99", "failovers": "[]"},
        f"{WHERE} has schema 99, but gkeml {__version__} reads schema 1 (and records written "
        "without one): a newer gkeml wrote it. Upgrade gkeml (pip install -U gkeml) to read it",
    ),
    "count-many": ({"schema": "1", "failover_count": "many"}, "failover_count is 'many'"),
    "count-negative": ({"failover_count": "-3"}, "failover_count is '-3', not a whole number"),
    "allocations-not-rows": ({"allocations": "[1, 2]"}, "allocations is not a list of flat"),
    "allocations-nested": ({"allocations": '[{"pod": {"a": 1}}]'}, "not a list of flat objects"),
    "allocations-not-json": ({"allocations": "{"}, "allocations is not JSON"),
    "deep-json": ({"allocations": DEEP}, "allocations is not JSON"),
    "a-number-not-text": ({"failover_count": 3}, "'failover_count' holds int, not text"),
    "2-MiB": ({"allocations": "[]", "note": "x" * (2 << 20)}, f"more than {MAX_STATUS_BYTES}"),
}


def damaged_status(data: dict[str, Any]) -> dict[str, Any]:
    meta = {"name": "gkeml-tenant-status", "namespace": "tenant-b"}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data}


@pytest.mark.parametrize("case", sorted(DAMAGED))
def test_a_damaged_tenant_status_refuses_that_tenant_alone(
    cluster: Any, case: str, caplog: pytest.LogCaptureFixture
) -> None:
    server, tenants, _ = cluster
    data, says = DAMAGED[case]
    # The test's store takes what the API server's validation would refuse (a number in a
    # ConfigMap's data, 2 MiB): a status read from any other source may be that damaged.
    server.store.put(damaged_status(data))
    clock = Clock()
    m = named_manager(server, tenants, "one", STEADY, clock=clock).start()
    try:
        wait(lambda: "tenant-b" in m.refused and m.leading)
        lose_primaries(server, "tenant-a", "llama-2-7b")  # tier A still fails over
        wait(lambda: weights(server, "tenant-a", "llama-2-7b") == [0, 100])
        error = m.refused["tenant-b"]
        assert isinstance(error, ConfigError) and WHERE in str(error) and says in str(error)
        assert not m.ready.is_set() and m.error is None
        assert set(m.refused) == {"tenant-b"} and all(w.is_alive() for w in m.workers)
        assert status(server, "tenant-b") == data  # never overwritten
        assert status(server, "tenant-a")["failover_count"] == "1"
        said = [r for r in caplog.records if r.levelno == logging.ERROR]
        assert [r.getMessage() for r in said] == [f"tenant tenant-b refused: {error}"]
        # Deleted by its admin: the next resync reads it again and tenant-b goes on.
        server.store.delete("configmaps", "tenant-b", "gkeml-tenant-status")
        clock.now += m.resync_seconds
        wait(lambda: "tenant-b" not in m.refused and m.ready.is_set())
        wait(lambda: status(server, "tenant-b").get("failover_count") == "0")
    finally:
        m.stop()


def test_a_pass_that_fails_unforeseen_is_said_and_tried_again(
    cluster: Any, caplog: pytest.LogCaptureFixture
) -> None:
    server, tenants, _ = cluster
    m = named_manager(server, tenants, "one", STEADY)
    reconcile = m.reconciler.tenant
    failures = iter([ZeroDivisionError("division by zero")])

    def failing_once(tenant: Any, *args: Any, **options: Any) -> None:
        if tenant.name == "tenant-b":
            exc = next(failures, None)
            if exc is not None:
                raise exc
        reconcile(tenant, *args, **options)

    m.reconciler.tenant = failing_once  # type: ignore[method-assign]
    m.start()
    try:
        wait(lambda: "tenant-b" in m.refused)
        error = m.refused["tenant-b"]
        assert str(error).startswith(
            "tenant tenant-b: the standby manager's pass failed (ZeroDivisionError: division by "
            "zero); its other tenants go on"
        )
        assert not m.ready.is_set()
        # The traceback is in the log; the next change of tenant-b tries it again.
        (said,) = [r for r in caplog.records if r.exc_info]
        assert said.getMessage() == "tenant tenant-b: the standby manager's pass failed"
        # The fake kubelet makes tenant-b's pods on its own thread: on a loaded machine they
        # may come after the refusal.
        (pod, *_) = wait(
            lambda: server.store.list("pods", "tenant-b", "gkeml.dev/serve=tiny-llama-1b")
        )
        touch = {"metadata": {"annotations": {"touched": "yes"}}}
        server.store.patch("pods", "tenant-b", pod["metadata"]["name"], touch)
        wait(lambda: "tenant-b" not in m.refused and status(server, "tenant-b").get("ready_seen"))
        lose_primaries(server, "tenant-b", "tiny-llama-1b")
        wait(lambda: weights(server, "tenant-b", "tiny-llama-1b") == [0, 100], 20)
    finally:
        m.stop()


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_a_worker_thread_that_ends_is_said_and_replaced(
    cluster: Any, caplog: pytest.LogCaptureFixture
) -> None:
    server, tenants, _ = cluster
    m = named_manager(server, tenants, "one", STEADY)
    reconcile = m.reconciler.tenant
    ended = iter([SystemExit(3)])  # a thread ends silently on SystemExit

    def ending_once(tenant: Any, *args: Any, **options: Any) -> None:
        if tenant.name == "tenant-b":
            exc = next(ended, None)
            if exc is not None:
                raise exc
        reconcile(tenant, *args, **options)

    m.reconciler.tenant = ending_once  # type: ignore[method-assign]
    m.start()
    try:
        wait(lambda: m.ready.is_set())
        first = next(w for w in m.workers if w.tenant.name == "tenant-b")
        said = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
        assert said == [
            "tenant tenant-b refused: tenant tenant-b: the standby manager's pass failed "
            "(SystemError: its worker thread ended); its other tenants go on and this one is "
            "tried again at its next change or resync. The manager's log has the traceback: "
            "please report it"
        ]
        assert first.is_alive() and first.passes >= 1  # the replacement, which reconciled
        lose_primaries(server, "tenant-b", "tiny-llama-1b")
        wait(lambda: weights(server, "tenant-b", "tiny-llama-1b") == [0, 100], 20)
        assert m.refused == {} and isinstance(m.error, type(None))
    finally:
        m.stop()


def test_an_unforeseen_failure_is_a_gkeml_error() -> None:
    from gkeml_sdk import load_specs
    from gkeml_sdk.backends.kubernetes.standby.workers import unforeseen

    error = unforeseen(load_specs("examples/tenants.yaml")[1], RuntimeError("x" * 5000))
    assert isinstance(error, GkemlError) and len(str(error)) < 600


def test_the_cli_drills_tier_a_and_reads_every_status_beside_a_damaged_one(
    cluster: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server, _, _ = cluster
    server.store.put(damaged_status({"failover_count": "many"}))
    config = str(server.kubeconfig(tmp_path / "kubeconfig"))
    args = [str(EXAMPLE), "--kubeconfig", config]
    assert main(["tenant", "drill", *args, "--tenant", "tenant-a", "--model", "llama-2-7b"]) == 0
    assert " yes " in capsys.readouterr().out
    assert main(["tenant", "status", *args]) == 1
    rows = capsys.readouterr().out.splitlines()
    assert rows[0].startswith("tenant-a: tier A, failovers 1, last 20")
    (b,) = [r for r in rows if r.startswith("tenant-b")]
    assert b.startswith(f"tenant-b: tier B, UNREADABLE: {WHERE}: failover_count is 'many'")
    assert any(r.startswith("tenant-c: tier C, failovers 0") for r in rows)
