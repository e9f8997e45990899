"""`ir-explorer serve`: the same TUI in a browser (textual-serve's page and terminal), guarded.

Works behind an SSH tunnel (`ssh -L 9000:localhost:8000 box`) and a reverse proxy: the page's addresses are
built from the address the browser used (its Host header, and X-Forwarded-Proto / X-Forwarded-Prefix from a
proxy), or from `--public-url`. Every address needs the token, on loopback too (any page in the user's browser
and any user of the box can reach a loopback port): random per start unless `--token` sets one, printed once in
the address to open, as Jupyter does. What is checked lives in serve_guard; the processes in serve_sessions.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import os
import secrets
import shlex
import signal
import socket
import sys
import tempfile
from pathlib import Path
from typing import Any

from explorer.formatting import escape_controls, visible
from explorer.load_turn import LOCK_VARIABLE
from widgets.serve.guard import make_guard, no_leaks, secret_path, token_problem
from widgets.serve.sessions import Session, clamp_size, relay_messages

PAGE_TEMPLATES = Path(__file__).with_name("templates")
MAX_SESSIONS = 8  # each tab is a process holding its own copy of the file (50 tabs of a schedule took 4 GB)


class ServeRefused(ValueError):
    """An option `serve` cannot run with: one line for the user, exit 2."""


def is_loopback(host: str) -> bool:
    """True only when every address `host` names is a loopback one (a name is resolved, not trusted)."""
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, None)
    except (OSError, UnicodeError):
        return False
    return bool(infos) and all(ipaddress.ip_address(str(info[4][0]).split("%")[0]).is_loopback for info in infos)


def check_options(host: str, token: str | None, max_sessions: int, port: int = 8000) -> None:
    if not host.strip():
        raise ServeRefused("--host is empty (an unset variable?): give an address, e.g. 127.0.0.1 or 0.0.0.0")
    if token is not None and (problem := token_problem(token)):
        raise ServeRefused(f"--token: {problem}")
    if max_sessions < 1:
        raise ServeRefused("--max-sessions must be at least 1")
    if not 0 <= port <= 65535:
        raise ServeRefused(f"--port {port} is not a port: give 1-65535 (or 0 for any free one)")


def command_argv(
    path: Path, strict: bool, bookmarks: Path | None, author: str | None, companions: dict[str, Path] | None = None,
    dims: dict[str, int] | None = None,
) -> list[str]:
    command = [sys.executable, "-m", "explorer", str(path)]
    if dims:  # the symbolic dims every tab's counts bind (--dims), as the TUI takes them
        command += ["--dims", ",".join(f"{name}={size}" for name, size in dims.items())]
    for kind, companion in sorted((companions or {}).items()):  # --frontend/--asm/--trace, as the TUI takes them
        command += [f"--{kind}", str(companion)]
    if strict:
        command.append("--strict")
    if bookmarks:
        command += ["--bookmarks", str(bookmarks)]
    if author:  # every tab's bookmarks carry this name (else the login name of the user running serve)
        command += ["--author", author]
    return command


def open_address(host: str, bound: list[Any], public_url: str | None) -> str:
    """The address to print: one a browser can open (a wildcard bind names this machine, not 0.0.0.0)."""
    if public_url:
        return public_url.rstrip("/")
    port = bound[0][1] if bound else 0
    try:
        wildcard = ipaddress.ip_address(host.strip("[]")).is_unspecified
    except ValueError:
        wildcard = False
    name = socket.getfqdn() if wildcard else host
    if ":" in name and not name.startswith("["):
        name = f"[{name}]"
    return f"http://{name}:{port}"


def make_server(argv: list[str], host: str, port: int, title: str, public_url: str | None, token: str,
                max_sessions: int = MAX_SESSIONS) -> Any:  # fmt: skip
    """A textual-serve Server whose page addresses follow the request, every route behind the guard."""
    import aiohttp_jinja2
    from aiohttp import web
    from textual_serve.server import Server

    secret = secret_path()  # the pages live under /<secret>/: the token's cookie is sent there only

    class GuardedServer(Server):
        def __init__(self) -> None:
            super().__init__(shlex.join(argv), host=host, port=port, title=title, public_url=public_url,
                             templates_path=PAGE_TEMPLATES)  # fmt: skip
            self.sessions: set[Session] = set()
            self.bound_port = port

        def base_url(self, request: web.Request) -> str:
            if public_url:
                return f"{public_url.rstrip('/')}/{secret}"
            scheme = request.headers.get("X-Forwarded-Proto", request.scheme)
            prefix = request.headers.get("X-Forwarded-Prefix", "").rstrip("/")
            return f"{scheme}://{request.host}{prefix}/{secret}"

        def initialize_logging(self) -> None:
            """Plain lines on stderr: no tracebacks with their locals (textual-serve's printed the token)."""
            logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)

        async def on_startup(self, app: web.Application) -> None:
            pass  # the address is printed by `serve`, once it is bound

        async def on_shutdown(self, app: web.Application) -> None:
            await self.end_sessions()

        async def end_sessions(self) -> None:
            await asyncio.gather(*(session.end() for session in list(self.sessions)), return_exceptions=True)

        async def _make_app(self) -> web.Application:
            """textual-serve's routes under the secret path, every request (inside or not) through the guard."""
            pages = await super()._make_app()
            root = web.Application(middlewares=[no_leaks, make_guard(token, lambda: self.bound_port, public_url,
                                                                     secret)])  # fmt: skip
            root.add_subapp(f"/{secret}/", pages)
            return root

        @aiohttp_jinja2.template("page.html")
        async def handle_index(self, request: web.Request) -> dict[str, Any]:
            base = self.base_url(request)
            ws_scheme = "wss" if base.startswith("https") else "ws"
            try:
                font_size = min(max(int(request.query.get("fontsize", "16")), 6), 48)
            except ValueError:
                font_size = 16
            return {
                "font_size": font_size,
                "websocket_url": ws_scheme + base[base.index(":") :] + "/ws",
                "static_url": base + "/static/",
                "title": title,
            }

        async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
            if len(self.sessions) >= max_sessions:
                raise web.HTTPServiceUnavailable(
                    text=f"ir-explorer serve: {max_sessions} sessions are open (--max-sessions); close a tab\n"
                )
            websocket = web.WebSocketResponse(heartbeat=15, max_msg_size=1 << 20)
            width, height = clamp_size(request.query.get("width"), request.query.get("height"))
            session = Session(argv, write_bytes=websocket.send_bytes, write_str=websocket.send_str,
                              close=websocket.close, download_manager=self.download_manager)  # fmt: skip
            self.sessions.add(session)
            try:
                await websocket.prepare(request)
                await session.start(width, height)
                await relay_messages(websocket, session)
            except (asyncio.CancelledError, ConnectionError):
                pass
            finally:
                # shielded: a cancelled handler still ends its child
                await asyncio.shield(session.end())
                self.sessions.discard(session)
                with contextlib.suppress(Exception):
                    await websocket.close()
            return websocket

    return GuardedServer()


async def run_server(server: Any, host: str, port: int, announce: Any) -> None:
    """Bind, announce the address actually bound, serve until SIGINT/SIGTERM, then end every child."""
    from aiohttp import web

    from widgets.serve.guard import RedactedAccessLog

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for each in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(each, stop.set)
    runner = web.AppRunner(await server._make_app(), access_log_class=RedactedAccessLog, handle_signals=False)
    await runner.setup()
    try:
        site = web.TCPSite(runner, host.strip("[]"), port)
        await site.start()
        server.bound_port = runner.addresses[0][1]  # --port 0 picks one; the token's cookie is named for it
        announce(runner.addresses)
        await stop.wait()
    finally:
        await server.end_sessions()
        await runner.cleanup()


def serve(
    path: Path,
    host: str,
    port: int,
    strict: bool = False,
    bookmarks: Path | None = None,
    author: str | None = None,
    public_url: str | None = None,
    token: str | None = None,
    max_sessions: int = MAX_SESSIONS,
    companions: dict[str, Path] | None = None,
    dims: dict[str, int] | None = None,
) -> None:
    """Run until Ctrl+C; raises ServeRefused (before binding) for options that would leave a session open."""
    check_options(host, token, max_sessions, port)
    token = token or secrets.token_urlsafe(24)
    argv = command_argv(path, strict, bookmarks, author, companions, dims)
    server = make_server(argv, host, port, f"ir-explorer {visible(path.name)}", public_url, token, max_sessions)
    server.initialize_logging()

    def announce(bound: list[Any]) -> None:
        port = bound[0][1] if bound else 0
        where = "" if is_loopback(host) else f" (listening on {host}: other machines can reach it)"
        if public_url:
            where += f" (listening on {host}:{port})"
        name = escape_controls(path.name)  # a file name's ESC]0; must not retitle the terminal serve runs in
        print(f"serving {name}: open {open_address(host, bound, public_url)}/?token={token}{where}  "
              "(Ctrl+C to stop)", file=sys.stderr, flush=True)  # fmt: skip

    # the tabs' app processes load one at a time (explorer/load_turn.py): a lock file only this user can open
    handle, lock = tempfile.mkstemp(prefix="ir-explorer-serve-", suffix=".lock")
    os.close(handle)
    os.environ[LOCK_VARIABLE] = lock
    try:
        asyncio.run(run_server(server, host, port, announce))
    except OSError as error:
        raise ServeRefused(f"cannot listen on {host}:{port}: {error.strerror or error}") from None
    finally:
        os.environ.pop(LOCK_VARIABLE, None)
        with contextlib.suppress(OSError):
            os.unlink(lock)
