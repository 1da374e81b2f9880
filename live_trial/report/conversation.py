"""A trial's transcript as a conversation a person can read: the prompts, the model's words, each tool call with its
result (folded), errors marked, the subagents' conversations nested under the call that started them.

Read only through :mod:`live_trial.transcript.reader` (ARCHITECTURE invariant 2) and put in the order the records
happened (:func:`live_trial.transcript.order.causal_order`). The transcripts the session left on ``/clear``
(``moved-from/``) come first. Bounded: a long text is cut to :data:`MAX_TEXT_CHARS` with a link to the raw file, at
most :data:`MAX_ENTRIES` entries are kept (a note says how many were left out), and a transcript over
:data:`MAX_FULL_BYTES` is read from its tail only. Text is kept as text; escaping is the page's job.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import timezone
from pathlib import Path
from typing import Any, Mapping

from live_trial.clock import parse_iso_z
from live_trial.transcript.order import causal_order
from live_trial.transcript.reader import read_records, read_tail
from live_trial.transcript.records import is_human_prompt, message_content, unwrap_paste
from live_trial.workdir_files import SUBAGENTS, TRANSCRIPT, Workdir

MAX_TEXT_CHARS = 2000
MAX_ENTRIES = 1500
MAX_FULL_BYTES = 64 * 1024 * 1024
TAIL_BYTES = 16 * 1024 * 1024
MAX_DEPTH = 3
_AGENT_ID = re.compile(r"agentId: ([A-Za-z0-9_-]+)")


@dataclass
class Entry:
    """One thing in the conversation. ``kind``: prompt (what was typed or pasted: a human prompt), meta (text the CLI
    added: a skill's body, a task notification, a subagent's instructions), text, thinking, tool (a call and its
    result), error (an API error), note (compaction, an interruption, a part left out). ``source``: the raw file it is
    in (relative to the workdir)."""

    kind: str
    source: str
    uuid: str | None = None
    time: str | None = None
    text: str = ""
    cut: int = 0
    name: str = ""
    summary: str = ""
    result: str | None = None
    result_cut: int = 0
    is_error: bool = False
    agent: str | None = None
    children: list["Entry"] = field(default_factory=list)
    anchor: str | None = None           # the record uuid this entry is the page's target for (first entry only)
    result_uuid: str | None = None
    result_anchor: str | None = None


@dataclass
class Conversation:
    """The entries in order, the raw files they come from, and notes on what was left out or could not be read."""

    entries: list[Entry] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    uuids: set[str] = field(default_factory=set)


def cut(text: str, limit: int = MAX_TEXT_CHARS) -> tuple[str, int]:
    """``(text, characters left out)``: ``text`` cut to ``limit`` characters."""
    text = text or ""
    return (text, 0) if len(text) <= limit else (text[:limit], len(text) - limit)


def _time(rec: Mapping[str, Any]) -> str | None:
    ts = rec.get("timestamp")
    try:
        return parse_iso_z(str(ts)).astimezone(timezone.utc).strftime("%H:%M:%S")
    except ValueError:
        return None


def _text_of(content: Any) -> str:
    """The readable text of a tool_result's content (a string, or blocks of text and other kinds)."""
    if isinstance(content, str):
        return content
    parts = []
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict) and block.get("type") == "text":
            parts.append(str(block.get("text") or ""))
        elif isinstance(block, dict):
            parts.append(f"[{block.get('type')}]")
    return "\n".join(parts)


def tool_summary(name: str, data: Any) -> str:
    """One line for a folded tool call: the input that says most (a path, a command, a skill, a question)."""
    if not isinstance(data, dict):
        return ""
    for key in ("skill", "file_path", "command", "pattern", "description", "url", "prompt"):
        if isinstance(data.get(key), str) and data[key].strip():
            return data[key].strip().splitlines()[0][:160]
    questions = data.get("questions")
    if isinstance(questions, list) and questions and isinstance(questions[0], dict):
        return str(questions[0].get("question") or "")[:160]
    return json.dumps(data, ensure_ascii=False)[:160]


class _Builder:
    def __init__(self, workdir: Path, conv: Conversation) -> None:
        self.workdir, self.conv = workdir, conv
        self.count = 0
        self.used_agents: set[str] = set()

    def read(self, path: Path) -> list[dict]:
        rel = path.relative_to(self.workdir).as_posix()
        try:
            size = path.stat().st_size
        except OSError:
            self.conv.notes.append(f"{rel} could not be read")
            return []
        result = read_records(path) if size <= MAX_FULL_BYTES else read_tail(path, max_bytes=TAIL_BYTES)
        if size > MAX_FULL_BYTES:
            self.conv.notes.append(f"{rel} is {size // (1024 * 1024)} MiB: only its last part is shown")
        if result.skipped_malformed:
            self.conv.notes.append(f"{rel}: {result.skipped_malformed} line(s) are not JSON records "
                                   f"({result.first_error})")
        return result.records

    def add(self, into: list[Entry], entry: Entry) -> None:
        self.count += 1
        if self.count <= MAX_ENTRIES:
            into.append(entry)
            entry.anchor = self.claim(entry.uuid)

    def claim(self, uuid: str | None) -> str | None:
        """``uuid`` when no entry is the target for it yet (one anchor per record), else None."""
        if not uuid or uuid in self.conv.uuids:
            return None
        self.conv.uuids.add(uuid)
        return uuid

    def entries(self, records: list[dict], source: str, depth: int = 0) -> list[Entry]:
        out: list[Entry] = []
        calls: dict[str, Entry] = {}
        for rec in causal_order(records, sidechains=True):
            kind, uuid, when = rec.get("type"), rec.get("uuid"), _time(rec)
            uuid = uuid if isinstance(uuid, str) else None
            content = message_content(rec)
            if kind == "user":
                self._user(rec, content, source, uuid, when, calls, out, depth)
            elif kind == "assistant":
                error = rec.get("isApiErrorMessage") is True
                for block in content if isinstance(content, list) else []:
                    if not isinstance(block, dict):
                        continue
                    if block.get("type") == "tool_use":
                        name = str(block.get("name") or "?")
                        text, n = cut(json.dumps(block.get("input"), ensure_ascii=False, indent=1))
                        entry = Entry("tool", source, uuid, when, text, n, name, tool_summary(name, block.get("input")))
                        calls[str(block.get("id"))] = entry
                        self.add(out, entry)
                    elif block.get("type") in ("text", "thinking"):
                        text, n = cut(str(block.get("text") or block.get("thinking") or ""))
                        if text.strip():
                            self.add(out, Entry("error" if error else block["type"], source, uuid, when, text, n,
                                                is_error=error))
            elif kind == "system":
                subtype = str(rec.get("subtype") or "")
                if subtype == "compact_boundary":
                    self.add(out, Entry("note", source, uuid, when, "the conversation was compacted here"))
                elif subtype in ("api_error", "local_command") or rec.get("level") == "error":
                    text, n = cut(str(rec.get("content") or rec.get("error") or subtype))
                    self.add(out, Entry("error" if subtype == "api_error" else "note", source, uuid, when, text, n,
                                        is_error=subtype == "api_error"))
        return out

    def _user(self, rec: dict, content: Any, source: str, uuid: str | None, when: str | None,
              calls: dict[str, Entry], out: list[Entry], depth: int) -> None:
        if isinstance(content, str):
            prompt = is_human_prompt(rec)
            text, n = cut(unwrap_paste(content) if prompt else content)   # a paste 2.1.332 stored wrapped: its text
            self.add(out, Entry("prompt" if prompt else "meta", source, uuid, when, text, n))
            return
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_result":
                call = calls.get(str(block.get("tool_use_id")))
                text, n = cut(_text_of(block.get("content")))
                if call is None:
                    self.add(out, Entry("tool", source, uuid, when, "", 0, "(result of an earlier call)", "",
                                        text, n, block.get("is_error") is True))
                    continue
                call.result, call.result_cut, call.is_error = text, n, block.get("is_error") is True
                call.result_uuid, call.result_anchor = uuid, self.claim(uuid)
                self._nest(call, rec, text, depth)
            elif block.get("type") == "text":
                text, n = cut(str(block.get("text") or ""))
                self.add(out, Entry("prompt" if is_human_prompt(rec) else "meta", source, uuid, when, text, n))

    def _nest(self, call: Entry, rec: dict, result_text: str, depth: int) -> None:
        """A call that started a subagent gets the subagent's conversation as its children."""
        extra = rec.get("toolUseResult")
        agent = extra.get("agentId") if isinstance(extra, dict) else None
        found = _AGENT_ID.search(result_text or "")
        agent = agent or (found.group(1) if found else None)
        if not agent or depth >= MAX_DEPTH:
            return
        path = self.workdir / SUBAGENTS / f"agent-{agent}.jsonl"
        if path.is_file() and agent not in self.used_agents:
            self.used_agents.add(agent)
            call.agent = agent
            rel = path.relative_to(self.workdir).as_posix()
            call.children = self.entries(self.read(path), rel, depth + 1)


def build(workdir: Path) -> Conversation:
    """The :class:`Conversation` of the trial in ``workdir`` (empty with a note when it has no transcript)."""
    workdir = Path(workdir)
    conv = Conversation()
    builder = _Builder(workdir, conv)
    paths = Workdir.of(workdir).session_transcripts
    for path in paths:
        if not path.is_file():
            continue
        rel = path.relative_to(workdir).as_posix()
        conv.files.append(rel)
        if conv.entries:
            conv.entries.append(Entry("note", rel, text=f"the session continued in a new transcript: {rel}"))
        conv.entries += builder.entries(builder.read(path), rel)
    if not conv.files:
        conv.notes.append(f"no {TRANSCRIPT} in the workdir: the session left no transcript, or it was not collected")
    for path in sorted((workdir / SUBAGENTS).glob("agent-*.jsonl")):
        agent = path.stem[len("agent-"):]
        if agent not in builder.used_agents:
            rel = path.relative_to(workdir).as_posix()
            builder.used_agents.add(agent)
            conv.files.append(rel)
            conv.entries.append(Entry("tool", rel, name="subagent", summary=f"subagent {agent} (not matched to a "
                                      "call)", agent=agent, children=builder.entries(builder.read(path), rel, 1)))
    if builder.count > MAX_ENTRIES:
        conv.notes.append(f"{builder.count - MAX_ENTRIES} more entries are not shown; the raw files have them all")
    return conv
