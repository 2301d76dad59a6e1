"""`%gke_logs --rank` against a cluster run: the filter reads the prefix every backend writes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

from .replay import Replayer
from .test_scenarios import gang


@pytest.fixture
def shell(cluster: Any, tmp_path: Path) -> InteractiveShell:
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "gkeml_magics")
    kubeconfig = cluster.kubeconfig(tmp_path / "kubeconfig", namespace="ml")
    ip.run_line_magic("gke_config", "--reset")
    ip.run_line_magic("gke_config", f"--kubeconfig {kubeconfig} --namespace ml")
    yield ip
    ip.run_line_magic("gke_config", "--reset")


def test_rank_picks_one_nodes_lines_of_a_cluster_run(shell, cluster, client):
    client.submit(gang())
    Replayer(cluster, "ml", "train", 1, "train").play("jobset-succeeded", "train", until=2.0)
    pods = sorted(p["metadata"]["name"] for p in cluster.objects("pods", "ml"))
    for rank, pod in enumerate(pods):
        cluster.set_pod_log("ml", pod, f"loss 0.{rank}\n")
    with capture_output() as captured:
        shell.run_line_magic("gke_logs", "train --rank 1")
    assert captured.stdout == "[1] loss 0.1\n"
    with capture_output() as captured:
        shell.run_line_magic("gke_logs", "train --rank 0")
    assert captured.stdout == "[0] loss 0.0\n"


@pytest.mark.parametrize("rank", ["node1", "-1", "1.", "x"])
def test_a_rank_that_no_line_can_carry_is_refused(shell, rank):
    with pytest.raises(UsageError, match=r"is not a rank: .* such as 0 or 1"):
        shell.run_line_magic("gke_logs", f"train --rank {rank}")
