"""`ir-explorer graph FILE --svg OUT.svg` (issue #33): the whole layout as a vector drawing, checked as markup and
as a picture (headless chromium rasterises it and counts the colours it painted)."""

from __future__ import annotations

import base64
import json
import re
import shutil
import subprocess
import sys

import pytest

from explorer.api import open_document
from explorer.exports.graph_svg import CELL_H, CELL_W, graph_svg
from explorer.graph.colours import item_colours
from explorer.graph.layout import layout_graph
from explorer.graph.visible import expand_all, visible_graph
from tests.conftest import ROOT, SAMPLE_DATA, SAMPLES

ONNX = SAMPLE_DATA / "subgraphs_functions.onnx"
CLEAN = SAMPLE_DATA / "clean_2x2_stschedule.json"
PROFILE = SAMPLE_DATA / "clean_2x2_layer_profile.csv"


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "explorer", *args], capture_output=True, text=True, cwd=ROOT)


def test_the_drawing_holds_every_box_edge_frame_and_the_legend():
    model = open_document(ONNX).view.graph_model()
    drawing = graph_svg(model, "all", "op type", title="subgraphs_functions.onnx")
    layout = layout_graph(model, visible_graph(model, expand_all(model)))
    _, legend = item_colours(model, layout.visible, "op type")
    assert drawing.count("<title>") == layout.visible.n_items
    assert drawing.count("marker-end=") == sum(1 for e in layout.edges if e.kind == "routed" and len(e.points) > 1)
    assert drawing.count('stroke-dasharray="4 3"') == len(layout.frames)  # a frame per open group
    for text, colour in legend:
        assert f">{text}</text>" in drawing and f'fill="{colour}"' in drawing
    assert f'width="{max(layout.width * CELL_W + 32, 480)}"' in drawing
    assert int(re.search(r'height="(\d+)"', drawing).group(1)) >= layout.height * CELL_H  # the aspect is kept
    assert graph_svg(model, "all", "op type", title="subgraphs_functions.onnx") == drawing  # same bytes


def test_graph_svg_command_colours_by_node_data_and_refuses_what_it_cannot_do(tmp_path):
    out = tmp_path / "graph.svg"
    done = run("graph", str(CLEAN), "--svg", str(out), "--node-data", str(PROFILE))
    assert done.returncode == 0, done.stderr
    drawing = out.read_text()
    assert "colour: data: clean_2x2_layer_profile" in drawing and "9.15k–14.2k" in drawing
    # a mode the file does not have: exit 2, naming the ones it has
    bad = run("graph", str(CLEAN), "--svg", str(tmp_path / "x.svg"), "--colour", "dtype")
    assert bad.returncode == 2 and "no colour mode 'dtype'" in bad.stderr and "time" in bad.stderr
    assert not (tmp_path / "x.svg").exists()
    # the input is never the output
    copy = tmp_path / "model.onnx"
    copy.write_bytes(ONNX.read_bytes())
    refused = run("graph", str(copy), "--svg", str(copy))
    assert refused.returncode == 2 and "is the input file" in refused.stderr
    assert copy.read_bytes() == ONNX.read_bytes()


@pytest.mark.skipif(shutil.which("chromium") is None, reason="Debian's chromium is not installed")
@pytest.mark.parametrize("name", ["resnet18_narrow_torchscript_opset17.onnx", "subgraphs_functions.onnx"])
def test_the_svg_opens_in_headless_chromium_as_a_picture(tmp_path, name):
    """Chromium draws the SVG into a canvas; the page reports the picture's size and how many pixels of each
    legend colour it painted: every colour of the legend is on the boxes, the background is white."""
    source = SAMPLES / "onnx" / name if name.startswith("resnet") else SAMPLE_DATA / name
    if not source.exists():
        pytest.skip(f"{source} is absent (a user's clone has no ../shared)")
    out = tmp_path / "graph.svg"
    assert run("graph", str(source), "--svg", str(out), "--expand", "all").returncode == 0
    drawing = out.read_bytes()
    legend = sorted(set(re.findall(r'<rect x="\d+" y="\d+" width="16" height="14" rx="2" fill="(#[0-9a-f]{6})"',
                                   drawing.decode())))  # fmt: skip
    width, height = (int(v) for v in re.search(rb'width="(\d+)" height="(\d+)"', drawing).groups())
    page = tmp_path / "picture.html"
    page.write_text(f"""<!DOCTYPE html><html><body><canvas id="c"></canvas><pre id="out">pending</pre><script>
const img = new Image();
img.onload = () => {{
  const c = document.getElementById('c'); c.width = img.naturalWidth; c.height = img.naturalHeight;
  const g = c.getContext('2d'); g.drawImage(img, 0, 0);
  const d = g.getImageData(0, 0, c.width, c.height).data;
  const wanted = {json.dumps(legend)}; const seen = {{}}; let white = 0;
  for (let i = 0; i < d.length; i += 4) {{
    const hex = '#' + [d[i], d[i + 1], d[i + 2]].map(v => v.toString(16).padStart(2, '0')).join('');
    if (hex === '#ffffff') white++;
    if (wanted.includes(hex)) seen[hex] = (seen[hex] || 0) + 1;
  }}
  document.getElementById('out').textContent = JSON.stringify(
    {{w: img.naturalWidth, h: img.naturalHeight, white: white / (d.length / 4), seen}});
}};
img.src = 'data:image/svg+xml;base64,{base64.b64encode(drawing).decode()}';
</script></body></html>""")
    result = subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                             "--disable-background-networking", "--disable-component-update", "--disable-sync",
                             f"--user-data-dir={tmp_path / 'profile'}", "--virtual-time-budget=10000", "--dump-dom",
                             page.as_uri()], capture_output=True, text=True, timeout=120)  # fmt: skip
    found = json.loads(re.search(r'<pre id="out">(.*?)</pre>', result.stdout, re.S).group(1).replace("&quot;", '"'))
    assert (found["w"], found["h"]) == (width, height)
    assert 0.1 < found["white"] < 0.999  # paper around the frames, and not blank
    assert set(found["seen"]) == set(legend) and all(count >= 100 for count in found["seen"].values())
