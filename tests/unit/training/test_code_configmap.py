"""Code files compile to a ConfigMap ahead of the Job/JobSet, mounted read-only."""

from __future__ import annotations

import re

import pytest

from gkeml_sdk import Accelerator, SpecError, TrainingJob
from gkeml_sdk.core.environment import CODE_MOUNT
from tests.schemas import validate_object


def job(**changes: object) -> TrainingJob:
    base = TrainingJob.from_code(
        "print('hi')\n", name="cm", image="img", accelerator=Accelerator("l4"), nodes=2
    )
    return base.with_changes(files={**base.files, "pkg/util.py": "X = 1\n"}, **changes)


def test_configmap_first_with_every_file() -> None:
    manifests = job().compile()
    kinds = [o["kind"] for o in manifests.objects]
    assert kinds == ["ConfigMap", "JobSet"]
    cm = manifests.objects[0]
    assert cm["metadata"]["name"] == "cm-gkeml-run"  # the run record's: one write carries both
    assert cm["data"] == {"file.main.py": "print('hi')\n", "file.pkg__util.py": "X = 1\n"}
    for obj in manifests.objects:
        validate_object(obj)


def test_pods_mount_it_read_only_as_working_directory() -> None:
    pod = job().compile().main["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]
    container = pod["spec"]["containers"][0]
    assert container["workingDir"] == CODE_MOUNT
    assert container["command"][:2] == ["python3", "-c"]  # the launcher, then the command
    assert container["command"][3:] == ["python", "-u", "main.py"]
    mount = next(m for m in container["volumeMounts"] if m["name"] == "code")
    assert mount == {"name": "code", "mountPath": CODE_MOUNT, "readOnly": True}
    volume = next(v for v in pod["spec"]["volumes"] if v["name"] == "code")
    assert volume["configMap"]["items"] == [
        {"key": "file.main.py", "path": "main.py"},  # only the code keys, not the record's
        {"key": "file.pkg__util.py", "path": "pkg/util.py"},
    ]


def test_deterministic_and_absent_without_files() -> None:
    assert job().compile().to_yaml() == job().compile().to_yaml()
    plain = TrainingJob(name="p", image="img", command=["python", "t.py"]).compile()
    assert [o["kind"] for o in plain.objects] == ["Job"]
    assert "workingDir" not in plain.main["spec"]["template"]["spec"]["containers"][0]


def test_file_paths_the_api_server_refuses_as_volume_items() -> None:
    # ValidateKeyToPath -> validateLocalNonReservedPath: an item path must not start with '..'
    # (the kubelet's '..data' and '..<timestamp>' links live there); deeper, it may.
    for path in ("..x.py", "..data"):
        with pytest.raises(SpecError, match=rf"file path '{re.escape(path)}' must not start"):
            job().with_changes(files={"main.py": "", path: ""})
    accepted = job().with_changes(files={"main.py": "", "pkg/..x.py": "", ".env.py": ""})
    for obj in accepted.compile().objects:
        validate_object(obj)
