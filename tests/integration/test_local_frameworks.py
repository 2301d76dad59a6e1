"""Framework presets on the local backend, in real processes: every node of a torch or
deepspeed job starts torchrun with its own node rank and the one coordinator of the start,
and every JAX process sees its id, the process count and the coordinator, multislice too;
real JAX processes (CPU) join one job with those values.

torch is not installed here (its PyPI wheel brings CUDA): a `torchrun` on PATH stands in for
it, reads its command line with torchrun's recorded parser (`tests.torchrun_args`), and
prints what it was given."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from gkeml_sdk import RunState, SpecError, TpuSlice, TrainingJob
from gkeml_sdk.backends.local import LocalBackend, LocalOptions
from tests.local_runs import submit

ROOT = Path(__file__).resolve().parents[2]
FAST = LocalOptions(grace_seconds=0.5)

TORCHRUN = f"""#!{sys.executable}
import json, os, sys
sys.path.insert(0, {str(ROOT)!r})
from tests.torchrun_args import parse_torchrun
args = vars(parse_torchrun(sys.argv[1:]))
names = ("NODE_RANK", "MASTER_ADDR", "MASTER_PORT", "GKEML_RESTART_ATTEMPT")
print(json.dumps({{"args": args, "env": {{k: os.environ[k] for k in names}}}}))
"""

# Real JAX (CPU): every process joins the coordinator with the contract's values, as the
# docs tell GPU users to, and sees the whole job.
JAX_INITIALIZE = """
import json, os
import jax
jax.distributed.initialize(
    coordinator_address=os.environ["JAX_COORDINATOR_ADDRESS"],
    num_processes=int(os.environ["JAX_NUM_PROCESSES"]),
    process_id=int(os.environ["JAX_PROCESS_ID"]),
)
print(json.dumps({"index": jax.process_index(), "count": jax.process_count(),
                  "devices": jax.device_count(), "local": jax.local_device_count()}))
jax.distributed.shutdown()
"""

JAX_ENV = """
import json, os
keys = [k for k in os.environ if k.startswith(("JAX_", "MEGASCALE_", "TPU_WORKER_ID"))]
print(json.dumps({k: os.environ[k] for k in sorted(keys)}))
"""


@pytest.fixture
def backend(tmp_path: Path) -> LocalBackend:
    return LocalBackend(run_dir=tmp_path / "runs", options=FAST)


@pytest.fixture
def torchrun_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "bin"
    folder.mkdir()
    script = folder / "torchrun"
    script.write_text(TORCHRUN)
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}:{Path(sys.executable).parent}:/usr/bin:/bin")
    return script


def by_rank(lines: list[str]) -> dict[str, dict[str, Any]]:
    return {line[1 : line.index("]")]: json.loads(line[line.index("]") + 2 :]) for line in lines}


@pytest.mark.parametrize("framework", ["torch", "deepspeed"])
def test_each_node_starts_torchrun_with_its_rank_and_the_shared_rendezvous(
    backend: LocalBackend, torchrun_on_path: Path, framework: str
) -> None:
    job = TrainingJob(
        name=f"{framework}-local", command=["python", "train.py"], args=["--lr", "$$1"],
        framework=framework, nodes=3, procs_per_node=2,
    )  # fmt: skip
    run = submit(backend, job)
    assert run.wait(timeout=60).state is RunState.SUCCEEDED, list(run.logs())
    seen = by_rank(list(run.logs()))
    assert sorted(seen) == ["0", "1", "2"]
    ports = set()
    for label, record in seen.items():
        args, env = record["args"], record["env"]
        assert (args["nnodes"], args["nproc_per_node"]) == ("3", "2")
        assert args["node_rank"] == int(label) == int(env["NODE_RANK"])
        assert args["rdzv_backend"] == "static" and args["rdzv_id"] == job.name
        assert args["rdzv_endpoint"] == f"127.0.0.1:{env['MASTER_PORT']}"
        ports.add(env["MASTER_PORT"])
        # `python` is this interpreter locally; the user's words follow, `$$` as one `$`.
        assert args["no_python"] and args["training_script"] == sys.executable
        assert args["training_script_args"] == ["train.py", "--lr", "$1"]
        assert env["GKEML_RESTART_ATTEMPT"] == "0"
    assert len(ports) == 1  # one coordinator for the whole start


def test_jax_processes_see_their_id_the_count_and_one_coordinator(
    backend: LocalBackend,
) -> None:
    run = submit(
        backend, TrainingJob.from_code(JAX_ENV, name="jax-local", framework="jax", nodes=3)
    )
    assert run.wait(timeout=60).state is RunState.SUCCEEDED, list(run.logs())
    seen = by_rank(list(run.logs()))
    assert {label: env["JAX_PROCESS_ID"] for label, env in seen.items()} == {
        "0": "0", "1": "1", "2": "2",
    }  # fmt: skip
    assert {env["JAX_NUM_PROCESSES"] for env in seen.values()} == {"3"}
    coordinators = {env["JAX_COORDINATOR_ADDRESS"] for env in seen.values()}
    assert len(coordinators) == 1 and next(iter(coordinators)).startswith("127.0.0.1:")


def test_real_jax_processes_form_one_job_from_the_contract(backend: LocalBackend) -> None:
    job = TrainingJob.from_code(
        JAX_INITIALIZE, name="jax-real", framework="jax", nodes=2, env={"JAX_PLATFORMS": "cpu"}
    )
    run = submit(backend, job)
    assert run.wait(timeout=120).state is RunState.SUCCEEDED, list(run.logs())
    seen = by_rank(list(run.logs()))
    assert {label: view["index"] for label, view in seen.items()} == {"0": 0, "1": 1}
    for view in seen.values():
        assert (view["count"], view["devices"], view["local"]) == (2, 2, 1)


def test_jax_multislice_processes_see_their_slice(backend: LocalBackend) -> None:
    job = TrainingJob.from_code(
        JAX_ENV, name="jax-ms", framework="jax", accelerator=TpuSlice("v5e", "4x4", slices=2)
    )
    run = submit(backend, job)
    assert run.wait(timeout=60).state is RunState.SUCCEEDED, list(run.logs())
    seen = by_rank(list(run.logs()))
    assert sorted(int(env["JAX_PROCESS_ID"]) for env in seen.values()) == list(range(8))
    for label, env in seen.items():
        assert env["JAX_NUM_PROCESSES"] == "8" and env["MEGASCALE_NUM_SLICES"] == "2"
        # Hosts 0-3 are slice 0, 4-7 slice 1; each VM's TPU index restarts per slice.
        assert env["MEGASCALE_SLICE_ID"] == str(int(label) // 4)
        assert env["TPU_WORKER_ID"] == str(int(label) % 4)


def test_spawning_ranks_under_torchrun_is_refused_before_anything_starts(
    backend: LocalBackend, tmp_path: Path
) -> None:
    job = TrainingJob(name="double", command=["python", "t.py"], framework="torch", nodes=2)
    with pytest.raises(SpecError, match=r"spawn_procs=True\) with framework='torch'") as caught:
        backend.submit(job, options=LocalOptions(spawn_procs=True))
    assert caught.value.field == "spawn_procs"
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").rglob("launch.json"))


def test_gkeml_submit_framework_runs_each_job_under_the_preset(
    tmp_path: Path, torchrun_on_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    from gkeml_sdk.cli.main import main

    monkeypatch.setenv("GKEML_RUN_DIR", str(tmp_path / "cli-runs"))
    spec = tmp_path / "job.yaml"
    spec.write_text("name: cli-torch\ncommand: [python, train.py]\nnodes: 2\n")
    assert main(["submit", str(spec), "--framework", "torch", "--local", "--wait"]) == 0
    assert "cli-torch: Succeeded" in capsys.readouterr().out
    assert main(["logs", "cli-torch", "--local"]) == 0
    seen = by_rank([line for line in capsys.readouterr().out.splitlines() if line])
    ranks = {label: record["args"]["node_rank"] for label, record in seen.items()}
    assert ranks == {"0": 0, "1": 1}


def test_gkeml_submit_framework_jax_runs_one_process_per_gpu_node(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from gkeml_sdk.cli.main import main

    monkeypatch.setenv("GKEML_RUN_DIR", str(tmp_path / "cli-runs"))
    spec = tmp_path / "job.yaml"
    lines = [
        "name: cli-jax",
        "command: [python, -c, 'import os; print(os.environ[\"JAX_PROCESS_ID\"])']",
    ]
    lines += ["nodes: 2", "accelerator: {model: h100, count: 8}"]
    spec.write_text("\n".join(lines) + "\n")
    assert main(["submit", str(spec), "--framework", "jax", "--local", "--wait"]) == 0
    assert "cli-jax: Succeeded" in capsys.readouterr().out
    assert main(["logs", "cli-jax", "--local"]) == 0
    assert sorted(capsys.readouterr().out.split()) == ["0", "1", "[0]", "[1]"]
