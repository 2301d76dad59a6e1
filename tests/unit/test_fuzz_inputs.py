"""Every bad input gets one clear answer (issue 21), by property-based fuzzing of every public
constructor, every file loader (spec, price, node pool and setup files, YAML and `.py`), the
magics' options and the CLI's flags:

- whatever the input, the only exceptions are `gkeml_sdk.errors.GkemlError`s (the magics'
  own one-line `OptionError`, argparse's exit 2 for the CLI);
- whatever is accepted compiles to objects that the Kubernetes rules, written in
  tests/unit/k8s_rules.py independently of gkeml_sdk, accept;
- libyaml and the pure-Python YAML reader give the same answers.

CI runs `EXAMPLES` in total (printed by `test_the_examples_add_up`); `GKEML_FUZZ_SCALE=20`
multiplies every count (tests/bench/bench_fuzz.py runs that).
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import math
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gkeml_sdk as g
from gkeml_sdk import GkemlError
from gkeml_sdk.core import apimachinery as k8s
from gkeml_sdk.core import spec_text
from gkeml_sdk.core.rules import check_labels
from gkeml_sdk.files import load_specs
from gkeml_sdk.nodepools.pool_file import load_node_pools
from gkeml_sdk.tenancy.manifests import compile_tenants
from tests.unit import k8s_rules

SCALE = float(os.environ.get("GKEML_FUZZ_SCALE", "1"))
EXAMPLES: dict[str, int] = {}


def fuzz(name: str, examples: int) -> Callable[[Any], Any]:
    """`examples` (times the scale) derandomized examples: CI sees the same ones every run."""
    count = max(1, int(examples * SCALE))
    EXAMPLES[name] = count
    return settings(
        max_examples=count,
        deadline=None,
        derandomize=SCALE <= 1,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )


# Values that broke input handling before, anywhere a value goes.
NASTY_TEXT = ["", " ", "a\n", "\ud800", "\x00", "é", "４", "-a", "a" * 300, "/team", "..",
              "$(X)", "1e999", "nan", "10" * 3000, "{{", "&a", "*a", "!!str"]  # fmt: skip
NASTY_NUMBERS = [0, -1, 1, 2**31, 2**63, 10**30, 10**400, -(10**400), 0.5, -0.0, math.inf,
                 -math.inf, math.nan, 1e308, 1e-320]  # fmt: skip
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.sampled_from(NASTY_NUMBERS),
    st.integers(),
    st.floats(),
    st.sampled_from(NASTY_TEXT),
    st.text(max_size=8),
)
anything = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(
            st.one_of(st.text(max_size=6), st.integers(), st.none()), inner, max_size=3
        ),
    ),
    max_leaves=6,
)

A = {"model": "l4"}
SERVE = {"name": "chat", "model": "Qwen/Qwen2.5-7B-Instruct", "accelerator": A}
# A valid call of each public constructor; fuzzing replaces some of its fields (or adds
# others) so that the checks behind the first ones are reached too.
BASES: dict[Any, dict[str, Any]] = {
    g.Accelerator: {"model": "h100", "count": 8},
    g.TpuSlice: {"generation": "v5e", "topology": "4x4"},
    g.TrainingJob: {"name": "ft", "image": "img", "command": ["python", "t.py"], "accelerator": A},
    g.TopologyPlacement: {"level": "cloud.google.com/gce-topology-block"},
    g.Capacity: {"accelerator": A, "provisioning": ("spot",)},
    g.Team: {"name": "team-a", "quota": {"l4": 4}},
    g.ClusterSetup: {
        "capacity": [{"accelerator": A, "provisioning": ["spot"]}],
        "teams": [{"name": "team-a", "quota": {"l4": 4}}],
    },
    g.ServeModel: SERVE,
    g.Autoscaling: {"min": 1, "max": 3},
    g.Routing: {"via": "istio", "routes": [{"model": "m", "backends": {"chat": 100}}]},
    g.Route: {"model": "m", "backends": {"chat": 100}},
    g.ModelSize: dict(params_b=7, layers=32, attention_heads=32, kv_heads=8, head_dim=128),
    g.Tenant: {
        "name": "acme",
        "tier": "A",
        "gpu_quota": 4,
        "models": [{"model": SERVE}],
        "weight_sources": ["10.0.0.0/24"],
    },
    g.TenantModel: {"model": SERVE},
    g.Tier: {"name": "A"},
    g.RetryPolicy: {},
    g.SecretRef: {"name": "hf", "key": "token"},
    g.GcsFuse: {"bucket": "my-bucket"},
    g.GcsCache: {"size": "10Gi"},
    g.Pvc: {"name": "data"},
    g.HyperdiskML: {"pvc": "weights"},
    g.Parallelstore: {"pvc": "scratch"},
    g.NodePool: {"name": "l4", "hardware": A},
    g.NodeNetwork: {"network": "n", "subnetwork": "s"},
    g.KubernetesSettings: {"namespace": "ml"},
    g.ApiRetrySettings: {},
    g.LocalSettings: {"run_dir": "/tmp/gkeml-fuzz-never-written"},
    g.LocalOptions: {},
    g.LeaseTiming: {},
    g.PriceBook.of: {"prices": {"h100": {"on_demand": 9.0}}},
}


def field_names(target: Any) -> list[str]:
    if hasattr(target, "model_fields"):
        return list(target.model_fields)
    if dataclasses.is_dataclass(target):
        return [f.name for f in dataclasses.fields(target)]
    return ["prices"]


def outcome(build: Callable[[], Any]) -> Any:
    """What `build` returned, or None when it refused with a GkemlError; anything else
    propagates and fails the test."""
    try:
        return build()
    except GkemlError as exc:
        assert len(str(exc)) < 10_000, "an error message quoted unbounded input"
        return None


def assert_cluster_accepts(objects: list[dict[str, Any]]) -> None:
    yaml.safe_dump_all(objects)  # every object serialises
    problems = [p for obj in objects for p in k8s_rules.name_errors(obj)]
    assert not problems, problems


def compiled(spec: Any) -> list[dict[str, Any]]:
    if isinstance(spec, g.Tenant):
        return compile_tenants([spec]).objects
    if isinstance(spec, g.NodePool):
        return []  # no Kubernetes object: a GKE API request (checked by its own fake)
    manifests = outcome(spec.compile)
    return [] if manifests is None else [*manifests.objects]


@st.composite
def calls(draw: st.DrawFn) -> tuple[Any, dict[str, Any]]:
    target = draw(st.sampled_from(list(BASES)))
    kwargs = dict(BASES[target])
    names = field_names(target)
    if hasattr(target, "model_fields"):
        # A misspelt field: models refuse it with the list of fields. (A dataclass or
        # function called with an unknown keyword is Python's own TypeError, as for any call.)
        names.append("no_such_field")
    for name in draw(st.lists(st.sampled_from(names), max_size=3, unique=True)):
        kwargs[name] = draw(anything)
    return target, kwargs


@fuzz("constructors", 1800)
@given(call=calls())
def test_every_public_constructor_refuses_with_gkeml_errors_only(
    call: tuple[Any, dict[str, Any]],
) -> None:
    target, kwargs = call
    made = outcome(lambda: target(**kwargs))
    if made is None or (not hasattr(made, "compile") and not isinstance(made, g.Tenant)):
        return
    if hasattr(made, "to_yaml"):
        assert outcome(lambda: type(made).from_yaml(made.to_yaml())) == made
    assert_cluster_accepts(compiled(made))


# Keys and values built from the characters Kubernetes' grammars care about.
key_text = st.text(alphabet="aZ09-._/é \n", max_size=70) | st.sampled_from(
    ["/team", "a/", "a/b/c", "-a", "a" * 63, "a" * 64, "x." * 127 + "io/a", "A.B/c", "a..b/c"]
)


def refused(build: Callable[[], Any]) -> bool:
    try:
        build()
    except GkemlError:
        return True
    return False


@fuzz("kubernetes_rules", 1200)
@given(key=key_text, value=key_text)
def test_label_and_annotation_rules_match_the_api_servers(key: str, value: str) -> None:
    meta = {"name": "x", "labels": {key: value}, "annotations": {key: value}}
    configmap = {"kind": "ConfigMap", "metadata": meta, "data": {key: value}}
    independent = k8s_rules.name_errors(configmap)
    ours = k8s.object_errors(configmap)
    assert bool(independent) == bool(ours), (independent, ours)
    accepted = not refused(lambda: check_labels({key: value}, {key: value}))
    assert accepted == (not k8s_rules.name_errors({"kind": "Job", "metadata": meta}))


def test_annotation_and_configmap_sizes_are_counted_as_the_api_server_counts() -> None:
    half = "é" * (64 * 1024)  # 128 KiB of UTF-8 in 64 Ki characters
    assert outcome(lambda: check_labels({}, {"a": half, "b": half})) is None  # 256 KiB + 2
    check_labels({}, {"a": half, "b": half[:-1]})  # 2 + 256 KiB - 2 bytes: accepted
    big = {"kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "x" * (1 << 20)}}
    assert not k8s.object_errors(big)
    big["data"]["b"] = "x"
    assert k8s.object_errors(big) and k8s_rules.name_errors(big)


def yaml_documents() -> st.SearchStrategy[str]:
    """YAML text: spec-shaped documents with anchors, aliases, merges, tags and scalars
    of every YAML type, and arbitrary cuts of them."""
    scalar = st.sampled_from(["1", "0x1F", "1_000", "1e3", ".inf", ".nan", "~", "yes", "on",
                              "2024-01-01", "2024-13-45", "'\\ud800'", '"\\ud800"', '"\\x00"',
                              "9" * 4400, "!!binary aGk=", "!!python/name:os.system", "[a, b]",
                              "{a: 1}", "&x 1", "*x", "<<: *m", "? [a]", "|\n  text"])  # fmt: skip
    line = st.builds(
        lambda k, v: f"{k}: {v}",
        st.sampled_from(["name", "image", "command", "nodes", "labels", "env", "kind", "m", "1"]),
        scalar,
    )
    document = st.lists(line, min_size=1, max_size=6).map("\n".join)
    stream = st.lists(document, min_size=1, max_size=3).map("\n---\n".join)
    return st.one_of(
        stream,
        st.builds(lambda s, cut: s[:cut], stream, st.integers(0, 60)),
        st.text(max_size=40),
    )


def _documents(loader: Any) -> list[Any]:
    found = []
    while loader.check_node():
        found.append(loader.get_data())
    return found


@fuzz("yaml_readers_agree", 500)
@given(text=yaml_documents())
def test_libyaml_and_the_pure_reader_give_the_same_answers(text: str) -> None:
    fast, pure = spec_text._loader_classes()
    public = outcome(lambda: spec_text.load_yaml_all(text, "t.yaml"))
    if public is None:
        return
    # Accepted: what the pure reader reads, and what libyaml reads whenever it reads it
    # (repr: a YAML .nan is no equal of itself).
    assert repr(spec_text._read(pure, text, _documents)) == repr(public)
    if yaml.__with_libyaml__:
        try:
            through_libyaml = spec_text._read(fast, text, _documents)
        except (yaml.YAMLError, ValueError, OverflowError, RecursionError):
            return  # the public reader answered with the pure one's reading: the same
        assert repr(through_libyaml) == repr(public)


SUFFIXES = [".yaml", ".yml", ".json", ".py", ".txt"]
PY_SOURCES = ["def (:\n", "raise RuntimeError('boom')\n", "import sys; sys.exit(3)\n",
              "x = 1\n", "from gkeml_sdk import TrainingJob\njob = TrainingJob(name='Bad_')\n",
              "from gkeml_sdk import TrainingJob\njob = TrainingJob(name='ok', command=['x'])\n",
              "1/0\n", "'\\ud800'\n", "\x00"]  # fmt: skip
LOADERS: dict[str, Callable[[Path], Any]] = {
    "specs": load_specs,
    "node pools": load_node_pools,
    "setup": g.ClusterSetup.from_file,
    "prices": g.PriceBook.from_file,
}


@fuzz("file_loaders", 600)
@given(
    text=yaml_documents() | st.sampled_from(PY_SOURCES),
    suffix=st.sampled_from(SUFFIXES),
    loader=st.sampled_from(list(LOADERS)),
    raw=st.binary(max_size=8) | st.just(b""),
)
def test_every_file_loader_refuses_with_gkeml_errors_only(
    text: str, suffix: str, loader: str, raw: bytes
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"spec{suffix}"
        path.write_bytes(text.encode("utf-8", "surrogatepass") + raw)
        loaded = outcome(lambda: LOADERS[loader](path))
    for spec in loaded if isinstance(loaded, list) else []:
        assert_cluster_accepts(compiled(spec))


def test_files_beyond_the_size_limit_are_refused_with_the_limit(tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    path.write_bytes(b"name: x\n" + b"#" * spec_text.MAX_SPEC_BYTES)
    for load in LOADERS.values():
        with pytest.raises(g.SpecError, match="larger than 4 MiB"):
            load(path)


MAGIC_WORDS = ["--gpu", "--mig", "--tpu", "--nodes", "--procs-per-node", "--framework", "--spot",
               "--provisioning", "--network", "--gang", "--queue", "--priority", "--namespace",
               "--cpu", "--memory", "--name", "--image", "--env", "--secret-env",
               "--max-restarts", "--checkpoint-dir", "--max-runtime", "--file", "--timeout",
               "--local", "--chaos", "--dry-run", "--fields", "--placement", "--capacity",
               "--label", "--args", "--command", "--reservation", "--stateless",
               "--termination-grace-seconds"]  # fmt: skip
magic_values = st.sampled_from(["h100:8", "l4", "l4:x", "v5e:4x4", "v5e", "1g.10gb", "-1", "nan",
                                "torch", "jax", "mpi",
                                "inf", "1e999", "9" * 30, "A=B", "A", "=", "Bad_Name", "'", '"',
                                "64Gi", "x" * 80, "a,b", "", "HF_TOKEN=hf/token", "gs://b/c",
                                "{x}", "nosuch.py", "block:required", "compact",
                                "spot,standard"])  # fmt: skip


@fuzz("magic_options", 400)
@given(words=st.lists(st.sampled_from(MAGIC_WORDS) | magic_values, max_size=6))
def test_gke_train_options_end_in_one_line_errors(words: list[str]) -> None:
    from gkeml_magics import parsers
    from gkeml_magics.options import MagicDefaults, local_options, train_job

    line = " ".join(words)
    try:
        ns = parsers.parse(parsers.train_parser(), line)
        job = train_job(ns, MagicDefaults(), "print('hi')\n")
        local_options(ns)
        if ns.dry_run:
            job.estimate_cost(hours=(job.max_runtime or 3600) / 3600)
    except parsers.OptionError as exc:
        assert "\n" not in str(exc).strip()
        return
    except GkemlError:
        return
    assert_cluster_accepts(compiled(job))


CLI_WORDS = ["render", "validate", "catalog", "gpus", "tpus", "--prices", "--cost", "FILE",
             "nosuch.yaml", "-1", "nan", "1e999", "--help-not", "x" * 300]  # fmt: skip


@fuzz("cli_arguments", 300)
@given(words=st.lists(st.sampled_from(CLI_WORDS), min_size=1, max_size=5), text=yaml_documents())
def test_cli_flags_and_files_end_in_one_line_errors(words: list[str], text: str) -> None:
    from gkeml_sdk.cli.main import main

    err = io.StringIO()
    with tempfile.TemporaryDirectory() as folder:
        spec = Path(folder) / "spec.yaml"
        spec.write_text(text, encoding="utf-8", errors="surrogatepass")
        argv = [str(spec) if w == "FILE" else w for w in words]
        try:
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
                code = main(argv)
        except SystemExit as exit_:  # argparse: usage and one error line, exit 2
            assert exit_.code in (0, 2)
            return
    assert code in (0, 1, 2)
    if code == 1:
        assert err.getvalue().startswith("gkeml: error: ") and err.getvalue().count("\n") == 1


def test_the_examples_add_up() -> None:
    """The CI total this file and tests/unit/test_fuzz_specs.py run (issue 21: >= 5,000)."""
    from tests.unit import test_fuzz_specs

    specs = 6 * test_fuzz_specs.EXAMPLES
    total = sum(EXAMPLES.values()) + specs
    print(f"fuzz examples: {EXAMPLES} + {specs} in test_fuzz_specs = {total}")
    assert SCALE != 1 or total >= 5000
