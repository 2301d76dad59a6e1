"""`gkeml controller install`: the objects it applies, least privilege, and the Dockerfile of
the image it runs (parsed, not built: no base image can be pulled here)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from gkeml_sdk.backends.kubernetes.controller.install import (
    ENTRYPOINT,
    TENANTS_PATH,
    controller_args,
    controller_objects,
)
from gkeml_sdk.backends.kubernetes.controller.permissions import RUN_CONTROLLER_RULES
from gkeml_sdk.backends.kubernetes.standby.rbac import STANDBY_MANAGER_RULES
from gkeml_sdk.cli.main import main

ROOT = Path(__file__).resolve().parents[4]


def dockerfile() -> list[tuple[str, str]]:
    lines = []
    for line in (ROOT / "Dockerfile").read_text().splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            word, _, rest = line.strip().partition(" ")
            lines.append((word.upper(), rest))
    return lines


def test_the_dockerfile_installs_the_repository_and_runs_the_controller_verb():
    steps = dockerfile()
    runs = [rest for word, rest in steps if word == "RUN"]
    installs = [r.split("&&")[0].split() for r in runs if r.startswith("pip install")]
    assert any(words[-1] == "." for words in installs), "the image installs this repository"
    copied = {rest.split()[0] for word, rest in steps if word == "COPY"}
    assert {"pyproject.toml", "gkeml_sdk", "gkeml_magics"} <= copied
    for source in copied:
        assert (ROOT / source).exists(), f"COPY {source}: not in the repository"
    entry = next(rest for word, rest in steps if word == "ENTRYPOINT")
    assert json.loads(entry) == ENTRYPOINT == ["gkeml", "controller", "run"]
    assert steps[-1][0] == "ENTRYPOINT"
    user = [rest for word, rest in steps if word == "USER"]
    assert user and user[-1] not in ("0", "root")


def test_the_deployment_runs_the_entrypoint_with_args_the_cli_accepts(capsys):
    objects = controller_objects(["ml", "team-b"], tenants_yaml="kind: Tenant\n")
    deployment = next(o for o in objects if o["kind"] == "Deployment")
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert "command" not in container  # the image's ENTRYPOINT stays
    args = container["args"]
    assert args == controller_args(["ml", "team-b"], "gkeml-system", True)
    assert args[args.index("--tenants") + 1] == TENANTS_PATH
    # The CLI parses exactly these words (`--help` would exit; parse through the real parser).
    from gkeml_sdk.cli.main import _parser  # type: ignore[attr-defined]

    parsed = _parser("controller_commands").parse_args([*ENTRYPOINT[1:], *args])
    assert parsed.namespace == ["ml", "team-b"] and parsed.tenants == TENANTS_PATH
    assert shlex.join(ENTRYPOINT + args).startswith("gkeml controller run --namespace ml")


def test_rbac_is_least_privilege_and_includes_the_standby_manager_only_with_tenants():
    plain = controller_objects(["ml"])
    kinds = [o["kind"] for o in plain]
    assert kinds.count("Role") == kinds.count("RoleBinding") == kinds.count("Lease") == 1
    role = next(o for o in plain if o["kind"] == "Role")
    assert role["metadata"]["namespace"] == "ml"
    assert role["rules"] == list(RUN_CONTROLLER_RULES)
    verbs = {v for r in role["rules"] for v in r["verbs"]}
    assert "*" not in verbs and "escalate" not in verbs and "bind" not in verbs
    for rule in role["rules"]:
        assert "*" not in rule["resources"] and "*" not in rule["apiGroups"]
        if rule["resources"] == ["pods"]:
            assert rule["verbs"] == ["get", "list", "watch"]  # reads pods, never changes them
    cluster_role = next(o for o in plain if o["kind"] == "ClusterRole")
    assert not any(r in cluster_role["rules"] for r in STANDBY_MANAGER_RULES)
    managed = controller_objects(["ml"], tenants_yaml="kind: Tenant\n")
    cluster_role = next(o for o in managed if o["kind"] == "ClusterRole")
    assert all(r in cluster_role["rules"] for r in STANDBY_MANAGER_RULES)


def test_install_dry_run_prints_the_yaml_and_applies_nothing(capsys):
    assert main(["controller", "install", "--namespace", "ml", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert (
        "kind: Deployment" in out and "kind: Lease" in out and "name: gkeml-run-controller" in out
    )
