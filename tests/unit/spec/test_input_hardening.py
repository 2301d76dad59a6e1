"""Regression tests for the defects the spec fuzzer (tests/unit/test_fuzz_specs.py) found:
each input here once reached the cluster or raised a non-gkeml exception."""

from __future__ import annotations

import math

import pytest

from gkeml_sdk import Accelerator, Autoscaling, RetryPolicy, SpecError, TpuSlice, TrainingJob
from gkeml_sdk.catalog import contract, tpus
from gkeml_sdk.compile.contract import attempt_name
from gkeml_sdk.specfile import load_specs


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


@pytest.mark.parametrize("attempt", range(1, 100))
def test_attempt_names_stay_within_the_allowance(attempt):
    assert len(attempt_name("run", attempt)) - 3 <= contract.ATTEMPT_NAME_ALLOWANCE
