"""The counts in the TUI (issue #57): `--dims` binds the model's symbolic dims, `c` reaches the MACs colour mode
with its unit in the legend, and the details of the selected box list its counts."""

from __future__ import annotations

from tests.app.helpers import SIZE
from tests.app.test_graph_view import open_graph
from tests.unit.test_onnx_metrics import small_net
from widgets.app import make_app


async def test_dims_bind_the_counts_and_c_colours_by_macs(tmp_path):
    path = tmp_path / "net.onnx"
    path.write_bytes(small_net(tmp_path).SerializeToString())
    app = make_app(path, dims={"batch": 4})
    async with app.run_test(size=SIZE) as pilot:
        graph = await open_graph(pilot)
        assert graph.model.metric_dims == {"batch": 4}
        while graph.modes[graph.mode] != "MACs":
            await pilot.press("c")
        await pilot.pause()
        text = "\n".join(strip.text for strip in graph.render_frame())
        assert "colour: MACs" in text and " MACs" in text.split("legend", 1)[1]
        conv = graph.model.node_label.index("block0/conv")
        assert graph.model.node_values["macs"][conv] == 4 * 221184  # batch 4 × the formula's 221,184
        details = app.document.describe(graph.model.node_ref[conv])
        counts = next(section for section in details if section.title == "Counts")
        assert dict(counts.rows)["multiply-accumulates"].startswith("885 k (884,736)")
