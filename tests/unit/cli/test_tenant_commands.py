"""`gkeml tenant plan`: offline summary and YAML of the example tenants."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from gkeml_sdk.cli.main import main

EXAMPLE = str(Path(__file__).resolve().parents[3] / "examples" / "tenants.yaml")


def test_plan_summarises_each_tenant_and_counts_objects(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tenant", "plan", EXAMPLE]) == 0
    out = capsys.readouterr().out
    assert "tenant-a (namespace tenant-a): tier A, exclusive GPUs, 2 hot standby(s)" in out
    assert "recovery objective 5 s, GPUs 8 held of quota 16" in out
    assert "llama-2-7b: llama-2-7b weight 100, replicas 3-10" in out
    assert "tier C, preemptible GPUs, a cold standby per model (created on failover" in out
    assert "3 VirtualService" in out and "3 ClusterQueue" in out


def test_plan_yaml_is_every_object_once(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tenant", "plan", EXAMPLE, "--yaml"]) == 0
    docs = list(yaml.safe_load_all(capsys.readouterr().out))
    keys = [(d["kind"], d["metadata"].get("namespace"), d["metadata"]["name"]) for d in docs]
    assert len(keys) == len(set(keys))
    assert ("Cohort", None, "gkeml-tenants") in keys


def test_a_file_without_tenants_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = tmp_path / "job.yaml"
    spec.write_text("name: demo\nimage: python:3.12\ncommand: [python, -V]\n")
    assert main(["tenant", "plan", str(spec)]) == 1
    assert "no Tenant" in capsys.readouterr().err
