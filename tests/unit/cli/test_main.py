"""`gkeml render|validate|catalog` as a user runs them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml

from gkeml_sdk.cli.main import main

ROOT = Path(__file__).resolve().parents[3]


def test_render_a_python_example_prints_its_manifests(capsys):
    assert main(["render", str(ROOT / "examples" / "train_gpu.py")]) == 0
    docs = list(yaml.safe_load_all(capsys.readouterr().out))
    assert docs[-1]["kind"] == "JobSet"
    assert docs[-1]["metadata"]["labels"]["kueue.x-k8s.io/queue-name"]


def test_render_a_yaml_spec_with_cost(tmp_path, capsys):
    spec = tmp_path / "job.yaml"
    spec.write_text(
        "name: ft\nimage: img\ncommand: [python, train.py]\n"
        "accelerator: {generation: v5e, topology: 4x4}\n"
    )
    assert main(["render", str(spec), "--cost", "10"]) == 0
    out, err = capsys.readouterr()
    assert next(yaml.safe_load_all(out))["kind"] == "JobSet"
    assert "16 x TPU v5e chip for 10 h" in err and "as of" in err


def test_validate_fails_with_the_reason_on_an_invalid_spec(tmp_path, capsys):
    spec = tmp_path / "bad.yaml"
    spec.write_text("name: ft\nimage: img\ncommand: [x]\naccelerator: {model: h100, count: 9}\n")
    assert main(["validate", str(spec)]) == 1
    err = capsys.readouterr().err
    assert "9 x NVIDIA H100 80GB per node is not offered" in err and "1/2/4/8" in err


def test_validate_accepts_a_valid_spec(tmp_path, capsys):
    spec = tmp_path / "ok.yaml"
    spec.write_text("name: ft\nimage: img\ncommand: [x]\n")
    assert main(["validate", str(spec)]) == 0
    assert "TrainingJob ft: valid" in capsys.readouterr().out


def test_bad_files_are_one_clear_line(tmp_path, capsys):
    assert main(["render", str(tmp_path / "missing.yaml")]) == 1
    assert "no such file" in capsys.readouterr().err
    broken = tmp_path / "broken.yaml"
    broken.write_text("name: [unclosed\n")
    assert main(["validate", str(broken)]) == 1
    assert "not valid YAML" in capsys.readouterr().err
    empty = tmp_path / "empty.py"
    empty.write_text("x = 1\n")
    assert main(["render", str(empty)]) == 1
    assert "defines no TrainingJob or ServeModel" in capsys.readouterr().err


def test_catalog_tables(capsys):
    assert main(["catalog", "gpus"]) == 0
    out = capsys.readouterr().out
    assert "nvidia-h100-80gb" in out and "1g.10gb" in out and "as of" in out
    # Every cell has a figure: gb200's are estimates, flex-start on N1 GPUs is not offered.
    gb200 = next(line for line in out.splitlines() if line.startswith("gb200 "))
    assert gb200.split()[-3:] == ["~11.65", "~4.21", "n/o"]
    assert "~ an estimate" in out
    assert main(["catalog", "tpus"]) == 0
    assert "tpu-v6e-slice" in capsys.readouterr().out


def test_console_script_is_installed():
    script = Path(sys.executable).parent / "gkeml"
    assert script.exists(), "pip install -e . installs the `gkeml` console script next to python"
    done = subprocess.run(
        [str(script), "catalog", "tpus"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "tpu7x" in done.stdout
