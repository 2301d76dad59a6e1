"""User code as files: cells, functions and scripts, with their errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gkeml_sdk import SpecError, TrainingJob
from gkeml_sdk.core.environment import CONFIGMAP_MAX_BYTES

HELPER = 42


def train(steps: int, name: str = "x") -> None:
    import os

    print(os.environ.get("NODE_RANK"), steps, name)


def uses_a_global() -> None:
    print(HELPER)


def test_from_code_ships_the_text_and_derives_a_stable_name() -> None:
    code = "x = '$HOME `id`'\nprint(x)\n"
    job = TrainingJob.from_code(code, image="img", nodes=2)
    assert job.files == {"main.py": code}
    assert job.command == ["python", "-u", "main.py"]
    assert job.name == TrainingJob.from_code(code, image="img", nodes=2).name
    assert job.name != TrainingJob.from_code(code, image="img", nodes=3).name
    assert TrainingJob.from_yaml(job.to_yaml()) == job


def test_syntax_error_is_one_line_with_the_line_number() -> None:
    with pytest.raises(SpecError) as info:
        TrainingJob.from_code("import os\nfor i in range(3)\n    print(i)\n")
    message = str(info.value)
    assert "main.py line 2" in message and "\n" not in message


def test_from_function_calls_it_with_json_kwargs(tmp_path: Path) -> None:
    job = TrainingJob.from_function(train, kwargs={"steps": 3, "name": "a b"})
    assert job.name.startswith("train-")
    assert json.loads(job.files["gkeml_args.json"]) == {"steps": 3, "name": "a b"}
    main = job.files["main.py"]
    assert main.startswith("def train(") and "train(**_kwargs)" in main
    for rel, text in job.files.items():
        (tmp_path / rel).write_text(text)
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "main.py"], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["None", "3", "a", "b"]


def test_functions_that_cannot_travel_are_refused() -> None:
    factor = 2

    def closure() -> int:
        return factor

    with pytest.raises(SpecError, match="enclosing function: factor"):
        TrainingJob.from_function(closure)
    with pytest.raises(SpecError, match="defined outside it: HELPER"):
        TrainingJob.from_function(uses_a_global)
    with pytest.raises(SpecError, match="not a plain function"):
        TrainingJob.from_function(lambda: None)
    with pytest.raises(SpecError, match="not JSON"):
        TrainingJob.from_function(train, kwargs={"steps": object()})


def test_from_script_takes_its_neighbours(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text("import util\nutil.go()\n")
    (tmp_path / "util.py").write_text("def go():\n    print('go')\n")
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "a.yaml").write_text("lr: 1\n")
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "__pycache__" / "util.cpython-311.pyc").write_bytes(b"\0\1")
    job = TrainingJob.from_script(
        tmp_path / "train.py", script_args=["--fast"], include=["*.py", "conf/*.yaml"]
    )
    assert sorted(job.files) == ["conf/a.yaml", "train.py", "util.py"]
    assert job.command == ["python", "-u", "train.py", "--fast"]
    (tmp_path / "blob.py").write_bytes(b"\xff\xfe")
    with pytest.raises(SpecError, match="not a UTF-8 text file"):
        TrainingJob.from_script(tmp_path / "train.py")
    with pytest.raises(SpecError, match="does not exist"):
        TrainingJob.from_script(tmp_path / "missing.py")


def test_configmap_limit_suggests_an_image_or_a_bucket() -> None:
    big = "#" * CONFIGMAP_MAX_BYTES
    with pytest.raises(SpecError) as info:
        TrainingJob(name="big", command=["x"], files={"main.py": "pass", "data.txt": big})
    assert "image" in str(info.value) and "bucket" in str(info.value)


@pytest.mark.parametrize("path", ["../x.py", "/abs.py", "a//b.py", "sp ace.py", "./a.py"])
def test_bad_paths(path: str) -> None:
    with pytest.raises(SpecError, match="not allowed"):
        TrainingJob(name="p", command=["x"], files={path: ""})


def test_paths_that_collide_as_configmap_keys() -> None:
    with pytest.raises(SpecError, match="same ConfigMap key"):
        TrainingJob(name="p", command=["x"], files={"a/b.py": "", "a__b.py": ""})
