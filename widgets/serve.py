"""`ir-explorer serve`: the same TUI in a browser, through textual-serve (bound to localhost unless told)."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path


def serve(
    path: Path, host: str, port: int, strict: bool = False, bookmarks: Path | None = None, author: str | None = None
) -> None:
    from textual_serve.server import Server

    command = [sys.executable, "-m", "explorer", str(path)]
    if strict:
        command.append("--strict")
    if bookmarks:
        command += ["--bookmarks", str(bookmarks)]
    if author:  # every tab's bookmarks carry this name (else the login name of the user running serve)
        command += ["--author", author]
    # textual-serve starts this command for every browser tab that connects
    Server(
        " ".join(shlex.quote(part) for part in command), host=host, port=port, title=f"ir-explorer {path.name}"
    ).serve()
