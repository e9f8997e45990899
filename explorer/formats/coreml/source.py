"""What a Core ML model's graph and counts are built from (the CoreMLView, which imports neither module until its
graph is first asked for)."""

from __future__ import annotations

from typing import Any, Protocol

from explorer.formats.coreml.mil_text import MilProgram
from explorer.formats.coreml.model import CoreMLModel


class ProgramSource(Protocol):
    """What the graph is built from: the model read, its spec and MIL protobuf messages (coremltools' generated
    classes, untyped), the compiled text's program and the op that makes a name (the CoreMLView, which imports
    this module when its graph is first asked for)."""

    model: CoreMLModel

    @property
    def mil(self) -> Any: ...

    @property
    def spec(self) -> Any: ...

    def mil_program(self) -> MilProgram: ...

    def layers(self) -> Any: ...

    def resolve(self, key: str, name: str) -> tuple[str, int] | None: ...
