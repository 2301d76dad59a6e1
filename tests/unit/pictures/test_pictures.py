"""The notebook pictures: what they draw from runs, plans and costs, escaped and labelled."""

from __future__ import annotations

import re

from gkeml_sdk import Accelerator, ServeModel, TrainingJob
from gkeml_sdk.pictures.timeline import Step, timeline_svg


def widths(svg: str, part: str) -> list[float]:
    return [float(w) for w in re.findall(rf'width="([\d.]+)"[^>]*data-part="{part}"', svg)]


def test_timeline_has_one_lane_per_attempt_and_escapes_text() -> None:
    steps = [
        Step(1, 0.0, "Queued", "Pending: <b>quota</b>"),
        Step(1, 2.0, "Running", ""),
        Step(1, 6.0, "Preempted", "Preempted"),
        Step(2, 6.0, "Restarting", ""),
        Step(2, 7.0, "Running", ""),
        Step(2, 10.0, "Succeeded", ""),
    ]
    svg = timeline_svg("ft<1>", steps)
    assert "attempt 1" in svg and "attempt 2" in svg and "attempt 3" not in svg
    assert "<b>" not in svg and "&lt;b&gt;quota" in svg and "ft&lt;1&gt;" in svg
    assert widths(svg, "Preempted")[0] >= 4.0  # an instant still shows
    queued, running = widths(svg, "Queued")[0], widths(svg, "Running")
    assert running[0] == 2 * queued  # 4 s against 2 s
    assert 'aria-label="run timeline of ft&lt;1&gt;: Queued, Running' in svg


def test_mig_cost_prints_a_fraction_and_an_estimate_says_how_and_where_to_set_it() -> None:
    mig = Accelerator("a100-80gb", mig="1g.10gb")
    cost = TrainingJob(name="m", accelerator=mig, command=["true"]).estimate_cost(hours=10)
    text = str(cost)
    assert text.startswith("1/7 of one NVIDIA A100 80GB GPU for 10 h"), text
    assert "0.142857" not in text and "1/7 x a2-ultragpu-1g" in text
    assert "on-demand   ~$4.0180/GPU-hour" in text
    assert "~on-demand: Spot / a100-40gb's Spot/on-demand ratio (0.489)" in text
    assert "estimate_cost(prices={'a100-80gb': {'on_demand': ...}})" in text
    html = cost._repr_html_()
    assert 'data-picture="cost-bars"' in html and "~on-demand: Spot / a100-40gb" in html
    assert widths(html, "spot-bar") and widths(html, "on-demand-bar")


def test_a_mode_the_machine_lacks_has_no_bar_and_says_why() -> None:
    one = Accelerator("h100", count=1)
    cost = TrainingJob(name="m", accelerator=one, spot=True, command=["x"]).estimate_cost()
    assert "on-demand   no price: this machine type is sold only as Spot or flex-start" in str(cost)
    html = cost._repr_html_()
    assert widths(html, "spot-bar") and not widths(html, "on-demand-bar")


def test_cost_bars_scale_to_the_dearest_model() -> None:
    job = TrainingJob(
        name="h", accelerator=Accelerator("h100", count=8), command=["true"], spot=True
    )
    html = job.estimate_cost(hours=10)._repr_html_()
    (on_demand,), (spot,), (flex,) = (
        widths(html, f"{m}-bar") for m in ("on-demand", "spot", "flex-start")
    )
    assert on_demand > flex > spot > 0
    cost = job.estimate_cost(hours=10)
    assert round(spot / on_demand, 2) == round(cost.total("spot") / cost.total("on-demand"), 2)
    assert "spot (this job)" in html


def test_serving_plan_draws_one_gpus_memory_split() -> None:
    plan = ServeModel(
        name="chat", model="Qwen/Qwen2.5-7B-Instruct", accelerator=Accelerator("l4")
    ).plan()
    html = plan._repr_html_()
    parts = {p: widths(html, p) for p in ("weights", "activations", "KV cache", "free")}
    assert all(len(w) == 1 and w[0] > 0 for w in parts.values()), parts
    assert abs(sum(w[0] for w in parts.values()) - 616) < 1  # the bar's full width
    assert "replicas 1, fixed" in html and "on-demand: $" in html
    assert "<table>" in html  # the plan's table follows the picture
