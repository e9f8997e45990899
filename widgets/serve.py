"""`ir-explorer serve`: the same TUI in a browser, through textual-serve (bound to localhost unless told).

Works behind an SSH tunnel (`ssh -L 9000:localhost:8124 box`) and a reverse proxy: the page's addresses are
built from the address the browser used (its Host header, and X-Forwarded-Proto / X-Forwarded-Prefix from a
proxy), or from `--public-url`. Off loopback a token is required (random per start unless `--token` sets one,
printed in the URL to open, as Jupyter does); a request without it is answered 403.
"""

from __future__ import annotations

import ipaddress
import secrets
import shlex
import sys
from pathlib import Path
from typing import Any

TOKEN_COOKIE = "ir_explorer_token"


def is_loopback(host: str) -> bool:
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def command_line(path: Path, strict: bool, bookmarks: Path | None, author: str | None) -> str:
    command = [sys.executable, "-m", "explorer", str(path)]
    if strict:
        command.append("--strict")
    if bookmarks:
        command += ["--bookmarks", str(bookmarks)]
    if author:  # every tab's bookmarks carry this name (else the login name of the user running serve)
        command += ["--author", author]
    return " ".join(shlex.quote(part) for part in command)


def make_server(command: str, host: str, port: int, title: str, public_url: str | None, token: str | None) -> Any:
    """A textual-serve Server whose page addresses follow the request, guarded by `token` when given."""
    import aiohttp_jinja2
    from aiohttp import web
    from textual_serve.server import Server

    class TunnelFriendlyServer(Server):
        def base_url(self, request: web.Request) -> str:
            if public_url:
                return public_url.rstrip("/")
            scheme = request.headers.get("X-Forwarded-Proto", request.scheme)
            prefix = request.headers.get("X-Forwarded-Prefix", "").rstrip("/")
            return f"{scheme}://{request.host}{prefix}"

        @aiohttp_jinja2.template("app_index.html")
        async def handle_index(self, request: web.Request) -> dict[str, Any]:
            context = await Server.handle_index.__wrapped__(self, request)  # the context, before rendering
            base = self.base_url(request)
            ws_scheme = "wss" if base.startswith("https") else "ws"
            context["app_websocket_url"] = ws_scheme + base[base.index(":") :] + "/ws"
            context["config"]["static"]["url"] = base + "/static/"
            return context

        async def _make_app(self) -> web.Application:
            app = await super()._make_app()
            if token:
                app.middlewares.append(require_token)
            return app

    @web.middleware
    async def require_token(request: Any, handler: Any) -> Any:
        given = request.query.get("token") or request.cookies.get(TOKEN_COOKIE)
        if not given or not secrets.compare_digest(given, token):
            raise web.HTTPForbidden(text="ir-explorer serve: this address needs its token (?token=..., printed "
                                    "when serve started)")  # fmt: skip
        response = await handler(request)
        if request.query.get("token") and hasattr(response, "set_cookie"):
            response.set_cookie(TOKEN_COOKIE, token, httponly=True, samesite="Strict")
        return response

    return TunnelFriendlyServer(command, host=host, port=port, title=title, public_url=public_url)


def serve(
    path: Path,
    host: str,
    port: int,
    strict: bool = False,
    bookmarks: Path | None = None,
    author: str | None = None,
    public_url: str | None = None,
    token: str | None = None,
) -> None:
    if token is None and not is_loopback(host):
        token = secrets.token_urlsafe(18)
    shown = public_url.rstrip("/") if public_url else f"http://{'localhost' if is_loopback(host) else host}:{port}"
    address = f"{shown}/" + (f"?token={token}" if token else "")
    print(f"serving {path.name}: open {address}  (Ctrl+C to stop)", file=sys.stderr, flush=True)
    # textual-serve starts the command for every browser tab that connects
    make_server(command_line(path, strict, bookmarks, author), host, port, f"ir-explorer {path.name}", public_url,
                token).serve()  # fmt: skip
