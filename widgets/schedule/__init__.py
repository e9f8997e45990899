"""The schedule views: the per-core timeline, the L2/WL0 buffer view and the memory map, sharing one time cursor."""
