"""The magics in a real IPython shell: option parsing, errors as one line, local runs,
dry runs and the line magics."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

from gkeml_sdk import Accelerator, SpecError


@pytest.fixture(scope="module")
def shell() -> InteractiveShell:
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "gkeml_magics")
    return ip


@pytest.fixture(autouse=True)
def fresh_defaults(
    shell: InteractiveShell, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    monkeypatch.setenv("GKEML_RUN_DIR", str(tmp_path))
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "no-kubeconfig"))
    shell.run_line_magic("gke_config", "--reset")
    yield


def run(shell: InteractiveShell, source: str) -> tuple[Any, str, str, list[str]]:
    with capture_output() as captured:
        result = shell.run_cell(source)
    texts = [o.data.get("text/plain", "") for o in captured.outputs]
    if result.result is not None:
        texts.append(repr(result.result))
    return result, captured.stdout, captured.stderr, texts


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("%%gke_train --bogus 1\nprint(1)", "valid options: --annotation, --args"),
        ("%%gke_train --gpu h100:x\nprint(1)", "expected MODEL[:COUNT]"),
        ("%%gke_train --gpu h10:8\nprint(1)", "Did you mean 'h100'"),
        ("%%gke_train --tpu v5e:3x3\nprint(1)", "one of 1x1, 2x2, 2x4"),
        ("%%gke_train --tpu v5e\nprint(1)", "expected GEN:TOPOLOGY"),
        ("%%gke_train --local\nfor x in y\n  pass", "main.py line 1"),
        ("%%gke_train --nodes {not_defined}\nprint(1)", "{not_defined} is not a variable"),
        ("%%gke_train --chaos 1\nprint(1)", "--chaos needs --local"),
        ("%%gke_train --env NOVALUE\nprint(1)", "expected KEY=VALUE"),
        ("%%gke_train --local\n  \n", "the cell is empty"),
        ("%gke_config --backend mars", "invalid choice: 'mars'"),
        ("%gke_status no-such-run --local", "NotFoundError"),
        ("%%gke_train --image img --no-wait\nprint(1)", "NoClusterError: no Kubernetes config"),
    ],
)
def test_bad_input_is_one_usage_line(shell: InteractiveShell, source: str, expected: str) -> None:
    result, _, stderr, _ = run(shell, source)
    assert isinstance(result.error_in_exec, UsageError)
    assert expected in str(result.error_in_exec)
    assert "Traceback" not in stderr
    assert len(stderr.strip().splitlines()) == 1


def test_local_run_streams_ranks_and_expands_variables(shell: InteractiveShell) -> None:
    shell.user_ns["n_nodes"] = 2
    cell = "%%gke_train --local --nodes {n_nodes} --env GREETING=hi --name magic-local\n"
    cell += (
        "import os\nprint(os.environ['GREETING'], os.environ['NODE_RANK'], os.environ['NNODES'])\n"
    )
    result, stdout, _, texts = run(shell, cell)
    assert result.success, result.error_in_exec
    assert "[0] hi 0 2" in stdout and "[1] hi 1 2" in stdout
    assert any("magic-local (default): Succeeded" in t for t in texts)
    _, _, _, status = run(shell, "%gke_status magic-local")
    assert "Succeeded" in status[-1] and "attempt 1" in status[-1]
    _, logs, _, _ = run(shell, "%gke_logs magic-local --rank 1")
    assert logs.strip() == "[1] hi 1 2"
    _, _, _, jobs = run(shell, "%gke_jobs --local")
    assert "magic-local" in jobs[-1]


def test_no_wait_returns_the_run_and_cancel_stops_it(shell: InteractiveShell) -> None:
    shell.run_line_magic("gke_config", "--backend local")
    result, _, _, texts = run(
        shell, "%%gke_train --no-wait --name sleeper\nimport time\ntime.sleep(60)"
    )
    assert result.success and "sleeper (default)" in texts[-1]
    _, stdout, _, _ = run(shell, "%gke_cancel sleeper")
    assert "sleeper: Cancelled" in stdout


def test_dry_run_shows_yaml_and_cost_and_submits_nothing(shell: InteractiveShell) -> None:
    shell.run_line_magic("gke_config", "--image us-docker.pkg.dev/p/r/trainer:1 --queue team-a")
    cell = "%%gke_train --dry-run --gpu h100:8 --nodes 2 --spot --max-restarts 3 --name dry\n"
    cell += "print('x')\n"
    result, _, _, texts = run(shell, cell)
    assert result.success, result.error_in_exec
    text = texts[-1]
    assert text.startswith("valid: TrainingJob('dry'")
    for needle in ("kind: ConfigMap", "kind: JobSet", "nvidia-h100-80gb", "team-a", "spot "):
        assert needle in text
    _, _, _, jobs = run(shell, "%gke_jobs --local")
    assert jobs[-1] == "no runs"


def test_config_shows_and_sets_defaults(shell: InteractiveShell) -> None:
    _, _, _, texts = run(shell, "%gke_config --namespace ml --queue team-a")
    assert "namespace   ml" in texts[-1] and "queue       team-a" in texts[-1]
    _, _, _, texts = run(shell, "%gke_config")
    assert "team-a" in texts[-1]


def test_cost(shell: InteractiveShell) -> None:
    _, _, _, texts = run(shell, "%gke_cost --gpu h100:8 --nodes 2 --spot --hours 10")
    assert texts[-1].startswith("16 x NVIDIA H100") and "<- this job" in texts[-1]


def test_options_mirror_trainingjob_fields() -> None:
    from gkeml_magics.options import MagicDefaults, train_job
    from gkeml_magics.parsers import parse, train_parser

    ns = parse(
        train_parser(),
        "--gpu a100-80gb:1 --mig 1g.10gb --nodes 1 --no-gang --queue q --priority high "
        "--env A=1 --env B=x=y --max-restarts 2 --checkpoint-dir gs://bkt/p --max-runtime 2h "
        "--name n --image i --namespace ns --cpu 4 --memory 8Gi",
    )
    job = train_job(ns, MagicDefaults(), "print(1)")
    assert (job.accelerator.mig, job.gang, job.queue, job.priority) == (
        "1g.10gb",
        False,
        "q",
        "high",
    )  # type: ignore[union-attr]
    assert job.env == {"A": "1", "B": "x=y"}
    assert (job.max_restarts, job.checkpoint_dir, job.max_runtime) == (2, "gs://bkt/p", 7200)
    assert (job.name, job.image, job.namespace, job.cpu, job.memory) == ("n", "i", "ns", "4", "8Gi")


def test_secret_env_option_becomes_secret_references() -> None:
    from gkeml_magics.options import MagicDefaults, train_job
    from gkeml_magics.parsers import OptionError, parse, train_parser
    from gkeml_sdk import SecretRef

    line = "--secret-env WANDB_API_KEY=wandb/api-key --secret-env HF_TOKEN=hf/token"
    job = train_job(parse(train_parser(), line), MagicDefaults(), "print(1)")
    assert job.secret_env == {
        "WANDB_API_KEY": SecretRef("wandb", "api-key"),
        "HF_TOKEN": SecretRef("hf", "token"),
    }
    with pytest.raises(OptionError, match="--secret-env 'WANDB_API_KEY': expected KEY=VALUE"):
        train_job(parse(train_parser(), "--secret-env WANDB_API_KEY"), MagicDefaults(), "x")


def test_with_no_cluster_jobs_and_status_show_the_local_runs_and_say_so_once(
    shell: InteractiveShell,
) -> None:
    run(shell, "%%gke_train --local --name here\nprint('hi')")
    for magic in ("%gke_jobs", "%gke_status"):
        result, _, stderr, texts = run(shell, magic)
        assert result.success, result.error_in_exec
        note, *rows = texts[-1].splitlines()
        assert note.startswith("no cluster configured (") and "get-credentials" in note, note
        assert "%gke_config --kubeconfig" in note and rows[0].startswith("here ")
        assert "ConfigError" not in texts[-1] + stderr
    table, status = shown(shell, "%gke_jobs\n%gke_status here\n")
    assert 'data-picture="runs-table"' in table["text/html"]
    assert "data-state='Succeeded'" in table["text/html"]
    assert "no cluster configured" in table["text/html"]
    assert 'data-picture="run-timeline"' in status["text/html"]
    assert "here (default): Succeeded" in status["text/plain"]


def shown(shell: InteractiveShell, cell: str) -> list[dict[str, str]]:
    """What a cell displayed, one mime bundle per display; the cell's value shows nothing."""
    with capture_output() as captured:
        result = shell.run_cell(cell)
    assert result.success and result.result is None, result.error_in_exec
    return [dict(output.data) for output in captured.outputs]


def test_each_magic_of_a_cell_shows(shell: InteractiveShell) -> None:
    cell = "%gke_config\n%gke_cost --gpu l4 --hours 2\n%gke_jobs --local\n"
    config, cost, jobs = shown(shell, cell)
    assert "namespace" in config["text/plain"]
    assert 'data-picture="cost-bars"' in cost["text/html"] and "2 h" in cost["text/plain"]
    assert jobs["text/plain"] == "no runs"


def test_provisioning_and_network_options_reach_the_job_and_its_price(
    shell: InteractiveShell,
) -> None:
    from gkeml_magics.options import MagicDefaults, train_job
    from gkeml_magics.parsers import parse, train_parser

    line = "--gpu h100:8 --nodes 2 --provisioning queued --network standard --max-runtime 2h"
    job = train_job(parse(train_parser(), line), MagicDefaults(), "print(1)")
    assert (job.provisioning, job.network) == ("queued", "standard")
    shell.run_line_magic("gke_config", "--image us-docker.pkg.dev/p/r/trainer:1 --queue team-a")
    result, _, _, texts = run(shell, f"%%gke_train --dry-run --name dws {line}\nprint('x')\n")
    assert result.success, result.error_in_exec
    assert "cloud.google.com/gke-queued" in texts[-1]
    assert "provreq.kueue.x-k8s.io/maxRunDurationSeconds" in texts[-1]
    _, _, _, cost = run(shell, "%gke_cost --gpu h100:8 --provisioning flex-start")
    chosen = next(row for row in cost[-1].splitlines() if "<- this job" in row)
    assert chosen.lstrip().startswith("flex-start"), cost[-1]
    _, _, stderr, _ = run(shell, "%gke_cost --gpu h100:8 --provisioning flex-start --spot")
    assert "--spot with --provisioning flex-start" in stderr and "Traceback" not in stderr


def test_sharing_option_becomes_gpu_sharing(shell: InteractiveShell) -> None:
    from gkeml_magics.options import MagicDefaults, train_job
    from gkeml_magics.parsers import parse, train_parser

    line = "--gpu l4 --sharing time-sharing:4"
    job = train_job(parse(train_parser(), line), MagicDefaults(), "print(1)")
    assert job.accelerator == Accelerator("l4", sharing="time-sharing", clients_per_gpu=4)
    _, _, _, cost = run(shell, "%gke_cost --gpu l4 --sharing mps:8 --hours 1")
    assert "<- this job" in cost[-1]
    _, _, stderr, _ = run(shell, "%gke_cost --gpu l4 --sharing mps:many")
    assert "expected STRATEGY[:CLIENTS]" in stderr and "Traceback" not in stderr


def test_fields_option_reads_the_notebook_variable(shell: InteractiveShell) -> None:
    shell.run_cell("from gkeml_sdk import GcsFuse\ndata = {'volumes': [GcsFuse('my-data')]}")
    cell = "%%gke_train --dry-run --image img --name vol --fields data --label team=nlp\nprint(1)"
    result, _, _, texts = run(shell, cell)
    assert result.success, result.error_in_exec
    assert "gcsfuse.csi.storage.gke.io" in texts[-1] and "team: nlp" in texts[-1]
    result, _, _, _ = run(shell, "%%gke_train --dry-run --image img --fields nothing\nprint(1)")
    assert "the notebook has no variable 'nothing'" in str(result.error_in_exec)


ANSI = re.compile(r"\x1b\[[0-9;]*m")


def test_a_gkeml_error_in_python_shows_the_users_line_without_gkeml_frames(
    shell: InteractiveShell,
) -> None:
    from gkeml_magics.tracebacks import HINT

    cell = "from gkeml_sdk import TrainingJob\njob = TrainingJob(name='a', command=['x'], nodes=0)"
    result, stdout, stderr, _ = run(shell, cell)
    assert isinstance(result.error_in_exec, SpecError)
    shown = ANSI.sub("", stdout)
    assert "----> 2 job = TrainingJob(name='a', command=['x'], nodes=0)" in shown
    assert shown.rstrip().endswith(
        "SpecError: nodes=0 (rule: a job runs on at least one node). Try: nodes=1"
    )
    assert "gkeml_sdk" not in shown.replace("from gkeml_sdk import", "") and "pydantic" not in shown
    assert stderr.strip() == HINT
    with capture_output() as full:
        shell.run_line_magic("tb", "")
    assert "gkeml_sdk/training/rules.py" in ANSI.sub("", full.stdout)


def test_a_handler_the_user_installed_stays(shell: InteractiveShell) -> None:
    from gkeml_magics.tracebacks import install

    def own(*_: Any, **__: Any) -> None:
        return None

    shell.set_custom_exc((KeyError,), own)
    try:
        assert install(shell) is False and shell.custom_exceptions == (KeyError,)
    finally:
        shell.set_custom_exc((), None)
        assert install(shell) is True
