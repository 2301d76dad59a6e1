"""Regression tests for the defects the spec fuzzer (tests/unit/test_fuzz_specs.py) found:
each input here once reached the cluster or raised a non-gkeml exception."""

from __future__ import annotations

import math

import pytest

from gkeml_sdk import Accelerator, Autoscaling, RetryPolicy, SpecError, TpuSlice, TrainingJob
from gkeml_sdk.core import environment as contract
from gkeml_sdk.core.labels import attempt_name
from gkeml_sdk.files import load_specs
from gkeml_sdk.hardware import tpus


def job(**kwargs):
    return TrainingJob(**{"name": "ft", "image": "img", "command": ["python", "t.py"], **kwargs})


@pytest.mark.parametrize(
    "kwargs",
    [
        {"name": "ft\n"},
        {"namespace": "ml\n"},
        {"queue": "team-a\n"},
        {"priority": "high\n"},
        {"labels": {"team": "vision\n"}},
        {"labels": {"team\n": "vision"}},
        {"env": {"MY_SETTING\n": "1"}},
        {"files": {"main.py\n": "print(1)"}},
        {"service_account": "trainer\n"},
    ],
)
def test_a_trailing_newline_is_refused(kwargs):
    # re.match with `$` accepts "abc\n"; every pattern now ends in \Z.
    with pytest.raises(SpecError):
        job(**kwargs)


@pytest.mark.parametrize(
    ("spelling", "canonical"),
    [("4X4X4", "4x4x4"), ("04x4x4", "4x4x4"), ("４x4", "4x4"), (" 2x2x2 ", "2x2x2")],
)
def test_tpu_topologies_are_normalised_before_the_node_selector(spelling, canonical):
    generation = "v5p" if canonical.count("x") == 2 else "v5e"
    tpu = TpuSlice(generation, spelling)
    assert tpu.topology == canonical
    pod = job(accelerator=tpu).compile().main["spec"]["replicatedJobs"][0]["template"]["spec"]
    selector = pod["template"]["spec"]["nodeSelector"]
    assert selector[tpus.TPU_TOPOLOGY_LABEL] == canonical
    assert TpuSlice(generation, spelling) == TpuSlice(generation, canonical)


@pytest.mark.parametrize("topology", ["4x4x", "x", "4x-4", "4x²", "4x" + "4" * 5000])
def test_malformed_topologies_are_refused(topology):
    with pytest.raises(SpecError, match="topology"):
        TpuSlice("v5e", topology)


def test_mig_profiles_with_plus_never_reach_a_label():
    with pytest.raises(SpecError, match="label value cannot contain") as err:
        Accelerator("rtx-pro-6000", mig="1g.24gb+gfx")
    assert "1g.24gb" in err.value.fix
    assert Accelerator("rtx-pro-6000", mig="1g.24gb-me").mig == "1g.24gb-me"


@pytest.mark.parametrize(
    ("field", "value"),
    [("cpu", "-1"), ("cpu", "0"), ("cpu", "lots"), ("cpu", "1e999"), ("memory", "16GB"),
     ("memory", "0Gi"), ("memory", "16Gi\n"), ("service_account", "Trainer"),
     ("service_account", "a" * 254)],
)  # fmt: skip
def test_cpu_memory_and_service_account_are_checked(field, value):
    with pytest.raises(SpecError) as err:
        job(**{field: value})
    assert err.value.field == field


def test_valid_cpu_memory_and_service_account_compile():
    m = job(cpu="500m", memory="16Gi", service_account="trainer.ml").compile()
    container = m.main["spec"]["template"]["spec"]["containers"][0]
    assert container["resources"]["requests"] == {"cpu": "500m", "memory": "16Gi"}


def test_retry_delay_never_overflows():
    assert RetryPolicy().delay(1100) == 600.0
    assert RetryPolicy().delay(10**9) == 600.0
    with pytest.raises(SpecError):
        RetryPolicy(max_backoff_seconds=1e300)


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan])
def test_non_finite_floats_are_refused(value):
    with pytest.raises(SpecError):
        Autoscaling(max=3, queue_depth=value)
    with pytest.raises(SpecError):
        RetryPolicy(backoff_seconds=value)


def test_autoscaling_targets_below_milli_precision_are_refused():
    # Refused rather than rounded up: 0.0004 would silently become a 2.5x larger target.
    with pytest.raises(SpecError, match="milli"):
        Autoscaling(max=3, queue_depth=0.0004)
    assert Autoscaling(max=3, queue_depth=0.001).target == 0.001


def test_yaml_syntax_errors_are_spec_errors_with_the_line():
    with pytest.raises(SpecError, match="line 2, column"):
        TrainingJob.from_yaml("name: ft\nimage: a: b\n")


def test_spec_files_with_bad_yaml_or_bytes_are_spec_errors(tmp_path):
    bad = tmp_path / "job.yaml"
    bad.write_text("name: ft\ncommand: [a\n")
    with pytest.raises(SpecError, match="line 3"):
        load_specs(bad)
    bad.write_bytes(b"name: \xff\n")
    with pytest.raises(SpecError, match="UTF-8"):
        load_specs(bad)
    bad.write_text("kind: [x]\nname: ft\n")
    with pytest.raises(SpecError, match="kind"):
        load_specs(bad)


@pytest.mark.parametrize("field", ["nodes", "max_restarts", "max_runtime"])
def test_counts_beyond_int32_are_refused(field):
    with pytest.raises(SpecError, match="32-bit"):
        job(**{field: 2**31})


def test_huge_durations_are_refused_not_crashing():
    with pytest.raises(SpecError):
        job(max_runtime="9" * 5000 + "h")


def test_run_names_start_with_a_letter():
    # JobSet names are DNS-1035 labels (admission-rules §1.3, fixture jobset-name-starts-with-digit)
    with pytest.raises(SpecError, match="DNS-1035") as err:
        job(name="1train", nodes=2)
    assert err.value.fix == "name='train'"


def test_run_names_leave_room_for_jobset_pod_names():
    # len(N)+len(R)+len(J)+len(P)+9 <= 63 for every attempt's name N.
    room = 63 - len("node") - 1 - len(str(10**6 - 1)) - 9 - contract.ATTEMPT_NAME_ALLOWANCE
    with pytest.raises(SpecError, match=f"at most {room} characters"):
        job(name="a" * (room + 1), nodes=10**6)
    job(name="a" * room, nodes=10**6)


@pytest.mark.parametrize("attempt", [1, 2, 9, 10, contract.MAX_RESUBMITS + 1])
def test_attempt_names_stay_within_the_allowance(attempt):
    assert len(attempt_name("run", attempt)) - 3 <= contract.ATTEMPT_NAME_ALLOWANCE


def test_resubmissions_are_bounded_by_what_attempt_names_can_hold():
    RetryPolicy(max_resubmits=contract.MAX_RESUBMITS)
    with pytest.raises(SpecError, match=r"at most 98.*'<run>--r<k>'"):
        RetryPolicy(max_resubmits=contract.MAX_RESUBMITS + 1)


# Facts (issue 8 part 5, gke-facts §1, §4, §5.5)


@pytest.mark.parametrize("count", [1, 2, 4])
def test_small_a3_high_shapes_are_spot_or_flex_start_only(count):
    with pytest.raises(SpecError, match="not sold on-demand") as err:
        job(accelerator=Accelerator("h100", count=count))
    assert err.value.fix.startswith("spot=True")
    spot = job(accelerator=Accelerator("h100", count=count), spot=True)
    cost = spot.estimate_cost(hours=1)
    assert cost.total("on-demand") is None and cost.total("spot") is not None
    assert job(accelerator=Accelerator("h100", count=8)).estimate_cost().total() is not None


def test_serving_never_plans_on_demand_on_a_spot_only_shape():
    from gkeml_sdk import ServeModel

    svc = ServeModel(name="chat", model="meta-llama/Llama-3.1-70B-Instruct",
                     accelerator=Accelerator("h100"), hf_token_secret="hf")  # fmt: skip
    assert svc.plan().machine_type == "a3-highgpu-8g"
    spot = svc.with_changes(spot=True).plan()
    assert spot.machine_type == "a3-highgpu-4g" and spot.price_on_demand is None


@pytest.mark.parametrize(
    ("model", "machine", "count"),
    [("t4", "n1-standard-4", 1), ("t4", "n1-highmem-8", 2), ("v100", "n1-standard-8", 1),
     ("p100", "n1-highcpu-64", 4), ("t4", "n1-standard-96", 4)],
)  # fmt: skip
def test_n1_gpus_accept_every_shape_within_the_ceilings(model, machine, count):
    acc = Accelerator(model, count=count, machine_type=machine)
    assert acc.machine_type_name == machine


@pytest.mark.parametrize(
    ("model", "machine", "count"),
    [("v100", "n1-standard-16", 1), ("t4", "n1-standard-64", 1), ("t4", "f1-micro", 1),
     ("p100", "n1-standard-96", 4)],
)  # fmt: skip
def test_n1_shapes_above_the_ceilings_are_refused(model, machine, count):
    with pytest.raises(SpecError, match=r"machine_type|carries"):
        Accelerator(model, count=count, machine_type=machine)


def test_n1_default_shape_is_unchanged():
    assert Accelerator("t4").machine_type_name == "n1-standard-8"


def test_a_multi_host_slice_gets_one_node_pool():
    main = job(accelerator=TpuSlice("v5e", "4x4")).compile().main
    annotations = main["metadata"]["annotations"]
    assert (
        annotations["alpha.jobset.sigs.k8s.io/exclusive-topology"]
        == "cloud.google.com/gke-nodepool"
    )
    single = job(accelerator=TpuSlice("v5e", "2x4"), nodes=1).compile().main
    assert "annotations" not in single["metadata"]


def test_mps_with_several_shares_is_pinned_to_one_gpu_nodes():
    acc = Accelerator("l4", sharing="mps", clients_per_gpu=4, count=2)
    pod = job(accelerator=acc).compile().main["spec"]["template"]["spec"]
    terms = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    expressions = {e["key"]: e["values"] for e in terms["nodeSelectorTerms"][0]["matchExpressions"]}
    assert set(expressions["node.kubernetes.io/instance-type"]) == {
        "g2-standard-4", "g2-standard-8", "g2-standard-12", "g2-standard-16", "g2-standard-32"
    }  # fmt: skip
    one = Accelerator("l4", sharing="mps", clients_per_gpu=4)
    pod = job(accelerator=one).compile().main["spec"]["template"]["spec"]
    assert "node.kubernetes.io/instance-type" not in str(pod["affinity"])


@pytest.mark.parametrize("text", ["?", "1: x\nname: ft\n", "null: 1"])
def test_yaml_keys_that_are_not_names_are_spec_errors(text):
    # pydantic raised a bare TypeError ("keywords must be strings"); found by the fuzzer.
    with pytest.raises(SpecError, match="is not a name"):
        TrainingJob.from_yaml(text)
