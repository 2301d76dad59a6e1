"""Compiled training manifests: schema-valid for every catalog row, Kueue-ready,
preemption-aware, deterministic."""

import pytest

import gkeml_sdk
from gkeml_sdk import Accelerator, SpecError, TpuSlice, TrainingJob
from gkeml_sdk.core import environment as contract
from gkeml_sdk.hardware import gpu_labels, gpus, tpus
from tests.schemas import RECORDINGS, validate_object

GPU_CASES = [
    (g.key, c, nodes, spot)
    for g in gpus.GPUS
    for c in g.counts
    for nodes in (1, 2)
    for spot in (False, True)
]
TPU_CASES = [(t.key, topo, spot) for t in tpus.TPUS for topo in t.topologies() for spot in (0, 1)]


def job(**kwargs):
    return TrainingJob(
        **{"name": "ft", "image": "img", "command": ["python", "train.py"], **kwargs}
    )


def validate_all(manifests):
    for obj in [*manifests.objects, manifests.workload]:
        validate_object(obj)


def pod_spec(manifests):
    main = manifests.main
    if main["kind"] == "Job":
        return main["spec"]["template"]["spec"]
    return main["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]


@pytest.mark.parametrize(("model", "count", "nodes", "spot"), GPU_CASES)
def test_every_gpu_shape_compiles_to_valid_objects(model, count, nodes, spot):
    if not spot and not gpus.gpu(model).machine_for(count).on_demand:
        with pytest.raises(SpecError, match="not sold on-demand"):
            job(accelerator=Accelerator(model, count=count), nodes=nodes, spot=spot)
        return
    m = job(accelerator=Accelerator(model, count=count), nodes=nodes, spot=spot).compile()
    validate_all(m)
    assert m.main["kind"] == ("JobSet" if nodes > 1 else "Job")
    spec = pod_spec(m)
    container = spec["containers"][0]
    assert container["resources"]["requests"]["nvidia.com/gpu"] == count
    assert container["resources"]["limits"]["nvidia.com/gpu"] == count
    assert spec["nodeSelector"][gpu_labels.ACCELERATOR_LABEL] == gpus.gpu(model).label
    assert (spec["nodeSelector"].get("cloud.google.com/gke-spot") == "true") == spot
    assert (spec["terminationGracePeriodSeconds"] == 15) == spot
    assert m.requests()["nvidia.com/gpu"] == count * nodes


@pytest.mark.parametrize(
    ("model", "profile"),
    [(g.key, p) for g in gpus.GPUS for p, _ in g.mig_profiles if "+" not in p],
)
def test_every_mig_profile_compiles(model, profile):
    m = job(accelerator=Accelerator(model, mig=profile)).compile()
    validate_all(m)
    assert pod_spec(m)["nodeSelector"][gpu_labels.PARTITION_LABEL] == profile


@pytest.mark.parametrize(("generation", "topology", "spot"), TPU_CASES)
def test_every_tpu_topology_compiles_one_pod_per_vm(generation, topology, spot):
    tpu = TpuSlice(generation, topology)
    m = job(accelerator=tpu, spot=spot).compile()
    validate_all(m)
    spec = pod_spec(m)
    assert spec["nodeSelector"][tpus.TPU_ACCELERATOR_LABEL] == tpu.label
    assert spec["nodeSelector"][tpus.TPU_TOPOLOGY_LABEL] == topology
    assert spec["containers"][0]["resources"]["limits"]["google.com/tpu"] == tpu.chips_per_host
    assert m.workload["spec"]["podSets"][0]["count"] == tpu.hosts
    if tpu.multi_host:
        replicated = m.main["spec"]["replicatedJobs"][0]["template"]["spec"]
        assert replicated["parallelism"] == replicated["completions"] == tpu.hosts


def test_multislice_is_one_replicated_job_per_slice_with_exclusive_node_pools():
    m = job(accelerator=TpuSlice("v5p", "4x4x4", slices=2)).compile()
    validate_all(m)
    rjob = m.main["spec"]["replicatedJobs"][0]
    assert rjob["replicas"] == 2 and rjob["template"]["spec"]["parallelism"] == 16
    assert m.main["metadata"]["annotations"]["alpha.jobset.sigs.k8s.io/exclusive-topology"] == (
        "cloud.google.com/gke-nodepool"
    )
    env = {e["name"] for e in pod_spec(m)["containers"][0]["env"]}
    assert {"MEGASCALE_NUM_SLICES", "MEGASCALE_SLICE_ID", "MEGASCALE_COORDINATOR_ADDRESS"} <= env


def test_kueue_labels_and_suspension():
    m = job(queue="team-a", priority="high", max_runtime="2h", nodes=2).compile()
    labels = m.main["metadata"]["labels"]
    assert labels["kueue.x-k8s.io/queue-name"] == "team-a"
    assert labels["kueue.x-k8s.io/priority-class"] == "high"
    assert labels["kueue.x-k8s.io/max-exec-time-seconds"] == "7200"
    assert labels["app.kubernetes.io/managed-by"] == "gkeml"
    assert labels["gkeml.dev/sdk-version"] == gkeml_sdk.__version__
    assert m.main["spec"]["suspend"] is True
    assert m.workload["spec"]["priorityClassRef"]["name"] == "high"
    assert m.workload["spec"]["maximumExecutionTimeSeconds"] == 7200
    single = job().compile()
    assert single.main["spec"]["suspend"] is True
    assert "kueue.x-k8s.io/priority-class" not in single.main["metadata"]["labels"]


def test_gang_failure_policy_bounds_every_restart_but_disruptions():
    m = job(nodes=2, max_restarts=3).compile()
    policy = m.main["spec"]["failurePolicy"]
    assert policy["maxRestarts"] == 3
    by_reason = {
        reason: rule["action"] for rule in policy["rules"] for reason in rule["onJobFailureReasons"]
    }
    assert by_reason["PodFailurePolicy"] == "RestartJobSet"
    # A pod failing with no exit code (kubelet admission error) fails its Job with
    # BackoffLimitExceeded every time: an uncounted restart would loop forever.
    assert by_reason["BackoffLimitExceeded"] == "RestartJobSet"
    assert "RestartJobSetAndIgnoreMaxRestarts" not in by_reason.values()
    child = m.main["spec"]["replicatedJobs"][0]["template"]["spec"]
    rules = child["podFailurePolicy"]["rules"]
    assert rules[0] == {
        "action": "Ignore",
        "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}],
    }
    assert rules[1]["action"] == "FailJob" and rules[1]["onExitCodes"]["operator"] == "NotIn"
    assert child["template"]["spec"]["restartPolicy"] == "Never"


def test_single_node_job_ignores_disruptions_and_counts_user_retries_per_index():
    m = job(max_restarts=2).compile()
    spec = m.main["spec"]
    assert spec["backoffLimitPerIndex"] == 2
    assert spec["podFailurePolicy"]["rules"][0]["action"] == "Ignore"
    assert spec["template"]["spec"]["restartPolicy"] == "Never"


def test_environment_contract_is_complete_and_torchrun_compatible():
    m = job(accelerator=Accelerator("h100", count=8), nodes=2, env={"EXTRA": "1"}).compile()
    env = {e["name"]: e for e in pod_spec(m)["containers"][0]["env"]}
    assert env["MASTER_ADDR"]["value"] == "ft-node-0-0.ft"
    assert env["NNODES"]["value"] == "2" and env["NPROC_PER_NODE"]["value"] == "8"
    assert env["WORLD_SIZE"]["value"] == "16"
    # The launcher sets the global rank and the restart attempt from what the pod declares.
    assert set(env) >= contract.CONTRACT_ENV - set(contract.LAUNCHER_SETS) | {"EXTRA"}
    assert not set(env) & set(contract.LAUNCHER_SETS)
    assert "job-completion-index" in env["GKEML_POD_INDEX"]["valueFrom"]["fieldRef"]["fieldPath"]
    assert "job-index" in env["GKEML_JOB_INDEX"]["valueFrom"]["fieldRef"]["fieldPath"]
    assert env["GKEML_START_ID"]["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.uid"
    assert env["GKEML_PODS_PER_JOB"]["value"] == "2"
    assert env["EXTRA"]["value"] == "1"


@pytest.mark.parametrize(
    ("checkpoint_dir", "env_value", "volume_key"),
    [
        ("gs://bucket/runs/a", "/gkeml/checkpoints", "csi"),  # only-dir mounts runs/a
        ("pvc://ckpt/runs", "/gkeml/checkpoints", "persistentVolumeClaim"),
        ("/mnt/filestore/ckpt", "/mnt/filestore/ckpt", None),
        (None, "/gkeml/checkpoints", "emptyDir"),
    ],
)
def test_checkpoint_locations(checkpoint_dir, env_value, volume_key):
    m = job(checkpoint_dir=checkpoint_dir).compile()
    validate_all(m)
    spec = pod_spec(m)
    env = {e["name"]: e.get("value") for e in spec["containers"][0]["env"]}
    assert env["GKEML_CHECKPOINT_DIR"] == env_value
    volumes = {v["name"]: v for v in spec.get("volumes", [])}
    if volume_key:
        assert volume_key in volumes["checkpoints"]
    assert any("checkpoint_dir is not set" in n for n in m.notes) == (checkpoint_dir is None)
    # A bucket needs an IAM grant for the pods' service account.
    assert any("add-iam-policy-binding" in n for n in m.notes) == (volume_key == "csi")


def test_sharing_uses_affinity_for_both_label_spellings_and_mps_gets_host_ipc():
    m = job(accelerator=Accelerator("l4", sharing="mps", clients_per_gpu=4)).compile()
    validate_all(m)
    spec = pod_spec(m)
    expressions = spec["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"
    ]["nodeSelectorTerms"][0]["matchExpressions"]
    assert expressions[0]["values"] == ["mps", "MPS"]
    assert expressions[1]["values"] == ["4"]
    assert spec["hostIPC"] is True


def test_compile_is_deterministic():
    spec = dict(
        accelerator=Accelerator("h100", count=8), nodes=2, spot=True, env={"B": "2", "A": "1"}
    )
    assert job(**spec).compile().to_yaml() == job(**spec).compile().to_yaml()
    assert "&id" not in job(**spec).compile().to_yaml()


def test_compile_without_image_says_how_to_run_it():
    with pytest.raises(SpecError, match="backend='local'"):
        TrainingJob(name="x", command=["true"]).compile()


def test_later_attempts_get_deterministic_names_and_keep_the_run_id():
    second = job(accelerator=TpuSlice("v5e", "4x4")).compile(attempt=2)
    assert second.main["metadata"]["name"] == "ft--r2"
    assert second.main["metadata"]["labels"]["gkeml.dev/run-id"] == "ft"
    assert second.main["metadata"]["labels"]["gkeml.dev/attempt"] == "2"
    env = {e["name"]: e.get("value") for e in pod_spec(second)["containers"][0]["env"]}
    assert env["MASTER_ADDR"] == "ft--r2-node-0-0.ft--r2"
    assert env["TPU_WORKER_HOSTNAMES"].startswith("ft--r2-node-0-0.ft--r2,")
    assert second.workload["metadata"]["name"] == "jobset-ft--r2"


def test_pod_failure_policy_is_the_one_the_recorded_controllers_honoured():
    """The recordings (../shared/fixtures/kueue-real) show a real Job controller ignoring a
    Spot-style disruption and JobSet not restarting under this exact policy; ours must match."""
    import json

    recording = RECORDINGS / "jobset-spot-disruption-succeeded.jsonl"
    if not recording.exists():
        pytest.skip(f"Kueue recordings not found at {recording.parent}")
    first = json.loads(recording.read_text().splitlines()[0])
    recorded = first["object"]["spec"]["replicatedJobs"][0]["template"]["spec"]
    ours = job(nodes=2).compile().main["spec"]["replicatedJobs"][0]["template"]["spec"]
    for rule in ours["podFailurePolicy"]["rules"]:
        rule.get("onExitCodes", {}).pop("containerName", None)  # ours names the container
    assert ours["podFailurePolicy"] == recorded["podFailurePolicy"]
    assert ours["backoffLimit"] == recorded["backoffLimit"]


def test_the_validation_oracle_refuses_what_the_jobset_webhook_refuses():
    # The rule name every JobSet carried before: the schema allows it, the webhook does not.
    m = job(nodes=2).compile()
    m.main["spec"]["failurePolicy"]["rules"][0]["name"] = "user-code-failure"
    with pytest.raises(AssertionError, match=r"refused at admission.*alphabetic character"):
        validate_object(m.main)


UPLOADED = "gs://ckpt/gkeml-code/" + "3" * 64 + ".tar.gz"


@pytest.mark.parametrize(
    "shape",
    [{}, {"nodes": 2}, {"nodes": 2, "gang": False}, {"nodes": 2, "workdir": UPLOADED}],
    ids=["job", "gang", "independent", "workdir"],
)
def test_a_workspace_that_cannot_be_prepared_fails_the_job_at_once_not_user_exit_3(shape):
    m = job(requirements=["six"], max_restarts=4, **shape).compile()
    validate_all(m)  # the JobSet, and the Jobs its controller makes from the template
    main = m.main
    spec = (
        main["spec"]
        if main["kind"] == "Job"
        else main["spec"]["replicatedJobs"][0]["template"]["spec"]
    )
    pod = spec["template"]["spec"]
    (bootstrap,) = pod["initContainers"]
    trainer = pod["containers"][0]
    assert bootstrap["name"] == "bootstrap" and bootstrap["image"] == trainer["image"]
    assert bootstrap["command"] == trainer["command"][:3]  # the launcher, without a program
    assert bootstrap["env"] == trainer["env"] and bootstrap["env"] is not trainer["env"]
    assert bootstrap["terminationMessagePolicy"] == "FallbackToLogsOnError"
    assert bootstrap.get("volumeMounts") == trainer.get("volumeMounts")
    assert bootstrap.get("workingDir") == trainer.get("workingDir")
    assert pod["restartPolicy"] == "Never"
    rule = {
        "action": "FailJob",
        "onExitCodes": {"containerName": "bootstrap", "operator": "In", "values": [3]},
    }
    rules = spec["podFailurePolicy"]["rules"]
    assert rules[:2] == [rules[0], rule] and rules[0]["action"] == "Ignore"
    # The trainer's own exit 3 is not the bootstrap's: only a gang fails on it, as on any code.
    assert all(r.get("onExitCodes", {}).get("containerName") != "trainer" or
               r["onExitCodes"]["operator"] == "NotIn" for r in rules)  # fmt: skip
    if main["kind"] == "JobSet":
        first = main["spec"]["failurePolicy"]["rules"][0]
        assert (first["action"], first["onJobFailureReasons"]) == (
            "FailJobSet",
            ["PodFailurePolicy"],
        )
        import re

        (pattern,) = first["onJobFailureMessagePatterns"]
        # The message the Job controller writes for that rule, and one of the trainer's.
        failed = "Container {} for pod ml/ft-node-0-0-x failed with exit code 3 matching FailJob "
        assert re.search(pattern, failed.format("bootstrap") + "rule at index 1")
        assert not re.search(pattern, failed.format("trainer") + "rule at index 2")


def test_a_job_without_workdir_or_requirements_has_no_bootstrap_nor_its_rules():
    for m in (job().compile(), job(nodes=2).compile()):
        pod = pod_spec(m)
        assert "initContainers" not in pod
        main = m.main["spec"]
        policies = [main.get("podFailurePolicy") or main["replicatedJobs"][0]["template"]["spec"][
            "podFailurePolicy"], main.get("failurePolicy", {})]  # fmt: skip
        assert "bootstrap" not in repr(policies) and "workspaceNotPrepared" not in repr(policies)


def test_the_validation_oracle_refuses_a_failure_rule_naming_a_missing_container():
    m = job(nodes=2, requirements=["six"]).compile()
    template = m.main["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    del template["initContainers"]
    with pytest.raises(AssertionError, match=r"containerName: Invalid value: \"bootstrap\""):
        validate_object(m.main)
    single = job(requirements=["six"]).compile().main
    single["spec"]["template"]["spec"]["restartPolicy"] = "OnFailure"
    with pytest.raises(AssertionError, match=r"only \"Never\" is supported"):
        validate_object(single)
