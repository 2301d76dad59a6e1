"""Every `gkeml` verb with no cluster configured (KUBECONFIG names no file, no in-cluster
service, no Google credentials): verbs that can answer from local runs or files do, under one
line saying so; the others exit 1 with one line that names what works without a cluster, and
never a flag that would then refuse."""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

import pytest

from gkeml_sdk import Client, TrainingJob
from gkeml_sdk.cli.main import COMMANDS, _parser, main

ROOT = Path(__file__).resolve().parents[3]
FILES = {
    "train.yaml": "name: hello\nimage: img\ncommand: [python, train.py]\n",
    "jobs.yaml": (
        "name: ft\nnamespace: research\nqueue: research\nimage: img\n"
        "command: [python, train.py]\naccelerator: {model: h100, count: 8}\nnodes: 2\n---\n"
        "name: big\nnamespace: research\nqueue: research\nimage: img\n"
        "command: [python, train.py]\naccelerator: {model: h100, count: 8}\nnodes: 8\n"
    ),
    "serve.yaml": "kind: ServeModel\nname: chat\nmodel: Qwen/Qwen2.5-7B-Instruct\n"
    "accelerator: {model: l4}\n",
    "setup.yaml": (
        "kind: ClusterSetup\ncapacity:\n- accelerator: {model: h100, count: 8}\n"
        "  provisioning: [standard, spot]\n"
        "teams:\n- {name: research, namespaces: [research], quota: {h100: 32}}\n"
    ),
    "pools.yaml": "- name: v5e-spot\n  hardware: {generation: v5e, topology: 4x4}\n  spot: true\n",
    "h100-pools.yaml": "- name: h100-spot\n  hardware: {model: h100, count: 8}\n  spot: true\n"
    "  max_nodes: 2\n",
}
NOTE = "no cluster configured ("  # the one line above an answer from local runs
NO_CLUSTER = "no Kubernetes configuration found ("
GKE = ["--project", "p", "--location", "us-central1", "--cluster", "c"]

# verb: argv, exit code, text the output must hold, text it must not hold.
TABLE: dict[str, tuple[list[str], int, tuple[str, ...], tuple[str, ...]]] = {
    "render": (["render", "train.yaml"], 0, ("kind: Job",), (NO_CLUSTER,)),
    "validate": (["validate", "train.yaml"], 0, ("TrainingJob hello: valid",), ()),
    "catalog": (["catalog", "tpus"], 0, ("v5e",), ()),
    "preview": (
        ["preview", "jobs.yaml", "--setup", "setup.yaml"],
        0,
        ("ft: Fits now", "big: Never fits"),
        (NO_CLUSTER,),
    ),
    # Kueue admits ft on the on-demand flavor, but the only pool is Spot: it never runs.
    "preview --pools": (
        ["preview", "jobs.yaml", "--setup", "setup.yaml", "--pools", "h100-pools.yaml"],
        0,
        ("ft: Never runs:", "pool h100-spot: its nodes are tainted", "big: Never fits"),
        (NO_CLUSTER,),
    ),
    "submit": (["submit", "train.yaml"], 1, (NO_CLUSTER, "--local", "--setup SETUP.yaml"), ()),
    "status": (["status", "here"], 0, (NOTE, "here: Succeeded"), ()),
    "runs": (["runs"], 0, (NOTE, "here"), ()),
    "logs": (["logs", "here"], 0, (NOTE, "[0] hi"), ()),
    "why": (["why", "here"], 0, (NOTE, "here: "), ()),
    "cancel": (["cancel", "here"], 0, (NOTE, "had already finished (Succeeded"), ("cancelled",)),
    # The local backend serves nothing, so serving advice never names --local.
    "serve": (["serve", "serve.yaml"], 1, (NO_CLUSTER, "gkeml render FILE"), ("--local",)),
    "setup plan": (["setup", "plan", "setup.yaml"], 1, ("kind: ClusterQueue", "--offline"), ()),
    "setup apply": (["setup", "apply", "setup.yaml"], 1, ("setup plan FILE --offline",), ()),
    "tenant plan": (["tenant", "plan", "tenants.yaml"], 0, ("tenant-a",), (NO_CLUSTER,)),
    **{
        f"tenant {verb}": (
            ["tenant", verb, "tenants.yaml", *extra],
            1,
            (NO_CLUSTER, "gkeml tenant plan FILE"),
            ("--local",),
        )
        for verb, extra in (
            ("apply", []),
            ("status", []),
            ("manage", []),
            ("drill", ["--tenant", "tenant-a"]),
        )
    },
    "controller run": (
        ["controller", "run", "-n", "ml"],
        1,
        (NO_CLUSTER, "gkeml controller install -n NS --image IMAGE --dry-run"),
        ("--local",),
    ),
    "controller install": (
        ["controller", "install", "-n", "ml", "--image", "r/c:1"],
        1,
        (NO_CLUSTER, "--dry-run"),
        (),
    ),
    "controller install --dry-run": (
        ["controller", "install", "-n", "ml", "--image", "r/c:1", "--dry-run"],
        0,
        ("kind: Role",),
        (NO_CLUSTER, "ClusterRole"),
    ),
    "nodepool plan": (["nodepool", "plan", "pools.yaml"], 0, ("v5e-spot",), ()),
    "nodepool create": (
        ["nodepool", "create", "pools.yaml", *GKE],
        1,
        ("no Google credentials", "gcloud auth application-default login"),
        ("--local",),
    ),
    "nodepool delete": (
        ["nodepool", "delete", "v5e-spot", *GKE],
        1,
        ("no Google credentials", "gcloud auth application-default login"),
        ("--local",),
    ),
}


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One finished local run, `here`, shared by the table's rows."""
    runs = tmp_path_factory.mktemp("runs")
    with pytest.MonkeyPatch.context() as env:
        env.setenv("GKEML_RUN_DIR", str(runs))
        job = TrainingJob(name="here", command=["python", "-c", "print('hi')"])
        Client(backend="local").submit(job).wait(60)
    return runs


@pytest.fixture
def no_cluster(tmp_path: Path, run_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name, text in FILES.items():
        (tmp_path / name).write_text(text)
    shutil.copy(ROOT / "examples" / "tenants.yaml", tmp_path / "tenants.yaml")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GKEML_RUN_DIR", str(run_dir))
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "no-kubeconfig"))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    # An explicit key file that does not exist: google.auth stops there, before any lookup.
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(tmp_path / "no-key.json"))
    return tmp_path


def _verbs() -> set[str]:
    """Every verb the parser knows, `setup plan` style for commands with sub-verbs."""
    found: set[str] = set()
    for action in _parser(None)._subparsers._group_actions:  # type: ignore[union-attr]
        assert isinstance(action, argparse._SubParsersAction)
        for word, sub in action.choices.items():
            nested = [a for a in sub._actions if isinstance(a, argparse._SubParsersAction)]
            found |= {f"{word} {verb}" for a in nested for verb in a.choices} or {word}
    return found


def test_the_table_covers_every_verb() -> None:
    assert {key.split(" --")[0] for key in TABLE} == _verbs()  # a verb may have a flag row too
    assert {verb.split()[0] for verb in TABLE} == set(COMMANDS)


@pytest.mark.parametrize("verb", list(TABLE))
def test_without_a_cluster(verb: str, no_cluster: Path, capsys: pytest.CaptureFixture[str]):
    argv, code, says, never = TABLE[verb]
    assert main(argv) == code
    out, err = capsys.readouterr()
    text = out + err
    assert all(part in text for part in says), text
    assert not any(part in text for part in never), text
    assert "Traceback" not in text and "Client(" not in text
    if code:
        assert err.count("\n") == 1 and err.startswith("gkeml: error: "), err
    if NOTE in text:  # on stderr: what a script reads from stdout is only the answer
        assert err.startswith(NOTE) and err.count("\n") == 1 and NOTE not in out


@pytest.mark.parametrize("argv", [["runs"], ["status"]])
def test_runs_and_status_list_local_runs_under_one_line(no_cluster, capsys, argv) -> None:
    assert main(argv) == 0
    out, note = capsys.readouterr()
    header, *rows = out.splitlines()
    assert note.startswith(NOTE) and "no-kubeconfig does not exist" in note
    assert "gcloud container clusters get-credentials" in note and "--kubeconfig" in note
    assert header.split() == ["name", "state", "reason"]
    assert [row.split()[:2] for row in rows] == [["here", "Succeeded"]]


def test_status_of_a_local_run(no_cluster, capsys) -> None:
    assert main(["status", "here"]) == 0
    out, note = capsys.readouterr()
    head, *history = out.splitlines()
    assert note.startswith(NOTE) and head == "here: Succeeded: Completed: every process exited 0"
    assert history and all("attempt 1" in line for line in history)


def test_runs_and_status_print_json_for_scripts(no_cluster, capsys) -> None:
    assert main(["runs", "-o", "json"]) == 0
    out, err = capsys.readouterr()
    assert err.startswith(NOTE)
    (record,) = json.loads(out)
    assert (record["name"], record["namespace"], record["state"]) == (
        "here",
        "default",
        "Succeeded",
    )
    assert record["reason"] == "Completed" and record["cause"] is None
    assert main(["status", "here", "--output", "json"]) == 0
    out, err = capsys.readouterr()
    one = json.loads(out)
    assert one["name"] == "here" and one["state"] == "Succeeded" and err.startswith(NOTE)
    assert [t["attempt"] for t in one["history"]] == [1] * len(one["history"])
    assert one["history"][-1]["state"] == "Succeeded"
    assert main(["status", "-o", "json"]) == 0  # no NAME: every run, as `runs` lists them
    assert [r["name"] for r in json.loads(capsys.readouterr().out)] == ["here"]


def test_logs_and_why_write_only_their_data_to_stdout(no_cluster, capsys) -> None:
    assert main(["logs", "here"]) == 0
    out, err = capsys.readouterr()
    assert out == "[0] hi\n" and err.startswith(NOTE)
    assert main(["why", "-q", "here"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("here: ") and out.count("\n") == 1 and err.startswith(NOTE)
