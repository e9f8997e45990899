"""The layout view: a strided tensor's planes drawn as cells (stride_map)."""
