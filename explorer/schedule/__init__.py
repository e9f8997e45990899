"""The schedule wing: the neutral lanes-and-snapshots table and the analyses over it.

model (the table, columnar numpy arrays) → dependencies and timeline (when each workload runs) → buffers and
overlap (where each L2/WL0 entry sits, which collide) → incidents (overlaps per misplaced tensor) → memory_map,
buffer_view and timeline_view (cell maps for the views); analysis runs them in order for a document. Never imports
the graph wing.
"""
