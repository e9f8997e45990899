"""SVG snapshots at 160×48: the shell, the help and error screens, the scheduler views and the graph view.

Update with `pytest --snapshot-update` after looking at the change (turn the SVG into a PNG and view it).
"""

from __future__ import annotations

import json

import pytest

from tests.app.helpers import SIZE, wait_loaded
from tests.conftest import ROOT
from widgets.app import make_app
from widgets.messages import RevealRef

CLEAN = "sample_data/clean_2x2_stschedule.json"
PLANTED = "sample_data/planted_problems_2x2_stschedule.json"
TRUNCATED = "tests/app/data/truncated_stschedule.json"
VIEWS = "sample_data/views_ark_model.json"
MLF = "sample_data/two_modules_mlf.tar"
ONNX = "sample_data/subgraphs_functions.onnx"
COREML = "../shared/samples/coreml/mil_builder_while_cond_ios16.mlpackage"
RESNET = "../shared/samples/onnx/resnet18_narrow_torchscript_opset17.onnx"
GPT = "../shared/samples/onnx/minigpt6_torchscript_opset17_noconstfold.onnx"

CASES = {
    "shell_on_clean_sample": (CLEAN, ("down", "down", "down", "enter", "down", "down")),
    "shell_jumped_to_an_overlap": (PLANTED, ("n", "1")),
    "help_screen": (CLEAN, ("question_mark",)),
    "load_error": (TRUNCATED, ()),
    "timeline": (CLEAN, ("2", "full_stop", "full_stop", "full_stop", "c")),
    "buffers_clean_frame": (CLEAN, ("3", "right", "right", "right", "right", "right")),
    "buffers_overlap_frame": (PLANTED, ("n",)),
    "buffers_all_cores": (PLANTED, ("3", "right", "right", "right", "G")),
    "ark_op_details": (VIEWS, ("down", "down", "enter", "down", "enter", "down")),
    "ark_layout_overlapping_window": (VIEWS, ("reveal:10", "4", "down", "down", "right")),
    "ark_layout_padding": (VIEWS, ("reveal:5", "4", "down")),
    "ark_layout_4d_outer_dims": (
        VIEWS,
        ("reveal:19", "4", "right_square_bracket", "greater_than_sign", "right_square_bracket"),
    ),
    "ark_layout_large_blocks": (VIEWS, ("reveal:17", "4")),
    "tvm_graph_node": (MLF, ("reveal-ref:workload:1", "enter")),
    "tvm_c_source_at_the_fused_function": (MLF, ("reveal-ref:workload:1", "enter", "down", "enter")),
    "tvm_storage_occupancy": (MLF, ("reveal-ref:workload:0", "3")),
    "tvm_storage_plan_details": (MLF, ("reveal-ref:storage:0",)),
    "onnx_if_node_with_subgraphs": (ONNX, ('reveal-json:["node", "graph", 0]', "enter")),
    "onnx_value_links": (ONNX, ('reveal-json:["value", "graph", "x"]', "enter")),
    "coreml_ops_and_nested_blocks": (
        COREML,
        ('reveal-json:["op", "mlProgram.functions[main].block_specializations[CoreML6].operations[1].blocks[1]", 2]',),
    ),
    "graph_onnx_subgraphs_open": (ONNX, ("6", "wait-graph", "X")),
    "graph_onnx_collapsed_one_opened": (ONNX, ("6", "wait-graph", "x", "down", "enter")),
    "graph_onnx_find": (ONNX, ("6", "wait-graph", "slash", "b", "o", "d", "y", "enter")),
    "graph_schedule_by_time": (CLEAN, ("6", "wait-graph", "c", "down", "down")),
    "graph_coreml_left_to_right_compact": (COREML, ("6", "wait-graph", "r", "minus")),
}


TRACE = "sample_data/demo_pipeline_b1_c1_bw16_sim.txt"
# every view at the smallest and a large terminal: nothing cut that matters, nothing wasted
VIEW_STATES = {
    "tree": (PLANTED, ("n", "1")),
    "timeline": (PLANTED, ("n", "2")),
    "buffers": (PLANTED, ("n",)),
    "layout": (VIEWS, ("reveal:10", "4")),
    "source": (MLF, ("reveal-ref:workload:1", "enter", "down", "enter")),
    "graph": (ONNX, ("6", "wait-graph")),
    "memory": (PLANTED, ("n", "7")),
    "trace_timeline": (TRACE, ("2",)),
}
SIZES = {"80x24": (80, 24), "220x60": (220, 60)}
SIZE_CASES = {f"{view}_{size}": (*VIEW_STATES[view], SIZES[size]) for view in VIEW_STATES for size in SIZES}
# a real export's first graph screen (graph layout v2): the input and the first ops, at the smallest size and 160×48
SIZE_CASES.update({f"graph_first_screen_{name}_{w}x{h}": (path, ("6", "wait-graph"), (w, h))
                   for name, path in (("resnet", RESNET), ("gpt", GPT)) for w, h in ((80, 24), (160, 48))})  # fmt: skip
# per-node data (--node-data): the bundled schedule coloured by its made-up layer profile
PROFILE = "sample_data/clean_2x2_layer_profile.csv"
SIZE_CASES.update({f"graph_node_data_{w}x{h}": (f"{CLEAN}#node-data={PROFILE}", ("6", "wait-graph", "no-toasts"),
                                                 (w, h)) for w, h in ((80, 24), (160, 48))})  # fmt: skip
# memory explained (issue #42): an incident's fix previewed in the buffers and the memory map; the peak's list
SIZE_CASES.update({f"{name}_{w}x{h}": (PLANTED, keys, (w, h)) for name, keys in (
    ("buffers_move_preview", ("n", "3", "v")), ("memory_move_preview", ("n", "7", "v")),
    ("memory_peak_list", ("n", "7", "P"))) for w, h in ((80, 24), (160, 48))})  # fmt: skip
# the core mesh (issue #43) on a generated 16-core schedule a few steps in, its cell (1, 1) selected
MESH16 = "tests/app/data/mesh16_stschedule.json"
SIZE_CASES.update({f"mesh_{w}x{h}": (MESH16, ("8", "full_stop", "full_stop", "full_stop", "right", "down"), (w, h))
                   for w, h in ((80, 24), (160, 48))})  # fmt: skip
# two graphs side by side (--compare), on the one change
COMPARE = "sample_data/residual_blocks.onnx#compare=sample_data/residual_blocks_renamed.onnx"
SIZE_CASES.update({f"graph_compare_{w}x{h}": (COMPARE, ("wait-compare", "n"), (w, h))
                   for w, h in ((80, 24), (160, 48))})  # fmt: skip


@pytest.mark.parametrize("case", list(SIZE_CASES))
def test_every_view_at_small_and_large_sizes(snap_compare, monkeypatch, case):
    path, keys, size = SIZE_CASES[case]
    test_snapshot(snap_compare, monkeypatch, case, (path, keys), size)


@pytest.mark.parametrize("case", list(CASES))
def test_snapshot(snap_compare, monkeypatch, case, state=None, size=SIZE):
    monkeypatch.chdir(ROOT)  # relative paths: the SVGs must not depend on where the checkout lives
    path, keys = state or CASES[case]
    if path.startswith("../shared") and not (ROOT / path).exists():
        pytest.skip(f"{path} is absent (a user's clone has no ../shared)")

    async def run_before(pilot):
        await wait_loaded(pilot)
        for key in keys:
            if key.startswith("reveal:"):  # open the tree at a tensor, as a search hit would
                pilot.app.post_message(RevealRef(("tensor-id", int(key.split(":")[1]))))
                await pilot.pause()
            elif key.startswith("reveal-json:"):
                pilot.app.post_message(RevealRef(tuple(json.loads(key.split(":", 1)[1]))))
                await pilot.pause()
            elif key.startswith("reveal-ref:"):
                _, kind, value = key.split(":")
                pilot.app.post_message(RevealRef((kind, int(value))))
                await pilot.pause()
            elif key == "no-toasts":  # a notification's arrival depends on the machine's load: not pictured
                await pilot.app.workers.wait_for_complete()  # a worker's late notice (seen under load) first
                await pilot.pause()
                pilot.app.clear_notifications()
                await pilot.pause()
            elif key == "wait-compare":  # both panes of a comparison laid out
                from widgets.graph.compare_screen import CompareScreen

                while not (isinstance(pilot.app.screen, CompareScreen) and pilot.app.screen.ready):
                    await pilot.pause(0.02)
                await pilot.pause()
            elif key == "wait-graph":  # the graph is laid out in a worker
                graph = pilot.app.query_one("#graph")
                while not graph.ready:
                    await pilot.pause(0.02)
                await pilot.pause()
            else:
                await pilot.press(key)
        await pilot.pause()

    path, _, node_data = path.partition("#node-data=")
    path, _, compare = path.partition("#compare=")
    app = make_app(path, node_data=[node_data] if node_data else None, compare=compare or None)
    assert snap_compare(app, terminal_size=size, run_before=run_before)
