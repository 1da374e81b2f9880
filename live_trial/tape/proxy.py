"""The recording proxy: a local HTTP server in front of the model's API that relays every request of a trial's session
and of its evaluator, streams each response back as it arrives, and hands each finished exchange to a recorder
(README "Replaying a real trial offline").

Standard library only (``http.server`` in threads, ``http.client`` upstream). Each request is sent upstream with the
client's own headers, credentials included (``x-api-key``, ``authorization``), except the hop-by-hop ones, ``Host``
(the upstream's) and ``Accept-Encoding`` (``identity``, so the stream recorded is the text the client read). The
response is relayed piece by piece as ``read1`` returns it: an SSE event reaches the CLI when it reaches the proxy,
never after the whole response. Upstream connections are kept and reused (no new TLS handshake per request); a
reused connection the upstream had closed is retried once on a fresh one before any byte was answered.

The recorder is given an :class:`Exchange`: the request's method, path and body, the response's status, a few
headers (:data:`KEPT_RESPONSE_HEADERS`) and its bytes, and the credential values the request carried
(``secrets``), so that it can make sure none of them is ever written. The proxy itself writes nothing.
"""
from __future__ import annotations

import http.client
import itertools
import os
import queue
import socket
import ssl
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable
from urllib.parse import urlsplit

__all__ = ["DEFAULT_UPSTREAM", "Exchange", "RecordingProxy", "upstream_of"]

#: Where the CLI sends its requests when ``ANTHROPIC_BASE_URL`` is not set.
DEFAULT_UPSTREAM = "https://api.anthropic.com"
#: Seconds one read or write on the upstream connection may wait (a response that pauses longer is cut).
UPSTREAM_TIMEOUT_S = 600.0
#: Largest piece relayed at once; ``read1`` returns what has arrived, up to this.
RELAY_CHUNK_BYTES = 65536
#: Idle upstream connections kept for reuse.
POOL_SIZE = 8
#: Headers that describe one connection, never relayed (RFC 9110 section 7.6.1), and the ones the proxy sets itself.
_HOP = frozenset({"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "proxy-connection", "te",
                  "trailer", "trailers", "transfer-encoding", "upgrade", "host", "accept-encoding", "content-length"})
#: Request headers that carry a credential: relayed, handed to the recorder only as values to keep off the disk.
SECRET_HEADERS = ("x-api-key", "authorization", "proxy-authorization", "anthropic-admin-api-key", "cookie")
#: Response headers an exchange keeps (the rest, such as organization ids and rate-limit counters, are not recorded).
KEPT_RESPONSE_HEADERS = ("content-type", "retry-after", "x-should-retry", "request-id")


def upstream_of(env: dict[str, str] | Any) -> str:
    """The URL the trial's CLI would have sent its requests to: ``ANTHROPIC_BASE_URL`` of ``env`` when set, else
    :data:`DEFAULT_UPSTREAM`. A trial's session reads only its local settings (``--setting-sources local``), so the
    environment is where that address comes from. Returns it without a trailing ``/``."""
    return (env.get("ANTHROPIC_BASE_URL") or DEFAULT_UPSTREAM).rstrip("/")


@dataclass
class Exchange:
    """One request relayed and its response. ``seq`` counts requests in the order they arrived (1-based);
    ``started`` is the arrival (epoch seconds), ``first_byte_s`` / ``total_s`` seconds from it to the first byte of the
    response relayed and to its end. ``client_closed``: the client went away before the response ended;
    ``proxy_error``: the upstream could not be reached (the client got a 502 the proxy wrote). ``secrets``: the
    credential values the request carried, for the recorder to keep off the disk (never written by the proxy)."""

    seq: int
    started: float
    method: str
    path: str
    user_agent: str
    request_body: bytes
    status: int = 0
    response_headers: dict[str, str] = field(default_factory=dict)
    response_body: bytes = b""
    first_byte_s: float | None = None
    total_s: float = 0.0
    client_closed: bool = False
    proxy_error: str | None = None
    secrets: tuple[str, ...] = ()


class _Pool:
    """Idle upstream connections, reused across requests and threads."""

    def __init__(self, upstream: str, env: dict[str, str]) -> None:
        parts = urlsplit(upstream)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {upstream!r}")
        self.scheme, self.host = parts.scheme, parts.hostname
        self.port = parts.port or (443 if parts.scheme == "https" else 80)
        self.prefix = parts.path.rstrip("/")
        self.host_header = parts.netloc.rsplit("@", 1)[-1]
        self._tunnel = _proxy_for(upstream, env)
        self._idle: list[http.client.HTTPConnection] = []
        self._lock = threading.Lock()

    def get(self) -> tuple[http.client.HTTPConnection, bool]:
        """A connection and whether it was reused."""
        with self._lock:
            if self._idle:
                return self._idle.pop(), True
        return self.new(), False

    def new(self) -> http.client.HTTPConnection:
        """A fresh connection (through the environment's HTTPS proxy when one applies)."""
        where = self._tunnel or (self.host, self.port)
        conn: http.client.HTTPConnection
        if self.scheme == "https":
            conn = http.client.HTTPSConnection(where[0], where[1], timeout=UPSTREAM_TIMEOUT_S,
                                               context=ssl.create_default_context())
        else:
            conn = http.client.HTTPConnection(where[0], where[1], timeout=UPSTREAM_TIMEOUT_S)
        if self._tunnel:
            conn.set_tunnel(self.host, self.port)
        return conn

    def put(self, conn: http.client.HTTPConnection) -> None:
        """Keep ``conn`` for the next request (closed when the pool is full)."""
        with self._lock:
            if len(self._idle) < POOL_SIZE:
                self._idle.append(conn)
                return
        conn.close()

    def close(self) -> None:
        """Close every idle connection."""
        with self._lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()


def _proxy_for(upstream: str, env: dict[str, str]) -> tuple[str, int] | None:
    """``(host, port)`` of the HTTP(S) proxy the environment names for ``upstream`` (``HTTPS_PROXY`` /
    ``HTTP_PROXY``, either case), unless ``NO_PROXY`` covers its host (``*``, the host, or a domain it ends in), or
    None."""
    parts = urlsplit(upstream)
    names = {k.lower(): v for k, v in env.items() if k.lower() in ("https_proxy", "http_proxy", "no_proxy")}
    proxy = names.get(f"{parts.scheme}_proxy")
    host = (parts.hostname or "").lower()
    if not proxy or not host:
        return None
    for entry in (e.strip().lower().lstrip(".") for e in names.get("no_proxy", "").split(",")):
        if entry == "*" or (entry and (host == entry or host.endswith("." + entry))):
            return None
    p = urlsplit(proxy if "://" in proxy else f"http://{proxy}")
    return (p.hostname, p.port or 8080) if p.hostname else None


class RecordingProxy:
    """Relays ``http://127.0.0.1:PORT/<path>`` to ``upstream + <path>`` and calls ``on_exchange(Exchange)`` once per
    request, after its response ended, from one recording thread in the order the responses ended (never from the
    relaying threads: recording never delays a response); :meth:`stop` returns once every exchange was handed over.
    The callback must not raise. Use as a context manager or call :meth:`start` / :meth:`stop`. ``env`` is the
    environment the upstream's HTTPS proxy is read from; ``first_seq`` the number of the first request (a resumed
    recording goes on counting). Raises ValueError at construction for an upstream that is not an http(s) URL."""

    def __init__(self, upstream: str, on_exchange: Callable[[Exchange], None], *, env: dict[str, str] | None = None,
                 host: str = "127.0.0.1", port: int = 0, first_seq: int = 1) -> None:
        self.upstream = upstream.rstrip("/")
        self.on_exchange = on_exchange
        self.host, self.port = host, port
        self.pool = _Pool(self.upstream, dict(os.environ if env is None else env))
        self._seq = itertools.count(first_seq)
        self._seq_lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._done: queue.Queue[Exchange | None] = queue.Queue()
        self._recorder = threading.Thread(target=self._record_loop, name="tape-recorder", daemon=True)

    def _record_loop(self) -> None:
        """Hand each finished exchange to ``on_exchange``, in the order they ended, off the relaying threads (the
        client's connection closes as soon as its response is relayed; recording never delays it)."""
        while True:
            ex = self._done.get()
            if ex is None:
                return
            self.on_exchange(ex)

    def finished(self, ex: Exchange) -> None:
        """Queue ``ex`` for the recorder (called by the relaying thread once the client has the whole response)."""
        self._done.put(ex)

    def next_seq(self) -> int:
        """The next request's number (1-based, in order of arrival)."""
        with self._seq_lock:
            return next(self._seq)

    def start(self) -> "RecordingProxy":
        """Bind and serve in a background thread. Returns self. Raises OSError when the port is taken."""
        handler = type("Handler", (_Handler,), {"proxy": self})
        self._httpd = ThreadingHTTPServer((self.host, self.port), handler)
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.2},
                                        name=f"tape-proxy-{self.port}", daemon=True)
        self._thread.start()
        self._recorder.start()
        return self

    def stop(self) -> None:
        """Stop serving, record every exchange that ended, close the upstream connections. Idempotent."""
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
        if self._recorder.is_alive():
            self._done.put(None)
            self._recorder.join(timeout=30)
        self.pool.close()

    def __enter__(self) -> "RecordingProxy":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        """``http://HOST:PORT`` (valid after :meth:`start`)."""
        return f"http://{self.host}:{self.port}"


class _Handler(BaseHTTPRequestHandler):
    proxy: RecordingProxy
    protocol_version = "HTTP/1.0"      # one exchange per client connection, ended by closing it
    server_version = "live-trial-tape/1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the core never prints
        return

    def do_GET(self) -> None:  # noqa: N802
        self._relay()

    do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = do_GET  # noqa: N815

    def _read_body(self) -> bytes:
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            out = bytearray()
            while True:
                size = int(self.rfile.readline().split(b";", 1)[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return bytes(out)
                out += self.rfile.read(size)
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _relay(self) -> None:
        proxy = self.proxy
        ex = Exchange(seq=proxy.next_seq(), started=time.time(), method=self.command, path=self.path,
                      user_agent=self.headers.get("User-Agent") or "", request_body=b"")
        t0 = time.monotonic()
        try:
            ex.request_body = self._read_body()
        except (OSError, ValueError):
            return
        ex.secrets = tuple(v for k in SECRET_HEADERS for v in self.headers.get_all(k) or [] if v)
        headers = [(k, v) for k, v in self.headers.items() if k.lower() not in _HOP]
        body: list[bytes] = []
        try:
            resp, conn = self._send_upstream(headers, ex.request_body)
        except (OSError, http.client.HTTPException) as exc:
            ex.proxy_error = f"{type(exc).__name__}: {exc}"[:300]
            self._bad_gateway(ex)
            ex.total_s = time.monotonic() - t0
            proxy.finished(ex)
            return
        ex.status = resp.status
        ex.response_headers = {k.lower(): v for k, v in resp.getheaders() if k.lower() in KEPT_RESPONSE_HEADERS}
        reusable = False
        try:
            self.send_response_only(resp.status, resp.reason)
            for k, v in resp.getheaders():
                if k.lower() not in _HOP or (k.lower() == "content-length" and not resp.chunked):
                    self.send_header(k, v)
            self.send_header("Connection", "close")
            self.end_headers()
            while True:
                piece = resp.read1(RELAY_CHUNK_BYTES) if self.command != "HEAD" else b""
                if not piece:
                    break
                if ex.first_byte_s is None:
                    ex.first_byte_s = time.monotonic() - t0
                body.append(piece)
                self.wfile.write(piece)
            reusable = not resp.will_close
        except (BrokenPipeError, ConnectionResetError, socket.timeout):
            ex.client_closed = True
        except (OSError, http.client.HTTPException) as exc:
            ex.proxy_error = f"{type(exc).__name__}: {exc}"[:300]
        finally:
            if reusable:
                proxy.pool.put(conn)
            else:
                conn.close()
        ex.response_body = b"".join(body)
        ex.total_s = time.monotonic() - t0
        proxy.finished(ex)

    def _send_upstream(self, headers: list[tuple[str, str]], body: bytes) -> tuple[http.client.HTTPResponse,
                                                                                  http.client.HTTPConnection]:
        """Send the request on a pooled connection; a reused one that fails before answering is replaced once."""
        pool = self.proxy.pool
        conn, reused = pool.get()
        for attempt in (1, 2):
            try:
                conn.putrequest(self.command, pool.prefix + self.path, skip_host=True, skip_accept_encoding=True)
                conn.putheader("Host", pool.host_header)
                conn.putheader("Accept-Encoding", "identity")
                for k, v in headers:
                    conn.putheader(k, v)
                if body or self.command in ("POST", "PUT", "PATCH"):
                    conn.putheader("Content-Length", str(len(body)))
                conn.endheaders(body or None)
                return conn.getresponse(), conn
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError,
                    http.client.CannotSendRequest):
                conn.close()
                if not reused or attempt == 2:
                    raise
                conn, reused = pool.new(), False
        raise AssertionError("unreachable")

    def _bad_gateway(self, ex: Exchange) -> None:
        """Answer 502 with an error body of the Messages API's shape (the CLI retries it, then reports it)."""
        import json

        raw = json.dumps({"type": "error", "error": {"type": "api_error", "message":
                          f"live-trial recording proxy: the upstream {self.proxy.upstream} could not be reached "
                          f"({ex.proxy_error})"}}).encode()
        ex.status, ex.response_body = 502, raw
        ex.response_headers = {"content-type": "application/json"}
        try:
            self.send_response_only(502, "Bad Gateway")
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(raw)
        except OSError:
            ex.client_closed = True
