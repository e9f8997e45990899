"""The shared data models: what formats fill and the wings, views and exports read — the schedule's lanes and
snapshots table (schedule.py) and the graph of nodes, edges and nested groups (graph.py). In the core, so a
format, the Document and every wing import them without importing one another."""
