"""A schedule assembled from the parts a format has, and the views a document offers following from its parts
(issue #55), with exact answers."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from explorer.document import Capability, Document, DocumentView, Item, Meta
from explorer.models.schedule import SchedulePart
from explorer.models.schedule_parts import AddressSpace, Lanes, Mesh, assemble

BASE = {Capability.TREE, Capability.DETAILS}


def two_lanes(core_ids: np.ndarray | None = None) -> Lanes:
    """Lanes 0 and 2, two blocks and one block."""
    return Lanes(["conv", "relu"], wl_core=np.array([0, 0, 2]), wl_id=np.array([5, 6, 1]),
                 wl_layer=np.array([0, 1, 0]), wl_type=np.zeros(3, dtype=np.int64),
                 wl_time=np.array([3, 4, 5]), core_ids=core_ids)  # fmt: skip


def test_lanes_alone_give_an_empty_table_for_every_other_part():
    s = assemble(two_lanes())
    assert s.parts == frozenset({SchedulePart.LANES})
    assert s.core_ids.tolist() == [0, 2] and s.core_ptr.tolist() == [0, 2, 3]
    assert (s.xlen, s.ylen) == (2, 1)  # no mesh: the lanes side by side
    assert s.wl_pos.tolist() == [0, 1, 2] and s.wl_time.dtype == np.float64
    assert s.in_ptr.tolist() == [0, 0, 0, 0] and s.buf_ptr.tolist() == [0, 0, 0, 0] and s.w0_ptr.tolist() == [0] * 4
    assert s.of_dst_ptr.tolist() == [0] and s.din_rel_ptr.tolist() == [0] and s.dout_dst_ptr.tolist() == [0]
    assert s.buffersize == 0 and s.wl0_key == "wl0_buffer"
    assert list(s.core_rows(2)) == [2] and s.row_of(0, 6) == 1


def test_an_empty_lane_the_format_names_keeps_its_place():
    s = assemble(two_lanes(core_ids=np.array([0, 1, 2])))
    assert s.core_ids.tolist() == [0, 1, 2] and s.core_ptr.tolist() == [0, 2, 2, 3]
    assert list(s.core_rows(1)) == [] and list(s.core_rows(2)) == [2]


def test_the_parts_given_are_recorded_with_their_columns():
    ptr = np.array([0, 1, 1, 3])
    space = AddressSpace(buffersize=64, buf_ptr=ptr, buf_tensor=np.array([7, 7, 8]), buf_addr=np.array([0, 0, 16]),
                         buf_size=np.array([16, 16, 8]), buf_type=np.zeros(3, np.int64), buf_new=np.ones(3, np.int64),
                         buf_cur=np.zeros(3, bool), buf_pos=np.array([0, 0, 1]))  # fmt: skip
    s = assemble(two_lanes(), mesh=Mesh(xlen=3, ylen=1), address_space=space)
    assert s.parts == frozenset({SchedulePart.LANES, SchedulePart.MESH, SchedulePart.ADDRESS_SPACE})
    assert s.has(SchedulePart.ADDRESS_SPACE) and not s.has(SchedulePart.TRANSFERS)
    assert s.buffersize == 64 and s.buf_ptr is ptr and s.xlen == 3
    assert s.mesh_position(2) == (2, 0)


class _Drawing(DocumentView):
    def draws_graph(self) -> bool:
        return True


def _document(schedule=None, view: DocumentView | None = None, partial: str = "") -> Document:
    return Document(meta=Meta(format="t", source=Path("t")), tree=Item("t", "t"), view=view or DocumentView(),
                    schedule=schedule, partial=partial)  # fmt: skip


def test_the_views_follow_from_the_parts():
    assert _document().capabilities == BASE
    assert _document(assemble(two_lanes())).capabilities == BASE | {Capability.TIMELINE}
    space = AddressSpace.none(3)
    with_space = assemble(two_lanes(), address_space=space)
    assert _document(with_space).capabilities == BASE | {Capability.TIMELINE, Capability.BUFFERS}
    on_mesh = assemble(two_lanes(), mesh=Mesh(2, 1))
    assert _document(on_mesh).capabilities == BASE | {Capability.TIMELINE, Capability.MESH}
    one_lane = Lanes(["a"], np.array([0]), np.array([1]), np.array([0]), np.array([0]), np.array([1.0]))
    assert Capability.MESH not in _document(assemble(one_lane, mesh=Mesh(1, 1))).capabilities  # one core
    assert _document(view=_Drawing()).capabilities == BASE | {Capability.GRAPH}
    assert _document(view=_Drawing(), partial="the first core only").capabilities == BASE  # its graph waits
