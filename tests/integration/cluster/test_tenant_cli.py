"""`gkeml tenant apply|status|drill` against the fake API server and its fake kubelet."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gkeml_sdk.cli.main import main
from tests.integration.cluster.test_tenants import EXAMPLE, cluster  # noqa: F401 - fixture


def test_apply_drill_and_status(
    cluster: Any,  # noqa: F811 - the fixture
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    server, _, _ = cluster
    config = str(server.kubeconfig(tmp_path / "kubeconfig"))
    args = [str(EXAMPLE), "--kubeconfig", config]
    assert main(["tenant", "apply", *args]) == 0
    applied = capsys.readouterr().out
    assert "applied VirtualService/tenant-a-models" in applied
    assert main(["tenant", "drill", *args, "--tenant", "tenant-a", "--model", "llama-2-7b"]) == 0
    table = capsys.readouterr().out
    print(table)
    assert table.splitlines()[0].split() == [
        "tier", "model", "objective", "measured", "met", "failed", "left", "restored",
        "restore",
    ]  # fmt: skip
    assert table.splitlines()[1].split()[:5][:2] == ["A", "tenant-a/llama-2-7b"]
    assert " yes " in table
    assert main(["tenant", "status", *args]) == 0
    status = capsys.readouterr().out
    assert "tenant-a: tier A, failovers 1, last 20" in status
    assert "failed over now: none" in status
    assert "llama-2-7b-standby-0: llama-2-7b (standby) 1 x nvidia-l4" in status
    assert "llama-2-7b-0: llama-2-7b (primary) 1 x nvidia-l4 on node-" in status
    assert ", 24.0 GB, Ready" in status
