"""The webhook against a real local HTTP server in a thread: one total deadline per attempt (a server that answers
one byte at a time cannot hold a trial), no retry after a deadline, and a resend that claims the notice, sends it
outside the notifications lock and records it once (README "Evidence, watches and messages to a person")."""
from __future__ import annotations

import fcntl
import socket
import threading
from datetime import datetime, timedelta, timezone

import pytest

from live_trial.clock import iso_z
from live_trial.jsonfile import write_json
from live_trial.notices import notify as nt
from live_trial.notices import resend as nr
from live_trial.notices.webhook import WEBHOOK_RETRY_WAIT_S, send_webhook

START = datetime(2026, 11, 30, 9, 0, tzinfo=timezone.utc)


class Hook:
    """A local webhook server. ``mode``: ``dribble`` (the status line one byte every 0.2 s, for ever), ``hold`` (answer
    204 once ``release`` is set) or ``fast`` (answer 204 at once). ``requests`` counts the POSTs received."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.requests = 0
        self.got, self.release, self.stop = threading.Event(), threading.Event(), threading.Event()
        self.dribbling = threading.Event()
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/hook"
        self.threads = [threading.Thread(target=self._serve, daemon=True)]
        self.threads[0].start()

    def _serve(self) -> None:
        self.sock.settimeout(0.1)
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            t = threading.Thread(target=self._handle, args=(conn,), daemon=True)
            self.threads.append(t)
            t.start()

    def _handle(self, conn: socket.socket) -> None:
        with conn:
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = conn.recv(4096)
                if not chunk:
                    return
                data += chunk
            head, _, body = data.partition(b"\r\n\r\n")
            length = int(next(line.split(b":")[1] for line in head.split(b"\r\n")
                              if line.lower().startswith(b"content-length")))
            while len(body) < length:
                body += conn.recv(4096)
            self.requests += 1
            self.got.set()
            try:
                if self.mode == "dribble":
                    self.dribbling.set()
                    for byte in b"HTTP/1.1 200 OK\r\nX-Slow: " + b"a" * 10_000:
                        if self.stop.wait(0.2):
                            return
                        conn.sendall(bytes([byte]))
                    self.dribbling.clear()
                if self.mode == "hold":
                    self.release.wait(30)
                conn.sendall(b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            except OSError:
                pass
            finally:
                self.dribbling.clear()

    def close(self) -> None:
        self.stop.set()
        self.release.set()
        self.sock.close()
        for t in self.threads:
            t.join(5)


@pytest.fixture()
def hook(request):
    made: list[Hook] = []

    def make(mode: str) -> Hook:
        made.append(Hook(mode))
        return made[-1]
    yield make
    for h in made:
        h.close()


def test_a_webhook_that_dribbles_bytes_is_given_up_at_the_deadline(hook):
    h = hook("dribble")
    out = send_webhook(h.url, "hello", timeout_s=1.0, sleep=lambda s: pytest.fail("no retry after a deadline"))
    assert out["status"] == "failed" and out["attempts"] == 1 and out["http_status"] is None
    assert "no answer within 1 s (connect, send and read)" in out["error"]
    assert h.requests == 1


def test_a_fast_webhook_is_sent(hook):
    h = hook("fast")
    assert send_webhook(h.url, "hello", timeout_s=5.0)["status"] == "sent" and h.requests == 1


def test_a_refused_connection_is_retried_once():
    sock = socket.create_server(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()                       # nothing listens there now
    waits = []
    out = send_webhook(f"http://127.0.0.1:{port}/x", "hello", timeout_s=2.0, sleep=waits.append)
    assert out["status"] == "failed" and out["attempts"] == 2 and waits == [WEBHOOK_RETRY_WAIT_S]


def _failed_notice(root):
    return nt.notify(root, "not_working", "あいさつする", "何も書かれていない", "ja",
                     env={nt.WEBHOOK_ENV: "http://127.0.0.1:9/x"}, post=lambda u, b, t: 500,
                     sleep=lambda s: None, clock=lambda: iso_z(START))


def test_a_slow_resend_blocks_nobody_and_is_sent_once(tmp_path, hook):
    h = hook("hold")
    original = _failed_notice(tmp_path)
    env = {nt.WEBHOOK_ENV: h.url}
    later = lambda: START + timedelta(hours=2)  # noqa: E731
    results: dict[str, list] = {}
    first = threading.Thread(target=lambda: results.setdefault(
        "a", nr.resend_failed(tmp_path, env=env, clock=later, timeout_s=30)))
    first.start()
    assert h.got.wait(10)                                  # the first resend is waiting for the webhook
    with open(tmp_path / nt.NOTIFICATIONS_FILE, "rb") as fh:   # the notifications lock is free meanwhile
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        fcntl.flock(fh, fcntl.LOCK_UN)
    assert nr.resend_failed(tmp_path, env=env, clock=later, timeout_s=30) == []   # claimed: left alone
    other = nt.notify(tmp_path, "done", "別の件", "1件書いた", "ja", env={}, clock=lambda: iso_z(later()))
    assert other["webhook"]["status"] == "not_configured"
    assert first.is_alive() and h.requests == 1
    h.release.set()
    first.join(30)
    [resent] = results["a"]
    assert resent["webhook"]["status"] == "sent" and resent["refs"]["resend_of"] == nr.notification_id(original)
    assert nr.resend_failed(tmp_path, env=env, clock=lambda: START + timedelta(days=2)) == []
    assert h.requests == 1
    assert not (tmp_path / nr.CLAIMS_FILE).exists()


def test_a_claim_left_by_a_process_that_died_expires(tmp_path, hook):
    h = hook("fast")
    original = _failed_notice(tmp_path)
    nid = nr.notification_id(original)
    until = iso_z(START + timedelta(hours=2, seconds=30))
    write_json(tmp_path / nr.CLAIMS_FILE, {"version": 1, "claims": {nid: {"pid": 1, "until": until}}},
               nr.CLAIMS_SCHEMA)
    env = {nt.WEBHOOK_ENV: h.url}
    assert nr.resend_failed(tmp_path, env=env, clock=lambda: START + timedelta(hours=2)) == []
    [resent] = nr.resend_failed(tmp_path, env=env, clock=lambda: START + timedelta(hours=2, minutes=1))
    assert resent["webhook"]["status"] == "sent" and h.requests == 1


def test_a_run_s_notice_to_a_dribbling_webhook_costs_one_deadline(tmp_path, hook):
    h = hook("dribble")
    rec = nt.notify(tmp_path, "done", "あいさつする", "1件書いた", "ja", env={nt.WEBHOOK_ENV: h.url}, timeout_s=1.0,
                    sleep=lambda s: pytest.fail("no retry after a deadline"))
    assert rec["webhook"]["status"] == "failed" and "within 1 s" in rec["webhook"]["error"]
    assert h.requests == 1
