"""What an item is to its document, shared by the Document, the formats and the wings."""

from __future__ import annotations

from typing import Any

# A tuple whose first member names the kind of item ("workload", "node", "group"...); the rest is read only by
# the format's view (and by the shared conventions: explorer.schedule.refs, explorer.document.GROUP_REF).
Ref = tuple[Any, ...]
