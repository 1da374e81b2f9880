"""The webhook a notification is POSTed to (Discord style: ``{"content": text}``), with one total deadline per
attempt (README "Evidence, watches and messages to a person").

urllib's timeout applies to each socket operation: a server that answers one byte every two seconds never trips it
and held a trial for minutes. Here connecting, sending and reading the status line share one deadline; at the
deadline the socket is shut down and the caller goes on (:class:`DeadlineExceeded`). http.client is the standard
library's own HTTP client (what urllib uses underneath); a thread per attempt is what lets the caller stop waiting
whatever the network does. The HTTP client (http.client, urllib, which load email and ssl) is imported only when a
webhook is sent, so the commands that may notify (plan, run, watch) start without it.
"""
from __future__ import annotations

import json
import time
from typing import Callable

WEBHOOK_TIMEOUT_S = 5.0
WEBHOOK_RETRY_WAIT_S = 1.0
MAX_CONTENT_CHARS = 1900  # Discord rejects content over 2000 characters

Poster = Callable[[str, bytes, float], int]


class DeadlineExceeded(TimeoutError):
    """The webhook did not answer within its one deadline (connect, send and read together)."""


def _post_once(url: str, body: bytes, timeout_s: float, conn_box: list) -> int:
    import http.client
    import urllib.parse

    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("the webhook URL is not an http(s) URL")
    cls = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    conn = cls(parts.hostname, parts.port, timeout=timeout_s)
    conn_box.append(conn)
    try:
        conn.request("POST", (parts.path or "/") + (f"?{parts.query}" if parts.query else ""), body=body,
                     headers={"Content-Type": "application/json", "User-Agent": "live-trial"})
        return int(conn.getresponse().status)   # the status line is the answer; the body is never read
    finally:
        conn.close()


def http_post(url: str, body: bytes, timeout_s: float) -> int:
    """POST ``body`` to ``url``; the HTTP status. One total deadline of ``timeout_s`` seconds for connecting,
    sending and reading the answer: urllib's timeout applies to each socket operation, so a server answering one
    byte every 2 s held a trial for minutes. At the deadline the socket is shut down and :class:`DeadlineExceeded`
    raised; the caller never waits longer. Raises OSError / http.client errors for other failures."""
    import socket
    import threading

    box: dict = {}
    conns: list = []

    def attempt() -> None:
        try:
            box["status"] = _post_once(url, body, timeout_s, conns)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            box["error"] = exc

    worker = threading.Thread(target=attempt, name="webhook-post", daemon=True)
    worker.start()
    worker.join(timeout_s)
    if worker.is_alive():
        for conn in conns:
            sock = getattr(conn, "sock", None)
            if sock is not None:
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
        raise DeadlineExceeded(f"no answer within {timeout_s:g} s (connect, send and read)")
    if "error" in box:
        raise box["error"]
    return box["status"]


def send_webhook(url: str, text: str, *, timeout_s: float = WEBHOOK_TIMEOUT_S,
                 retry_wait_s: float = WEBHOOK_RETRY_WAIT_S, post: Poster | None = None,
                 sleep: Callable[[float], None] = time.sleep) -> dict:
    """POST ``{"content": text}`` to ``url`` within one deadline of ``timeout_s`` seconds (connect, send and read
    together); one retry after ``retry_wait_s`` seconds when the attempt failed before its deadline (refused
    connection, an HTTP error). A webhook that let the deadline pass is not tried again now: a slow webhook delays
    the caller by at most one deadline (the resend tries it again later).

    Returns ``{"status": "sent"|"failed", "attempts": n, "http_status": int|None, "error": str|None}``.
    Never raises for a network or HTTP failure (the caller records it).
    """
    import urllib.error

    post = post or http_post
    body = json.dumps({"content": text[:MAX_CONTENT_CHARS]}, ensure_ascii=False).encode("utf-8", "backslashreplace")
    outcome: dict = {"status": "failed", "attempts": 0, "http_status": None, "error": None}
    for attempt in (1, 2):
        outcome["attempts"] = attempt
        try:
            code = post(url, body, timeout_s)
            outcome["http_status"] = code
            if 200 <= code < 300:
                outcome.update(status="sent", error=None)
                return outcome
            outcome["error"] = f"HTTP {code}"
        except urllib.error.HTTPError as exc:
            outcome.update(http_status=exc.code, error=f"HTTP {exc.code}")
        except TimeoutError as exc:
            outcome["error"] = f"{type(exc).__name__}: {exc}"[:300]
            return outcome
        except Exception as exc:  # noqa: BLE001 - any failure is recorded, never raised
            outcome["error"] = f"{type(exc).__name__}: {exc}"[:300]
        if attempt == 1:
            sleep(retry_wait_s)
    return outcome


