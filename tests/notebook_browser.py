"""Run the quickstart notebook through a real kernel, export it with nbconvert, open it in
headless Chromium and measure every picture: its size in the rendered page, its labels, and
a screenshot of it. `python -m tests.notebook_browser docs/images` refreshes the docs' images.
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "examples" / "notebooks" / "quickstart.ipynb"
# The pictures the notebook must show, by their data-picture name, with words each must show.
PICTURES = {
    "run-timeline": ("nb-quickstart", "attempt 1", "attempt 2", "Preempted", "Restarting"),
    "cost-bars": ("on-demand", "spot (this job)", "flex-start", "16 x NVIDIA H100 80GB GPU"),
    "gpu-memory": ("weights", "activations", "KV cache", "free", "replicas 1"),
    "runs-table": ("nb-quickstart", "Succeeded", "duration", "attempts"),
}
MIN_INK = 0.02  # a picture whose screenshot is 98% white shows nothing
FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--hide-scrollbars",
]  # fmt: skip
# Writes each picture's rendered size and text into its attributes, so --dump-dom shows them.
MEASURE = """<script>
for (const el of document.querySelectorAll('[data-picture]')) {
  const box = el.getBoundingClientRect();
  el.setAttribute('data-width', Math.round(box.width));
  el.setAttribute('data-height', Math.round(box.height));
  el.setAttribute('data-text', el.textContent.replace(/\\s+/g, ' ').trim());
  const parts = [...el.querySelectorAll('[data-part],[data-state]')];
  el.setAttribute('data-drawn', parts.filter(p => p.getBoundingClientRect().width > 0).length);
}
</script>"""


# Lists, in the body's data-overflow attribute, what sticks out of a page `width` px wide:
# an element whose box ends past the page, or whose text is wider than its box (a long token
# that does not wrap). Code (pre) scrolls in a notebook, and closed details show nothing.
OVERFLOW = """<script>
const page = document.documentElement.clientWidth;
const wide = [];
const say = (el, what) => wide.push(`${el.tagName.toLowerCase()} ${what}: ` +
  (el.textContent || '').replace(/\\s+/g, ' ').trim().slice(0, 60));
for (const el of document.body.querySelectorAll('*')) {
  if (el.closest('pre, script, style, details:not([open]) > :not(summary)')) continue;
  const box = el.getBoundingClientRect();
  if (box.width === 0 || box.height === 0) continue;
  const spills = el.scrollWidth > el.clientWidth + 1 && el.clientWidth > 0;
  if (box.right > page + 1) say(el, `ends at ${Math.round(box.right)} px`);
  else if (spills && getComputedStyle(el).overflowX === 'visible')
    say(el, `text ${el.scrollWidth} px in ${el.clientWidth} px`);
}
for (const row of document.body.querySelectorAll('tr')) {
  const label = row.querySelector('th'), value = row.querySelector('td');
  if (!label || !value) continue;
  // Where the words start: a label beside its value starts on the value's first line.
  const words = (cell) => { const r = document.createRange(); r.selectNodeContents(cell);
                            return r.getClientRects()[0] || cell.getBoundingClientRect(); };
  const [l, v] = [words(label), words(value)];
  if (Math.abs(l.top - v.top) > 2 || l.right > v.left + 1) say(label, 'not beside its value');
}
document.body.setAttribute('data-overflow', JSON.stringify(wide));
</script>"""
WIDTHS = (800, 1280)  # a narrow notebook pane and a laptop's
CODE_SCROLLS = "<style>pre { overflow-x: auto; }</style>"


@dataclass(frozen=True)
class Picture:
    """One picture as Chromium rendered it."""

    kind: str
    label: str
    width: int
    height: int
    text: str
    drawn: int  # its parts (bars, spans, state chips) that have a width on the page
    markup: str  # the element's HTML, to screenshot it alone


def chromium() -> str | None:
    """The Chromium binary, or None when it is not installed."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


def notebook_html(env: dict[str, str]) -> str:
    """The quickstart notebook executed through a kernel and exported by nbconvert."""
    import nbformat
    from nbclient import NotebookClient
    from nbconvert import HTMLExporter

    notebook = nbformat.read(NOTEBOOK, as_version=4)
    old = dict(os.environ)
    os.environ.update(env)  # the kernel inherits this process's environment
    try:
        NotebookClient(
            notebook,
            timeout=180,
            kernel_name="python3",
            resources={"metadata": {"path": str(NOTEBOOK.parent)}},
        ).execute()
    finally:
        os.environ.clear()
        os.environ.update(old)
    # The basic template has no scripts or styles from the network: the page works offline.
    body, _ = HTMLExporter(template_name="basic").from_notebook_node(notebook)
    return f"<!DOCTYPE html><html><head><meta charset='utf-8'></head><body>{body}</body></html>"


def every_output(run_dir: Path) -> dict[str, Any]:
    """One object of each kind the SDK and the magics draw in a notebook, with the long words
    real ones carry (a Workload Identity gcloud command, image paths, a no-cluster note)."""
    import time

    from gkeml_magics.display import ConfigView, CostView, DryRun, RunTable, RunView, StatusLine
    from gkeml_magics.explain_view import PreviewView, WaitingLine, WhyView
    from gkeml_magics.options import MagicDefaults
    from gkeml_sdk import Accelerator, Client, GcsFuse, LocalSettings, ServeModel, TrainingJob

    job = TrainingJob(
        name="wi-demo", image="us-docker.pkg.dev/p/r/trainer:1", command=["python", "train.py"],
        accelerator=Accelerator("h100", count=8), nodes=2, spot=True,
        checkpoint_dir="gs://my-ckpt-bucket/runs/wi-demo",
        volumes=[GcsFuse("my-data-bucket", mount="/data")], service_account="trainer",
    )  # fmt: skip
    client = Client(local=LocalSettings(run_dir=run_dir))
    run = client.submit(TrainingJob(name="pictures", command=["python", "-c", "print(1)"], nodes=2))
    run.wait(120)
    svc = ServeModel(name="chat", model="meta-llama/Llama-3.1-70B-Instruct",
                     accelerator=Accelerator("l4"), hf_token_secret="hf")  # fmt: skip
    image = "us-docker.pkg.dev/a-long-project-name/a-long-repository/trainer-image:2026-12-07"
    note = (
        f"no cluster configured (KUBECONFIG={run_dir}/a-long-kubeconfig-file-name does not "
        "exist), so these are the local runs; point at one with `!gcloud container clusters "
        "get-credentials CLUSTER --location LOCATION` or %gke_config --kubeconfig PATH"
    )
    why = "Queued 3rd in team-a: cluster queue team-a uses 16 of 16 nvidia.com/gpu"
    return {
        "TrainingJob": job,
        "CostEstimate": job.estimate_cost(hours=10),
        "Manifests": job.compile(),
        "ServeModel": svc,
        "ServePlan": svc.plan(),
        "Run": run,
        "RunView": RunView(run),
        "RunTable": RunTable(client.runs(), note=note),
        "DryRun": DryRun.of(job, 2),
        "ConfigView": ConfigView(MagicDefaults(image=image).rows()),
        "CostView": CostView(job.estimate_cost(hours=3)),
        "StatusLine": StatusLine(run.name, run.state, time.monotonic()),
        "WaitingLine": WaitingLine(run.name, run.state, time.monotonic(), why),
        "WhyView": WhyView(run.name, run.explain()),
        "PreviewView": PreviewView(job.name, client.preview(job)),
    }


def outputs_page(outputs: dict[str, Any]) -> str:
    """A page of each output's HTML, as a notebook shows them, with every fold open."""
    body = "".join(f"<div data-output='{k}'>{v._repr_html_()}</div>" for k, v in outputs.items())
    body = body.replace("<details>", "<details open>")
    return f"<!DOCTYPE html><html><head><meta charset='utf-8'></head><body>{body}</body></html>"


def render(html: str, work: Path) -> list[Picture]:
    """Open `html` in Chromium and return every picture it rendered."""
    page = work / "notebook.html"
    page.write_text(html.replace("</body>", MEASURE + "</body>"), encoding="utf-8")
    dom = _chromium(work, "--dump-dom", page.as_uri())
    finder = _PictureFinder()
    finder.feed(dom)
    return finder.pictures


def overflow(html: str, work: Path, width: int) -> list[str]:
    """What sticks out of `html` rendered `width` px wide (see OVERFLOW), innermost first."""
    import json

    page = work / f"overflow-{width}.html"
    # As in a notebook, code scrolls sideways in its own box.
    styled = html.replace("</head>", f"{CODE_SCROLLS}</head>").replace(
        "</body>", OVERFLOW + "</body>"
    )
    page.write_text(styled, encoding="utf-8")
    dom = _chromium(work, "--dump-dom", f"--window-size={width},2000", page.as_uri())
    found = _Attribute("body", "data-overflow")
    found.feed(dom)
    return [f"{width} px: {item}" for item in json.loads(found.value or "[]")]


def screenshot(picture: Picture, out: Path, work: Path) -> bytes:
    """A PNG of `picture` alone, at its rendered size, written to `out`."""
    page = work / f"{picture.kind}.html"
    page.write_text(
        "<!DOCTYPE html><html><head><meta charset='utf-8'></head>"
        f"<body style='margin:8px;background:#fff'>{picture.markup}</body></html>",
        encoding="utf-8",
    )
    width, height = picture.width + 16, picture.height + 16
    # Headless Chromium paints small windows only in part: shoot a large one, then crop.
    size = f"--window-size={max(width, 800)},{max(height, 400)}"
    _chromium(work, f"--screenshot={out}", size, page.as_uri())
    png = _crop(out.read_bytes(), width, height)
    out.write_bytes(png)
    return png


def ink(png: bytes) -> float:
    """The share of pixels of a PNG screenshot that are not white (0.0 = blank)."""
    width, height, rows = _decode(png)
    inked = sum(
        1 for row in rows for px in range(0, len(row), 4) if row[px : px + 3] != b"\xff\xff\xff"
    )
    return inked / (width * height)


def _chromium(work: Path, *args: str) -> str:
    profile = tempfile.mkdtemp(dir=work, prefix="chromium-")
    binary = chromium()
    assert binary, "chromium is not installed"
    done = subprocess.run(
        [binary, *FLAGS, f"--user-data-dir={profile}", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if done.returncode:
        raise RuntimeError(f"chromium {args[0]} failed: {done.stderr[-2000:]}")
    return done.stdout


def _decode(png: bytes) -> tuple[int, int, list[bytes]]:
    """Width, height and RGBA rows of an 8-bit RGB(A) PNG, as Chromium writes them."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, width, height, channels = 8, b"", 0, 0, 4
    while pos < len(png):
        (length,) = struct.unpack(">I", png[pos : pos + 4])
        kind, data = png[pos + 4 : pos + 8], png[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", data[:10])
            assert depth == 8 and colour in (2, 6), f"PNG depth {depth} colour type {colour}"
            channels = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += data
        pos += 12 + length
    raw, stride = zlib.decompress(idat), width * channels
    rows, prev = [], bytearray(stride)
    for y in range(height):
        kind, line = (
            raw[y * (stride + 1)],
            bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)]),
        )
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b, c = prev[i], prev[i - channels] if i >= channels else 0
            line[i] = (line[i] + _predict(kind, a, b, c)) & 0xFF
        prev = line
        rgba = (
            line
            if channels == 4
            else b"".join(bytes(line[i : i + 3]) + b"\xff" for i in range(0, stride, 3))
        )
        rows.append(bytes(rgba))
    return width, height, rows


def _crop(png: bytes, width: int, height: int) -> bytes:
    """The top-left `width` x `height` of a PNG, as an RGBA PNG."""
    _, _, rows = _decode(png)
    raw = b"".join(b"\0" + row[: width * 4] for row in rows[:height])

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw, 9))
        + chunk(b"IEND", b"")
    )


def _predict(kind: int, a: int, b: int, c: int) -> int:
    if kind == 0:
        return 0
    if kind == 1:
        return a
    if kind == 2:
        return b
    if kind == 3:
        return (a + b) // 2
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    return a if pa <= pb and pa <= pc else b if pb <= pc else c


class _Attribute(HTMLParser):
    """The value of one attribute of the first element of a tag in a dumped DOM."""

    def __init__(self, tag: str, attribute: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tag, self.attribute, self.value = tag, attribute, ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == self.tag and not self.value:
            self.value = dict(attrs).get(self.attribute) or ""


class _PictureFinder(HTMLParser):
    """Collects every element with data-picture and its markup from a dumped DOM."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.pictures: list[Picture] = []
        self._open: list[tuple[str, dict[str, str], int]] = []  # tag, attrs, start offset
        self._depth = 0
        self._source = ""

    def feed(self, data: str) -> None:
        self._source = data
        self._lines = [0]
        for line in data.split("\n"):  # HTMLParser counts lines by "\n" alone
            self._lines.append(self._lines[-1] + len(line) + 1)
        super().feed(data)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = {k: v or "" for k, v in attrs}
        line, col = self.getpos()
        if "data-picture" in found and not self._open:
            self._open.append((tag, found, self._lines[line - 1] + col))
            self._depth = 0
        if self._open and tag == self._open[0][0]:
            self._depth += 1

    def handle_endtag(self, tag: str) -> None:
        if not self._open or tag != self._open[0][0]:
            return
        self._depth -= 1
        if self._depth:
            return
        _, found, start = self._open.pop()
        line, col = self.getpos()
        end = self._source.index(">", self._lines[line - 1] + col) + 1
        self.pictures.append(
            Picture(
                kind=found["data-picture"],
                label=found.get("aria-label", ""),
                width=int(found.get("data-width", "0")),
                height=int(found.get("data-height", "0")),
                text=found.get("data-text", ""),
                drawn=int(found.get("data-drawn", "0")),
                markup=self._source[start:end],
            )
        )


def check(html: str, work: Path, shots: Path) -> list[str]:
    """What is wrong with the pictures of notebook page `html` as Chromium shows it (missing,
    without size, without its labels, blank); screenshots of the first of each kind go to
    `shots`."""
    found: list[str] = []
    shown: dict[str, Picture] = {}
    for picture in render(html, work):
        shown.setdefault(picture.kind, picture)
        if picture.width <= 0 or picture.height <= 0:
            found.append(f"{picture.kind} ({picture.label}): {picture.width}x{picture.height}")
    for kind, words in PICTURES.items():
        picture = shown.get(kind)
        if picture is None:
            found.append(f"{kind}: not on the page")
            continue
        missing = [w for w in words if w not in picture.text]
        if missing:
            found.append(f"{kind}: does not show {missing}")
        if picture.drawn == 0:
            found.append(f"{kind}: none of its bars or states has a width")
        if picture.width > 0 and picture.height > 0:
            share = ink(screenshot(picture, shots / f"notebook-{kind}.png", work))
            if share < MIN_INK:
                found.append(f"{kind}: its screenshot is blank ({share:.1%} ink)")
    return found


def main(argv: list[str]) -> int:
    """Write a screenshot of each picture to the folder `argv[0]` (docs/images)."""
    out = Path(argv[0] if argv else ROOT / "docs" / "images")
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        env = {"GKEML_RUN_DIR": str(work / "runs"), "KUBECONFIG": str(work / "no-kubeconfig")}
        found = check(notebook_html(env), work, out)
    for problem in found:
        print(f"problem: {problem}", file=sys.stderr)
    print("\n".join(str(p) for p in sorted(out.glob("notebook-*.png"))))
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
