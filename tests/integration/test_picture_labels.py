"""Every label of every picture fits: in headless Chromium, at page widths from 320 to 1600
px, each `<text>` box lies inside its SVG's box and no two text boxes overlap. The pictures
are the notebook's (a run with a preemption, cost bars with long price labels and missing
prices, the MIG cost of docs/first-hour.md, a serving plan's GPU memory)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from gkeml_sdk import Accelerator, ServeModel, TrainingJob
from gkeml_sdk.pictures.timeline import Step, timeline_svg
from tests import notebook_browser as nb

pytestmark = pytest.mark.skipif(
    nb.chromium() is None and not os.environ.get("CI"),
    reason="chromium is not installed (apt-get install -y chromium); CI installs it",
)
WIDTHS = (320, 480, 640, 800, 1024, 1280, 1600)
# Writes, for each SVG, the texts that leave its box and the pairs of texts that overlap.
MEASURE = """<script>
const inside = (a, b) => a.left >= b.left - 0.5 && a.right <= b.right + 0.5
  && a.top >= b.top - 0.5 && a.bottom <= b.bottom + 0.5;
const meet = (a, b) => a.left < b.right - 0.5 && b.left < a.right - 0.5
  && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5;
const report = [];
for (const svg of document.querySelectorAll('svg[data-picture]')) {
  const box = svg.getBoundingClientRect();
  const texts = [...svg.querySelectorAll(':scope > text')].map(
    t => [t.textContent, t.getBoundingClientRect()]);
  const out = texts.filter(([, r]) => !inside(r, box)).map(([s]) => s);
  const overlaps = [];
  texts.forEach(([s, r], i) => texts.slice(i + 1).forEach(([u, q]) => {
    if (meet(r, q)) overlaps.push([s, u]);
  }));
  report.push({page: svg.closest('[data-width]').dataset.width,
               picture: svg.dataset.picture, texts: texts.length, width: box.width,
               out, overlaps});
}
document.body.setAttribute('data-report', JSON.stringify(report));
</script>"""


def pictures() -> dict[str, str]:
    """The pictures under test, by a name, as the notebook shows them (HTML)."""
    h100 = TrainingJob(
        name="c", command=["true"], accelerator=Accelerator("h100", count=8), nodes=2, spot=True
    )
    mig = TrainingJob(
        name="mig", command=["true"], accelerator=Accelerator("a100-80gb", mig="1g.10gb")
    )
    cpu = TrainingJob(name="cpu", command=["true"])
    steps = [
        Step(1, 0.0, "Queued", "waiting for quota"),
        Step(1, 0.4, "Running", "2 process(es)"),
        Step(1, 1.4, "Preempted", "SimulatedPreemption"),
        Step(2, 1.5, "Restarting", "AfterPreemption"),
        Step(2, 1.6, "Running", ""),
        Step(2, 2.7, "Succeeded", "every process exited 0"),
    ]
    svc = ServeModel(name="chat", model="Qwen/Qwen2.5-7B-Instruct", accelerator=Accelerator("l4"))
    return {
        "cost h100 x16 for 10000 h": h100.estimate_cost(hours=10000)._repr_html_(),
        "cost mig": mig.estimate_cost(hours=10)._repr_html_(),
        "cost with no prices": cpu.estimate_cost(hours=1)._repr_html_(),
        "timeline with a preemption": timeline_svg("first-hour-with-a-long-name", steps),
        "gpu memory": svc.plan()._repr_html_(),
    }


def measure(work: Path) -> list[dict[str, object]]:
    boxes = "".join(
        f'<div data-width="{w}" style="width:{w}px;margin:8px 0">{html}</div>'
        for w in WIDTHS
        for html in pictures().values()
    )
    page = work / "pictures.html"
    page.write_text(
        f"<!DOCTYPE html><html><head><meta charset='utf-8'></head><body style='margin:0'>"
        f"{boxes}{MEASURE}</body></html>",
        encoding="utf-8",
    )
    dom = nb._chromium(work, "--window-size=1700,1000", "--dump-dom", page.as_uri())
    found = re.search(r'<body[^>]*data-report="([^"]*)"', dom)
    assert found, "the measuring script did not run"
    report: list[dict[str, object]] = json.loads(found.group(1).replace("&quot;", '"'))
    return report


def test_every_label_fits_at_every_width(tmp_path: Path) -> None:
    report = measure(tmp_path)
    assert len(report) == len(WIDTHS) * len(pictures())
    assert all(int(str(r["texts"])) > 0 for r in report)
    bad = [r for r in report if r["out"] or r["overlaps"]]
    assert bad == []
    for r in report:  # a picture never overflows its page
        assert float(str(r["width"])) <= int(str(r["page"])) + 0.5, r


def test_the_measure_finds_a_clipped_label(tmp_path: Path) -> None:
    """The check can fail: a label pushed past the SVG's right edge is reported."""
    clipped = timeline_svg("x", [Step(1, 0.0, "Running", ""), Step(1, 1.0, "Succeeded", "")])
    clipped = clipped.replace("</svg>", '<text x="99999" y="10">far away</text></svg>')
    page = tmp_path / "pictures.html"
    page.write_text(
        f"<!DOCTYPE html><html><body><div data-width='640'>{clipped}</div>{MEASURE}</body></html>",
        encoding="utf-8",
    )
    dom = nb._chromium(tmp_path, "--dump-dom", page.as_uri())
    found = re.search(r'<body[^>]*data-report="([^"]*)"', dom)
    assert found
    (report,) = json.loads(found.group(1).replace("&quot;", '"'))
    assert report["out"] == ["far away"]
