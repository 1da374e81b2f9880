"""The recording proxy (README "Replaying a real trial offline"): every request reaches the upstream as the client sent
it, credentials included; each response reaches the client as it arrives (an SSE event before the next one was even
written); upstream connections are reused; an upstream that cannot be reached is a 502 the CLI retries, recorded."""
from __future__ import annotations

import http.client
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from live_trial.tape.proxy import Exchange, RecordingProxy, upstream_of

KEY = "sk-ant-api03-" + "p" * 80 + "AA"
EVENTS = [b'event: message_start\ndata: {"type": "message_start"}\n\n', b'event: message_stop\ndata: {}\n\n']


class Upstream:
    """A Messages API stand-in on HTTP/1.1 keep-alive: it keeps what it received and the client port of each
    connection, and sends its SSE events ``gap_s`` apart."""

    def __init__(self, gap_s: float = 0.0) -> None:
        self.seen: list[dict] = []
        self.gap_s = gap_s
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                return

            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                owner.seen.append({"path": self.path, "headers": dict(self.headers), "body": body,
                                   "port": self.client_address[1]})
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Transfer-Encoding", "chunked")
                self.send_header("anthropic-organization-id", "org-not-recorded")
                self.end_headers()
                for n, event in enumerate(EVENTS):
                    if n:
                        time.sleep(owner.gap_s)
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def relayed():
    """``(upstream, proxy, exchanges)``; both stopped at teardown."""
    upstream = Upstream(gap_s=0.6)
    exchanges: list[Exchange] = []
    proxy = RecordingProxy(upstream.url, exchanges.append, env={}).start()
    yield upstream, proxy, exchanges
    proxy.stop()
    upstream.stop()


def post(proxy: RecordingProxy, body: bytes) -> tuple[http.client.HTTPResponse, http.client.HTTPConnection]:
    conn = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=10)
    conn.request("POST", "/v1/messages?beta=true", body=body,
                 headers={"x-api-key": KEY, "content-type": "application/json", "User-Agent": "claude-cli/2.1.332"})
    return conn.getresponse(), conn


def test_the_request_reaches_the_upstream_as_sent_and_the_stream_arrives_as_it_is_written(relayed) -> None:
    upstream, proxy, exchanges = relayed
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True}).encode()
    started = time.monotonic()
    resp, conn = post(proxy, body)
    first = resp.read1(65536)
    first_at = time.monotonic() - started
    rest = resp.read()
    total = time.monotonic() - started
    conn.close()
    assert first == EVENTS[0] and first + rest == b"".join(EVENTS)
    assert first_at < 0.45 < 0.6 <= total, (first_at, total)       # the first event came before the second existed
    (got,) = upstream.seen
    assert got["body"] == body and got["path"] == "/v1/messages?beta=true"
    assert got["headers"]["x-api-key"] == KEY and got["headers"]["Accept-Encoding"] == "identity"
    proxy.stop()                # recorded off the relaying thread: every exchange is handed over once it stops
    (ex,) = exchanges
    assert ex.status == 200 and ex.response_body == b"".join(EVENTS) and ex.request_body == body
    assert ex.secrets == (KEY,) and ex.user_agent == "claude-cli/2.1.332"
    assert ex.response_headers == {"content-type": "text/event-stream"}         # no organization id recorded
    assert ex.first_byte_s is not None and ex.first_byte_s < 0.45


def test_upstream_connections_are_reused(relayed) -> None:
    upstream, proxy, _ = relayed
    upstream.gap_s = 0
    for _ in range(3):
        resp, conn = post(proxy, b"{}")
        resp.read()
        conn.close()
    assert len(upstream.seen) == 3 and len({s["port"] for s in upstream.seen}) == 1


def test_an_upstream_that_cannot_be_reached_is_a_502_and_is_recorded() -> None:
    exchanges: list[Exchange] = []
    with RecordingProxy("http://127.0.0.1:9", exchanges.append, env={}) as proxy:
        resp, conn = post(proxy, b"{}")
        doc = json.loads(resp.read())
        conn.close()
    assert resp.status == 502 and doc["error"]["type"] == "api_error" and "could not be reached" in \
        doc["error"]["message"]
    assert exchanges[0].status == 502 and exchanges[0].proxy_error


def test_the_upstream_is_the_environments_address_else_the_api() -> None:
    assert upstream_of({"ANTHROPIC_BASE_URL": "https://gw.example/anthropic/"}) == "https://gw.example/anthropic"
    assert upstream_of({}) == "https://api.anthropic.com"


class Tunnel:
    """An HTTP proxy that only knows CONNECT (what an ``HTTPS_PROXY`` of a person's network is to the recording
    proxy): it keeps the targets it was asked for and pipes bytes both ways."""

    def __init__(self) -> None:
        import socket
        import socketserver

        self.targets: list[str] = []
        owner = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self):
                head = b""
                while b"\r\n\r\n" not in head:
                    head += self.request.recv(4096)
                target = head.split(b" ")[1].decode()
                owner.targets.append(target)
                host, port = target.rsplit(":", 1)
                upstream = socket.create_connection((host, int(port)))
                self.request.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")

                def pipe(a, b):
                    try:
                        while data := a.recv(65536):
                            b.sendall(data)
                    except OSError:
                        pass
                    finally:
                        b.close()
                threading.Thread(target=pipe, args=(upstream, self.request), daemon=True).start()
                pipe(self.request, upstream)

        self.server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_the_environments_proxy_carries_the_upstream_connection_unless_no_proxy_names_it() -> None:
    upstream, tunnel = Upstream(), Tunnel()
    host = upstream.url.removeprefix("http://")
    try:
        for no_proxy, tunnelled in (("", 1), ("127.0.0.1", 1)):       # tunnelled so far: once, not again
            exchanges: list[Exchange] = []
            env = {"HTTP_PROXY": tunnel.url, "NO_PROXY": no_proxy}
            with RecordingProxy(upstream.url, exchanges.append, env=env) as proxy:
                resp, conn = post(proxy, b"{}")
                resp.read()
                conn.close()
            assert resp.status == 200 and exchanges[0].status == 200
            assert tunnel.targets.count(host) == tunnelled
    finally:
        upstream.stop()
        tunnel.stop()
