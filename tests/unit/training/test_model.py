import pydantic
import pytest

from gkeml_sdk import Accelerator, SpecError, TpuSlice, TrainingJob


def job(**kwargs):
    base = dict(name="ft", image="img", command=["python", "train.py"])
    return TrainingJob(**{**base, **kwargs})


def test_issue_example_and_derived_fields():
    j = TrainingJob(
        name="llama-ft",
        image="us-docker.pkg.dev/p/r/trainer:1",
        command=["python", "train.py"],
        accelerator=Accelerator("h100", count=8),
        nodes=2,
        gang=True,
        spot=True,
        queue="team-a",
        max_restarts=3,
    )
    assert (j.nodes, j.procs_per_node, j.total_gpus, j.uses_jobset) == (2, 8, 16, True)


def test_defaults_derive_from_the_accelerator():
    assert job().nodes == 1 and job().gang is False and not job().uses_jobset
    tpu = job(accelerator=TpuSlice("v5e", "4x4"))
    assert (tpu.nodes, tpu.gang, tpu.procs_per_node) == (4, True, 1)
    assert job(accelerator=TpuSlice("v5e", "4x4", slices=2)).nodes == 8
    assert job(nodes=3).gang is True
    assert job(accelerator=Accelerator("h100", mig="1g.10gb")).procs_per_node == 1


@pytest.mark.parametrize(
    ("kwargs", "message", "alternative"),
    [
        (dict(name="Llama_FT"), "not a valid Kubernetes name", "name='llama-ft'"),
        (dict(name="x" * 41), "at most 40 characters", "name="),
        (dict(namespace="Team A"), "namespace='Team A'", "namespace='team-a'"),
        (dict(queue="Team_A"), "queue='Team_A'", "queue='team-a'"),
        (dict(nodes=-1), "nodes=-1", "nodes=1"),
        (dict(max_restarts=-1), "max_restarts=-1", "max_restarts=0"),
        (dict(accelerator=TpuSlice("v5e", "4x4"), nodes=2), "has 4 host(s)", "nodes=4"),
        (dict(accelerator=TpuSlice("v5e", "4x4"), gang=False), "gang=False", "gang=True"),
        (dict(env={"NODE_RANK": "3"}), "set by gkeml", "remove NODE_RANK"),
        (dict(env={"BAD NAME": "1"}), "env name", "MY_SETTING"),
        (dict(labels={"team": "a b"}), "label value", "annotations"),
        (dict(labels={"-bad": "x"}), "labels key", "team: vision"),
        (dict(max_runtime="soon"), "not a duration", "2h30m"),
        (dict(max_runtime=0), "max_runtime=0", "2h"),
        (dict(checkpoint_dir="relative/dir"), "checkpoint_dir", "gs://BUCKET/PATH"),
        (dict(spot=True, termination_grace_seconds=300), "on Spot", "<=120"),
        (dict(accelerator={"model": "h100", "count": 9}), "not offered", "count=8"),
        (dict(acclerator="h100"), "unknown field 'acclerator'", "accelerator"),
        (dict(nodes="two"), "TrainingJob.nodes", "Try: a whole number: nodes=2"),
    ],
)
def test_invalid_jobs(kwargs, message, alternative):
    with pytest.raises(SpecError) as err:
        job(**kwargs)
    assert message in str(err.value)
    assert alternative in str(err.value)


def test_durations_parse():
    assert job(max_runtime="1d2h30m").max_runtime == (26 * 60 + 30) * 60
    assert job(max_runtime="90").max_runtime == 90


@pytest.mark.parametrize(
    "spec",
    [
        job(),
        job(accelerator=Accelerator("h100", count=8), nodes=2, spot=True, env={"A": "1"}),
        job(accelerator=TpuSlice("v6e", "4x4", slices=2), priority="high", max_runtime="2h"),
        job(accelerator=Accelerator("l4", sharing="mps", clients_per_gpu=4), labels={"team": "a"}),
    ],
)
def test_round_trips_through_dump_and_yaml(spec):
    assert TrainingJob.model_validate(spec.model_dump()) == spec
    assert TrainingJob.from_yaml(spec.to_yaml()) == spec
    assert TrainingJob.model_validate(spec.model_dump(mode="json")) == spec


def test_from_yaml_rejects_non_mappings():
    with pytest.raises(SpecError, match="must be a mapping"):
        TrainingJob.from_yaml("- a\n- b\n")


def test_frozen_and_with_changes():
    j = job(spot=True)
    with pytest.raises(pydantic.ValidationError, match="frozen"):
        j.spot = False  # type: ignore[misc]
    assert j.with_changes(spot=False).spot is False


@pytest.mark.parametrize("name", ["TPU_WORKER_ID", "MEGASCALE_SLICE_ID", "MASTER_ADDR"])
def test_env_may_not_shadow_what_gkeml_sets_for_every_process(name):
    with pytest.raises(SpecError, match=f"env '{name}' is set by gkeml"):
        TrainingJob(name="a", image="i", command=["x"], env={name: "1"})


def test_a_job_is_checked_once_however_it_is_made(monkeypatch: pytest.MonkeyPatch) -> None:
    import gkeml_sdk.training.model as model

    checked: list[str] = []
    real = model.check_job
    monkeypatch.setattr(model, "check_job", lambda job: (checked.append(job.name), real(job)))
    data = {
        "name": "once",
        "image": "i",
        "command": ["x"],
        "accelerator": {"model": "h100", "count": 8},
        "nodes": 2,
    }
    TrainingJob.model_validate(data)
    TrainingJob(**data)
    TrainingJob.from_yaml("name: once\nimage: i\ncommand: [x]\n")
    assert checked == ["once", "once", "once"]
