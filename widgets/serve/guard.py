"""Who may talk to `ir-explorer serve`: the token on every address, the page's own origin, nothing leaked.

The browser session drives a process that reads files and writes exports, so any web page the user has open
(and any other user of a shared box) must not reach it: every request needs the token, a request sent by a page
of another origin is refused whatever it carries (browsers send `Origin`; a page cannot forge it), and the token
never reaches a log, a traceback or another site's `Referer`.

The token is given once, in the printed address (`/?token=...`); the answer moves the browser under a secret
path (`/<secret>/`) and keeps the token in a cookie whose `Path` is that secret path. Browsers send a cookie to
every port of a host, so a cookie for `/` reached any other server on the machine (a page served on another
local port received it and could replay it); scoped to a path nobody else knows, it is sent to this server's
pages only. Both the token and the secret path are redacted from every log line.
"""

from __future__ import annotations

import logging
import re
import secrets
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from aiohttp import web
from aiohttp.abc import AbstractAccessLogger

MIN_TOKEN_LENGTH = 16
TOKEN_PATTERN = re.compile(r"(token=)[^&\s\"']*", re.IGNORECASE)

log = logging.getLogger("ir-explorer.serve")


def token_problem(token: str) -> str | None:
    """Why `token` cannot guard a session (None when it can): an empty or short token is guessed in seconds."""
    if len(token) < MIN_TOKEN_LENGTH:
        return f"a token needs at least {MIN_TOKEN_LENGTH} characters (give none for a random one)"
    if not token.isascii() or not token.isprintable() or any(ch in token for ch in "&#?/ "):
        return "a token is printable ASCII without spaces, '&', '#', '?' or '/' (it goes in an address)"
    return None


SECRET_PATHS: set[str] = set()  # the secret path prefixes of the servers this process runs (redacted in logs)


def redact(text: str) -> str:
    """`text` with every `token=...` value and every secret path replaced, for logs."""
    text = TOKEN_PATTERN.sub(r"\1***", text)
    for secret in SECRET_PATHS:
        text = text.replace(secret, "***")
    return text


def secret_path() -> str:
    """A fresh secret path segment for one server (registered for redaction)."""
    secret = secrets.token_urlsafe(18)
    SECRET_PATHS.add(secret)
    return secret


def cookie_name(port: int) -> str:
    return f"ir_explorer_token_{port}"


def token_matches(given: str | None, token: str) -> bool:
    """Constant-time comparison of bytes: any text a client sends (non-ASCII included) is an answer, not a 500."""
    if not given:
        return False
    return secrets.compare_digest(given.encode("utf-8", "surrogateescape"), token.encode("utf-8"))


def origin_allowed(request: web.BaseRequest, public_url: str | None) -> bool:
    """True when the request carries no `Origin` (not sent by a page) or the origin is this server's own.

    The server's own origin is the host the browser used (its `Host` header, or `X-Forwarded-Host` from a proxy)
    or the one `--public-url` names; the scheme is not compared, as a proxy may end TLS in front of us.
    """
    origin = request.headers.get("Origin")
    if origin is None:
        return True
    parts = urlsplit(origin)
    if not parts.netloc:
        return False  # "null" (a sandboxed frame or a file: page) and anything unparsable
    own = {request.host.lower()}
    if forwarded := request.headers.get("X-Forwarded-Host"):
        own.add(forwarded.split(",")[0].strip().lower())
    if public_url:
        own.add(urlsplit(public_url).netloc.lower())
    return parts.netloc.lower() in own


def make_guard(token: str, bound_port: Callable[[], int], public_url: str | None, secret: str) -> Any:
    """The aiohttp middleware every request goes through (pages, static files, the websocket, downloads)."""
    inside = f"/{secret}/"

    @web.middleware
    async def guard(request: web.Request, handler: Any) -> web.StreamResponse:
        name = cookie_name(bound_port())
        if not origin_allowed(request, public_url):
            raise web.HTTPForbidden(text="ir-explorer serve: requests from other sites' pages are refused\n")
        given = request.query.get("token")
        if not (request.path + "/").startswith(inside):
            if given is not None and request.method == "GET" and request.path.rstrip("/") == "" and \
                    token_matches(given, token):  # fmt: skip
                # The token leaves the address bar (and the history) at once: kept in a cookie sent to the secret
                # path of this server only.
                rest = "&".join(f"{key}={value}" for key, value in request.query.items() if key != "token")
                response = web.HTTPFound(f"./{secret}/" + (f"?{rest}" if rest else ""))
                response.set_cookie(name, token, httponly=True, samesite="Strict", path=_mounted(request,
                                    public_url) + inside)  # fmt: skip
                raise response
            raise web.HTTPForbidden(
                text="ir-explorer serve: this address needs its token (open the address serve printed)\n"
            )
        if not token_matches(given if given is not None else request.cookies.get(name), token):
            raise web.HTTPForbidden(
                text="ir-explorer serve: this address needs its token (open the address serve printed)\n"
            )
        return await handler(request)

    return guard


def _mounted(request: web.BaseRequest, public_url: str | None) -> str:
    """The path the browser sees this server under: a proxy's prefix (--public-url's path or
    X-Forwarded-Prefix), else nothing."""
    if public_url:
        return urlsplit(public_url).path.rstrip("/")
    return request.headers.get("X-Forwarded-Prefix", "").rstrip("/")


@web.middleware
async def no_leaks(request: web.Request, handler: Any) -> web.StreamResponse:
    """Headers on every answer, and an error answered with its status only (the log gets one redacted line)."""
    try:
        response = await handler(request)
    except web.HTTPException as answer:
        _harden(answer)
        raise
    except Exception as error:  # never a traceback (with its locals) in a page or a log
        log.error("error answering %s: %s", redact(request.path_qs), redact(f"{type(error).__name__}: {error}"))
        failure = web.HTTPInternalServerError(text="ir-explorer serve: internal error\n")
        _harden(failure)
        raise failure from None
    _harden(response)
    return response


def _harden(response: web.StreamResponse) -> None:
    if response.prepared:  # a websocket or a stream already sent its headers
        return
    response.headers["Referrer-Policy"] = "no-referrer"
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["X-Frame-Options"] = "DENY"
    response.headers["Cache-Control"] = "no-store"


class RedactedAccessLog(AbstractAccessLogger):
    """One line per request with any `token=` value replaced."""

    def log(self, request: web.BaseRequest, response: web.StreamResponse, time: float) -> None:
        self.logger.info("%s %s %s %d", request.remote, request.method, redact(request.path_qs), response.status)
