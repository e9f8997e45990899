"""What the details panel says about a weight tensor's values, the same way for every format."""

from __future__ import annotations

import numpy as np


def value_stats(values: np.ndarray, sample: int = 8) -> dict[str, str]:
    """min / max / mean / std of the finite values, the share of zeros and the first values, as text."""
    flat = values.reshape(-1)
    if flat.size == 0:
        return {"values": "empty"}
    if flat.dtype.kind in "OSU":  # strings: there is nothing to average
        return {"values": ", ".join(map(str, flat[:sample].tolist()))}
    with np.errstate(all="ignore"):  # NaN/inf bytes are data too: they are left out of the figures, not warned about
        numbers = flat.astype(np.float64)
    finite = numbers[np.isfinite(numbers)]

    def figure(value: float) -> str:
        return f"{value:.6g}" if finite.size else "nan"

    return {
        "min": figure(finite.min() if finite.size else 0.0),
        "max": figure(finite.max() if finite.size else 0.0),
        "mean": figure(finite.mean() if finite.size else 0.0),
        "std": figure(finite.std() if finite.size else 0.0),
        "sparsity": f"{np.count_nonzero(flat == 0) / flat.size:.1%} zeros",
        "first values": ", ".join(f"{v:.6g}" for v in numbers[:sample].tolist()),
    }
