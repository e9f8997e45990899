"""coremltools' generated protobuf modules, without importing coremltools itself.

`import coremltools.proto` runs coremltools/__init__, which imports every converter (0.8 s here) and prints
"Failed to load _MLModelProxy" lines on Linux. The `_pb2` modules only need each other (relative imports), so
they are loaded as a private package pointing at the same folder: 0.05 s and no noise. If coremltools is
already imported in this process, its modules are used instead (loading both would register the same
.proto files twice).
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types
from pathlib import Path
from typing import Any

_PACKAGE = "_ir_explorer_coreml_proto"


class CoreMLUnavailable(Exception):
    """coremltools is not installed."""


def proto_module(name: str) -> Any:
    """`Model_pb2`, `MIL_pb2`, ... by name."""
    if "coremltools.proto" in sys.modules or "coremltools" in sys.modules:
        return importlib.import_module(f"coremltools.proto.{name}")
    if _PACKAGE not in sys.modules:
        spec = importlib.util.find_spec("coremltools")  # finds the folder without running its __init__
        if spec is None or not spec.submodule_search_locations:
            raise CoreMLUnavailable("coremltools is not installed (pip install coremltools)")
        package = types.ModuleType(_PACKAGE)
        package.__path__ = [str(Path(next(iter(spec.submodule_search_locations))) / "proto")]
        sys.modules[_PACKAGE] = package
    return importlib.import_module(f"{_PACKAGE}.{name}")
