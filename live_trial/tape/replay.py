"""The tape server: a rehearsal whose model answers from a tape (``run --replay TAPE``; README "Replaying a real trial
offline").

It speaks the Messages API to the real CLI on 127.0.0.1 as the rehearsal server does, and answers each request with
the response the tape recorded for it. Which one, request by request (each written to ``<workdir>/replay-log.jsonl``,
schemas/replay-log.schema.json):

1. ``hash``: a recorded request whose normalized body is the same (:mod:`live_trial.tape.normalize`); recorded twice
   or more (a retried request), each recorded answer once in order, then the last again;
2. ``turn``: a recorded request of the same role and turn whose last message is the same: the last one the session
   or the evaluator sent (the task, a nudge, a tool_result, the evaluator's prompt), never the ``{"role": "system"}``
   message the CLI ends a conversation's first request with (:func:`live_trial.tape.normalize.last_message`). So a
   newer CLI's system prompt still replays, while another task (``--args``), another tool result or another
   evaluator's prompt (a file more among the side effects) is a divergence;
3. none: the tape does not cover this run. The first such request of a model turn is the run's divergence
   (:mod:`live_trial.tape.diverge` names where), answered with an error the CLI does not retry (400) so its turn ends
   at once; ``on_divergence`` is told, and the trial stops BLOCKED ``replay_diverged`` (the harness's side: never a
   FAIL of the skill).

A side query (no tools: a title) the tape does not hold is answered as a rehearsal answers it, and a request that is
no model turn (a token count, a connectivity check) from the tape or else plainly: neither is a divergence. Each answer
goes out as recorded, with this run's values and scripted message ids (:mod:`live_trial.tape.answer`).
"""
from __future__ import annotations

import json
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable

from live_trial.clock import utc_now
from live_trial.jsonfile import append_jsonl, validate
from live_trial.rehearsal.scenario import DEFAULT_SIDE_TEXT
from live_trial.tape.answer import play, replacements
from live_trial.tape.diverge import Divergence, explain
from live_trial.tape.file import Request, TapeEntry, describe_request
from live_trial.tape.normalize import Roots

__all__ = ["TapeIndex", "TapeServer", "LOG_SCHEMA"]

LOG_SCHEMA = "replay-log.schema.json"
#: The error a divergence is answered with: an invalid request, which the CLI never retries.
DIVERGED_STATUS = 400


class TapeIndex:
    """The tape's model requests, looked up by hash and by (role, turn, last message the session or the evaluator
    sent); thread-safe."""

    def __init__(self, entries: list[TapeEntry]) -> None:
        self.entries = list(entries)
        self._by_hash: dict[str, list[TapeEntry]] = {}
        self._by_turn: dict[tuple[Any, ...], list[TapeEntry]] = {}
        for e in self.entries:
            r = e.request
            self._by_hash.setdefault(r.sha256, []).append(e)
            if r.kind == "messages" and r.last_sha256:
                self._by_turn.setdefault((r.role, r.turn, r.last_sha256), []).append(e)
        self._used: Counter[int] = Counter()
        self._lock = threading.Lock()

    def match(self, req: Request) -> tuple[TapeEntry | None, str]:
        """``(entry, how)``: ``how`` is ``hash`` or ``turn`` (module docstring), ``none`` with no entry."""
        with self._lock:
            for how, found in (("hash", self._by_hash.get(req.sha256)),
                               ("turn", self._by_turn.get((req.role, req.turn, req.last_sha256))
                                if req.kind == "messages" else None)):
                if found:
                    entry = next((e for e in found if not self._used[e.seq]), found[-1])
                    self._used[entry.seq] += 1
                    return entry, how
        return None, "none"

    def other(self, method: str, path: str) -> TapeEntry | None:
        """The first recorded request that is no model turn with this method and path."""
        return next((e for e in self.entries if e.request.kind == "other" and e.request.method == method
                     and e.request.path == path), None)


class TapeServer:
    """Serves a tape on ``host`` and an ephemeral (or given) port. ``roots``: this run's paths (taken out of each
    request as they were at recording); ``log``: the replay log's path (None: not written); ``on_divergence``:
    called once, from the serving thread, with the first :class:`Divergence`. ``diverged`` holds it after.
    Use as a context manager or call :meth:`start` / :meth:`stop`."""

    def __init__(self, entries: list[TapeEntry], roots: Roots, *, log: Path | None = None,
                 on_divergence: Callable[[Divergence], None] | None = None, host: str = "127.0.0.1",
                 port: int = 0) -> None:
        self.index = TapeIndex(entries)
        self.roots = roots
        #: The trial's paths as the tape recorded them (from every request) and as they are in this run: an answer
        #: may name one its own request does not (a script path the model read in an earlier turn).
        placeholders = {p for _, p in roots.replacements()}
        self.recorded_paths = {k: v for e in entries for k, v in e.request.bindings.items() if k in placeholders}
        self.paths = {p: v for v, p in roots.replacements()}
        self.log_path = Path(log) if log else None
        self.on_divergence = on_divergence
        self.host, self.port = host, port
        self.diverged: Divergence | None = None
        self.served: list[dict[str, Any]] = []
        #: Requests a server before this one logged (a resumed replay goes on counting).
        self._before = len(self.log_path.read_bytes().splitlines()) if self.log_path and self.log_path.is_file() else 0
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> "TapeServer":
        """Bind and serve in a background thread. Returns self. Raises OSError when the port is taken."""
        handler = type("Handler", (_Handler,), {"server_of": self})
        self._httpd = ThreadingHTTPServer((self.host, self.port), handler)
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.2},
                                        name=f"tape-{self.port}", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving. Idempotent."""
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> "TapeServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        """``http://HOST:PORT`` (valid after :meth:`start`)."""
        return f"http://{self.host}:{self.port}"

    def answer(self, method: str, path: str, raw: bytes) -> tuple[int, dict[str, str], list[bytes]]:
        """``(status, headers, pieces)`` for one request, logged (module docstring)."""
        req = describe_request(method, path, raw, self.roots)
        with self._lock:
            number = self._before + len(self.served) + 1
        record: dict[str, Any] = {"n": number, "at": utc_now(), "method": method, "path": path, "kind": req.kind,
                                  "role": req.role, "turn": req.turn, "request_sha256": req.sha256,
                                  "match": "none", "tape_seq": None, "difference": None}
        if req.kind == "other":
            entry = self.index.other(method, path)
            record["match"] = "other"
            reply = self._recorded(entry, req) if entry else (404, {"content-type": "application/json"},
                                                         [_error(404, "not_found_error", "not on the tape")])
        else:
            entry, how = self.index.match(req)
            record["match"], record["tape_seq"] = how, entry.seq if entry else None
            if entry is not None:
                reply = self._recorded(entry, req)
            elif req.kind == "count_tokens" or req.role == "side":
                record["match"] = "side" if req.role == "side" else "count"
                reply = _unrecorded(req, raw)
            else:
                reply = self._diverge(req, number, record)
        self._log(record)
        return reply

    def _diverge(self, req: Request, number: int, record: dict[str, Any]) -> tuple[int, dict[str, str],
                                                                                  list[bytes]]:
        div = explain(req, number, self.index.entries)
        record["tape_seq"], record["difference"] = div.tape_seq, div.sentence()
        first = False
        with self._lock:
            if self.diverged is None:
                self.diverged, first = div, True
        if first and self.on_divergence is not None:
            self.on_divergence(div)
        message = f"live-trial replay: the tape does not cover this run: {div.sentence()}"
        return DIVERGED_STATUS, {"content-type": "application/json"}, [_error(DIVERGED_STATUS,
                                                                              "invalid_request_error", message)]

    def _recorded(self, entry: TapeEntry, req: Request) -> tuple[int, dict[str, str], list[bytes]]:
        """The recorded answer of ``entry``, with this run's values (the trial's paths, and what the placeholders of
        ``req`` stand for) where the recorded run had its own."""
        pairs = replacements({**self.recorded_paths, **entry.request.bindings}, {**self.paths, **req.bindings})
        return entry.status, dict(entry.headers), play(entry.body, entry.stream, pairs)

    def _log(self, record: dict[str, Any]) -> None:
        with self._lock:
            self.served.append(record)
            if self.log_path is not None:
                validate(record, LOG_SCHEMA, what=self.log_path.name)
                append_jsonl(self.log_path, record)


def _unrecorded(req: Request, raw: bytes) -> tuple[int, dict[str, str], list[bytes]]:
    """A token count, or a side query's title, answered as a rehearsal answers them."""
    if req.kind == "count_tokens":
        return 200, {"content-type": "application/json"}, [json.dumps({"input_tokens": max(1, len(raw) // 4)})
                                                           .encode()]
    try:
        body = json.loads(raw)
    except ValueError:
        body = {}
    fmt = ((body.get("output_config") or {}).get("format") if isinstance(body, dict) else None) or {}
    props = (fmt.get("schema") or {}).get("properties") or {} if isinstance(fmt, dict) else {}
    text = json.dumps({n: DEFAULT_SIDE_TEXT for n in props} or {"title": DEFAULT_SIDE_TEXT}) \
        if fmt.get("type") == "json_schema" else DEFAULT_SIDE_TEXT
    message = {"id": "msg_rehearsal_side", "type": "message", "role": "assistant",
               "model": (body.get("model") if isinstance(body, dict) else None) or "rehearsal-model",
               "content": [{"type": "text", "text": text}], "stop_reason": "end_turn", "stop_sequence": None,
               "usage": {"input_tokens": 1, "output_tokens": 1}}
    if isinstance(body, dict) and body.get("stream"):
        events = [("message_start", {"type": "message_start", "message": {**message, "content": []}}),
                  ("content_block_start", {"type": "content_block_start", "index": 0,
                                           "content_block": {"type": "text", "text": ""}}),
                  ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                           "delta": {"type": "text_delta", "text": text}}),
                  ("content_block_stop", {"type": "content_block_stop", "index": 0}),
                  ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                                     "usage": {"output_tokens": 1}}),
                  ("message_stop", {"type": "message_stop"})]
        return 200, {"content-type": "text/event-stream"}, [
            f"event: {n}\ndata: {json.dumps(d)}\n\n".encode() for n, d in events]
    return 200, {"content-type": "application/json"}, [json.dumps(message).encode()]


def _error(status: int, kind: str, message: str) -> bytes:
    return json.dumps({"type": "error", "error": {"type": kind, "message": message},
                       "request_id": f"req_replay_{status}"}).encode()


class _Handler(BaseHTTPRequestHandler):
    server_of: TapeServer
    protocol_version = "HTTP/1.0"
    server_version = "live-trial-replay/1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the core never prints
        return

    def do_GET(self) -> None:  # noqa: N802
        try:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        except (OSError, ValueError):
            return
        status, headers, pieces = self.server_of.answer(self.command, self.path, raw)
        try:
            self.send_response_only(status)
            for k, v in headers.items():
                self.send_header(k, v)
            if not headers.get("content-type", "").startswith("text/event-stream"):
                self.send_header("Content-Length", str(sum(len(p) for p in pieces)))
            self.send_header("Connection", "close")
            self.end_headers()
            if self.command != "HEAD":
                for piece in pieces:
                    self.wfile.write(piece)
        except (BrokenPipeError, ConnectionResetError):
            return

    do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = do_GET  # noqa: N815
