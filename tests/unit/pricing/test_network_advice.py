"""A multi-node GPU job past 8 GPUs on a machine without GPUDirect is told which GPUDirect
machine would hold the same GPUs and what that costs per hour, against its own estimate."""

from __future__ import annotations

import re

import pytest

from gkeml_sdk import Accelerator, TrainingJob
from gkeml_sdk.hardware.gpus import GPUS
from gkeml_sdk.hardware.network_stacks import machine_stack
from gkeml_sdk.pricing.network_advice import network_advice

NOTE = re.compile(
    r"(?P<machine>[a-z0-9-]+) \((?P<gpu>[^,]+), (?P<stack>[^)]+)\) holds the same (?P<gpus>\d+) "
    r"GPUs on (?P<hosts>\d+) nodes for \$(?P<delta>[\d,.]+)/h (?P<way>more|less) (?P<model>\S+) "
    r"\(\$(?P<there>[\d,.]+)/h against \$(?P<here>[\d,.]+)/h"
)


def _money(text: str) -> float:
    return float(text.replace(",", ""))


@pytest.mark.parametrize(("spot", "model"), [(False, "on-demand"), (True, "spot")])
def test_64_a100s_over_fast_socket_get_a_gpudirect_machine_and_the_price_difference(spot, model):
    job = TrainingJob(
        name="big",
        image="img",
        command=["x"],
        accelerator=Accelerator("a100-40gb", count=8),
        nodes=8,
        spot=spot,
    )
    (note,) = [n for n in job.compile().notes if "not GPUDirect" in n]
    assert note.startswith("64 NVIDIA A100 40GB GPUs on 8 a2-highgpu-8g nodes talk over NCCL")
    found = NOTE.search(note)
    assert found, note
    machine, gpus, hosts = found["machine"], int(found["gpus"]), int(found["hosts"])
    stack = machine_stack(machine)
    assert stack is not None and stack.key != "fast-socket" and stack.display == found["stack"]
    row = next(g for g in GPUS if machine in g.machine_names)
    assert row.memory_gb >= 40 and row.display == found["gpu"] and found["model"] == model
    # Both sides agree with estimate_cost of the two jobs, accelerators and VMs together.
    there = TrainingJob(
        name="gd", command=["x"], accelerator=Accelerator(row.key, count=gpus // hosts),
        nodes=hosts, spot=spot,
    )  # fmt: skip
    assert _money(found["here"]) == pytest.approx(job.estimate_cost().total(model), abs=0.01)
    assert _money(found["there"]) == pytest.approx(there.estimate_cost().total(model), abs=0.01)
    delta = _money(found["there"]) - _money(found["here"])
    assert _money(found["delta"]) == pytest.approx(abs(delta), abs=0.02)
    assert found["way"] == ("more" if delta >= 0 else "less")


def test_the_cheapest_fitting_gpudirect_machine_is_named():
    (note,) = network_advice(Accelerator("a100-80gb", count=8), nodes=4)
    named = NOTE.search(note)["machine"]
    costs = {}
    for row in GPUS:
        for machine in row.machine_types:
            stack = machine_stack(machine.name)
            if row.memory_gb < 80 or row.arch != "amd64" or stack is None:
                continue
            if stack.key == "fast-socket" or not machine.on_demand:
                continue
            job = TrainingJob(
                name="c", command=["x"], accelerator=Accelerator(row.key, count=machine.gpus,
                machine_type=machine.name), nodes=32 // machine.gpus,
            )  # fmt: skip
            costs[machine.name] = job.estimate_cost().total("on-demand")
    assert named == min(costs, key=costs.__getitem__)


@pytest.mark.parametrize(
    ("accelerator", "nodes"),
    [
        (Accelerator("a100-40gb", count=8), 1),  # one node: NVLink, no network
        (Accelerator("l4", count=4), 2),  # 8 GPUs: within what plain networking carries
        (Accelerator("h100", count=8), 8),  # GPUDirect-TCPX already
        (Accelerator("a100-40gb", count=1, mig="1g.5gb"), 16),  # slices, not whole GPUs
    ],
)
def test_no_note_where_the_network_is_not_the_bottleneck(accelerator, nodes):
    assert network_advice(accelerator, nodes) == []
