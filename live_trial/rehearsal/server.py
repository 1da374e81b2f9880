"""The rehearsal model server: a scripted Anthropic-Messages-compatible HTTP server on 127.0.0.1.

It plays a scenario (:mod:`live_trial.rehearsal.scenario`) to the real ``claude`` CLI, so the whole
trial path (boot, send, poll, collect, evaluate) runs offline and repeatably. It answers
``POST /v1/messages`` (with or without ``?beta=true``) as an SSE stream (``message_start``,
``content_block_start/delta/stop`` for text and tool_use with ``input_json_delta``, ``message_delta``
with ``stop_reason``, ``message_stop``) or as one JSON message, and
``POST /v1/messages/count_tokens``. Requests with no tools are side queries (title generation):
they get a short text and never consume the scenario (claude-cli-observed.md, pitfall 13).
A PASS obtained against this server proves the harness path, not the skill (README "Set-up").

Never used in a real trial against the real API (ARCHITECTURE.md, rehearsal room).
"""
from __future__ import annotations

import copy
import json
import select
import socket
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable

from live_trial.clock import utc_now
from live_trial.jsonfile import write_text_atomic
from live_trial.rehearsal.config import REHEARSAL_MESSAGE_PREFIX, rehearsal_env
from live_trial.rehearsal.scenario import (
    NO_RULE_TEXT,
    RequestView,
    Rule,
    Scenario,
    analyse_request,
    load_scenario,
    render,
    select_rule,
)
from live_trial.rehearsal.unmatched import Unmatched, unmatched

__all__ = ["RehearsalServer"]

DEFAULT_CHUNK_CHARS = 64
_ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
                404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error", 500: "api_error",
                529: "overloaded_error"}


class RehearsalServer:
    """A scenario-playing Messages API server on ``host`` and an ephemeral (or given) port.

    Use as a context manager or call :meth:`start` / :meth:`stop` (one start per instance).
    ``url`` is ``http://127.0.0.1:PORT``. The scenario is copied: ``times`` budgets are per server.
    ``requests`` lists one dict per request received, in arrival order (copy under the lock):
    ``{time, path, model, served_model, tools, message_count, conversation_id, conversation,
    side_query, step, human_turn, stream, rule, status, template_misses, prompt_head}``; ``rule`` is
    the matched rule id, ``None`` for side queries and for unmatched requests (those are answered
    ``NO_RULE_TEXT`` with ``rule_missed: True``). Set later when they happen: ``hung: True`` (a ``hang``
    reply stalled), ``client_closed: True`` (the client went away mid-answer), ``body_file`` (with dump_dir).
    ``dump_dir``: when set, every request body is also written there as ``NNNN.json`` (for discovery).
    ``message_id_prefix``: how every message id served starts; :data:`REHEARSAL_MESSAGE_PREFIX` by default, so the
    transcript says by itself that its model was scripted. A stand-in for the real service (a test of the path a
    person's own login takes) passes the service's own ``msg_`` so the transcript looks as a real one does.
    ``attempt``: which trial of a case run this server plays for (1-based; the ``attempt`` predicate of a rule,
    references/suite-format.md "Repeats").
    ``on_unmatched``: a trial's server (README "Your own plugin and skill"): a request no rule answers is answered
    with an error the CLI does not retry (400, its message starting ``NO_RULE_TEXT``), its log record gets
    ``unmatched`` (the sentence), and ``on_unmatched`` is called once, from the serving thread, with the first
    :class:`~live_trial.rehearsal.unmatched.Unmatched`; ``unmatched`` holds it after. Without it (``rehearsal
    serve``, the doctor) such a request is answered with the text ``NO_RULE_TEXT``.
    Raises :class:`live_trial.errors.RefusedInput` at construction for a malformed scenario.
    """

    def __init__(self, scenario: Scenario | str | Path | dict, *, host: str = "127.0.0.1", port: int = 0,
                 dump_dir: Path | None = None, message_id_prefix: str = REHEARSAL_MESSAGE_PREFIX,
                 attempt: int = 1, on_unmatched: Callable[[Unmatched], None] | None = None) -> None:
        self.message_id_prefix = message_id_prefix
        self.on_unmatched = on_unmatched
        self.unmatched: Unmatched | None = None
        self.attempt = attempt
        self.dump_dir = Path(dump_dir) if dump_dir else None
        loaded = scenario if isinstance(scenario, Scenario) else load_scenario(scenario)
        self.scenario = copy.deepcopy(loaded)  # own ``times`` budgets: a Scenario can seed many servers
        for rule in self.scenario.rules:
            rule.fired = 0
        self.host = host
        self.port = port
        self._lock = threading.Condition()
        self._requests: list[dict] = []
        self._conversations: dict[str, int] = {}
        self._stop = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------ lifecycle
    def start(self) -> "RehearsalServer":
        """Bind and serve in a background thread. Returns self. Raises OSError when the port is taken."""
        handler = _make_handler(self)
        self._httpd = ThreadingHTTPServer((self.host, self.port), handler)
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.2},
                                        name=f"rehearsal-{self.port}", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; hanging streams are released. Idempotent."""
        self._stop.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> "RehearsalServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        """``http://HOST:PORT`` (valid after :meth:`start`)."""
        return f"http://{self.host}:{self.port}"

    def env(self, config_dir: Path) -> dict[str, str]:
        """:func:`rehearsal_env` for this server."""
        return rehearsal_env(self.url, config_dir)

    # ------------------------------------------------------------ request log
    @property
    def requests(self) -> list[dict]:
        """A copy of the request log (see class docstring)."""
        with self._lock:
            return [dict(r) for r in self._requests]

    def main_requests(self) -> list[dict]:
        """The request log without side queries."""
        return [r for r in self.requests if not r["side_query"]]

    def wait_for(self, predicate: Callable[[dict], bool], timeout_s: float) -> dict | None:
        """Block until a recorded request satisfies ``predicate`` (checked on all, old and new); return it or None."""
        deadline = time.monotonic() + timeout_s
        with self._lock:
            while True:
                for r in self._requests:
                    if predicate(r):
                        return dict(r)
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self._lock.wait(timeout=min(left, 0.5))

    def write_log(self, path: Path) -> None:
        """Write the request log as JSON lines to ``path`` (a debugging artefact, no schema)."""
        write_text_atomic(Path(path), "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in self.requests))

    # ------------------------------------------------------------ dispatch
    def _dispatch(self, path: str, body: dict) -> tuple[RequestView, Rule | None, dict]:
        view = analyse_request(body)
        view.attempt = self.attempt
        first: Unmatched | None = None
        with self._lock:
            if not view.side_query:
                key = view.conversation_id or view.first_prompt[:200]
                view.conversation = self._conversations.setdefault(key, len(self._conversations) + 1)
            rule = None if view.side_query else select_rule(self.scenario, view)
            record = {
                "time": utc_now(), "path": path, "model": view.model, "served_model": None, "tools": view.tools,
                "message_count": view.message_count, "conversation_id": view.conversation_id,
                "conversation": view.conversation, "side_query": view.side_query, "step": view.step,
                "human_turn": view.human_turn, "stream": view.stream, "rule": rule.id if rule else None,
                "rule_missed": (rule is None and not view.side_query), "status": 200, "template_misses": [],
                "prompt_head": view.last_prompt[:120],
            }
            self._requests.append(record)
            if self.dump_dir is not None:
                dump = self.dump_dir / f"{len(self._requests):04d}.json"
                write_text_atomic(dump, json.dumps(body, indent=1, ensure_ascii=False))
                record["body_file"] = str(dump)
            if record["rule_missed"] and self.on_unmatched is not None:
                missed = unmatched(view)
                record["unmatched"] = missed.sentence()
                if self.unmatched is None:
                    first = self.unmatched = missed
            self._lock.notify_all()
        if first is not None and self.on_unmatched is not None:
            self.on_unmatched(first)
        return view, rule, record

    def _update(self, record: dict, **changes: Any) -> None:
        with self._lock:
            record.update(changes)
            self._lock.notify_all()


def _make_handler(server: RehearsalServer) -> type[BaseHTTPRequestHandler]:
    class Handler(_Handler):
        rehearsal = server
    return Handler


class _Handler(BaseHTTPRequestHandler):
    rehearsal: RehearsalServer
    protocol_version = "HTTP/1.0"
    server_version = "live-trial-rehearsal/1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - core never prints
        return

    def do_GET(self) -> None:  # noqa: N802
        self._send_json(404, _error_body(404, "not_found_error", f"rehearsal server: no GET {self.path}"))

    def do_POST(self) -> None:  # noqa: N802
        path = self.path.split("?", 1)[0]
        try:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
        except (ValueError, OSError):
            self._send_json(400, _error_body(400, "invalid_request_error", "rehearsal server: body is not JSON"))
            return
        if path == "/v1/messages/count_tokens":
            text = json.dumps(body.get("messages", []))
            self._send_json(200, {"input_tokens": max(1, len(text) // 4)})
            return
        if path != "/v1/messages":
            self._send_json(404, _error_body(404, "not_found_error", f"rehearsal server: no POST {path}"))
            return
        srv = self.rehearsal
        view, rule, record = srv._dispatch(path, body)
        self._record = record
        reply = self._reply_for(view, rule, record)
        try:
            self._answer(view, reply, record)
        except (BrokenPipeError, ConnectionResetError, socket.timeout):
            srv._update(record, client_closed=True)

    # ------------------------------------------------------------ reply construction
    def _reply_for(self, view: RequestView, rule: Rule | None, record: dict) -> dict:
        srv = self.rehearsal
        if view.side_query:
            return {"content": [{"text": _side_text(srv.scenario.side_query_text, view.extra.get("output_format"))}],
                    "stop_reason": "end_turn"}
        if rule is None and srv.on_unmatched is not None:
            return {"error": {"status": 400, "type": "invalid_request_error",
                              "message": f"{NO_RULE_TEXT} live-trial rehearsal: {record['unmatched']}"}}
        if rule is None:
            return {"content": [{"text": NO_RULE_TEXT}], "stop_reason": "end_turn"}
        misses: list[str] = []
        reply = render(rule.reply, view, misses)
        if misses:
            srv._update(record, template_misses=misses)
        return reply

    def _answer(self, view: RequestView, reply: dict, record: dict) -> None:
        srv = self.rehearsal
        if reply.get("delay_s"):
            if not self._wait(float(reply["delay_s"])):
                return
        err = reply.get("error")
        if err:
            status = int(err["status"])
            srv._update(record, status=status)
            etype = err.get("type") or _ERROR_TYPES.get(status, "api_error")
            self._send_json(status, _error_body(status, etype, err.get("message") or f"rehearsal error {status}"))
            return
        model = reply.get("model") or srv.scenario.model or view.model or "rehearsal-model"
        blocks = _blocks_of(reply)
        stop_reason = reply.get("stop_reason") or (
            "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn")
        srv._update(record, served_model=model)
        message_id = f"{srv.message_id_prefix}{uuid.uuid4().hex[:20]}"
        usage, out_tokens = _usage_of(reply, view, blocks)
        if not view.stream:
            self._send_json(200, {"id": message_id, "type": "message", "role": "assistant", "model": model,
                                  "content": blocks, "stop_reason": stop_reason, "stop_sequence": None,
                                  "usage": {**usage, "output_tokens": out_tokens}})
            return
        self._stream(message_id, model, blocks, stop_reason, usage, out_tokens, reply)

    def _stream(self, message_id: str, model: str, blocks: list[dict], stop_reason: str, usage: dict,
                out_tokens: int, reply: dict) -> None:
        delay = float(reply.get("chunk_delay_s") or 0)
        size = int(reply.get("chunk_chars") or DEFAULT_CHUNK_CHARS)
        hang = reply.get("hang")
        hang_s = reply.get("hang_s")
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.send_header("request-id", f"req_rehearsal_{uuid.uuid4().hex[:16]}")
        self.end_headers()
        self._event("message_start", {"type": "message_start", "message": {
            "id": message_id, "type": "message", "role": "assistant", "model": model, "content": [],
            "stop_reason": None, "stop_sequence": None,
            "usage": {**usage, "output_tokens": min(1, out_tokens)}}})
        first_delta_sent = False
        for index, block in enumerate(blocks):
            start: dict[str, Any]
            if block["type"] == "text":
                start = {"type": "text", "text": ""}
                pieces = _split(block["text"], size)
                deltas = [{"type": "text_delta", "text": p} for p in pieces]
            else:
                start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
                pieces = _split(json.dumps(block["input"], ensure_ascii=False), size)
                deltas = [{"type": "input_json_delta", "partial_json": p} for p in pieces]
            self._event("content_block_start", {"type": "content_block_start", "index": index,
                                                "content_block": start})
            for delta in deltas:
                if delay and not self._wait(delay):
                    return
                self._event("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta})
                if hang in (True, "mid_stream") and not first_delta_sent:
                    first_delta_sent = True
                    if not self._hang(hang_s):
                        return
                first_delta_sent = True
            self._event("content_block_stop", {"type": "content_block_stop", "index": index})
        if hang == "before_end" and not self._hang(hang_s):
            return
        self._event("message_delta", {"type": "message_delta",
                                      "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                                      "usage": ({**usage, "output_tokens": out_tokens} if reply.get("usage")
                                                else {"output_tokens": out_tokens})})
        self._event("message_stop", {"type": "message_stop"})

    # ------------------------------------------------------------ low level
    def _event(self, name: str, data: dict) -> None:
        self.wfile.write(f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode("utf-8"))
        self.wfile.flush()

    def _send_json(self, status: int, doc: dict) -> None:
        raw = json.dumps(doc, ensure_ascii=False).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(raw)
        self.wfile.flush()

    def _client_gone(self) -> bool:
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
            if readable:
                return self.connection.recv(1, socket.MSG_PEEK) == b""
        except (OSError, ValueError):
            return True
        return False

    def _wait(self, seconds: float) -> bool:
        """Sleep ``seconds`` in small steps; False when the server stops or the client disconnects."""
        deadline = time.monotonic() + seconds
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return True
            if self.rehearsal._stop.wait(min(left, 0.2)):
                return False
            if self._client_gone():
                self.rehearsal._update(self._record, client_closed=True)
                return False

    def _hang(self, hang_s: float | None) -> bool:
        """Stall the stream: for ``hang_s`` seconds (True after) or until disconnect/stop (False)."""
        self.rehearsal._update(self._record, hung=True)
        if hang_s:
            return self._wait(float(hang_s))
        while not self.rehearsal._stop.wait(0.2):
            if self._client_gone():
                self.rehearsal._update(self._record, client_closed=True)
                return False
        return False


def _blocks_of(reply: dict) -> list[dict]:
    blocks = []
    for b in reply.get("content") or []:
        if "text" in b:
            blocks.append({"type": "text", "text": b["text"]})
        else:
            tu = b["tool_use"]
            blocks.append({"type": "tool_use", "id": tu.get("id") or f"toolu_rh{uuid.uuid4().hex[:20]}",
                           "name": tu["name"], "input": tu.get("input") or {}})
    if not blocks:
        blocks.append({"type": "text", "text": ""})
    return blocks


def _usage_of(reply: dict, view: RequestView, blocks: list[dict]) -> tuple[dict[str, int], int]:
    """The usage a reply reports: the message_start usage (input and cache counts) and the final output tokens.

    The scenario's ``reply.usage`` gives any of the four counts (references/scenario-format.md "reply"); the rest
    keep the default: input = the request's characters / 4, output = the reply's characters / 4 (at least 1 each),
    cache counts 0. A stream reports the output count in ``message_delta`` (message_start carries at most 1)."""
    given = reply.get("usage") or {}
    usage = {"input_tokens": int(given.get("input_tokens", max(1, len(view.all_text) // 4))), "output_tokens": 0,
             "cache_creation_input_tokens": int(given.get("cache_creation_input_tokens", 0)),
             "cache_read_input_tokens": int(given.get("cache_read_input_tokens", 0))}
    out_tokens = int(given.get("output_tokens", max(1, sum(len(json.dumps(b)) for b in blocks) // 4)))
    return usage, out_tokens


def _side_text(text: str, output_format: Any) -> str:
    """The side-query answer: ``text``, or a JSON object of it when the request asks for JSON output.

    The CLI's title query sends ``output_config.format = {type: json_schema, schema: {properties: {title}}}``
    (observed 2.1.197); every string property of that schema gets ``text``.
    """
    if not isinstance(output_format, dict) or output_format.get("type") != "json_schema":
        return text
    schema = output_format.get("schema") or {}
    props = schema.get("properties") or {}
    names = [n for n, p in props.items() if isinstance(p, dict) and p.get("type", "string") == "string"]
    return json.dumps({n: text for n in (names or schema.get("required") or ["title"])})


def _split(text: str, size: int) -> list[str]:
    return [text[i:i + size] for i in range(0, len(text), size)] or [""]


def _error_body(status: int, etype: str, message: str) -> dict:
    return {"type": "error", "error": {"type": etype, "message": message},
            "request_id": f"req_rehearsal_{status}"}
