"""A client reused is cheap (issue 40 item 5): discovery and preflight answers are kept per
client for `PREFLIGHT_SECONDS`, so a second submission costs its two writes, from Python or
from one notebook cell after another; once they are older, the checks read again."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell

from gkeml_sdk.backends.kubernetes.setup.preflight import PREFLIGHT_SECONDS, Preflight
from gkeml_sdk.errors import ConfigError

from .test_scenarios import gang

SUBMISSION = [
    ("POST", "/apis/jobset.x-k8s.io/v1alpha2/namespaces/ml/jobsets"),
    ("POST", "/api/v1/namespaces/ml/configmaps"),
]


def requests(cluster: Any) -> list[tuple[str, str]]:
    return [(r.method, r.path) for r in cluster.request_log]


def test_a_second_submission_from_one_client_costs_its_two_writes(cluster, client):
    client.submit(gang("first"))
    cluster.clear_request_log()
    client.submit(gang("second"))
    assert requests(cluster) == SUBMISSION


def test_preflight_reads_again_once_its_answers_are_a_minute_old(cluster, client):
    now = [0.0]
    backend = client._backend
    backend.preflight = Preflight(backend.kube, clock=lambda: now[0])
    client.submit(gang("first"))
    first = cluster.count("GET")
    assert first >= 4  # discovery of Kueue and JobSet, the namespace, the LocalQueue
    cluster.clear_request_log()
    now[0] = PREFLIGHT_SECONDS - 1
    client.submit(gang("second"))
    assert requests(cluster) == SUBMISSION
    cluster.clear_request_log()
    now[0] = PREFLIGHT_SECONDS + 1
    client.submit(gang("third"))
    assert cluster.count("GET") == first and cluster.count("POST") == 2
    # A queue deleted meanwhile is noticed once the answers are old, before any write.
    cluster.store.delete("localqueues", "ml", "team-a")
    cluster.clear_request_log()
    now[0] = 2 * PREFLIGHT_SECONDS + 2
    with pytest.raises(ConfigError, match="LocalQueue 'team-a' does not exist"):
        client.submit(gang("fourth"))
    assert cluster.count("POST") == 0


@pytest.fixture
def shell(cluster: Any, tmp_path: Path) -> Any:
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "gkeml_magics")
    kubeconfig = cluster.kubeconfig(tmp_path / "kubeconfig", namespace="ml")
    ip.run_line_magic("gke_config", "--reset")
    ip.run_line_magic("gke_config", f"--kubeconfig {kubeconfig} --namespace ml --queue team-a")
    yield ip
    ip.run_line_magic("gke_config", "--reset")


def test_a_notebooks_second_cell_submits_with_its_two_writes(shell, cluster):
    options = "--image busybox --gpu h100:8 --nodes 2 --stateless"
    shell.run_cell_magic("gke_train", f"--name first {options}", "print(1)")
    cluster.clear_request_log()
    shell.run_cell_magic("gke_train", f"--name second {options}", "print(2)")
    assert requests(cluster) == SUBMISSION
