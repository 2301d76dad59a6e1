"""`gkeml render SERVE.yaml --cost H` prints the plan and its cost (it used to raise
AttributeError: 'ServeModel' object has no attribute 'estimate_cost'); `--plan` prints the
serving plan table; the sizing sentence reaches the CLI as a note."""

from __future__ import annotations

import yaml

from gkeml_sdk.cli.main import main

SERVE = """kind: ServeModel
name: chat
model: meta-llama/Llama-3.1-70B-Instruct
accelerator: {model: l4}
hf_token_secret: hf
replicas: {min: 1, max: 3}
"""


def render(tmp_path, capsys, *flags: str) -> tuple[int, str, str]:
    spec = tmp_path / "serve.yaml"
    spec.write_text(SERVE)
    code = main(["render", str(spec), *flags])
    out, err = capsys.readouterr()
    return code, out, err


def test_render_serving_with_cost_prints_plan_and_cost(tmp_path, capsys):
    code, out, err = render(tmp_path, capsys, "--cost", "10")
    assert code == 0
    assert [d["kind"] for d in yaml.safe_load_all(out)][-1] == "Deployment"
    assert "Traceback" not in err and "AttributeError" not in err
    assert "#   GPUs per replica     8 x NVIDIA L4 (TP8 x PP1)" in err
    assert "# cost for 10 h: $44.80-$134.41 (1-3 replicas, accelerator component only)" in err


def test_render_plan_prints_the_table_without_cost(tmp_path, capsys):
    code, _, err = render(tmp_path, capsys, "--plan")
    assert code == 0
    assert "# ServeModel 'chat': meta-llama/Llama-3.1-70B-Instruct" in err
    assert "cost for" not in err


def test_render_says_when_it_sized_the_spec_up(tmp_path, capsys):
    _, _, err = render(tmp_path, capsys)
    notes = [line for line in err.splitlines() if line.startswith("# note: sized up:")]
    assert len(notes) == 1 and "8 x L4 (TP8 x PP1) on one node" in notes[0]
