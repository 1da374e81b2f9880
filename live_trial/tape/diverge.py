"""Where a replayed run left its tape: the first difference between a request the tape does not cover and the nearest
request it does (README "Replaying a real trial offline").

The nearest recorded request is one of the same role (the session, a subagent, the evaluator) that shares the most
leading messages with it, the same turn first. The difference is named the way a person looks for it: which message,
and in it which tool's result, which text, what was recorded and what came now; or, messages alike, the system prompt,
the tools offered or the model. Values are compared normalized (:mod:`live_trial.tape.normalize`). Pure functions.

The sentence is plain text: the turn and the request counted from 1, as the tape and the replay log count them, and the
text quoted as a person reads it. 2.1.332 writes the skill listing's descriptions HTML-escaped into its
``{"role": "system"}`` message (``Hello, &lt;name&gt;!``; 2.1.197 sends ``<name>``): a quote of a system message's text
reads such character references back, unless that would hide the very difference (references/transcript-jsonl.md "The
last message of a request, and a replay's match by turn"). Any other text (a tool result that reads an HTML file) is
quoted as it was sent.
"""
from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any

from live_trial.tape.file import Request, TapeEntry
from live_trial.tape.normalize import canonical

#: Characters of recorded and new text shown around the first difference.
EXCERPT_CHARS = 60


@dataclass(frozen=True)
class Divergence:
    """A request the tape does not cover: ``role`` and ``turn`` (the model turn asked for, 1 the first, as the tape and
    the replay log count it), ``request`` (its number in this run, 1-based, the replay log's ``n``), ``tape_seq`` (the
    nearest recorded request compared with, None when the tape has none of this role) and ``difference`` (one
    sentence)."""

    role: str
    turn: int
    request: int
    tape_seq: int | None
    difference: str

    def sentence(self) -> str:
        """``turn 2 of the session (request 4): <difference>``: the turn and the request as the replay log numbers
        them (``turn``, ``n``)."""
        return f"turn {self.turn} of the {_role_name(self.role)} (request {self.request}): {self.difference}"


def _role_name(role: str) -> str:
    return {"session": "session", "subagent": "subagent", "evaluator": "evaluator", "side": "side query"}.get(
        role, role)


def _messages(body: Any) -> list[Any]:
    msgs = body.get("messages") if isinstance(body, dict) else None
    return [m for m in msgs if isinstance(m, dict)] if isinstance(msgs, list) else []


def _shared(a: list[Any], b: list[Any]) -> int:
    n = 0
    for x, y in zip(a, b):
        if canonical(x) != canonical(y):
            break
        n += 1
    return n


def nearest(req: Request, entries: list[TapeEntry]) -> TapeEntry | None:
    """The recorded model request of ``req``'s role that shares the most leading messages with it (the same turn
    first, then the earlier one), or None when the tape has none of that role."""
    mine = _messages(req.body)
    same = [e for e in entries if e.request.kind == "messages" and e.request.role == req.role]
    if not same:
        return None
    return max(same, key=lambda e: (_shared(_messages(e.request.body), mine), e.request.turn == req.turn, -e.seq))


def explain(req: Request, number: int, entries: list[TapeEntry]) -> Divergence:
    """The :class:`Divergence` of request ``number`` (``req``) against the tape's ``entries``."""
    role, turn = req.role or "session", req.turn or 1
    near = nearest(req, entries)
    if near is None:
        return Divergence(role, turn, number, None, f"the tape holds no request of the {_role_name(role)}")
    said = difference(near.request.body, req.body)
    recorded, asked = (b.get("model") if isinstance(b, dict) else None for b in (near.request.body, req.body))
    if isinstance(recorded, str) and isinstance(asked, str) and recorded != asked:
        # the model the CLI asks for is in every request (and in its system text): replayed with another --model,
        # or with none after a recording with one, the run leaves the tape at its first turn
        said = (f"the tape was recorded with the model {recorded}, this run asks for {asked}: replay it with "
                f"--model {recorded} (then: {said})")
    return Divergence(role, turn, number, near.seq, said)


def difference(recorded: Any, now: Any) -> str:
    """One sentence naming the first difference between two normalized request bodies."""
    ra, rb = _messages(recorded), _messages(now)
    n = _shared(ra, rb)
    if n < len(ra) and n < len(rb):
        return _message_change(n, ra[n], rb[n], rb[n - 1] if n else None)
    if n < len(rb):
        return f"message {n + 1} ({rb[n].get('role')}) is new: the tape's request ended before it ({_head(rb[n])})"
    if n < len(ra):
        return f"message {n + 1} ({ra[n].get('role')}) of the recorded request is missing now"
    for key, what in (("system", "the system prompt"), ("tools", "the tools offered"),
                      ("model", "the model asked for")):
        a = recorded.get(key) if isinstance(recorded, dict) else None
        b = now.get(key) if isinstance(now, dict) else None
        if canonical(a) != canonical(b):
            if key == "tools":
                return _tools_change(a, b)
            return f"{what} changed: {_excerpts(_text(a), _text(b))}"
    keys = sorted(k for k in set(recorded or {}) | set(now or {})
                  if canonical((recorded or {}).get(k)) != canonical((now or {}).get(k)))
    return f"the request's {', '.join(keys) or 'body'} changed"


def _blocks(msg: dict) -> list[dict]:
    content = msg.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _message_change(n: int, a: dict, b: dict, before: dict | None) -> str:
    """Message ``n`` (0-based) differs: name the block, the tool whose result it is, and the text."""
    where = f"message {n + 1} ({b.get('role')})"
    ba, bb = _blocks(a), _blocks(b)
    for i, (x, y) in enumerate(zip(ba, bb)):
        if canonical(x) == canonical(y):
            continue
        if x.get("type") == y.get("type") == "tool_result":
            tool = _tool_name(before, str(y.get("tool_use_id")))
            return (f"{where}: the tool_result of {tool} ({y.get('tool_use_id')}) changed: "
                    f"{_excerpts(_text(x.get('content')), _text(y.get('content')))}")
        if x.get("type") == y.get("type") == "tool_use":
            return f"{where}: the input of its {y.get('name')} call changed: " \
                   f"{_excerpts(canonical(x.get('input')), canonical(y.get('input')))}"
        if x.get("type") == y.get("type") == "text":
            plain = b.get("role") == "system"
            return f"{where}: its text changed: {_excerpts(str(x.get('text')), str(y.get('text')), plain)}"
        return f"{where}: block {i + 1} changed from {x.get('type')} to {y.get('type')}"
    if len(bb) != len(ba):
        return f"{where}: it holds {len(bb)} blocks where the tape's held {len(ba)}"
    return f"{where} changed: {_excerpts(canonical(a), canonical(b))}"


def _tool_name(before: dict | None, tool_use_id: str) -> str:
    for block in _blocks(before or {}):
        if block.get("type") == "tool_use" and block.get("id") == tool_use_id:
            return str(block.get("name"))
    return "a tool"


def _tools_change(a: Any, b: Any) -> str:
    names = [{t.get("name") for t in x or [] if isinstance(t, dict)} for x in (a, b)]
    added, removed = sorted(map(str, names[1] - names[0])), sorted(map(str, names[0] - names[1]))
    if added or removed:
        return "the tools offered changed: " + "; ".join(
            p for p in (f"new {', '.join(added)}" if added else "", f"gone {', '.join(removed)}" if removed else "")
            if p)
    return "the tools offered changed (their descriptions or schemas)"


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        texts = [b.get("text") for b in value if isinstance(b, dict) and isinstance(b.get("text"), str)]
        if len(texts) == len(value):
            return "\n".join(t for t in texts if t is not None)
    return canonical(value)


def _head(msg: dict) -> str:
    return _clip(" ".join(_text(msg.get("content")).split()), EXCERPT_CHARS)


def _clip(text: str, n: int) -> str:
    return text if len(text) <= n else text[:n - 1] + "…"


def _excerpts(a: str, b: str, unescape: bool = False) -> str:
    """``recorded "…", now "…"`` around the first character where ``a`` and ``b`` differ; with ``unescape``, HTML
    character references read back (module docstring) when the texts still differ without them."""
    plain = html.unescape(a), html.unescape(b)
    if unescape and plain[0] != plain[1]:
        a, b = plain
    i = next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    start = max(0, i - 15)

    def cut(s: str) -> str:
        piece = s[start:start + EXCERPT_CHARS]
        return ("…" if start else "") + piece + ("…" if start + EXCERPT_CHARS < len(s) else "")
    return f'recorded "{cut(a)}", now "{cut(b)}"'
