"""What a session's transcript records of its hooks and MCP servers (references/transcript-jsonl.md "What a plugin's
hooks and MCP servers leave behind", observed on 2.1.197 and 2.1.332 with the rehearsal server).

Both versions write a hook's run to the transcript only when it did not simply succeed:

- ``attachment`` ``hook_non_blocking_error`` (``hookName`` ``PostToolUse:Write``, ``hookEvent``, ``command`` as
  written, ``exitCode``, ``stderr`` ``Failed with non-blocking status code: <stderr>``): a command that exited with
  a code other than 0 and 2, also 126 for a script that is not executable;
- ``attachment`` ``hook_blocking_error`` (``blockingError: {blockingError, command}``): a hook that blocked with
  ``{"decision": "block", "reason"}``;
- ``attachment`` ``hook_cancelled`` (``hookName``, ``hookEvent``; no command): a hook stopped before it finished,
  such as one past its ``timeout``;
- ``attachment`` ``hook_success`` (``command``, ``content``): only a hook whose output the CLI adds to the
  conversation (a SessionStart hook that printed text);
- ``system`` ``stop_hook_summary`` (``hookInfos: [{command}]``, ``hookErrors``, ``toolUseID``): one per Stop, every
  Stop hook that ran; a blocking one's error is ``[<command>]: <reason>`` (exit 2) or the reason (JSON), and the
  attachments of the same ``toolUseID`` belong to it;
- a ``tool_result`` ``<Event>:<Tool> hook error: [<command>]: <reason>``: a PreToolUse hook that refused the call
  (exit 2).

MCP: a tool call is a ``tool_use`` named ``mcp__<server>__<tool>``; a call of a tool the session does not have
(its server failed) ends ``<tool_use_error>Error: No such tool available: …``. 2.1.332 also writes
``attachment`` ``deferred_tools_delta`` with ``failedMcpServers: [{name, errorCode, error}]``.

Pure: records in (:func:`read_hook_records` folds them), data out; the debug log is :mod:`debug_log`'s.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Mapping

from live_trial.transcript.records import message_content

#: The outcomes of one run of a hook.
OK, BLOCKED, ERROR, TIMEOUT, CANCELLED = "ok", "blocked", "error", "timeout", "cancelled"
_NON_BLOCKING = "Failed with non-blocking status code: "
_DENIED = re.compile(r"^(?P<event>[A-Za-z]+):(?P<query>\S*) hook error: \[(?P<command>.*?)\]: (?P<reason>.*)", re.S)
_BRACKETED = re.compile(r"^\[(?P<command>.*?)\]: (?P<reason>.*)", re.S)
_NO_TOOL = "No such tool available"


def first_line(text: str, limit: int = 200) -> str:
    """The first non-empty line of ``text``, stripped and cut to ``limit`` characters ("" for none)."""
    for line in (text or "").splitlines():
        if line.strip():
            return line.strip()[:limit]
    return ""


@dataclass(frozen=True)
class HookSeen:
    """One run of a hook as a record shows it. ``event`` (``PostToolUse``), ``query`` (what it matched: the tool,
    ``startup``; "" for none), ``command`` as the record gives it (None when it gives none: ``hook_cancelled``),
    ``outcome`` (:data:`OK` … :data:`CANCELLED`), ``detail`` (a block's reason, an error's first line; "" for none),
    ``exit_code`` (None when not given), ``uuid`` of the record, ``tool_use_id`` of the call it ran for."""

    event: str
    query: str
    command: str | None
    outcome: str
    detail: str = ""
    exit_code: int | None = None
    uuid: str | None = None
    tool_use_id: str | None = None      #: the tool call the run was about (a tool event's run), when the record says


@dataclass(frozen=True)
class McpCall:
    """One ``tool_use`` of an MCP tool: ``tool`` (``mcp__<server>__<tool>``), ``uuid`` of its record, ``ok`` (its
    result came back and is no error), ``error`` (the first line of an error result; None otherwise)."""

    tool: str
    uuid: str | None
    ok: bool
    error: str | None = None


@dataclass
class HookRecords:
    """What the transcripts of a session say of its hooks and MCP servers (:func:`read_hook_records`)."""

    hooks: list[HookSeen] = field(default_factory=list)
    mcp_calls: list[McpCall] = field(default_factory=list)
    failed_servers: dict[str, str] = field(default_factory=dict)
    """Server name -> ``<errorCode>: <error>`` (or "" when the record gives none), from 2.1.332's
    ``deferred_tools_delta`` records."""
    file_paths: dict[str, str] = field(default_factory=dict)
    """tool_use id -> the ``file_path`` its input names (Write, Edit, ...): which file a tool hook's run was about."""

    def runs_on(self, path: str) -> list[HookSeen]:
        """The runs (not simply successful) of tool hooks about a call whose ``file_path`` is ``path``."""
        ids = {i for i, p in self.file_paths.items() if p == path}
        return [h for h in self.hooks if h.tool_use_id in ids]


def _split_name(name: Any, event: Any) -> tuple[str, str]:
    text = str(name or "")
    ev = str(event or text.split(":", 1)[0])
    return ev, text.split(":", 1)[1] if ":" in text else ""


def _stderr(att: Mapping[str, Any]) -> str:
    text = str(att.get("stderr") or "")
    return text[len(_NON_BLOCKING):] if text.startswith(_NON_BLOCKING) else text


class _Fold:
    def __init__(self) -> None:
        self.out = HookRecords()
        self.calls: dict[str, tuple[str, str | None]] = {}        # tool_use id -> (tool, uuid)
        self.stop_atts: dict[str, list[HookSeen]] = {}             # toolUseID -> attachments of a Stop

    def take(self, rec: Mapping[str, Any]) -> None:
        kind, uuid = rec.get("type"), rec.get("uuid") if isinstance(rec.get("uuid"), str) else None
        if kind == "attachment" and isinstance(rec.get("attachment"), dict):
            self._attachment(rec["attachment"], uuid)
        elif kind == "system" and rec.get("subtype") == "stop_hook_summary":
            self._summary(rec, uuid)
        elif kind in ("assistant", "user"):
            self._blocks(rec, uuid)

    def _attachment(self, att: Mapping[str, Any], uuid: str | None) -> None:
        kind = att.get("type")
        if kind == "deferred_tools_delta":
            for failed in att.get("failedMcpServers") or []:
                if isinstance(failed, dict) and isinstance(failed.get("name"), str):
                    why = ": ".join(str(failed[k]) for k in ("errorCode", "error") if failed.get(k))
                    self.out.failed_servers[failed["name"]] = why or self.out.failed_servers.get(failed["name"], "")
            return
        event, query = _split_name(att.get("hookName"), att.get("hookEvent"))
        command = att.get("command") if isinstance(att.get("command"), str) else None
        if kind == "hook_non_blocking_error":
            code = att.get("exitCode")
            seen = HookSeen(event, query, command, ERROR, first_line(_stderr(att)),
                            code if isinstance(code, int) else None, uuid)
        elif kind == "hook_blocking_error":
            raw = att.get("blockingError")
            blocking: Mapping[str, Any] = raw if isinstance(raw, dict) else {}
            seen = HookSeen(event, query, blocking.get("command") if isinstance(blocking.get("command"), str)
                            else command, BLOCKED, first_line(str(blocking.get("blockingError") or "")), None, uuid)
        elif kind == "hook_cancelled":
            seen = HookSeen(event, query, command, CANCELLED, "", None, uuid)
        elif kind == "hook_success":
            seen = HookSeen(event, query, command, OK, "", 0, uuid)
        else:
            return
        tool_use = att.get("toolUseID")
        if event in ("Stop", "SubagentStop") and isinstance(tool_use, str):
            self.stop_atts.setdefault(tool_use, []).append(seen)   # told with its summary, which lists every run
        else:
            self.out.hooks.append(replace(seen, tool_use_id=tool_use) if isinstance(tool_use, str) else seen)

    def _summary(self, rec: Mapping[str, Any], uuid: str | None) -> None:
        atts = self.stop_atts.pop(str(rec.get("toolUseID")), [])
        infos = [i for i in rec.get("hookInfos") or [] if isinstance(i, dict) and isinstance(i.get("command"), str)]
        errors = [str(e) for e in rec.get("hookErrors") or []]
        for info in infos:
            command = info["command"]
            mine = next((a for a in atts if a.command == command and a.outcome in (ERROR, BLOCKED)), None)
            if mine is not None:
                self.out.hooks.append(HookSeen("Stop", "", command, mine.outcome, mine.detail, mine.exit_code, uuid))
                continue
            said = next((m.group("reason") for e in errors if (m := _BRACKETED.match(e))), None) \
                if len(infos) > 1 else None
            if len(infos) == 1 and errors:
                said = _BRACKETED.sub(r"\g<reason>", errors[0])
            if said is not None:
                self.out.hooks.append(HookSeen("Stop", "", command, BLOCKED, first_line(said), 2, uuid))
            else:
                self.out.hooks.append(HookSeen("Stop", "", command, OK, "", None, uuid))

    def _blocks(self, rec: Mapping[str, Any], uuid: str | None) -> None:
        content = message_content(rec)
        if not isinstance(content, list):
            return
        for block in content:
            if not isinstance(block, dict):
                continue
            tool_input = block.get("input") if block.get("type") == "tool_use" else None
            if isinstance(tool_input, dict) and isinstance(tool_input.get("file_path"), str):
                self.out.file_paths[str(block.get("id"))] = tool_input["file_path"]
            if block.get("type") == "tool_use" and str(block.get("name", "")).startswith("mcp__"):
                self.calls[str(block.get("id"))] = (str(block["name"]), uuid)
            elif block.get("type") == "tool_result":
                self._result(block, uuid)

    def _result(self, block: Mapping[str, Any], uuid: str | None) -> None:
        text = _text(block.get("content"))
        denied = _DENIED.match(text.replace("<tool_use_error>", "", 1)) if block.get("is_error") else None
        if denied is not None:
            self.out.hooks.append(HookSeen(denied["event"], denied["query"], denied["command"], BLOCKED,
                                           first_line(denied["reason"]), 2, uuid, str(block.get("tool_use_id"))))
        call = self.calls.pop(str(block.get("tool_use_id")), None)
        if call is not None:
            error = first_line(re.sub(r"</?tool_use_error>", "", text)) if block.get("is_error") else None
            self.out.mcp_calls.append(McpCall(call[0], call[1], not block.get("is_error"), error))


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return ""


def read_hook_records(records: Iterable[Mapping[str, Any]]) -> HookRecords:
    """Fold ``records`` (every transcript of the session, its subagents' too, in order) into :class:`HookRecords`.
    A Stop attachment left without its summary (a session killed in between) is kept as it is. Pure."""
    fold = _Fold()
    for rec in records:
        fold.take(rec)
    for atts in fold.stop_atts.values():
        fold.out.hooks.extend(atts)
    return fold.out


def is_missing_tool(error: str | None) -> bool:
    """True for the error of a call of a tool the session does not have (``No such tool available``)."""
    return bool(error) and _NO_TOOL in str(error)
