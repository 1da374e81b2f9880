"""A rehearsal scenario written from a tape (``live-trial rehearsal from-tape TAPE -o FILE``; README "Replaying a real
trial offline", references/scenario-format.md "From a tape"): one rule per recorded model turn, for an author who wants
to read or edit what the model did.

Each rule answers what its recorded turn answered: the evaluator's first (``tools_include: [StructuredOutput]``),
then a subagent's, then the session's by ``human_turn`` and ``step`` (read from the recorded request by the scenario
language itself), with the recorded text and tool calls (thinking left out), model, token usage or error. A turn
recorded twice (a retried request) gets ``times: 1`` on all but its last answer. A value of the recorded run in an
answer is written as a placeholder that finds this run's value in the request: the trial's own folder as ``{{cwd}}``,
the workdir through the completion marker's line, the plugins root through the skill's base directory, a
transcript record's uuid through its line in the evaluator's index; any other recorded path stays as it was.
"""
from __future__ import annotations

import json
import re
from typing import Any

import yaml

from live_trial.rehearsal.scenario import analyse_request
from live_trial.tape.answer import message_of
from live_trial.tape.file import TapeEntry

__all__ = ["scenario_of", "scenario_text"]

#: Placeholders of a recorded request and the scenario placeholder that finds this run's value.
_FOUND_BY = {
    "<folder>": "{{cwd}}",
    "<workdir>": r"{{re:Completion marker: *`?(/\S+)/out/status\.json}}",
    "<plugins>": r"{{re:Base directory for this skill: (\S+)/[^/\s]+/skills/[^/\s]+}}",
}
_UUID_RE = "[0-9a-fA-F-]{36}"


def scenario_of(entries: list[TapeEntry], name: str) -> dict[str, Any]:
    """The scenario document (schemas/scenario.schema.json) that answers each recorded model turn of ``entries``
    as it was answered (module docstring)."""
    turns = [e for e in entries if e.request.kind == "messages" and e.request.role in ("session", "subagent",
                                                                                       "evaluator")]
    rules: list[dict[str, Any]] = []
    for e in turns:
        rules.append({"id": _rule_id(e, rules), "when": _when(e), "reply": _reply(e)})
    for n, rule in enumerate(rules):
        if any(r["when"] == rule["when"] for r in rules[n + 1:]):
            rule["times"] = 1
    order = {"evaluator": 0, "subagent": 1, "session": 2}
    rules.sort(key=lambda r: order[r["id"].split("-", 1)[0]])
    side = next((e for e in entries if e.request.role == "side"), None)
    doc: dict[str, Any] = {"name": name}
    if side is not None:
        title = _side_title(side)
        if title:
            doc["side_query_text"] = title
    doc["rules"] = rules
    return doc


def scenario_text(entries: list[TapeEntry], name: str, source: str) -> str:
    """:func:`scenario_of` as YAML, under a comment naming the tape it was written from."""
    head = (f"# Written by `live-trial rehearsal from-tape` from {source}: one rule per model turn the tape recorded,\n"
            "# each answering as the recorded model did. Edit freely (references/scenario-format.md).\n")
    return head + yaml.safe_dump(scenario_of(entries, name), sort_keys=False, allow_unicode=True, width=120)


def _rule_id(e: TapeEntry, rules: list[dict[str, Any]]) -> str:
    base = f"{e.request.role}-turn-{e.request.turn or 1}"
    taken = {r["id"] for r in rules}
    n, rid = 1, base
    while rid in taken:
        n += 1
        rid = f"{base}-{n}"
    return rid


def _when(e: TapeEntry) -> dict[str, Any]:
    if e.request.role == "evaluator":
        return {"tools_include": ["StructuredOutput"]}
    view = analyse_request(e.request.body if isinstance(e.request.body, dict) else {})
    when: dict[str, Any] = {"human_turn": max(1, view.human_turn), "step": view.step}
    if e.request.role == "subagent":
        when["subagent"] = True
    if view.compaction:
        when["compaction"] = True
    if view.task_notification is not None:
        when["task_notification"] = True
    return when


def _reply(e: TapeEntry) -> dict[str, Any]:
    message = message_of(e.body, e.stream) if 200 <= e.status < 300 else None
    if message is None:
        return {"error": _error_of(e)}
    values = _values(e)
    content: list[dict[str, Any]] = []
    for block in message.get("content") or []:
        if block.get("type") == "text" and block.get("text"):
            content.append({"text": _fill(block["text"], values)})
        elif block.get("type") == "tool_use":
            tool: dict[str, Any] = {"name": block.get("name"), "input": _fill(block.get("input") or {}, values)}
            if isinstance(block.get("id"), str) and re.fullmatch(r"[A-Za-z0-9_-]+", block["id"]):
                tool["id"] = block["id"]
            content.append({"tool_use": tool})
    reply: dict[str, Any] = {"content": content or [{"text": ""}]}
    if message.get("model"):
        reply["model"] = message["model"]
    if message.get("stop_reason") in ("end_turn", "tool_use", "max_tokens", "stop_sequence", "pause_turn", "refusal"):
        reply["stop_reason"] = message["stop_reason"]
    usage = {k: v for k, v in (message.get("usage") or {}).items()
             if k in ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
             and isinstance(v, int) and v >= 0}
    if usage:
        reply["usage"] = usage
    return reply


def _error_of(e: TapeEntry) -> dict[str, Any]:
    try:
        err = json.loads(e.body).get("error") or {}
    except (ValueError, AttributeError):
        err = {}
    out: dict[str, Any] = {"status": e.status if e.status >= 400 else 500}
    if isinstance(err.get("type"), str):
        out["type"] = err["type"]
    if isinstance(err.get("message"), str):
        out["message"] = err["message"]
    return out


def _values(e: TapeEntry) -> list[tuple[str, str]]:
    """``(recorded value, scenario placeholder)`` for the values of the recorded request an answer may hold, longest
    value first."""
    pairs = {v: _FOUND_BY[k] for k, v in e.request.bindings.items() if k in _FOUND_BY}
    text = _request_text(e.request.body)
    for key, value in e.request.bindings.items():
        if key.startswith("<uuid:"):
            line = next((ln for ln in text.splitlines() if ln.startswith(f"- {key} |")), None)
            if line is not None:
                rest = re.split(r"<[a-z_-]+(?::\d+)?>|[{}]", line[len(f"- {key} "):], maxsplit=1)[0][:60]
                pairs[value] = "{{re:- (" + _UUID_RE + ") " + re.escape(rest).replace("\\ ", " ") + "}}"
    return sorted(pairs.items(), key=lambda p: -len(p[0]))


def _request_text(body: Any) -> str:
    """The text of every message of a (normalized) request body, one after the other."""
    msgs = body.get("messages") if isinstance(body, dict) else None
    texts = []
    for msg in msgs if isinstance(msgs, list) else []:
        content = msg.get("content") if isinstance(msg, dict) else None
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            texts += [b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"]
    return "\n".join(texts)


def _fill(node: Any, values: list[tuple[str, str]]) -> Any:
    if isinstance(node, str):
        for value, placeholder in values:
            node = node.replace(value, placeholder)
        return node
    if isinstance(node, dict):
        return {k: _fill(v, values) for k, v in node.items()}
    if isinstance(node, list):
        return [_fill(v, values) for v in node]
    return node


def _side_title(e: TapeEntry) -> str | None:
    message = message_of(e.body, e.stream)
    text = next((b.get("text") for b in (message or {}).get("content") or [] if b.get("type") == "text"), None)
    if not isinstance(text, str):
        return None
    try:
        doc = json.loads(text)
    except ValueError:
        return text or None
    return str(doc.get("title")) if isinstance(doc, dict) and doc.get("title") else None
