"""What compiling pays for: the Workload view is built when read, once, and never by copying
the pod template."""

import copy

from gkeml_sdk import Accelerator, TrainingJob
from gkeml_sdk.training import manifests as training


def _job():
    return TrainingJob(
        name="ft", image="img", command=["x"], accelerator=Accelerator("h100", count=8), nodes=2
    )


def test_the_workload_is_built_on_first_read_only(monkeypatch):
    built = []
    real = training._workload
    monkeypatch.setattr(training, "_workload", lambda *a: built.append(1) or real(*a))
    manifests = _job().compile()
    manifests.to_yaml()
    assert built == []
    first = manifests.workload
    assert manifests.workload is first
    assert built == [1]
    assert first["spec"]["podSets"][0]["count"] == 2


def test_compiling_never_deep_copies(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("copy.deepcopy while compiling")

    monkeypatch.setattr(copy, "deepcopy", refuse)
    manifests = _job().compile()
    template = manifests.main["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]
    assert manifests.workload["spec"]["podSets"][0]["template"] == template
    assert manifests.workload["spec"]["podSets"][0]["template"] is not template
