"""The app processes `serve` starts, one per browser tab, and the guarantee that each one ends with its tab.

textual-serve's own service asks its child to quit and waits for ever: a child still loading a big file (not
reading its stdin) or blocked writing a frame nobody reads never hears it, and lived on after `serve` was gone.
Here a child runs in its own process group, dies with `serve` (Linux's parent-death signal, so even a killed
`serve` leaves none), and is asked to quit, then terminated, then killed, within a few seconds of its tab going
away at any moment of its start-up. What a tab may ask is bounded too: the terminal size, the size of a message,
the number of tabs at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
from typing import Any

from textual_serve.app_service import AppService

from explorer.cache.folder import DETACH_VARIABLE
from explorer.isolated import die_with_parent, signal_name

MAX_WIDTH, MAX_HEIGHT = 400, 200  # cells: a 4K screen at a small font; a 2000x2000 frame is 4M cells a refresh
MIN_WIDTH, MIN_HEIGHT = 10, 4
MAX_INPUT_CHARS = 65_536  # one websocket message of keys or paste
QUIT_GRACE_SECONDS = 2.0  # asked to quit, then SIGTERM; as long again, then SIGKILL
log = logging.getLogger("ir-explorer.serve")


def clamp_size(width: Any, height: Any) -> tuple[int, int]:
    """A terminal size a client may have: numbers within [MIN, MAX], else the classic 80x24."""

    def number(value: Any, default: int) -> int:
        try:
            return int(value)
        except (TypeError, ValueError, OverflowError):
            return default

    return (
        min(max(number(width, 80), MIN_WIDTH), MAX_WIDTH),
        min(max(number(height, 24), MIN_HEIGHT), MAX_HEIGHT),
    )


def ended_by_signal(returncode: int | None) -> str:
    """What a child's negative exit status says, in words ("" for a normal end)."""
    if returncode is None or returncode >= 0:
        return ""
    name = signal_name(returncode)
    if -returncode == signal.SIGKILL:
        return (f"was killed ({name}): most likely the machine or its container ran out of memory; close other "
                "tabs, or open a smaller file")  # fmt: skip
    return f"ended by {name}"


class Session(AppService):
    """One tab's app process: started from an argument list (no shell), ended for sure."""

    def __init__(self, argv: list[str], **options: Any) -> None:
        super().__init__(" ".join(argv), **options)
        self.argv = argv
        self.client_gone = False

    async def _open_app_process(self, width: int = 80, height: int = 24) -> Any:
        self._process = process = await asyncio.create_subprocess_exec(
            *self.argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            # a cache entry written by the session itself: a detached writer would outlive the session's end
            env={**self._build_environment(width=width, height=height), DETACH_VARIABLE: "off"},
            start_new_session=True,  # its own process group: its helpers (worker pools) end with it
            preexec_fn=die_with_parent,  # even a killed `serve` leaves no child
        )
        self._stdin = process.stdin
        return process

    async def on_data(self, payload: bytes) -> None:
        if self.client_gone:
            return  # keep draining the child's frames so it never blocks writing one
        try:
            await self.remote_write_bytes(payload)
        except Exception:  # the tab closed mid-frame
            self.client_gone = True

    async def run(self) -> None:
        """The child's frames relayed until it ends; an end by a signal nobody here sent (the kernel's OOM killer,
        another user's kill) is said on the tab's terminal and in the log, where it was a silent "Session ended"."""
        await super().run()
        process = self._process
        if process is None:
            return
        with contextlib.suppress(Exception):
            await asyncio.wait_for(process.wait(), QUIT_GRACE_SECONDS)
        said = ended_by_signal(process.returncode)
        if said and not self.client_gone:
            log.warning("a tab's app %s", said)
            with contextlib.suppress(Exception):
                await self.remote_write_bytes(f"\r\n\x1b[0m\x1b[1;31m ir-explorer: the app {said}\x1b[0m\r\n".encode())

    async def set_terminal_size(self, width: int, height: int) -> None:
        await super().set_terminal_size(*clamp_size(width, height))

    async def end(self) -> None:
        """Quit, then SIGTERM, then SIGKILL the process group; returns when the child is gone."""
        self.client_gone = True
        process = self._process
        with contextlib.suppress(Exception):
            await self._download_manager.cancel_app_downloads(app_service_id=self.app_service_id)
        if process is not None and process.returncode is None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.send_meta({"type": "quit"}), QUIT_GRACE_SECONDS)
            for next_signal in (signal.SIGTERM, signal.SIGKILL):
                try:
                    await asyncio.wait_for(process.wait(), QUIT_GRACE_SECONDS)
                    break
                except TimeoutError:
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.killpg(process.pid, next_signal)
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(process.wait(), QUIT_GRACE_SECONDS)
        if self._task is not None:
            task, self._task = self._task, None
            task.cancel()
            with contextlib.suppress(BaseException):
                await task

    async def stop(self) -> None:
        await self.end()


async def relay_messages(websocket: Any, session: Session) -> None:
    """Pass the tab's keys, sizes and focus to its process; anything malformed is dropped, never raised."""
    from aiohttp import WSMsgType

    async for message in websocket:
        if message.type != WSMsgType.TEXT or len(message.data) > MAX_INPUT_CHARS + 64:
            continue
        try:
            envelope = json.loads(message.data)
        except ValueError:
            continue
        if not isinstance(envelope, list) or not envelope or not isinstance(envelope[0], str):
            continue
        kind, data = envelope[0], envelope[1] if len(envelope) > 1 else None
        if kind == "stdin" and isinstance(data, str):
            await session.send_bytes(data.encode("utf-8", "replace"))
        elif kind == "resize" and isinstance(data, dict):
            width, height = data.get("width"), data.get("height")
            if isinstance(width, int) and isinstance(height, int):
                await session.set_terminal_size(width, height)
        elif kind == "ping":
            await websocket.send_json(["pong", data])
        elif kind == "blur":
            await session.blur()
        elif kind == "focus":
            await session.focus()
