"""examples/serve_vllm.py runs without a cluster and prints the plan and the manifests."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml

from gkeml_sdk.files import load_specs

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "serve_vllm.py"


def test_example_prints_plan_and_manifests():
    done = subprocess.run(
        [sys.executable, str(EXAMPLE)], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    plan, _, manifests = done.stdout.partition("\n\n")
    assert plan.startswith("ServeModel 'chat': meta-llama/Llama-3.1-70B-Instruct")
    assert "4 x NVIDIA H100 80GB (TP4 x PP1)" in plan
    kinds = [doc["kind"] for doc in yaml.safe_load_all(manifests)]
    assert kinds == [
        "Service",
        "PodMonitoring",
        "PodDisruptionBudget",
        "HorizontalPodAutoscaler",
        "Deployment",
    ]


def test_example_is_a_spec_file():
    (svc,) = load_specs(EXAMPLE)
    assert svc.name == "chat"
    assert svc.plan().gpus_per_replica == 4


def test_docs_show_the_plan_the_example_prints():
    docs = (EXAMPLE.parents[1] / "docs" / "serving.md").read_text()
    shown = docs.split("### vLLM: Llama 3.1 70B on H100")[1].split("```text\n")[1].split("```")[0]
    (svc,) = load_specs(EXAMPLE)
    printed = str(svc.plan()).splitlines()
    assert shown.splitlines() == [line for line in printed if "prices " not in line]
