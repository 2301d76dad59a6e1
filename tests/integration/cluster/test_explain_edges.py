"""`client.preview`, `run.explain()` on pods as the kubelet reports them, `gkeml why`,
`gkeml submit --preview`, `%gke_why`, `%%gke_train --preview` and the `--wait` line of a
waiting run, against the fake API server with the recorded controllers' objects."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

from gkeml_sdk import Category, Verdict
from gkeml_sdk.cli.main import main

from .kueue_objects import gang, install, kueue_reports_usage
from .replay import Replayer

EVENTS = ("JobSet", "Job", "Workload", "Pod", "Event")


@pytest.fixture
def kueue(cluster: Any) -> Any:
    return install(cluster)


SPEC = """\
kind: TrainingJob
name: {name}
image: busybox
command: ["true"]
accelerator: {{model: h100, count: 8}}
nodes: {nodes}
queue: team-a
stateless: true  # its queue preempts: a job with state would need durable checkpoints
"""


def test_preview_reads_the_queue_once_and_names_whom_it_would_preempt(kueue, client):
    client.submit(gang("low", priority="acc-low"))
    Replayer(kueue, "ml", "low", 1, "low").play(
        "jobset-preempted-requeued-succeeded", "low", pause=0, until=1.4
    )
    kueue_reports_usage(kueue)
    before = len(kueue.request_log)
    high = client.preview(gang("high", priority="acc-high"))
    assert high.verdict is Verdict.PREEMPTS and high.preempts == ("low",)
    assert "uses 16 of 16 nvidia.com/gpu" in high.sentence and "acc-high" in high.sentence
    assert not any(r.method != "GET" for r in kueue.request_log[before:]), "preview only reads"
    same = client.preview(gang("peer", priority="acc-low"))
    assert same.verdict is Verdict.WAITS and same.waits_for == 1
    assert client.preview(gang("huge", nodes=4)).verdict is Verdict.NEVER_FITS
    assert kueue.objects("jobsets", "ml") == [kueue.objects("jobsets", "ml")[0]]  # only low


def test_a_pod_that_cannot_pull_its_image_is_explained_from_the_cluster(kueue, client):
    client.submit(gang("train"))
    Replayer(kueue, "ml", "train", 1, "train").play(
        "jobset-succeeded", "train", pause=0, until=1.5, kinds=EVENTS
    )
    pod = sorted(p["metadata"]["name"] for p in kueue.objects("pods", "ml"))[0]
    message = 'Back-off pulling image "busybox:nope"'
    waiting = {"waiting": {"reason": "ImagePullBackOff", "message": message}}
    trainer = {"name": "trainer", "image": "busybox:nope", "ready": False, "state": waiting}
    status = {"phase": "Pending", "containerStatuses": [trainer]}
    kueue.store.update_status("pods", "ml", pod, status, merge=True)
    found = client.get_run("train").explain()
    assert found.category is Category.IMAGE
    assert f"Pod {pod} cannot pull image busybox:nope (ImagePullBackOff" in found.sentence


def test_cli_why_and_submit_preview(kueue, tmp_path, capsys):
    kubeconfig = str(kueue.kubeconfig(tmp_path / "kubeconfig", namespace="ml"))
    spec = tmp_path / "job.yaml"
    spec.write_text(SPEC.format(name="huge", nodes=4))
    assert main(["submit", str(spec), "--preview", "--kubeconfig", kubeconfig]) == 0
    out = capsys.readouterr().out
    assert out.startswith("huge: Never fits: this job needs 32 nvidia.com/gpu")
    assert kueue.objects("jobsets", "ml") == []
    assert main(["submit", str(spec), "--kubeconfig", kubeconfig]) == 0
    Replayer(kueue, "ml", "huge", 1, "huge").play(
        "jobset-over-quota-pending", "huge", pause=0, kinds=EVENTS
    )
    capsys.readouterr()
    assert main(["why", "huge", "--kubeconfig", kubeconfig]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("huge: Never admitted: it asks for 32 nvidia.com/gpu")
    assert lines[1] == "  category: quota"
    assert any(
        "Workload/jobset-huge-9939b QuotaReserved=False ExceedsMaxQuota" in ln for ln in lines
    )
    assert main(["why", "huge", "-q", "--kubeconfig", kubeconfig]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 1


@pytest.fixture
def shell(kueue: Any, tmp_path: Path) -> Any:
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "gkeml_magics")
    kubeconfig = kueue.kubeconfig(tmp_path / "kubeconfig", namespace="ml")
    ip.run_line_magic("gke_config", "--reset")
    ip.run_line_magic("gke_config", f"--kubeconfig {kubeconfig} --namespace ml --queue team-a")
    yield ip
    ip.run_line_magic("gke_config", "--reset")


def test_magics_why_preview_and_the_wait_line(shell, kueue, client):
    cell = "%%gke_train --preview --image busybox --gpu h100:8 --nodes 4 --name huge\nprint(1)"
    with capture_output() as captured:
        result = shell.run_cell(cell)
    assert result.success, result.error_in_exec
    assert repr(result.result).startswith("huge (not submitted): Never fits")
    assert "<code" in result.result._repr_html_() and kueue.objects("jobsets", "ml") == []
    replay = Replayer(kueue, "ml", "huge", 1, "huge")
    thread = replay.play_in_background(
        "jobset-over-quota-pending", "huge", watchers=3, pause=0, kinds=EVENTS
    )
    # Its queue preempts, so state goes to durable checkpoints (an emptyDir is refused).
    cell = (
        "%%gke_train --wait --timeout 4 --image busybox --gpu h100:8 --nodes 4 --name huge "
        "--checkpoint-dir gs://bucket/huge\n"
    )
    with capture_output() as captured:
        shell.run_cell(cell + "print(1)")
    thread.join()
    lines = [o.data.get("text/plain", "") for o in captured.outputs]
    assert any("why: Never admitted: it asks for 32 nvidia.com/gpu" in t for t in lines), lines
    with capture_output() as captured:
        shell.run_line_magic("gke_why", "huge")
    (why,) = (o.data for o in captured.outputs)
    text = why["text/plain"]
    assert text.startswith("huge: Never admitted") and "category: quota" in text
    page = why["text/html"]
    assert "<details><summary>evidence" in page and "ExceedsMaxQuota" in page
