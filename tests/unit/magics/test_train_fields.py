"""Every field of `TrainingJob` can be set from `%%gke_train`: an option of its own, or the
`--fields VAR` dict for the ones a command line cannot spell (volumes)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gkeml_magics.options import MagicDefaults, job_fields, train_job
from gkeml_magics.parsers import OptionError, cost_parser, parse, train_parser
from gkeml_sdk import Accelerator, GcsFuse, SecretRef, TopologyPlacement, TrainingJob

EXTRA = Path(__file__).with_name("extra_module.py")
HERE = Path(__file__).parent  # a folder to ship as --workdir
WORKDIR = f"--workdir {HERE} --command 'python t.py'"
# The one field set through --fields: a volume is a typed object, not a word.
VOLUMES = {"volumes": [GcsFuse("my-data", mount="/data", read_only=True)]}

# field -> (magic line, the field's value in the job that line makes)
EXAMPLES: dict[str, tuple[str, Any]] = {
    "name": ("--name ft", "ft"),
    "image": ("--image img:1", "img:1"),
    "command": ("--command 'python -X dev main.py'", ["python", "-X", "dev", "main.py"]),
    "args": ("--args '--lr 0.1'", ["--lr", "0.1"]),
    "env": ("--env LR=0.1", {"LR": "0.1"}),
    "secret_env": ("--secret-env TOKEN=hf/token", {"TOKEN": SecretRef("hf", "token")}),
    "accelerator": ("--gpu l4:2", Accelerator("l4", count=2)),
    "nodes": ("--nodes 3", 3),
    "procs_per_node": ("--procs-per-node 4", 4),
    "framework": ("--framework torch", "torch"),
    "gang": ("--gang", True),
    "spot": ("--spot --checkpoint-dir gs://bkt/p", True),
    "provisioning": ("--provisioning flex-start --gpu l4", "flex-start"),
    "capacity": ("--capacity spot,standard --stateless", ("spot", "standard")),
    "reservation": ("--reservation res-1", "res-1"),
    "reservation_project": ("--reservation r --reservation-project owner-project", "owner-project"),
    "multikueue": ("--multikueue", True),
    "placement": ("--placement block:required", TopologyPlacement("block", mode="required")),
    "queue": ("--queue team-a", "team-a"),
    "priority": ("--priority high", "high"),
    "max_restarts": ("--max-restarts 2 --checkpoint-dir gs://bkt/p", 2),
    "namespace": ("--namespace ml", "ml"),
    "labels": ("--label team=nlp", {"team": "nlp"}),
    "annotations": ("--annotation note=x", {"note": "x"}),
    "max_runtime": ("--max-runtime 2h", 7200),
    "checkpoint_dir": ("--checkpoint-dir gs://bkt/p", "gs://bkt/p"),
    "stateless": ("--stateless", True),
    "volumes": ("--fields spec", VOLUMES["volumes"]),
    "service_account": ("--service-account trainer", "trainer"),
    "cpu": ("--cpu 4", "4"),
    "memory": ("--memory 8Gi", "8Gi"),
    "termination_grace_seconds": ("--termination-grace-seconds 120", 120),
    "files": (f"--file {EXTRA}", {"main.py": "print(1)", "extra_module.py": "X = 1\n"}),
    "network": ("--network standard --gpu l4 --nodes 2", "standard"),
    "workdir": (WORKDIR, str(HERE)),
    "code_bucket": (f"{WORKDIR} --code-bucket gs://bkt/code", "gs://bkt/code"),
    "requirements": (f"{WORKDIR} --requirements test_train_fields.py", "test_train_fields.py"),
}


@pytest.fixture(autouse=True)
def extra_file() -> Any:
    EXTRA.write_text("X = 1\n")
    yield
    EXTRA.unlink()


def job_of(line: str, variables: dict[str, Any] | None = None) -> TrainingJob:
    cell = "" if "--workdir" in line else "print(1)"  # with a workdir, the code is its files
    return train_job(parse(train_parser(), line), MagicDefaults(), cell, variables)


def test_every_trainingjob_field_has_a_magic_example() -> None:
    assert sorted(EXAMPLES) == sorted(TrainingJob.model_fields)


@pytest.mark.parametrize("field", sorted(TrainingJob.model_fields))
def test_the_magic_sets_each_field(field: str) -> None:
    line, value = EXAMPLES[field]
    job = job_of(line, {"spec": VOLUMES})
    assert getattr(job, field) == value
    assert getattr(job_of(""), field) != value


def test_fields_variable_sets_any_field_and_options_win() -> None:
    spec = {"labels": {"team": "nlp"}, "nodes": 2, "spot": True, "stateless": True, **VOLUMES}
    job = job_of("--nodes 3 --label owner=me --fields spec", {"spec": spec})
    assert (job.nodes, job.spot, job.stateless, job.volumes) == (3, True, True, spec["volumes"])
    assert job.labels == {"team": "nlp", "owner": "me"}
    assert job_of("--fields spec", {"spec": {"name": "from-dict"}}).name == "from-dict"
    assert job_of("--name line --fields spec", {"spec": {"name": "from-dict"}}).name == "line"


@pytest.mark.parametrize(
    ("variables", "expected"),
    [
        ({}, "--fields spec: the notebook has no variable 'spec'; define it first, e.g. spec = {"),
        ({"spec": [1]}, "expected a dict of TrainingJob fields, e.g. spec = {'volumes'"),
        ({"spec": {"volume": []}}, "'volume' is not a field of TrainingJob (fields: name, "),
    ],
)
def test_fields_variable_mistakes_say_what_would_work(
    variables: dict[str, Any], expected: str
) -> None:
    with pytest.raises(OptionError) as caught:
        job_of("--fields spec", variables)
    assert expected in str(caught.value)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("--capacity spot,cheap", "'cheap' is not a capacity mode; give some of reservation,"),
        ("--placement block:always", "the mode after ':' is preferred or required"),
        ("--placement rack", "placement level 'rack' is not a GKE topology level"),
    ],
)
def test_option_values_are_checked_with_the_valid_ones(line: str, expected: str) -> None:
    with pytest.raises(OptionError) as caught:
        parse(train_parser(), line)
    assert expected in str(caught.value)


def test_cost_prices_the_capacity_order_and_the_reservation() -> None:
    fields = job_fields(parse(cost_parser(), "--gpu l4 --capacity spot,standard"), MagicDefaults())
    assert fields["capacity"] == ("spot", "standard")
    fields = job_fields(parse(cost_parser(), "--gpu l4 --reservation r"), MagicDefaults())
    assert fields["reservation"] == "r"
