"""A recorded answer, played again: the SSE events of a tape's response, with this run's values where the recorded
run had its own, and message ids that say the answer was scripted.

A response is kept on the tape as the client read it (:mod:`live_trial.tape.file`). Played back it stays so, event
for event, except for two things:

- a value a placeholder of the request stood for (the workdir's path, a transcript record's uuid, a date:
  :mod:`live_trial.tape.normalize`) and that is different in this run is written as this run's value: a content
  block that names it is sent as one delta holding its whole text, the value replaced (its recorded deltas are joined
  first, so a value cut across two of them is found);
- each message id gets the rehearsal server's prefix (``msg_rehearsal_``), so the transcript says by itself that its
  model was played from a script (live_trial/acceptance/origin.py), as every rehearsal's does.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from live_trial.rehearsal.config import REHEARSAL_MESSAGE_PREFIX

__all__ = ["Event", "parse_sse", "replacements", "play", "message_of"]

#: The delta types of a content block and the field holding their text.
_DELTA_TEXT = {"text_delta": "text", "input_json_delta": "partial_json", "thinking_delta": "thinking"}


@dataclass
class Event:
    """One SSE event: ``raw`` its text as read (with its blank line), ``name`` (``event:``), ``data`` (``data:``
    parsed as JSON; None when absent or not JSON)."""

    raw: str
    name: str | None
    data: Any


def parse_sse(text: str) -> list[Event]:
    """The events of an SSE stream, in order; each keeps its exact text (``raw``), so joining them gives ``text``
    back."""
    events = []
    for raw in re.findall(r".*?(?:\r?\n\r?\n|\Z)", text, flags=re.S):
        if not raw:
            continue
        name, data_lines = None, []
        for line in raw.splitlines():
            if line.startswith("event:"):
                name = line[6:].strip()
            elif line.startswith("data:"):
                data_lines.append(line[5:].lstrip())
        data: Any = None
        if data_lines:
            try:
                data = json.loads("\n".join(data_lines))
            except ValueError:
                data = None
        events.append(Event(raw, name, data))
    return events


def replacements(recorded: dict[str, str], now: dict[str, str]) -> list[tuple[str, str]]:
    """``(recorded value, this run's value)`` for each placeholder bound in both with different values, longest
    recorded value first."""
    pairs = {recorded[k]: now[k] for k in recorded.keys() & now.keys() if recorded[k] != now[k] and recorded[k]}
    return sorted(pairs.items(), key=lambda p: -len(p[0]))


def _replace(text: str, pairs: list[tuple[str, str]], *, json_text: bool) -> str:
    """``text`` with each recorded value replaced in one pass (a value written in is never replaced again); in JSON
    source (``json_text``) the values are matched and written JSON-escaped."""
    if not pairs:
        return text
    esc = (lambda s: json.dumps(s, ensure_ascii=False)[1:-1]) if json_text else (lambda s: s)
    table = {esc(old): esc(new) for old, new in pairs}
    pattern = re.compile("|".join(re.escape(k) for k in sorted(table, key=len, reverse=True)))
    return pattern.sub(lambda m: table[m.group(0)], text)


def _scripted_id(value: Any) -> Any:
    if isinstance(value, str) and value.startswith("msg_") and not value.startswith(REHEARSAL_MESSAGE_PREFIX):
        return REHEARSAL_MESSAGE_PREFIX + value[len("msg_"):]
    return value


def _event_text(name: str | None, data: Any) -> str:
    return (f"event: {name}\n" if name else "") + f"data: {json.dumps(data, ensure_ascii=False)}\n\n"


def play(body: str, stream: bool, pairs: list[tuple[str, str]]) -> list[bytes]:
    """The pieces to send for a recorded response ``body``: one per SSE event of a stream (``stream``), else the
    whole body. Values are replaced (``pairs``, :func:`replacements`) and message ids marked scripted (module
    docstring); what needs neither is sent byte for byte as recorded."""
    if not stream:
        return [_play_json(body, pairs).encode("utf-8")]
    events = parse_sse(body)
    out: list[str] = []
    i = 0
    while i < len(events):
        ev = events[i]
        data = ev.data if isinstance(ev.data, dict) else None
        if data is not None and data.get("type") == "message_start" and isinstance(data.get("message"), dict):
            msg = dict(data["message"])
            msg["id"] = _scripted_id(msg.get("id"))
            out.append(_event_text(ev.name, {**data, "message": msg}))
            i += 1
            continue
        if data is not None and data.get("type") == "content_block_start":
            end = next((j for j in range(i + 1, len(events)) if isinstance(events[j].data, dict)
                        and events[j].data.get("type") == "content_block_stop"), len(events) - 1)
            out.extend(_play_block(events[i:end + 1], pairs))
            i = end + 1
            continue
        out.append(ev.raw)
        i += 1
    return [piece.encode("utf-8") for piece in out]


def _play_block(events: list[Event], pairs: list[tuple[str, str]]) -> list[str]:
    """One content block (its start, deltas and stop): as recorded when no recorded value is in it, else its start,
    one delta with the whole text (values replaced) and whatever else it held."""
    deltas = [e for e in events if isinstance(e.data, dict) and e.data.get("type") == "content_block_delta"
              and isinstance(e.data.get("delta"), dict) and e.data["delta"].get("type") in _DELTA_TEXT]
    kinds = {e.data["delta"]["type"] for e in deltas}
    if not pairs or len(kinds) != 1:
        return [e.raw for e in events]
    kind = kinds.pop()
    key = _DELTA_TEXT[kind]
    whole = "".join(str(e.data["delta"].get(key, "")) for e in deltas)
    changed = _replace(whole, pairs, json_text=kind == "input_json_delta")
    start = events[0]
    start_doc = json.loads(_replace(json.dumps(start.data, ensure_ascii=False), pairs, json_text=True))
    if changed == whole and start_doc == start.data:
        return [e.raw for e in events]
    index = deltas[0].data.get("index") if deltas else start.data.get("index")
    out = [_event_text(start.name, start_doc)]
    if deltas:
        out.append(_event_text(deltas[0].name, {"type": "content_block_delta", "index": index,
                                                "delta": {"type": kind, key: changed}}))
    ids = {id(d) for d in deltas}
    out.extend(e.raw for e in events[1:] if id(e) not in ids)
    return out


def _play_json(body: str, pairs: list[tuple[str, str]]) -> str:
    """A recorded JSON answer with values replaced and a message's id marked scripted; any other body as recorded."""
    try:
        doc = json.loads(body)
    except ValueError:
        return body
    if not isinstance(doc, dict) or doc.get("type") != "message":
        return body
    doc = json.loads(_replace(json.dumps(doc, ensure_ascii=False), pairs, json_text=True))
    doc["id"] = _scripted_id(doc.get("id"))
    return json.dumps(doc, ensure_ascii=False)


def message_of(body: str, stream: bool) -> dict[str, Any] | None:
    """The assistant message a recorded response carries, rebuilt from its events (``{id, model, content: [{type:
    text, text} | {type: tool_use, id, name, input} | {type: thinking, ...}], stop_reason, usage}``), or None for an
    error or a body that is not a message."""
    if not stream:
        try:
            doc = json.loads(body)
        except ValueError:
            return None
        return doc if isinstance(doc, dict) and doc.get("type") == "message" else None
    message: dict[str, Any] | None = None
    parts: dict[int, list[str]] = {}
    for ev in parse_sse(body):
        data = ev.data if isinstance(ev.data, dict) else {}
        kind = data.get("type")
        if kind == "message_start" and isinstance(data.get("message"), dict):
            message = dict(data["message"], content=[])
        elif message is None:
            continue
        elif kind == "content_block_start":
            message["content"].append(dict(data.get("content_block") or {}))
            parts[len(message["content"]) - 1] = []
        elif kind == "content_block_delta" and message["content"]:
            delta = data.get("delta") or {}
            key = _DELTA_TEXT.get(str(delta.get("type")))
            if key:
                parts[len(message["content"]) - 1].append(str(delta.get(key, "")))
        elif kind == "message_delta":
            message["stop_reason"] = (data.get("delta") or {}).get("stop_reason")
            message["usage"] = {**(message.get("usage") or {}), **(data.get("usage") or {})}
    if message is None:
        return None
    for n, block in enumerate(message["content"]):
        text = "".join(parts.get(n, []))
        if block.get("type") == "tool_use":
            try:
                block["input"] = json.loads(text) if text else block.get("input") or {}
            except ValueError:
                block["input"] = {"_partial_json": text}
        elif block.get("type") == "text":
            block["text"] = block.get("text", "") + text
        elif block.get("type") == "thinking":
            block["thinking"] = block.get("thinking", "") + text
    return message
