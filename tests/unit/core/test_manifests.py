"""Manifests and specs as YAML: the same bytes whatever the machine (with libyaml or without,
in any process and hash seed), written with our choices (no aliases, multi-line text as
literal blocks, lines never folded)."""

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from gkeml_sdk import TrainingJob
from gkeml_sdk.core.manifests import dump_yaml
from gkeml_sdk.core.yaml_out import Dumper, LiteralDumper
from tests.bench.bench_core import varied_jobs
from tests.unit.serving.test_golden import SERVICES
from tests.unit.training.test_golden import GOLDEN as TRAINING_GOLDEN
from tests.unit.training.test_golden import JOBS

ROOT = Path(__file__).resolve().parents[3]
# Double-quoted (not ASCII) and past column 80: libyaml and PyYAML would fold it apart.
LONG = "café " * 30
TRICKY = [
    TrainingJob.from_code("def f():\n    return 1  \n\nprint('x')\n", name="code", image="i"),
    TrainingJob(name="long", image="i", command=["bash", "-c", LONG], env={"NOTE": LONG}),
    TrainingJob(name="blank", image="i", command=["bash", "-c", "echo hi\n\n"], env={"X": "y\n"}),
]


class PurePython(yaml.SafeDumper):
    """PyYAML's own emitter (no libyaml) with the representers and choices of ours."""

    ignore_aliases = Dumper.ignore_aliases


class PurePythonLiteral(PurePython):
    yaml_representers = LiteralDumper.yaml_representers


def pure(documents: list[Any], literal: bool) -> str:
    dumper = PurePythonLiteral if literal else PurePython
    return str(yaml.dump_all(documents, Dumper=dumper, sort_keys=False, width=2**31 - 1))


def test_libyaml_writes_the_bytes_pyyaml_writes_without_it() -> None:
    if not yaml.__with_libyaml__:
        pytest.skip("PyYAML without libyaml: its own emitter writes every stream")
    for spec in [*varied_jobs(100), *JOBS.values(), *SERVICES.values(), *TRICKY]:
        objects = spec.compile().objects
        assert dump_yaml(objects) == pure(objects, literal=True), spec.name
        data = spec.model_dump(mode="json", exclude_defaults=True)
        assert spec.to_yaml() == pure([data], literal=False), spec.name


def test_the_same_bytes_in_a_fresh_process_with_another_hash_seed() -> None:
    code = (
        "import sys; from tests.unit.training.test_golden import JOBS; "
        "sys.stdout.write(JOBS['tpu-multislice'].compile().to_yaml())"
    )
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(ROOT)}
        done = subprocess.run(
            [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True
        )
        assert done.stdout == (TRAINING_GOLDEN / "tpu-multislice.yaml").read_text(), done.stderr


def test_our_choices() -> None:
    repeated = {"cpu": "1"}
    text = dump_yaml([{"a": repeated, "b": repeated, "run.sh": "set -e\nrun\n", "long": LONG}])
    assert "&id" not in text and text.count("cpu: '1'") == 2  # no anchors or aliases
    assert "run.sh: |\n  set -e\n  run\n" in text  # multi-line text as a literal block
    assert len(text.splitlines()[-1]) > 100  # long lines are not folded
    spec = TRICKY[0]
    assert 'main.py: "def f():' in spec.to_yaml()  # a spec's text stays quoted, as always
    assert TrainingJob.from_yaml(spec.to_yaml()) == spec
