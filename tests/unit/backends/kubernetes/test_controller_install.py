"""`gkeml controller install`: the objects it applies, least privilege, a required image,
and the Dockerfile of the image it runs (parsed, not built: no base image can be pulled
here)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from gkeml_sdk.backends.kubernetes.controller.install import (
    ENTRYPOINT,
    TENANTS_PATH,
    controller_args,
    controller_objects,
)
from gkeml_sdk.backends.kubernetes.controller.permissions import (
    LEASE_READER_RULES,
    ROLLOUT_RULES,
    RUN_CONTROLLER_LEASE_RULES,
    RUN_CONTROLLER_RULES,
)
from gkeml_sdk.backends.kubernetes.standby.rbac import STANDBY_LEASE_RULES, standby_manager_rules
from gkeml_sdk.cli.main import main
from gkeml_sdk.files import load_specs

ROOT = Path(__file__).resolve().parents[4]
IMAGE = "registry.example/gkeml-controller:1"


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
    tenants = load_specs(ROOT / "examples" / "tenants.yaml")
    objects = controller_objects(
        ["ml", "team-b"], image=IMAGE, tenants=tenants, tenants_yaml="kind: Tenant\n"
    )
    deployment = next(o for o in objects if o["kind"] == "Deployment")
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert container["image"] == IMAGE
    assert "command" not in container  # the image's ENTRYPOINT stays
    args = container["args"]
    assert args == controller_args(["ml", "team-b"], "gkeml-system", True)
    assert args[args.index("--tenants") + 1] == TENANTS_PATH
    # The CLI parses exactly these words (`--help` would exit; parse through the real parser).
    from gkeml_sdk.cli.main import _parser  # type: ignore[attr-defined]

    parsed = _parser("controller_commands").parse_args([*ENTRYPOINT[1:], *args])
    assert parsed.namespace == ["ml", "team-b"] and parsed.tenants == TENANTS_PATH
    assert shlex.join(ENTRYPOINT + args).startswith("gkeml controller run --namespace ml")


def roles(objects):
    return {
        (o["metadata"]["namespace"], o["metadata"]["name"]): o
        for o in objects
        if o["kind"] == "Role"
    }


def test_rbac_is_namespaced_roles_only_and_the_standby_manager_only_with_tenants():
    plain = controller_objects(["ml"], image=IMAGE, rollouts=False)
    kinds = [o["kind"] for o in plain]
    assert "ClusterRole" not in kinds and "ClusterRoleBinding" not in kinds
    assert kinds.count("Role") == kinds.count("RoleBinding") == 3
    assert set(roles(plain)) == {
        ("ml", "gkeml-run-controller"),
        ("gkeml-system", "gkeml-run-controller-lease"),
        ("gkeml-system", "gkeml-run-controller-lease-reader"),
    }
    assert roles(plain)["ml", "gkeml-run-controller"]["rules"] == list(RUN_CONTROLLER_RULES)
    for role in roles(plain).values():
        for rule in role["rules"]:
            assert "*" not in rule["verbs"] + rule["resources"] + rule["apiGroups"]
            assert not {"escalate", "bind", "impersonate", "patch"} & set(rule["verbs"])
    # By default it drives the serving rollouts too: one more Role, in the managed namespace
    # only, the one that may patch (apply) a service's objects, never escalate or bind.
    rollouts = roles(controller_objects(["ml", "team-b"], image=IMAGE))
    assert {k for k in rollouts if k[1] == "gkeml-rollouts"} == {
        ("ml", "gkeml-rollouts"),
        ("team-b", "gkeml-rollouts"),
    }
    assert rollouts["ml", "gkeml-rollouts"]["rules"] == list(ROLLOUT_RULES)
    for rule in ROLLOUT_RULES:
        assert "*" not in rule["verbs"] + rule["resources"] + rule["apiGroups"]
        assert not {"escalate", "bind", "impersonate"} & set(rule["verbs"])
        assert not {"pods", "secrets", "configmaps", "roles", "rolebindings"} & set(
            rule["resources"]
        )
    # Leases only in the controller's namespace; the Lease itself is the controller's to create.
    assert not any(o["kind"] == "Lease" for o in plain)
    lease_rules = [
        r for role in roles(plain).values() for r in role["rules"] if r["resources"] == ["leases"]
    ]
    assert all(
        r.get("resourceNames") == ["gkeml-run-controller"] or r["verbs"] == ["create"]
        for r in lease_rules
    )
    assert not any(r["resources"] == ["leases"] for r in RUN_CONTROLLER_RULES)
    reader = next(
        o for o in plain if o["kind"] == "RoleBinding" and o["metadata"]["name"].endswith("reader")
    )
    assert reader["subjects"] == [
        {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "system:authenticated"}
    ]
    tenants = load_specs(ROOT / "examples" / "tenants.yaml")
    managed = roles(controller_objects(["ml"], image=IMAGE, tenants=tenants, tenants_yaml="x"))
    for tenant in tenants:
        assert managed[tenant.namespace, "gkeml-standby-manager"]["rules"] == standby_manager_rules(
            tenant
        )
    assert ("gkeml-system", "gkeml-standby-manager-lease") in managed


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        ([], "--image is required"),
        (["--image", "r/c:1", "--replicas", "0"], "--replicas 0"),
        (["--image", "r/c:1", "--replicas", "11"], "between 1 and 10"),
    ],
)
def test_install_refuses_no_image_and_replicas_out_of_range(argv, says, capsys):
    assert main(["controller", "install", "--namespace", "ml", "--dry-run", *argv]) != 0
    err = capsys.readouterr().err
    assert says in err
    if not argv:  # the error says how to make an image
        assert "docker build -t REGISTRY/gkeml-controller:" in err and "docker push" in err


def test_install_dry_run_prints_the_yaml_and_applies_nothing(capsys):
    assert main(["controller", "install", "--namespace", "ml", "--image", IMAGE, "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "kind: Deployment" in out and f"image: {IMAGE}" in out and "kind: Role\n" in out
    assert "ClusterRole" not in out


def test_docs_list_every_rule_with_why():
    rows = [
        [cell.strip() for cell in line.strip("|").split("|")]
        for line in (ROOT / "docs" / "controller.md").read_text().splitlines()
        if line.startswith("| `") or line.startswith("| the same")
    ]
    tenant = load_specs(ROOT / "examples" / "tenants.yaml")[0]
    every = [
        *RUN_CONTROLLER_RULES,
        *RUN_CONTROLLER_LEASE_RULES,
        *LEASE_READER_RULES,
        *STANDBY_LEASE_RULES,
        *standby_manager_rules(tenant),
    ]
    for rule in every:
        verbs = f"`{', '.join(rule['verbs'])}`"
        plural = rule["resources"][0]
        named = bool(rule.get("resourceNames"))
        found = [
            r
            for r in rows
            if r[1] == verbs
            and (f"`{plural}`" in r[0] or f"`{plural}." in r[0] or r[0].startswith("the same"))
            and (" named " in r[0] or r[0].startswith("the same")) == named
            and len(r[2]) > 20
        ]
        assert found, f"docs/controller.md has no row for {rule}"
