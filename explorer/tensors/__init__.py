"""The tensors wing: strided tensor layouts in buffers (strides), their planes drawn as cells (stride_map), and the
statistics of a constant's values (value_stats)."""
