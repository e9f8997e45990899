"""A schedule's graph edges (one per producer → consumer workload pair, named by its first transfer and how many
more) grouped by numpy: exactly the pairs, order and labels of the dependency list read one by one."""

from __future__ import annotations

import json

from explorer.api import analyze_document, open_document
from tests.conftest import SAMPLE_DATA


def _expected(document) -> list[tuple[str, str, str]]:
    """The edges as the dependency list gives them, pair by pair in the file's order (the definition)."""
    deps = document.analysed().deps
    flows: dict[tuple[int, int], list[str]] = {}
    for producer, consumer, tid, dram in zip(deps.producer.tolist(), deps.consumer.tolist(), deps.tid.tolist(),
                                             deps.via_dram.tolist(), strict=True):  # fmt: skip
        flows.setdefault((producer, consumer), []).append(f"tensor {tid}" + (" via DRAM" if dram else ""))
    model = document.view.graph_model()
    node_of = {ref: n for n, ref in enumerate(model.node_ref)}
    found = []
    for (producer, consumer), what in sorted(flows.items()):
        if producer != consumer:
            label = what[0] if len(what) == 1 else f"{what[0]} +{len(what) - 1}"
            a, b = node_of[("workload", producer)], node_of[("workload", consumer)]
            found.append((model.node_label[a], model.node_label[b], label))
    return found


def _edges(document) -> list[tuple[str, str, str]]:
    model = document.view.graph_model()
    return [(model.node_label[int(a)], model.node_label[int(b)], model.edge_label[e])
            for e, (a, b) in enumerate(zip(model.edge_src, model.edge_dst, strict=True))]  # fmt: skip


def test_the_planted_schedule_s_edges_are_its_dependencies_pair_by_pair():
    document = open_document(SAMPLE_DATA / "planted_problems_2x2_stschedule.json")
    analyze_document(document)
    edges = _edges(document)
    assert edges == _expected(document) and len(edges) > 10
    assert any(label.endswith(" via DRAM") for _, _, label in edges)


def test_pairs_with_several_transfers_say_how_many_more(tmp_path):
    """A second output from one workload to the same consumer: one edge, `tensor 40 +1`."""
    schedule = json.loads((SAMPLE_DATA / "clean_2x2_stschedule.json").read_text())
    producer = next(w for w in schedule["0"] if w["ofmap"] and w["ofmap"][0]["destination"])
    sent = producer["ofmap"][0]
    consumer = next(w for w in schedule[str(sent["destination"][0]["core_id"])]
                    if w["workload_id"] == sent["destination"][0]["workload_id"])  # fmt: skip
    producer["ofmap"].append({**sent, "transfer_id": 999001})
    consumer["ifmap"][0]["transfer_id"].append(999001)
    path = tmp_path / "two_transfers_stschedule.json"
    path.write_text(json.dumps(schedule))
    document = open_document(path)
    analyze_document(document)
    edges = _edges(document)
    assert edges == _expected(document)
    assert [label for _, _, label in edges if "+" in label] == [f"tensor {sent['transfer_id']} +1"]
