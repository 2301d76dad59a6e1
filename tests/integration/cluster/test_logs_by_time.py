"""`logs(by_time=True)` and `gkeml logs --by-time` on a cluster: pod logs read with
`timestamps=true`, which the fake API server answers as kubelet does (each entry after its
RFC 3339 time with nine fraction digits), merged across pods in time order, ties by rank."""

from __future__ import annotations

import threading
from functools import partial

from kubernetes.client import CoreV1Api

from gkeml_sdk.cli.main import main
from gkeml_sdk.runs.log_lines import log_time

from .replay import Replayer
from .test_handles_and_cli import SPEC
from .test_scenarios import gang

T0 = 1_765_137_205_000_000_000  # 2025-12-07T19:53:25Z


def _running(cluster, client, name="train"):  # type: ignore[no-untyped-def]
    run = client.submit(gang())
    replay = Replayer(cluster, "ml", name, 1, name)
    replay.play("jobset-succeeded", "train", until=2.0)
    pods = sorted(p["metadata"]["name"] for p in cluster.objects("pods", "ml"))
    return run, replay, pods


def test_the_fake_kubelet_prefixes_each_entry_with_its_time_as_kubelet_does(
    cluster, client
) -> None:
    _, _, pods = _running(cluster, client)
    cluster.set_pod_log("ml", pods[0], "one\ntw", at=T0 + 5)
    cluster.append_pod_log("ml", pods[0], "o\n", at=T0 + 1_000_000_000)
    kube = client._backend.kube
    assert list(kube.pod_log(pods[0], "ml", follow=False)) == ["one", "two"]
    # One entry per write the runtime read: the piece that ends a line has its own time.
    assert list(kube.pod_log(pods[0], "ml", follow=False, timestamps=True)) == [
        "2025-12-07T19:53:25.000000005Z one",
        "2025-12-07T19:53:25.000000005Z tw2025-12-07T19:53:26.000000000Z o",
    ]
    calls = [r.query for r in cluster.request_log if r.path.endswith(f"/pods/{pods[0]}/log")]
    assert calls == [{}, {"timestamps": "true"}]
    # limitBytes counts the times too; tailLines counts the runtime's entries.
    core = CoreV1Api(cluster.api_client())
    read = partial(core.read_namespaced_pod_log, pods[0], "ml", timestamps=True)
    assert read(limit_bytes=33) == "2025-12-07T19:53:25.000000005Z on"
    assert read(tail_lines=1) == "2025-12-07T19:53:26.000000000Z o\n"


def test_by_time_merges_the_pods_in_time_order_ties_by_rank(cluster, client) -> None:
    run, _, pods = _running(cluster, client)
    cluster.set_pod_log("ml", pods[0], "r0 a\n", at=T0 + 2)
    cluster.append_pod_log("ml", pods[0], "r0 b\n", at=T0 + 3)
    cluster.set_pod_log("ml", pods[1], "r1 a\n", at=T0 + 1)
    cluster.append_pod_log("ml", pods[1], "r1 b\n", at=T0 + 3)  # the same time as "r0 b"
    assert list(run.logs(by_time=True)) == [
        f"{log_time(T0 + 1)} [1] r1 a",
        f"{log_time(T0 + 2)} [0] r0 a",
        f"{log_time(T0 + 3)} [0] r0 b",
        f"{log_time(T0 + 3)} [1] r1 b",
    ]
    assert list(run.logs()) == ["[0] r0 a", "[0] r0 b", "[1] r1 a", "[1] r1 b"]


def test_following_by_time_shows_each_line_with_its_time_as_it_comes(cluster, client) -> None:
    run, replay, pods = _running(cluster, client)
    lines: list[str] = []
    follower = threading.Thread(
        target=lambda: lines.extend(run.logs(follow=True, by_time=True)), daemon=True
    )
    follower.start()
    cluster.set_pod_log("ml", pods[1], "first\n", at=T0 + 1)
    cluster.wait_for(lambda: lines == [f"{log_time(T0 + 1)} [1] first"])
    cluster.set_pod_log("ml", pods[0], "second\n", at=T0 + 2)
    cluster.wait_for(lambda: len(lines) == 2)
    replay.play("jobset-succeeded", "train", since=2.0)
    follower.join(timeout=10)
    assert not follower.is_alive()
    assert lines == [f"{log_time(T0 + 1)} [1] first", f"{log_time(T0 + 2)} [0] second"]


def test_the_cli_prints_the_merged_lines(cluster, tmp_path, capsys) -> None:
    kubeconfig = str(cluster.kubeconfig(tmp_path / "kubeconfig", namespace="ml"))
    spec = tmp_path / "job.yaml"
    spec.write_text(SPEC)
    assert main(["submit", str(spec), "--kubeconfig", kubeconfig]) == 0
    Replayer(cluster, "ml", "cli-train", 1, "cli-train").play("jobset-succeeded", "train", pause=0)
    pods = sorted(p["metadata"]["name"] for p in cluster.objects("pods", "ml"))
    cluster.set_pod_log("ml", pods[0], "late\n", at=T0 + 9)
    cluster.set_pod_log("ml", pods[1], "early\n", at=T0 + 4)
    capsys.readouterr()
    assert main(["logs", "cli-train", "--by-time", "--kubeconfig", kubeconfig]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"{log_time(T0 + 4)} [1] early",
        f"{log_time(T0 + 9)} [0] late",
    ]
