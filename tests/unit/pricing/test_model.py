"""What compiling pays for: the Workload view is built when read, once, and never by copying
the pod template."""

import copy

from gkeml_sdk import Accelerator, TrainingJob


def _job():
    return TrainingJob(
        name="ft", image="img", command=["x"], accelerator=Accelerator("h100", count=8), nodes=2
    )


def test_compiling_never_deep_copies(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("copy.deepcopy while compiling")

    monkeypatch.setattr(copy, "deepcopy", refuse)
    manifests = _job().compile()
    template = manifests.main["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]
    assert manifests.workload["spec"]["podSets"][0]["template"] == template
    assert manifests.workload["spec"]["podSets"][0]["template"] is not template
