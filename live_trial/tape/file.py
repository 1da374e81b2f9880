"""The tape: ``<workdir>/model-tape.jsonl``, one line per request the trial's CLI (its session and its evaluator) sent
to the model's API and the response it got, as a recording proxy relayed them (README "Replaying a real trial
offline"; schemas/model-tape.schema.json).

A line holds the request as :mod:`live_trial.tape.normalize` leaves it (what varies between runs taken out, credentials
redacted), its hash and the hash of its last message the session or the evaluator sent
(:func:`~live_trial.tape.normalize.last_message`), the bindings of its placeholders, and the response: status, a
few headers and the body exactly as the client read it (the SSE stream of a streamed answer). :class:`TapeRecorder`
writes the lines as the exchanges end (each validated against the schema first); :func:`read_tape` reads a tape back.

A model turn is counted from 1, as the replay log and a replay's verdict count it (turn 1: the request with no
assistant message). A line's ``turn`` and ``last_message_sha256`` are read back from its request, never from what the
line says: a tape an earlier live-trial wrote (turns from 0, the hash of the CLI's own last system message) replays the
same as a new one.
"""
from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from live_trial.clock import iso_z
from live_trial.errors import RefusedInput
from live_trial.jsonfile import append_jsonl, schema_errors, validate
from live_trial.rehearsal.scenario import analyse_request
from live_trial.tape.normalize import Normalized, Roots, digest, last_message, normalize, redact
from live_trial.tape.proxy import Exchange

SCHEMA = "model-tape.schema.json"
#: Largest tape :func:`read_tape` reads.
TAPE_MAX_BYTES = 256 * 1024 * 1024
#: What a request is: a model turn (``messages``), a token count, or anything else the CLI asked the service.
KINDS = ("messages", "count_tokens", "other")
#: Whose request it is: the trial's session, one of its subagents, the evaluator (the only caller offering
#: ``StructuredOutput``), or a side query with no tools (the title 2.1.197 asks for).
ROLES = ("session", "subagent", "evaluator", "side")


@dataclass
class Request:
    """A request as a tape keeps it and as a replay compares it: ``kind`` and ``role`` (:data:`KINDS`,
    :data:`ROLES`; role None for a request that is not a model turn), ``turn`` (the model's turn it asks for, 1 the
    first: its assistant messages + 1; None for a request that is no model turn), ``body`` the normalized body,
    ``sha256`` / ``last_sha256`` its hash and the hash of its last message the session or the evaluator sent
    (:func:`~live_trial.tape.normalize.last_message`; None for a request that is no model turn or token count),
    ``bindings`` what its placeholders stood for."""

    method: str
    path: str
    kind: str
    role: str | None
    turn: int | None
    body: Any
    sha256: str
    last_sha256: str | None
    bindings: dict[str, str] = field(default_factory=dict)


@dataclass
class TapeEntry:
    """One line of a tape: ``seq`` (requests in order of arrival, 1-based), ``at`` (its arrival, UTC), ``client``
    (the CLI's user agent, e.g. ``claude-cli/2.1.332 (external, cli)``), the :class:`Request` and the response:
    ``status``, ``headers``, ``body`` (the text the client read), ``stream`` (an SSE stream)."""

    seq: int
    at: str
    client: str
    request: Request
    status: int
    headers: dict[str, str]
    body: str
    stream: bool
    first_byte_s: float | None = None
    total_s: float = 0.0
    client_closed: bool = False
    proxy_error: str | None = None

    def to_doc(self) -> dict[str, Any]:
        """The line's JSON document (schemas/model-tape.schema.json)."""
        r = self.request
        return {"seq": self.seq, "at": self.at, "client": self.client, "method": r.method, "path": r.path,
                "kind": r.kind, "role": r.role, "turn": r.turn, "request": r.body, "request_sha256": r.sha256,
                "last_message_sha256": r.last_sha256, "bindings": r.bindings,
                "response": {"status": self.status, "headers": self.headers, "stream": self.stream,
                             "body": self.body},
                "timing": {"first_byte_s": self.first_byte_s, "total_s": self.total_s},
                "client_closed": self.client_closed, "proxy_error": self.proxy_error}

    @classmethod
    def from_doc(cls, doc: dict[str, Any]) -> "TapeEntry":
        """The entry of a schema-valid line; its turn and last message's hash read from its request (module
        docstring)."""
        resp, timing = doc["response"], doc["timing"]
        turn, last = _counted(doc["kind"], doc["request"])
        req = Request(doc["method"], doc["path"], doc["kind"], doc["role"], turn, doc["request"],
                      doc["request_sha256"], last, dict(doc["bindings"]))
        return cls(doc["seq"], doc["at"], doc["client"], req, resp["status"], dict(resp["headers"]), resp["body"],
                   resp["stream"], timing["first_byte_s"], timing["total_s"], doc["client_closed"], doc["proxy_error"])


def describe_request(method: str, path: str, raw: bytes, roots: Roots, secrets: tuple[str, ...] = ()) -> Request:
    """The :class:`Request` of one HTTP request: its body parsed (a body that is not JSON is kept as redacted text),
    normalized (:func:`live_trial.tape.normalize.normalize`), its kind, role and turn. Never raises."""
    route = path.split("?", 1)[0].rstrip("/")
    kind = "messages" if route == "/v1/messages" else "count_tokens" if route == "/v1/messages/count_tokens" \
        else "other"
    body: Any
    try:
        body = json.loads(raw) if raw else None
    except ValueError:
        body = redact(raw.decode("utf-8", "replace"), secrets)
    norm = normalize(body, roots, secrets) if body is not None else Normalized(None, {}, digest(None), "")
    role = _role_of(body) if kind == "messages" and isinstance(norm.body, dict) else None
    turn, last = _counted(kind, norm.body)
    return Request(method, path, kind, role, turn, norm.body, norm.sha256, last, norm.bindings)


def _counted(kind: str, body: Any) -> tuple[int | None, str | None]:
    """``(turn, last_sha256)`` of a normalized request ``body`` of ``kind`` (:class:`Request`)."""
    if not isinstance(body, dict) or kind == "other":
        return None, None
    turn = 1 + sum(1 for m in body.get("messages") or [] if isinstance(m, dict) and m.get("role") == "assistant") \
        if kind == "messages" else None
    return turn, digest(last_message(body))


def _role_of(body: dict) -> str:
    """session, subagent, evaluator or side (:data:`ROLES`) of a Messages request body."""
    tools = [t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)]
    if "StructuredOutput" in tools:
        return "evaluator"
    view = analyse_request(body)
    return "side" if view.side_query else "subagent" if view.subagent else "session"


class TapeRecorder:
    """Writes a tape as a :class:`~live_trial.tape.proxy.RecordingProxy` relays exchanges: pass :meth:`record` as its
    ``on_exchange``. ``roots`` are the trial's paths (taken out of each request). A line that cannot be written (a
    full disk) is counted in ``problems`` (the trial's log names them), never raised into the proxy's thread."""

    def __init__(self, path: Path, roots: Roots, *, on_line: Callable[[TapeEntry], None] | None = None) -> None:
        self.path = Path(path)
        self.roots = roots
        self.on_line = on_line
        self.problems: list[str] = []
        #: Lines on the tape (a resumed recording appends to the lines it wrote before).
        self.lines = len(self.path.read_bytes().splitlines()) if self.path.is_file() else 0
        self._lock = threading.Lock()

    def record(self, ex: Exchange) -> None:
        """Append the line of ``ex`` (credentials redacted, request normalized), validated against the schema."""
        try:
            entry = entry_of(ex, self.roots)
            doc = entry.to_doc()
            validate(doc, SCHEMA, what=self.path.name)
            with self._lock:
                append_jsonl(self.path, doc)
                self.lines += 1
            if self.on_line is not None:
                self.on_line(entry)
        except Exception as exc:  # noqa: BLE001 - a recording problem must never break the relay
            with self._lock:
                self.problems.append(f"request {ex.seq} ({ex.method} {ex.path}) was not recorded: "
                                     f"{type(exc).__name__}: {str(exc)[:300]}")


def entry_of(ex: Exchange, roots: Roots) -> TapeEntry:
    """The tape line of one relayed exchange: the request described (:func:`describe_request`), the response body
    as the client read it with every credential the request carried redacted."""
    request = describe_request(ex.method, ex.path, ex.request_body, roots, ex.secrets)
    body = redact(ex.response_body.decode("utf-8", "replace"), ex.secrets)
    stream = (ex.response_headers.get("content-type") or "").startswith("text/event-stream")
    return TapeEntry(seq=ex.seq, at=iso_z(ex.started),
                     client=redact(ex.user_agent, ex.secrets), request=request, status=ex.status,
                     headers={k: redact(v, ex.secrets) for k, v in ex.response_headers.items()}, body=body,
                     stream=stream, first_byte_s=_round(ex.first_byte_s), total_s=_round(ex.total_s) or 0.0,
                     client_closed=ex.client_closed, proxy_error=ex.proxy_error)


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def read_tape(path: Path) -> list[TapeEntry]:
    """The entries of the tape at ``path``, in file order. Raises :class:`RefusedInput` (``tape_invalid``, exit 2)
    naming the file and the line when it is missing, larger than :data:`TAPE_MAX_BYTES`, not UTF-8 JSON lines, a
    line does not fit schemas/model-tape.schema.json, or it holds no model turn."""
    path = Path(path)
    where = str(path)
    try:
        size = path.stat().st_size
        if size > TAPE_MAX_BYTES:
            raise RefusedInput(f"tape is larger than {TAPE_MAX_BYTES // (1024 * 1024)} MiB", where=where,
                               code="tape_invalid", fix="record a shorter trial")
        text = path.read_text(encoding="utf-8")
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        raise RefusedInput("tape file not found", where=where, code="tape_not_found",
                           fix="pass the model-tape.jsonl a `run --record` wrote") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise RefusedInput(f"tape cannot be read ({type(exc).__name__})", where=where, code="tape_invalid",
                           fix="pass the model-tape.jsonl a `run --record` wrote") from None
    entries = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            doc = json.loads(line)
        except json.JSONDecodeError as exc:
            raise RefusedInput(f"tape line {n} is not JSON ({exc.msg})", where=where, code="tape_invalid",
                               fix="pass the model-tape.jsonl a `run --record` wrote, unedited") from None
        errors = schema_errors(doc, SCHEMA)
        if errors:
            raise RefusedInput(f"tape line {n} does not fit {SCHEMA}: {errors[0][:200]}", where=where,
                               code="tape_invalid", fix="pass the model-tape.jsonl a `run --record` wrote, unedited")
        entries.append(TapeEntry.from_doc(doc))
    if not any(e.request.kind == "messages" and e.request.role != "side" for e in entries):
        raise RefusedInput("the tape holds no model turn of a session", where=where, code="tape_invalid",
                           fix="record a trial with `run --record` and pass its model-tape.jsonl")
    return entries

