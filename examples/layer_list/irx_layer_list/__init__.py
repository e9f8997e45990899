"""An example format plug-in for ir-explorer: a plain-text list of layers, one per line.

    # ir-explorer layer list v1
    conv1 = Conv(input) -> [1, 16, 32, 32]
    relu1 = Relu(conv1) -> [1, 16, 32, 32]

What a format declares (explorer.format.Format) lives here and stays cheap to import; the reader is imported
only when a file is opened. See README.md beside this file ("Adding a format").
"""

from __future__ import annotations

from pathlib import Path

from explorer.format import Format, lazy

HEADER = b"# ir-explorer layer list v1"


def match(path: Path, head: bytes) -> bool:
    return head.lstrip().startswith(HEADER)


# `lazy` imports the reader on the first file opened, so recognising files stays cheap
FORMATS = (
    Format("layer-list", "Layer list (plug-in)", (".layers.txt",), match, lazy("irx_layer_list.reader", "load")),
)
