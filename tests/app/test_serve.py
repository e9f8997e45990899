"""`ir-explorer serve` as an attacker and a shared box would try it: the token on every address (loopback too),
other sites' pages refused, nothing secret logged, and no process left behind whenever its tab or serve goes."""

from __future__ import annotations

import asyncio
import http.client
import http.cookiejar
import os
import re
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import aiohttp
import pytest

from explorer import cli
from tests.conftest import ROOT, SAMPLE_DATA

SCHEDULE = SAMPLE_DATA / "clean_2x2_stschedule.json"


class Served:
    """A running `serve` on a port of its own choosing, its log in a file, its input a copy only it uses."""

    def __init__(self, tmp_path: Path, *extra: str, name: str = "served_stschedule.json") -> None:
        self.input = tmp_path / name
        shutil.copyfile(SCHEDULE, self.input)
        self.log_path = tmp_path / "serve.log"
        self.process = subprocess.Popen(
            [sys.executable, "-m", "explorer", "serve", str(self.input), "--port", "0", *extra],
            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=self.log_path.open("w"),
            env={**os.environ, "TMPDIR": str(tmp_path)},  # its load lock too: a killed serve leaves it there
        )  # fmt: skip
        deadline = time.monotonic() + 30
        while not (found := re.search(r"open (https?://\S+)/\?token=(\S+)", self.log())):
            assert self.process.poll() is None, self.log()
            assert time.monotonic() < deadline, "serve printed no address"
            time.sleep(0.05)
        self.printed, self.token = found.group(1), found.group(2)
        listening = re.search(r"listening on \S+:(\d+)\)", self.log())
        self.port = int(listening.group(1) if listening else self.printed.rsplit(":", 1)[1])
        self.base = f"http://127.0.0.1:{self.port}"
        self.secret = self._secret()
        self.pages = f"{self.base}/{self.secret}"  # where the token's redirect leads: the app's own pages

    def _secret(self) -> str:
        """The secret path the token's answer redirects to (not followed: the Location says it)."""
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            connection.request("GET", f"/?token={self.token}")
            answer = connection.getresponse()
            assert answer.status == 302, answer.status
            location = answer.getheader("Location")
        finally:
            connection.close()
        assert location.startswith("./") and location.endswith("/"), location
        return location[2:-1]

    def log(self) -> str:
        return self.log_path.read_text()

    def children(self) -> list[int]:
        """Processes running the app on our input (not serve itself)."""
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit() or int(entry.name) == self.process.pid:
                continue
            try:
                argv = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if str(self.input).encode() in argv and b"serve" not in argv:
                found.append(int(entry.name))
        return found

    def wait_no_children(self, seconds: float = 15) -> list[int]:
        deadline = time.monotonic() + seconds
        while (left := self.children()) and time.monotonic() < deadline:
            time.sleep(0.1)
        return left

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=20)
        for pid in self.children():  # never leave one behind for the next test, even when this one failed
            os.kill(pid, signal.SIGKILL)


@pytest.fixture
def served(tmp_path):
    started: list[Served] = []

    def start(*extra: str, name: str = "served_stschedule.json") -> Served:
        started.append(Served(tmp_path, *extra, name=name))
        return started[-1]

    yield start
    for each in started:
        each.stop()


def fetch(url: str, opener: urllib.request.OpenerDirector | None = None, **headers: str) -> tuple[int, str]:
    request = urllib.request.Request(url, headers=headers)
    try:
        with (opener or urllib.request.build_opener()).open(request, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def browser() -> urllib.request.OpenerDirector:
    """urllib with a cookie jar, as a browser keeps the token's cookie."""
    return urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))


async def first_frame(server: Served, origin: str | None = None, cookie: bool = True, **query: int) -> bytes:
    """Open the websocket as the page does and return the first bytes the app sends (b"" when refused)."""
    headers = {"Origin": origin or server.base}
    if cookie:
        headers["Cookie"] = f"ir_explorer_token_{server.port}={server.token}"
    params = "&".join(f"{key}={value}" for key, value in query.items())
    async with aiohttp.ClientSession() as session:
        try:
            socket_ = await session.ws_connect(f"{server.pages}/ws?{params}", headers=headers)
        except aiohttp.WSServerHandshakeError as refused:
            return f"refused {refused.status}".encode()
        async with socket_:
            await socket_.send_json(["resize", {"width": 100, "height": 30}])
            async for message in socket_:
                if message.type == aiohttp.WSMsgType.BINARY:
                    return message.data
    return b""


def test_every_address_needs_the_token_on_loopback_too(served):
    server = served()
    assert server.printed.startswith("http://127.0.0.1:")  # the address actually bound
    for path in ("/", "/static/js/textual.js", "/ws", "/download/x"):
        status, text = fetch(server.base + path)
        assert status == 403 and "token" in text, path
    assert fetch(f"{server.base}/?token=wrong-token-wrong-token")[0] == 403
    assert fetch(f"{server.base}/?token=%C3%A9")[0] == 403  # non-ASCII: an answer, not a 500 with a traceback
    for path in ("/", "/static/js/textual.js", "/ws", "/download/x"):  # under the secret path too
        assert fetch(server.pages + path)[0] == 403, path
    opener = browser()
    status, page = fetch(f"{server.base}/?token={server.token}", opener)  # redirected, with the cookie
    assert status == 200 and f"/{server.secret}/ws" in page and server.token not in page
    assert "fonts.googleapis" not in page and "https://" not in page  # nothing asked of another host
    assert fetch(f"{server.pages}/static/js/textual.js", opener)[0] == 200
    assert fetch(f"{server.base}/static/js/textual.js", opener)[0] == 403  # the cookie is not sent outside it
    log = server.log()
    assert server.token not in log.split("\n", 1)[1]  # printed once, in the address; never in the access log
    assert server.secret not in log  # nor the secret path
    assert "token=***" in log and "Traceback" not in log


async def test_a_page_of_another_site_cannot_drive_the_session(served):
    server = served()
    assert await first_frame(server, origin="http://evil.example") == b"refused 403"  # even with the cookie
    assert await first_frame(server, cookie=False) == b"refused 403"
    assert await first_frame(server, origin="null") == b"refused 403"
    frame = await first_frame(server)  # the page's own origin and the cookie: the app answers
    assert frame and not frame.startswith(b"refused")
    status, _ = fetch(f"{server.base}/?token={server.token}", Origin="http://evil.example")
    assert status == 403


def test_the_start_line_writes_no_control_character_of_the_file_name(served):
    """A file name holding ESC]0;...BEL (a window title) is printed escaped on serve's start line (issue #44)."""
    server = served(name="evil\x1b]0;owned\x07_stschedule.json")
    line = server.log().splitlines()[0]
    assert "\x1b" not in line and "\x07" not in line
    assert "evil\\u001b]0;owned\\u0007_stschedule.json" in line


@pytest.mark.parametrize(
    "options, message",
    [
        (["--host", ""], "--host is empty"),
        (["--token", ""], "at least 16"),
        (["--token", "a"], "at least 16"),
        (["--token", "has space in it!!"], "printable ASCII"),
        (["--max-sessions", "0"], "at least 1"),
        (["--port", "99999"], "is not a port"),
    ],
)
def test_options_that_would_open_a_session_to_anyone_are_refused(options, message, capsys):
    assert cli.main(["serve", str(SCHEDULE), "--port", "0", *options]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_a_wildcard_bind_prints_an_address_a_browser_opens(served):
    server = served("--host", "0.0.0.0")
    assert "0.0.0.0" not in server.printed and server.printed.endswith(f":{server.port}")
    assert "other machines can reach it" in server.log()
    assert fetch(f"{server.base}/")[0] == 403


def test_is_loopback_resolves_names_and_trusts_only_loopback_addresses():
    from widgets.serve.server import is_loopback

    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("10.0.0.1") and not is_loopback("no-such-host.invalid")


def test_the_terminal_size_a_client_asks_for_is_capped():
    from widgets.serve.sessions import MAX_HEIGHT, MAX_WIDTH, clamp_size

    assert clamp_size(2000, 2000) == (MAX_WIDTH, MAX_HEIGHT)
    assert clamp_size("x", None) == (80, 24) and clamp_size(-5, 1) == (10, 4)


async def test_a_child_deaf_to_quit_and_sigterm_is_killed_when_its_tab_goes():
    """The mechanism alone: a child that reads nothing and ignores SIGTERM still ends within the grace times."""
    from textual_serve.download_manager import DownloadManager

    from widgets.serve.sessions import Session

    deaf = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(120)"

    async def ignore(*_: object) -> None:
        return None

    session = Session([sys.executable, "-c", deaf], write_bytes=ignore, write_str=ignore, close=ignore,
                      download_manager=DownloadManager())  # fmt: skip
    await session.start(80, 24)
    pid = session._process.pid
    await asyncio.sleep(0.3)
    await asyncio.wait_for(session.end(), 15)
    assert session._process.returncode is not None
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


async def test_a_session_writes_its_cache_entries_itself(tmp_path):
    """A session's app keeps no detached writer (one would outlive the session's end): serve's sessions run with
    the variable that turns it off."""
    from textual_serve.download_manager import DownloadManager

    from widgets.serve.sessions import Session

    said = tmp_path / "said"
    tell = "import os, sys; open(sys.argv[1], 'w').write(os.environ.get('IR_EXPLORER_DETACH', 'unset'))"

    async def ignore(*_: object) -> None:
        return None

    session = Session([sys.executable, "-c", tell, str(said)], write_bytes=ignore, write_str=ignore, close=ignore,
                      download_manager=DownloadManager())  # fmt: skip
    await session.start(80, 24)
    await asyncio.wait_for(session._process.wait(), 30)
    await asyncio.wait_for(session.end(), 15)
    assert said.read_text() == "off"


async def test_a_tab_that_goes_at_any_moment_of_start_up_leaves_no_process(served):
    server = served()
    cookie = {"Origin": server.base, "Cookie": f"ir_explorer_token_{server.port}={server.token}"}
    async with aiohttp.ClientSession() as session:
        for delay in (0.0, 0.05, 0.3, 1.0):  # before the child starts, while it imports, while it loads
            socket_ = await session.ws_connect(f"{server.pages}/ws?width=2000&height=2000", headers=cookie)
            await asyncio.sleep(delay)
            await socket_.close()
        socket_ = await session.ws_connect(f"{server.pages}/ws?width=2000&height=2000", headers=cookie)
        await socket_.receive()  # a first (capped) frame, then gone mid-stream
        socket_._response.connection.transport.abort()  # dropped, not closed: as a lost network does
    assert await asyncio.to_thread(server.wait_no_children) == []
    assert server.process.poll() is None  # serve itself carries on


async def test_sigterm_to_serve_ends_every_child_and_sessions_are_capped(served):
    server = served("--max-sessions", "2")
    cookie = {"Origin": server.base, "Cookie": f"ir_explorer_token_{server.port}={server.token}"}
    async with aiohttp.ClientSession() as session:
        open_ = [await session.ws_connect(f"{server.pages}/ws", headers=cookie) for _ in range(2)]
        for socket_ in open_:
            await socket_.receive()
        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            await session.ws_connect(f"{server.pages}/ws", headers=cookie)
        assert refused.value.status == 503
        assert len(server.children()) == 2
        server.process.send_signal(signal.SIGTERM)
        assert await asyncio.to_thread(server.process.wait, 20) == 0
    assert await asyncio.to_thread(server.wait_no_children, 5) == []


async def test_a_killed_serve_takes_its_children_with_it(served):
    server = served()
    cookie = {"Origin": server.base, "Cookie": f"ir_explorer_token_{server.port}={server.token}"}
    async with aiohttp.ClientSession() as session:
        socket_ = await session.ws_connect(f"{server.pages}/ws", headers=cookie)
        await socket_.receive()
        assert server.children()
        server.process.kill()  # no handler runs: the kernel's parent-death signal does it
        server.process.wait(timeout=10)
        assert await asyncio.to_thread(server.wait_no_children, 10) == []


def forward(listen: socket.socket, target_port: int, stop: threading.Event) -> None:
    """A TCP port forward, as `ssh -L listen:localhost:target` makes one."""
    listen.settimeout(0.2)
    while not stop.is_set():
        try:
            client, _ = listen.accept()
        except OSError:
            continue
        upstream = socket.create_connection(("127.0.0.1", target_port))

        def pipe(a: socket.socket, b: socket.socket) -> None:
            selector = selectors.DefaultSelector()
            selector.register(a, selectors.EVENT_READ, b)
            selector.register(b, selectors.EVENT_READ, a)
            try:
                while not stop.is_set():
                    for key, _ in selector.select(0.2):
                        data = key.fileobj.recv(65536)
                        if not data:
                            return
                        key.data.sendall(data)
            except OSError:  # one side reset (a browser killed mid-stream): the tunnel ends, as ssh's does
                return
            finally:
                a.close()
                b.close()

        threading.Thread(target=pipe, args=(client, upstream), daemon=True).start()
    listen.close()


def tunnel(target_port: int) -> tuple[int, threading.Event]:
    """A forward from a fresh local port to `target_port` (as `ssh -L` makes); set the event to end it."""
    listen = socket.socket()
    listen.bind(("127.0.0.1", 0))
    listen.listen()
    stop = threading.Event()
    threading.Thread(target=forward, args=(listen, target_port, stop), daemon=True).start()
    return listen.getsockname()[1], stop


def test_serve_works_through_a_forwarded_port(served):
    server = served()
    local, stop = tunnel(server.port)
    try:
        opener = browser()
        status, page = fetch(f"http://127.0.0.1:{local}/?token={server.token}", opener)
        assert status == 200
        # the address the browser used, not the server's own
        assert f"ws://127.0.0.1:{local}/{server.secret}/ws" in page
        assert f"http://127.0.0.1:{local}/{server.secret}/static/" in page and f":{server.port}/" not in page
        assert fetch(f"http://127.0.0.1:{local}/{server.secret}/static/js/textual.js", opener)[0] == 200
    finally:
        stop.set()


def test_serve_behind_a_proxy_uses_the_public_url(served):
    server = served("--public-url", "https://review.example.com/irx/")
    assert server.printed == "https://review.example.com/irx"
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    connection.request("GET", f"/?token={server.token}")  # as the proxy passes it on, /irx/ taken off
    cookie = connection.getresponse().getheader("Set-Cookie")
    connection.close()
    assert f"Path=/irx/{server.secret}/" in cookie  # the path the browser sees, behind the proxy
    status, page = fetch(f"{server.pages}/?token={server.token}")
    assert status == 200
    assert f"wss://review.example.com/irx/{server.secret}/ws" in page
    assert f"https://review.example.com/irx/{server.secret}/static/" in page
    status, _ = fetch(f"{server.pages}/?token={server.token}", Origin="https://review.example.com")
    assert status == 200  # the proxy's public origin is this server's own


def test_serve_gives_every_tab_the_author_and_the_bookmarks_file(monkeypatch, tmp_path):
    import widgets.serve.server

    started = {}

    def record(argv, *args, **options):
        started["argv"] = argv

        class Recorder:
            def initialize_logging(self) -> None:
                pass

        return Recorder()

    async def no_run(*args) -> None:
        started["served"] = True

    monkeypatch.setattr(widgets.serve.server, "make_server", record)
    monkeypatch.setattr(widgets.serve.server, "run_server", no_run)
    sidecar = tmp_path / "notes.json"
    code = cli.main(["serve", str(SCHEDULE), "--author", "ana lee", "--bookmarks", str(sidecar)])
    assert code == 0 and started["served"]
    argv = started["argv"]
    assert argv[argv.index("--author") + 1] == "ana lee" and argv[argv.index("--bookmarks") + 1] == str(sidecar)


async def devtools_page(port: int, url: str) -> str:
    """Open `url` in the headless browser listening on `port`; return the page body's classes once the app drew
    its first frame (textual's page adds `-first-byte`), or whatever they are after 20 s."""
    async with aiohttp.ClientSession() as http:
        for _ in range(200):
            try:
                targets = await (await http.get(f"http://127.0.0.1:{port}/json")).json()
                break
            except aiohttp.ClientError:
                await asyncio.sleep(0.1)
        page = next(target for target in targets if target["type"] == "page")
        async with http.ws_connect(page["webSocketDebuggerUrl"], max_msg_size=0) as devtools:
            calls = iter(range(1, 1_000))

            async def call(method: str, **params: object) -> dict:
                number = next(calls)
                await devtools.send_json({"id": number, "method": method, "params": params})
                async for message in devtools:
                    answer = message.json()
                    if answer.get("id") == number:
                        return answer.get("result", {})
                return {}

            await call("Page.navigate", url=url)
            classes = ""
            for _ in range(100):
                result = await call("Runtime.evaluate", expression="document.body ? document.body.className : ''")
                classes = result.get("result", {}).get("value", "")
                if "-first-byte" in classes:
                    break
                await asyncio.sleep(0.2)
            return classes


@pytest.mark.skipif(
    shutil.which("chromium") is None, reason="Debian's chromium is not installed (apt-get install chromium)"
)
async def test_a_browser_through_a_forwarded_port_opens_the_printed_address(served, tmp_path):
    """As `ssh -L` is used: the printed address with its port changed, the token in it once, then the cookie."""
    server = served()
    local, stop = tunnel(server.port)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        devtools_port = probe.getsockname()[1]
    chromium = subprocess.Popen(
        ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-sync",
         "--disable-background-networking", f"--user-data-dir={tmp_path / 'profile'}",
         f"--remote-debugging-port={devtools_port}", "about:blank"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        address = server.printed.replace(f":{server.port}", f":{local}") + f"/?token={server.token}"
        classes = await asyncio.wait_for(devtools_page(devtools_port, address), 60)
        assert "-first-byte" in classes  # the app's first frame reached the browser
        assert len(server.children()) == 1
    finally:
        chromium.kill()
        chromium.wait(timeout=10)
        stop.set()
    assert await asyncio.to_thread(server.wait_no_children) == []  # the browser gone, its app is gone
    log = server.log()
    # then by the cookie alone, under the secret path (redacted too)
    assert "GET /?token=*** 302" in log and "GET /***/static/js/textual.js 200" in log


def test_a_server_on_another_port_never_receives_the_token_cookie(served):
    """Issue #44 item 6: browsers send a host's cookies to every port of it, so a page served on another local
    port received `ir_explorer_token_<port>` and could replay it. The cookie's Path is serve's secret path now:
    another server on the box, at any address it can make the browser ask for, gets nothing."""
    import http.server

    seen: list[str] = []

    class Recorder(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the standard library's name
            seen.append(self.headers.get("Cookie") or "")
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"another site on this box")

        def log_message(self, *args: object) -> None:
            pass

    other = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    threading.Thread(target=other.serve_forever, daemon=True).start()
    try:
        server = served()
        opener = browser()  # one browser: it visits serve, then the other site
        assert fetch(f"{server.base}/?token={server.token}", opener)[0] == 200
        for path in ("/", "/static/js/textual.js", "/ws", "/anything"):
            fetch(f"http://127.0.0.1:{other.server_address[1]}{path}", opener)
        assert len(seen) == 4 and not any("ir_explorer_token" in cookie for cookie in seen), seen
    finally:
        other.shutdown()
        other.server_close()


async def test_a_tab_whose_app_is_killed_says_so(served):
    """Issue #44 item 3: an app killed by the OOM killer used to leave a silent "Session ended" (or a tab that
    said "loading" for ever); the tab's terminal and the log now say what happened."""
    server = served()
    headers = {"Origin": server.base, "Cookie": f"ir_explorer_token_{server.port}={server.token}"}
    async with aiohttp.ClientSession() as session:
        socket_ = await session.ws_connect(f"{server.pages}/ws", headers=headers)
        async with socket_:
            await socket_.send_json(["resize", {"width": 100, "height": 30}])
            async for message in socket_:  # the first frame: the app is up
                if message.type == aiohttp.WSMsgType.BINARY:
                    break
            (child,) = server.children()
            environment = Path(f"/proc/{child}/environ").read_bytes()
            assert b"IR_EXPLORER_LOAD_LOCK=" in environment  # the tabs load one at a time (explorer/load_turn.py)
            os.kill(child, signal.SIGKILL)  # as the kernel's OOM killer does
            said = b""
            async for message in socket_:
                if message.type == aiohttp.WSMsgType.BINARY:
                    said += message.data
                if b"ran out of memory" in said:
                    break
    assert b"ir-explorer: the app was killed (SIGKILL)" in said
    deadline = time.monotonic() + 10
    while "was killed (SIGKILL)" not in server.log() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert "a tab's app was killed (SIGKILL)" in server.log()
