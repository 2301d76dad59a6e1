"""Framework presets: the command each pod runs for 1, 2 and 16 nodes (goldens), read by
torchrun's recorded parser with the values a pod's kubelet and gkeml's launcher give it, and
the presets that do not fit the job refused at construction."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Any

import pytest
import yaml

from gkeml_sdk import Accelerator, SpecError, TpuSlice, TrainingJob
from gkeml_sdk.core.environment import CONTRACT_ENV, TPU_ENV
from gkeml_sdk.training.launcher import expand, node_rank
from tests.pod_env import container_env, jobset_pod_metadata
from tests.schemas import validate_object
from tests.torchrun_args import ParseError, parse_torchrun

GOLDEN = Path(__file__).resolve().parents[2] / "golden" / "frameworks" / "commands.yaml"
H100 = Accelerator("h100", count=8)


def job_for(framework: str, nodes: int) -> TrainingJob:
    shape: dict[str, Any] = {"accelerator": H100, "nodes": nodes}
    if framework == "jax" and nodes != 2:
        # JAX on TPU too: one host, and 4 slices of 4 hosts (multislice, 16 nodes).
        slices = {1: TpuSlice("v5e", "2x2"), 16: TpuSlice("v5e", "4x4", slices=4)}
        shape = {"accelerator": slices[nodes]}
    return TrainingJob(
        name=f"{framework}-{nodes}", image="img", command=["python", "train.py"],
        args=["--steps", "$$5"], framework=framework, **shape,
    )  # fmt: skip


CASES = [(f, n) for f in ("torch", "deepspeed", "jax") for n in (1, 2, 16)]


def container(job: TrainingJob) -> dict[str, Any]:
    main = job.compile().main
    spec = main["spec"]
    if main["kind"] == "JobSet":
        spec = spec["replicatedJobs"][0]["template"]["spec"]
    containers: list[dict[str, Any]] = spec["template"]["spec"]["containers"]
    return containers[0]


def launched(job: TrainingJob) -> list[tuple[dict[str, str], list[str]]]:
    """Each pod's env and the argv its launcher execs: the kubelet expands the declared
    variables, the launcher NODE_RANK and JAX_PROCESS_ID (as `training.launcher.main`)."""
    main = job.compile().main
    box = container(job)
    if main["kind"] == "JobSet":
        replicated = main["spec"]["replicatedJobs"][0]
        per_job = replicated["template"]["spec"]["completions"]
        pods = [(j, i) for j in range(replicated["replicas"]) for i in range(per_job)]
        metas = [jobset_pod_metadata(main, j, i, f"{j}-{i}") for j, i in pods]
    else:
        annotations = {"batch.kubernetes.io/job-completion-index": "0"}
        metas = [{"uid": "u", "labels": {}, "annotations": annotations}]
    result = []
    for meta in metas:
        declared = container_env(box, meta)
        rank = str(node_rank(declared))
        values = {"NODE_RANK": rank, "JAX_PROCESS_ID": rank}
        words = [*box["command"][3:], *box.get("args", [])]
        argv = [expand(expand(word, declared), values) for word in words]
        result.append(({**declared, **values}, argv))
    return result


def test_commands_for_1_2_and_16_nodes_match_the_golden() -> None:
    seen: dict[str, Any] = {}
    for framework, nodes in CASES:
        box = container(job_for(framework, nodes))
        names = CONTRACT_ENV | TPU_ENV
        env = {
            e["name"]: e.get("value", "(from the pod)") for e in box["env"] if e["name"] in names
        }
        seen[f"{framework} on {nodes} node(s)"] = {
            "command": box["command"][3:],  # after python3 -c <launcher source>
            "args": box["args"],
            "env": env,
        }
    text = yaml.safe_dump(seen, sort_keys=False, width=100)
    if os.environ.get("GKEML_UPDATE_GOLDEN"):
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(text)
    assert GOLDEN.exists(), f"{GOLDEN} missing: run with GKEML_UPDATE_GOLDEN=1"
    assert text == GOLDEN.read_text()


@pytest.mark.parametrize(("framework", "nodes"), [c for c in CASES if c[0] != "jax"])
def test_every_pod_starts_torchrun_with_its_rank_and_the_coordinator(
    framework: str, nodes: int
) -> None:
    job = job_for(framework, nodes)
    pods = launched(job)
    assert len(pods) == nodes
    ranks = []
    for env, argv in pods:
        assert argv[0] == "torchrun"
        args = parse_torchrun(argv[1:])
        assert (args.nnodes, args.nproc_per_node) == (str(nodes), "8")
        assert args.rdzv_backend == "static"  # the only one that ranks nodes by --node-rank
        coordinator = "localhost" if nodes == 1 else f"{job.name}-node-0-0.{job.name}"
        assert args.rdzv_endpoint == f"{coordinator}:29500"
        assert args.rdzv_id == job.name
        assert args.no_python and args.training_script == "python"
        # The user's words after the script, `$$` delivered as one dollar sign.
        assert args.training_script_args == ["train.py", "--steps", "$5"]
        assert str(args.node_rank) == env["NODE_RANK"]
        ranks.append(args.node_rank)
    assert ranks == list(range(nodes))


def test_a_py_program_is_torchruns_training_script() -> None:
    job = TrainingJob(name="t", image="img", command=["train.py", "--lr", "1"], framework="torch")
    ((_, argv),) = launched(job)
    args = parse_torchrun(argv[1:])
    assert not args.no_python
    assert (args.training_script, args.training_script_args) == ("train.py", ["--lr", "1"])


def test_the_recorded_parser_refuses_what_torchrun_refuses() -> None:
    with pytest.raises(ParseError):
        parse_torchrun(["--nnodes=2", "--node-rank=one", "train.py"])
    with pytest.raises(ParseError):
        parse_torchrun(["--nnodes=2"])  # no training script


@pytest.mark.parametrize("nodes", [1, 2, 16])
def test_jax_processes_get_dense_ids_one_coordinator_and_the_count(nodes: int) -> None:
    job = job_for("jax", nodes)
    pods = launched(job)
    assert job.procs_per_node == 1 and len(pods) == nodes
    assert sorted(int(env["JAX_PROCESS_ID"]) for env, _ in pods) == list(range(nodes))
    assert {env["JAX_NUM_PROCESSES"] for env, _ in pods} == {str(nodes)}
    assert len({env["JAX_COORDINATOR_ADDRESS"] for env, _ in pods}) == 1
    for _, argv in pods:
        assert argv == ["python", "train.py", "--steps", "$5"]  # JAX has no launcher
    if nodes == 16:  # 4 slices: megascale finds the other slices through the coordinator
        assert {env["MEGASCALE_NUM_SLICES"] for env, _ in pods} == {"4"}
        assert sorted({env["MEGASCALE_SLICE_ID"] for env, _ in pods}) == ["0", "1", "2", "3"]


def test_deepspeed_on_a_tpu_slice_is_refused_with_the_fix() -> None:
    with pytest.raises(SpecError) as caught:
        TrainingJob(name="ds", command=["python", "t.py"], framework="deepspeed",
                    accelerator=TpuSlice("v5e", "4x4"))  # fmt: skip
    error = caught.value
    assert "framework='deepspeed' cannot run on TpuSlice" in str(error)
    assert "no TPU backend" in str(error) and "framework='jax'" in str(error)
    assert error.field == "framework"


def test_jax_with_several_processes_per_node_is_refused() -> None:
    with pytest.raises(SpecError, match=r"framework='jax' with procs_per_node=8") as caught:
        TrainingJob(name="j", command=["python", "t.py"], framework="jax", accelerator=H100,
                    procs_per_node=8)  # fmt: skip
    assert caught.value.field == "procs_per_node"


def test_a_preset_needs_a_command() -> None:
    with pytest.raises(SpecError, match=r"framework='torch' with no command") as caught:
        TrainingJob(name="t", image="img", framework="torch")
    assert caught.value.field == "command"


def test_an_unknown_framework_names_the_presets() -> None:
    with pytest.raises(SpecError, match=r"'torch', 'deepspeed' or 'jax' \(got tensorflow\)"):
        TrainingJob(name="t", command=["x"], framework="tensorflow")


def test_mpi_is_refused_with_what_works_instead() -> None:
    with pytest.raises(SpecError, match=r"framework='mpi' is not a gkeml preset") as caught:
        TrainingJob(name="m", command=["python", "t.py"], framework="mpi", nodes=2)
    assert "over ssh" in str(caught.value) and "framework='deepspeed'" in str(caught.value)
    assert caught.value.field == "framework"


def test_a_job_without_a_preset_compiles_as_before() -> None:
    job = TrainingJob(name="t", image="img", command=["python", "train.py"], nodes=2)
    assert container(job)["command"][3:] == ["python", "train.py"]
    derived = TrainingJob.from_code("print(1)", image="img")
    assert derived.name == TrainingJob.from_code("print(1)", image="img", framework=None).name


@pytest.mark.parametrize(
    ("example", "framework"),
    [("train_gpu", "torch"), ("train_deepspeed", "deepspeed"), ("train_tpu", "jax")],
)
def test_each_preset_example_compiles_to_its_golden(example: str, framework: str) -> None:
    path = GOLDEN.parents[2].parent / "examples" / f"{example}.py"
    spec = importlib.util.spec_from_file_location(f"example_{example}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    job: TrainingJob = module.job
    assert job.framework == framework
    golden = GOLDEN.parent / f"{example}.yaml"
    text = job.compile().to_yaml()
    if os.environ.get("GKEML_UPDATE_GOLDEN"):
        golden.write_text(text)
    assert golden.exists(), f"{golden} missing: run with GKEML_UPDATE_GOLDEN=1"
    assert text == golden.read_text()


def test_the_docs_show_the_command_the_preset_compiles() -> None:
    page = (GOLDEN.parents[2].parent / "docs" / "frameworks.md").read_text()
    shown = " ".join(page.split("```text\n", 1)[1].split("```", 1)[0].split())
    job = TrainingJob(
        name="llama-ft", image="us-docker.pkg.dev/p/r/pytorch:2.4", framework="torch",
        command=["python", "train.py"], args=["--lr", "1e-4"], accelerator=H100, nodes=2,
    )  # fmt: skip
    box = container(job)
    assert shown == " ".join([*box["command"][3:], *box["args"]])


@pytest.mark.parametrize(("framework", "nodes"), CASES)
def test_preset_jobs_compile_to_objects_the_api_server_accepts(framework: str, nodes: int) -> None:
    manifests = job_for(framework, nodes).compile()
    for obj in [*manifests.objects, manifests.workload]:
        validate_object(obj)
