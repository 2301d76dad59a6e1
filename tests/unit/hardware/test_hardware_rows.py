"""Hardware behaviour is data on the catalog row: a new GPU or TPU generation is one row,
and the compiler reads it only through the `Hardware` protocol."""

import ast
import dataclasses
import subprocess
import sys
from pathlib import Path

from gkeml_sdk import Accelerator, TpuSlice, TrainingJob
from gkeml_sdk.backends.local.plan.local_environment import Slot, local_env
from gkeml_sdk.hardware import tpus
from tests.schemas import validate_object

PACKAGE = Path(__file__).resolve().parents[3] / "gkeml_sdk"


def _job(accelerator, **kwargs):
    return TrainingJob(name="ft", image="img", command=["x"], accelerator=accelerator, **kwargs)


def _pod(manifests):
    main = manifests.main
    if main["kind"] == "Job":
        return main["spec"]["template"]["spec"]
    return main["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]


def test_a_new_gpu_row_compiles_from_its_row_alone(new_gpu):
    m = _job(Accelerator("z900", count=8), nodes=2, spot=True).compile()
    for obj in [*m.objects, m.workload]:
        validate_object(obj)
    pod = _pod(m)
    assert pod["nodeSelector"] == {
        "acme.com/accelerator": "acme-z900",
        "cloud.google.com/gke-spot": "true",
    }
    assert [t["key"] for t in pod["tolerations"]] == ["acme.com/gpu", "cloud.google.com/gke-spot"]
    assert pod["containers"][0]["resources"]["limits"] == {"acme.com/gpu": 8}
    assert "volumes" not in pod or all(v["name"] != "dshm" for v in pod["volumes"])
    assert m.requests()["acme.com/gpu"] == 16


def test_a_new_tpu_generation_compiles_from_its_row_alone(new_tpu):
    m = _job(TpuSlice("v9", "4x8", slices=2)).compile()
    for obj in [*m.objects, m.workload]:
        validate_object(obj)
    pod = _pod(m)
    assert pod["nodeSelector"] == {
        "cloud.google.com/gke-tpu-accelerator": "tpu-v9-slice",
        "cloud.google.com/gke-tpu-topology": "4x8",
    }
    assert pod["containers"][0]["resources"]["limits"] == {"google.com/tpu": 4}
    ports = pod["containers"][0]["ports"]
    assert ports[1:] == [
        {"name": "tpu-ici", "containerPort": 9471},
        {"name": "megascale", "containerPort": 8080},  # a multislice's DCN traffic
    ]
    assert (pod["hostNetwork"], pod["dnsPolicy"]) == (True, "ClusterFirstWithHostNet")
    assert m.main["spec"]["replicatedJobs"][0]["replicas"] == 2
    env = {e["name"] for e in pod["containers"][0]["env"]}
    assert {"TPU_WORKER_ID", "MEGASCALE_NUM_SLICES", "MEGASCALE_SLICE_ID"} <= env


def test_worker_env_comes_from_the_row_on_gke_and_locally(new_tpu, monkeypatch):
    row = dataclasses.replace(new_tpu, single_slice_env=(("V9_RANK", "rank"),))
    monkeypatch.setattr(tpus, "_BY_NAME", {**tpus._BY_NAME, row.key: row})
    job = _job(TpuSlice("v9", "4x4"))
    env = _pod(job.compile())["containers"][0]["env"]
    rank = next(e for e in env if e["name"] == "V9_RANK")
    assert rank["valueFrom"]["fieldRef"]["fieldPath"].endswith("job-completion-index']")
    assert "TPU_WORKER_HOSTNAMES" not in {e["name"] for e in env}
    local = local_env(
        job, Slot(3), attempt=0, master_port=1, jax_port=2, checkpoint_dir="/tmp/ckpt"
    )
    assert local["V9_RANK"] == "3"
    assert "TPU_WORKER_HOSTNAMES" not in local


def _hardware_isinstance(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "isinstance":
            names = {n.id for n in ast.walk(node.args[1]) if isinstance(n, ast.Name)}
            if names & {"Accelerator", "TpuSlice", "CpuOnly"}:
                found.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    return found


def test_compile_and_backends_never_ask_which_hardware_they_have():
    # The builders and backends; spec models (model.py, fields.py, *_model.py) derive their
    # fields from the kind.
    folders = ("training", "serving", "tenancy", "setup", "nodepools", "scheduling", "backends")
    paths = [
        path for folder in folders for path in (PACKAGE / folder).rglob("*.py")
        if path.name not in ("model.py", "fields.py") and not path.name.endswith("_model.py")
    ]  # fmt: skip
    assert len(paths) > 50  # the folders exist: the check is not vacuous
    assert [hit for path in paths for hit in _hardware_isinstance(path)] == []


def test_the_pod_template_stays_simple():
    # Hardware branches belong on the catalog row; each one here would raise the complexity.
    files = [PACKAGE / "training" / "pod.py", PACKAGE / "scheduling" / "manifests.py"]
    assert all(f.is_file() for f in files)
    result = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", "--select", "C901",
         "--config", "lint.mccabe.max-complexity=5", *map(str, files)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert "pod_template" not in result.stdout
    assert "accelerator_scheduling" not in result.stdout
