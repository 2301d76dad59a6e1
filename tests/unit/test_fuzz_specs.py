"""Bad input never reaches the cluster (issue 8 part 3), by property-based fuzzing of the
public constructors, `from_yaml` and spec files:

- whatever the input, the only exceptions are `gkeml_sdk.errors.GkemlError`s;
- whatever constructs compiles to objects that every check in `OBJECT_CHECKS` accepts.

Examples per test: 150 by default; `GKEML_FUZZ_EXAMPLES=10000 pytest tests/unit/test_fuzz_specs.py`
runs more (hypothesis profile "fuzz"). Adding a check of compiled objects is one line in
`OBJECT_CHECKS`: a function `obj -> list[str]` of reasons the cluster would refuse it.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gkeml_sdk import (
    Accelerator,
    Autoscaling,
    GkemlError,
    RetryPolicy,
    ServeModel,
    TpuSlice,
    TrainingJob,
)
from gkeml_sdk.core.environment import MAX_RESUBMITS
from gkeml_sdk.files import load_specs
from gkeml_sdk.hardware import gpus, tpus
from tests.schemas import validate_object
from tests.unit.k8s_rules import name_errors

NO_SCHEMA = {"HealthCheckPolicy", "GCPBackendPolicy"}  # as in the serving tests


def schema_errors(obj: dict[str, Any]) -> list[str]:
    """CRD schema (custom kinds) or kubernetes-validate (built-in kinds)."""
    if obj["kind"] in NO_SCHEMA:
        return []
    try:
        validate_object(obj)
    except AssertionError as exc:
        return [str(exc)]
    return []


OBJECT_CHECKS: list[Callable[[dict[str, Any]], list[str]]] = [
    schema_errors,
    name_errors,
]

EXAMPLES = int(os.environ.get("GKEML_FUZZ_EXAMPLES", "150"))
settings.register_profile(
    "fuzz",
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    derandomize=EXAMPLES <= 150,  # CI: the same examples on every run
)
fuzz = settings.get_profile("fuzz")

# Inputs that broke the spec layer before (issue 8 part 3), mixed into every string.
NASTY = [
    "abc\n",
    "abc\r\n",
    " abc",
    "abc ",
    "",
    "ABC",
    "1abc",
    "a.b",
    "a_b",
    "a+b",
    "a" * 64,
    "a" * 300,
    "４",
    "\ud800",
    "\x00",
    "é",
    "-a",
    "a-",
    "..",
    "../x",
    "a/b",
    "$(X)",
    "'; rm -rf /",
]
nasty = st.sampled_from(NASTY)
small_text = st.text(max_size=12)


def names(good: list[str]) -> st.SearchStrategy[str]:
    """Valid values, valid values with a nasty tail, nasty values and random text."""
    return st.one_of(
        st.sampled_from(good),
        st.builds(lambda g, n: g + n, st.sampled_from(good), nasty),
        nasty,
        small_text,
        st.from_regex(r"[a-z][-a-z0-9]{0,60}[a-z0-9]", fullmatch=True),
    )


ints = st.one_of(st.integers(-3, 20), st.sampled_from([0, 63, 1000, 2**31 - 1, 2**31, 10**30]))
floats = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0004, 0.001, 0.0015, 1e-9, 5.0, 1e6, 1e7, 1e300]),
)
quantities = names(["500m", "4", "16Gi", "1.5", "2e3", "0", "-1", "1e999", "Gi", "0.0m"])

gpu_models = names([g.key for g in gpus.GPUS] + ["H100", "nvidia-l4", "tesla-t4"])
mig_profiles = names(sorted({p for g in gpus.GPUS for p, _ in g.mig_profiles}))
machine_types = names(sorted({m.name for g in gpus.GPUS for m in g.machine_types}))


@st.composite
def gpu_fields(draw: st.DrawFn) -> dict[str, Any]:
    """Accelerator fields, mostly coherent (a model with one of its own MIG profiles or
    machine types) so that deep checks are reached, sometimes arbitrary."""
    row = draw(st.sampled_from(gpus.GPUS))
    own_mig = [p for p, _ in row.mig_profiles] or ["1g.10gb"]
    fields = draw(
        kwargs_of(
            count=st.sampled_from(row.counts) | ints,
            mig=st.none() | st.sampled_from(own_mig) | mig_profiles,
            sharing=st.sampled_from([None, "time-sharing", "mps", "MPS", "x"]),
            clients_per_gpu=st.none() | st.integers(1, 49) | ints,
            machine_type=st.none()
            | st.sampled_from([m.name for m in row.machine_types])
            | machine_types,
        )
    )
    fields["model"] = draw(st.sampled_from([row.key, row.label, row.key.upper()]) | gpu_models)
    return fields


def _respell(topology: str, sep: str, zeros: bool, wide: bool) -> str:
    sides = topology.split("x")
    text = [("0" if zeros else "") + s for s in sides]
    if wide:
        text = ["".join(chr(0xFF10 + int(c)) for c in t) for t in text]
    return sep.join(text)


@st.composite
def tpu_fields(draw: st.DrawFn) -> dict[str, Any]:
    """TpuSlice fields: a generation with one of its topologies, often respelled
    ("4X4X4", "04x4x4", full-width digits), sometimes arbitrary."""
    row = draw(st.sampled_from(tpus.TPUS))
    valid = draw(st.sampled_from(row.topologies(512)))
    respelled = st.builds(
        _respell,
        st.just(valid),
        st.sampled_from(["x", "X", " x ", "*"]),
        st.booleans(),
        st.booleans(),
    )
    fields = draw(kwargs_of(slices=st.sampled_from([1, 2, 3]) | ints))
    fields["generation"] = draw(st.sampled_from([row.key, row.label]) | names(["v5e"]))
    fields["topology"] = draw(st.just(valid) | respelled | names(["4x4", "2x2x1", "4x4x"]))
    return fields


def kwargs_of(**fields: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    """Some of `fields`, each left out half the time (so defaults are exercised too)."""
    return st.fixed_dictionaries({}, optional=fields)


accelerators = gpu_fields().map(lambda kw: _construct(Accelerator, kw))
tpu_slices = tpu_fields().map(lambda kw: _construct(TpuSlice, kw))
env_maps = st.dictionaries(names(["MY_SETTING", "A.B", "NODE_RANK"]), small_text, max_size=3)
label_maps = st.dictionaries(
    names(["team", "example.com/owner", "a/b/c"]), names(["vision", "x"]), max_size=3
)
job_fields = kwargs_of(
    name=names(["ft", "llama-ft", "a" * 40, "a" * 41]),
    image=st.sampled_from(["img", "us-docker.pkg.dev/p/r/t:1", None]),
    command=st.lists(small_text, max_size=3),
    args=st.lists(small_text, max_size=2),
    env=env_maps,
    accelerator=st.none() | accelerators | tpu_slices,
    nodes=ints,
    procs_per_node=ints,
    gang=st.sampled_from([None, True, False]),
    spot=st.booleans(),
    queue=names(["team-a", "Team_A", "a.b"]),
    priority=st.none() | names(["high"]),
    max_restarts=ints,
    namespace=names(["default", "ml"]),
    labels=label_maps,
    annotations=label_maps,
    max_runtime=st.none() | ints | names(["90m", "2h", "1d12h", "0s", "9" * 40 + "h"]),
    checkpoint_dir=st.none() | names(["gs://bucket/ckpt", "pvc://claim/x", "/mnt/x"]),
    service_account=st.none() | names(["trainer", "a.b"]),
    cpu=st.none() | quantities,
    memory=st.none() | quantities,
    termination_grace_seconds=st.none() | ints,
    files=st.dictionaries(names(["main.py", "pkg/util.py"]), small_text, max_size=2),
)


class Refused:
    """A nested spec whose construction was refused with a GkemlError (as it should be for
    bad input); any other exception propagates and fails the test."""

    def __init__(self, reason: str) -> None:
        self.reason = reason


def _construct(cls: Any, kwargs: dict[str, Any]) -> Any:
    try:
        return cls(**kwargs)
    except GkemlError as exc:
        return Refused(str(exc))


def _objects(manifests: Any) -> list[dict[str, Any]]:
    return [*manifests.objects, *([manifests.workload] if manifests.workload else [])]


def assert_cluster_accepts(manifests: Any) -> None:
    manifests.to_yaml()  # every object serialises
    problems = [p for obj in _objects(manifests) for check in OBJECT_CHECKS for p in check(obj)]
    assert not problems, problems


def outcome(build: Callable[[], Any]) -> Any:
    """The built value, or None when it was refused with a GkemlError."""
    try:
        return build()
    except GkemlError:
        return None


@fuzz
@given(data=st.data())
def test_training_jobs(data: st.DataObject) -> None:
    kwargs = data.draw(job_fields.map(_drop_refused), label="fields")
    job = outcome(lambda: TrainingJob(**kwargs))
    if job is None:
        return
    assert TrainingJob.from_yaml(job.to_yaml()) == job
    outcome(lambda: job.estimate_cost(hours=1))
    for attempt in (1, MAX_RESUBMITS + 1):  # the shortest and the longest attempt name
        manifests = outcome(lambda a=attempt: job.compile(a))
        if manifests is not None:
            assert_cluster_accepts(manifests)


def _drop_refused(kwargs: dict[str, Any]) -> dict[str, Any]:
    # An accelerator strategy that was refused stands for "no accelerator given".
    return {k: v for k, v in kwargs.items() if not isinstance(v, Refused)}


@fuzz
@given(kwargs=gpu_fields())
def test_accelerators(kwargs: dict[str, Any]) -> None:
    acc = outcome(lambda: Accelerator(**kwargs))
    if acc is None:
        return
    assert Accelerator.from_yaml(acc.to_yaml()) == acc
    if acc.mig is not None:
        assert "+" not in acc.mig
    job = outcome(lambda: TrainingJob(name="ft", image="img", command=["x"], accelerator=acc))
    if job is not None:
        assert_cluster_accepts(job.compile())


@fuzz
@given(kwargs=tpu_fields())
def test_tpu_slices(kwargs: dict[str, Any]) -> None:
    tpu = outcome(lambda: TpuSlice(**kwargs))
    if tpu is None:
        return
    # Only the catalog's spelling may reach the node selector.
    assert tpu.topology in tpu.tpu.topologies(), tpu.topology
    job = outcome(lambda: TrainingJob(name="ft", image="img", command=["x"], accelerator=tpu))
    if job is not None:
        assert_cluster_accepts(job.compile())


@fuzz
@given(
    kwargs=kwargs_of(
        max_resubmits=ints,
        fallback_to_on_demand_after=st.none() | ints,
        backoff_seconds=floats,
        max_backoff_seconds=floats,
    ),
    resubmission=st.one_of(st.integers(-5, 2000), st.sampled_from([1100, 10**9])),
)
def test_retry_policies(kwargs: dict[str, Any], resubmission: int) -> None:
    policy = outcome(lambda: RetryPolicy(**kwargs))
    if policy is not None:
        delay = policy.delay(resubmission)
        assert math.isfinite(delay) and 0 <= delay <= policy.max_backoff_seconds


autoscaling_fields = kwargs_of(
    min=ints,
    max=ints,
    queue_depth=st.none() | floats,
    batch_size=st.none() | floats,
    scale_up_pods_per_minute=ints,
    scale_down_delay_seconds=ints,
)
SERVE_MODELS = ["Qwen/Qwen2.5-7B-Instruct", "meta-llama/Llama-3.1-8B-Instruct", "x/unknown"]


@fuzz
@given(
    scaling=autoscaling_fields,
    serve=kwargs_of(
        name=names(["chat", "qa"]),
        engine=st.sampled_from(["vllm", "tgi", "VLLM", "x"]),
        labels=label_maps,
        env=env_maps,
        namespace=names(["serving"]),
        queue=st.none() | names(["team-a", "Team_A"]),
        service_account=st.none() | names(["server"]),
        hf_token_secret=st.none() | names(["hf-token"]),
        priority_class=st.none() | names(["high"]),
        spot=st.booleans(),
    ),
    model=st.sampled_from(SERVE_MODELS),
)
def test_serve_models_and_autoscaling(
    scaling: dict[str, Any], serve: dict[str, Any], model: str
) -> None:
    replicas = outcome(lambda: Autoscaling(**scaling))
    svc = outcome(
        lambda: ServeModel(
            model=model, accelerator=Accelerator("l4"), replicas=replicas or 1, **serve
        )
    )
    if svc is None:
        return
    assert ServeModel.from_yaml(svc.to_yaml()) == svc
    svc.plan()
    assert_cluster_accepts(svc.compile())


yaml_texts = st.one_of(
    job_fields.map(_drop_refused).map(lambda kw: _yaml_of(kw)),
    st.builds(
        lambda good, cut, junk: good[:cut] + junk,
        st.sampled_from(["name: ft\nimage: img\ncommand: [python, -V]\n"]),
        st.integers(0, 40),
        st.sampled_from(["[", "]", ": :", "\t", "{a", "&a *b", "!!python/object:os.system x"])
        | small_text,
    ),
    small_text,
)


def _yaml_of(kwargs: dict[str, Any]) -> str:
    import yaml

    plain = {
        k: (v.model_dump(mode="json") if hasattr(v, "model_dump") else v) for k, v in kwargs.items()
    }
    try:
        return yaml.safe_dump(plain)
    except yaml.YAMLError:  # e.g. a lone surrogate: no YAML text can hold it
        return "name: ft\n"


@fuzz
@given(text=yaml_texts, as_file=st.booleans())
def test_yaml_specs(text: str, as_file: bool) -> None:
    if as_file:
        import tempfile
        from pathlib import Path

        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "job.yaml"
            path.write_bytes(text.encode("utf-8", "surrogatepass"))
            specs = outcome(lambda: load_specs(path))
    else:
        specs = outcome(lambda: [TrainingJob.from_yaml(text)])
    for spec in specs or []:
        manifests = outcome(spec.compile)
        if manifests is not None:
            assert_cluster_accepts(manifests)
