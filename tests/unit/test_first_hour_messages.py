"""The small things a new user meets in the first hour: `gkeml --version`, the LICENSE the
package names, and messages that say exactly what is wrong."""

from __future__ import annotations

from pathlib import Path

import pytest

from gkeml_sdk import Accelerator, ServeModel, SpecError, TpuSlice, TrainingJob, __version__
from gkeml_sdk.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
JOB = {"name": "a", "image": "img", "command": ["python", "train.py"]}


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0 and capsys.readouterr().out == f"gkeml {__version__}\n"


def test_license_is_the_apache_2_text_pyproject_names() -> None:
    text = (ROOT / "LICENSE").read_text()
    assert 'license = { text = "Apache-2.0" }' in (ROOT / "pyproject.toml").read_text()
    assert "Apache License\n                           Version 2.0, January 2004" in text
    assert "END OF TERMS AND CONDITIONS" in text and text.count("\n") > 190


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ({**JOB, "acelerator": {}}, "unknown field 'acelerator'; did you mean 'accelerator'?"),
        ({**JOB, "accelerator": {"modle": "h100"}}, "unknown field 'modle'; did you mean 'model'?"),
        ({**JOB, "zzz": 1}, "unknown field 'zzz' (rule"),
    ],
)  # fmt: skip
def test_unknown_fields_name_the_closest(spec: dict[str, object], says: str) -> None:
    with pytest.raises(SpecError, match="unknown field") as err:
        TrainingJob.model_validate(spec)
    assert says in str(err.value)


def test_v5e_rule_does_not_call_3x3_the_wrong_shape() -> None:
    with pytest.raises(SpecError) as err:
        TpuSlice("v5e", "3x3")
    assert "topologies are AxB" not in str(err.value) and "fixed set of AxB" in str(err.value)
    with pytest.raises(SpecError, match=r"topologies are AxB\)"):
        TpuSlice("v5e", "2x2x2")


def test_negative_replicas_say_at_least_zero() -> None:
    with pytest.raises(SpecError, match="replicas must be ≥ 0"):
        ServeModel(
            name="chat", model="Qwen/Qwen2.5-7B-Instruct", accelerator=Accelerator("l4"),
            replicas=-1,
        )  # fmt: skip


@pytest.mark.parametrize("hours", ["nan", "inf", "-1"])
def test_cost_of_no_real_duration_is_refused(
    hours: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = tmp_path / "job.yaml"
    spec.write_text("name: a\nimage: img\ncommand: [python, train.py]\n")
    assert main(["render", str(spec), "--cost", hours]) == 1
    err = capsys.readouterr().err
    assert f"--cost {hours}" in err and "positive, finite duration" in err and "$nan" not in err


def test_a_directory_named_like_a_spec(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "x.yaml").mkdir()
    assert main(["render", str(tmp_path / "x.yaml")]) == 1
    assert "x.yaml: a directory, not a file" in capsys.readouterr().err
