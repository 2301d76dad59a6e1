import pytest

from gkeml_sdk.core.lookup import UnknownName
from gkeml_sdk.hardware import gpus, tpus
from gkeml_sdk.pricing import catalog as prices


def test_every_gpu_label_is_unique_and_resolves_to_its_row():
    labels = [g.label for g in gpus.GPUS]
    assert len(labels) == len(set(labels))
    for row in gpus.GPUS:
        assert gpus.gpu(row.label) is row
        assert gpus.gpu(row.key.upper()) is row


@pytest.mark.parametrize(
    ("alias", "label"),
    [
        ("h100", "nvidia-h100-80gb"),
        ("a100-80gb", "nvidia-a100-80gb"),
        ("a100-40gb", "nvidia-tesla-a100"),
        ("tesla-a100", "nvidia-tesla-a100"),
        ("l4", "nvidia-l4"),
        ("gb200", "nvidia-gb200"),
        ("h200", "nvidia-h200-141gb"),
    ],
)
def test_gpu_aliases(alias, label):
    assert gpus.gpu(alias).label == label


@pytest.mark.parametrize(
    ("alias", "key"), [("v5e", "v5e"), ("trillium", "v6e"), ("ironwood", "tpu7x")]
)
def test_tpu_aliases(alias, key):
    assert tpus.tpu(alias).key == key


def test_unknown_names_list_valid_ones_and_the_closest():
    with pytest.raises(UnknownName) as err:
        gpus.gpu("h1000")
    assert err.value.closest == "h100"
    assert "a100-80gb" in str(err.value) and "Did you mean 'h100'" in str(err.value)
    with pytest.raises(UnknownName, match="Did you mean 'v6e'"):
        tpus.tpu("v6")


def test_machine_types_match_gke_fixed_gpu_counts():
    assert gpus.gpu("l4").machine_for(8).name == "g2-standard-96"
    assert gpus.gpu("a100-40gb").machine_for(16).name == "a2-megagpu-16g"
    assert gpus.gpu("gb200").arch == "arm64"
    with pytest.raises(KeyError):
        gpus.gpu("h200").machine_for(4)


def test_mig_profiles_rejected_by_the_device_plugin_are_absent():
    assert gpus.gpu("a100-40gb").mig_instances("4g.20gb") is None
    assert gpus.gpu("a100-80gb").mig_instances("4g.40gb") is None
    assert gpus.gpu("h100").mig_instances("1g.10gb") == 7
    assert not gpus.gpu("t4").mig_profiles and not gpus.gpu("l4").mig_profiles


@pytest.mark.parametrize(
    ("generation", "topology", "chips", "hosts", "machine"),
    [
        ("v5e", "4x4", 16, 4, "ct5lp-hightpu-4t"),
        ("v5e", "2x4", 8, 1, "ct5lp-hightpu-8t"),
        ("v6e", "16x16", 256, 64, "ct6e-standard-4t"),
        ("v4", "2x2x1", 4, 1, "ct4p-hightpu-4t"),
        ("v5p", "4x4x8", 128, 32, "ct5p-hightpu-4t"),
        ("tpu7x", "1x1x1", 1, 1, "tpu7x-standard-1t"),
        ("tpu7x", "2x2x2", 8, 2, "tpu7x-standard-4t"),
    ],
)
def test_tpu_host_arithmetic(generation, topology, chips, hosts, machine):
    row = tpus.tpu(generation)
    assert row.is_valid(topology)
    assert tpus.chips_of(topology) == chips
    assert row.hosts(topology) == hosts
    assert row.machine_type(topology) == machine


@pytest.mark.parametrize(
    ("generation", "topology"),
    [
        ("v5e", "3x3"),
        ("v5e", "2x2x1"),
        ("v5p", "8x4x4"),
        ("v5p", "6x6x6"),
        ("v4", "4x4"),
        ("v6e", "32x32"),
    ],
)
def test_invalid_tpu_topologies(generation, topology):
    assert not tpus.tpu(generation).is_valid(topology)


def test_price_book_overrides_and_files(tmp_path):
    book = prices.PriceBook.default()
    assert book.price("h100").spot == pytest.approx(2.9926)
    assert book.price("gb200").on_demand is None
    custom = tmp_path / "prices.yaml"
    custom.write_text(
        "as_of: '2026-11-01'\nprices:\n  h100: {on_demand: 12.5}\n  gb200: {spot: 5}\n"
    )
    loaded = prices.PriceBook.from_file(custom)
    assert loaded.as_of == "2026-11-01"
    assert loaded.price("h100").on_demand == 12.5 and loaded.price("h100").spot == pytest.approx(
        2.9926
    )
    assert loaded.price("gb200").spot == 5
    with pytest.raises(ValueError, match="unknown fields"):
        book.with_overrides({"h100": {"ondemand": 1.0}})


def test_estimates_take_a_book_a_dict_or_a_file(tmp_path):
    from gkeml_sdk import Accelerator, TrainingJob
    from gkeml_sdk.pricing.vm import vm_part

    job = TrainingJob(name="a", command=["x"], accelerator=Accelerator("l4"), spot=True)
    vm = vm_part("g2-standard-4").price("spot")  # the VM part of L4's default machine
    assert vm is not None and vm > 0
    assert job.estimate_cost(hours=2).total() == pytest.approx(2 * (0.2231 + vm))
    overridden = job.estimate_cost(hours=2, prices={"l4": {"spot": 0.5}})
    assert overridden.total() == pytest.approx(2 * (0.5 + vm))
    path = tmp_path / "p.json"
    path.write_text('{"as_of": "2026-11-01", "prices": {"l4": {"spot": 0.25}}}')
    estimate = job.estimate_cost(hours=2, prices=str(path))
    assert estimate.total() == pytest.approx(2 * (0.25 + vm)) and estimate.as_of == "2026-11-01"
    assert "2026-11-01" in str(estimate) and "<- this job" in str(estimate)
