"""Build synthetic Claude Code transcripts shaped like the real CLI 2.1.197 writes them (tests, self-test, benchmarks).

The record shapes follow ``references/transcript-jsonl.md`` (observed on the real CLI). Every method appends
records and returns something useful (a uuid, a tool_use id). ``write(path)`` writes JSONL.

The pytest fixture ``transcript_builder`` (registered in ``live_trial.pytest_plugin``) returns
:class:`TranscriptBuilder` itself, so tests call ``transcript_builder()`` or ``transcript_builder(session_id=...)``.
"""
from __future__ import annotations

import json
import uuid as _uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from live_trial.clock import iso_z

DEFAULT_MODEL = "claude-opus-4-8"

#: The keys the 2.1.197 CLI writes first, in its order: a record's big string (a Write's content) comes before
#: ``type``/``uuid``/``timestamp`` (references/transcript-jsonl.md, "Over-long records").
CLI_FIRST_KEYS = ("parentUuid", "isSidechain", "message", "requestId", "type", "uuid", "timestamp", "toolUseResult")


def cli_key_order(rec: dict[str, Any]) -> dict[str, Any]:
    """``rec`` with its keys in the order the 2.1.197 CLI writes them (see :data:`CLI_FIRST_KEYS`)."""
    return {**{k: rec[k] for k in CLI_FIRST_KEYS if k in rec},
            **{k: v for k, v in rec.items() if k not in CLI_FIRST_KEYS}}


class TranscriptBuilder:
    """Append-only builder of transcript records with a parentUuid chain and advancing timestamps."""

    def __init__(self, *, session_id: str | None = None, cwd: str = "/tmp/project",
                 start: datetime | None = None, step_s: float = 1.0, model: str = DEFAULT_MODEL,
                 seed: int | None = None) -> None:
        self.session_id = session_id or str(_uuid.uuid4())
        self.cwd = cwd
        self.now = start or datetime(2026, 11, 30, 12, 0, 0, tzinfo=timezone.utc)
        self.step = timedelta(seconds=step_s)
        self.model = model
        self.records: list[dict[str, Any]] = []
        self.last_uuid: str | None = None
        self._n = 0
        self._seed = seed

    # ------------------------------------------------------------------ plumbing
    def _id(self, prefix: str = "") -> str:
        self._n += 1
        if self._seed is not None:
            return f"{prefix}{self._seed:08x}-{self._n:04x}-4000-8000-{self._n:012x}"
        return prefix + str(_uuid.uuid4())

    def _ts(self) -> str:
        self.now += self.step
        return iso_z(self.now)

    def advance(self, seconds: float) -> "TranscriptBuilder":
        """Move the clock forward (the next record is stamped ``seconds`` + one step later)."""
        self.now += timedelta(seconds=seconds)
        return self

    def _base(self, rtype: str, *, chain: bool = True, sidechain: bool = False, **extra: Any) -> dict[str, Any]:
        rec: dict[str, Any] = {"parentUuid": self.last_uuid if chain else None, "isSidechain": sidechain,
                               "userType": "external", "cwd": self.cwd, "sessionId": self.session_id,
                               "version": "2.1.197", "gitBranch": "", "entrypoint": "cli", "type": rtype,
                               "uuid": self._id(), "timestamp": self._ts()}
        rec.update(extra)
        return rec

    def add(self, rec: dict[str, Any], *, link: bool = True) -> dict[str, Any]:
        """Append ``rec`` as is (it becomes the chain's newest record when ``link`` and it has a uuid)."""
        self.records.append(rec)
        if link and rec.get("uuid") and not rec.get("isSidechain"):
            self.last_uuid = rec["uuid"]
        return rec

    # ------------------------------------------------------------------ bookkeeping records
    def mode(self) -> dict[str, Any]:
        """The ``mode`` + ``permission-mode`` pair written when the file is created."""
        self.add({"type": "mode", "mode": "normal", "sessionId": self.session_id}, link=False)
        return self.add({"type": "permission-mode", "permissionMode": "bypassPermissions",
                         "sessionId": self.session_id}, link=False)

    def snapshot(self) -> dict[str, Any]:
        """A ``file-history-snapshot`` record."""
        return self.add({"type": "file-history-snapshot", "messageId": self._id(),
                         "snapshot": {"messageId": self._id(), "trackedFileBackups": {}, "timestamp": self._ts()},
                         "isSnapshotUpdate": False}, link=False)

    def attachment(self, kind: str = "skill_listing", **fields: Any) -> dict[str, Any]:
        """An ``attachment`` record (never changes the state)."""
        return self.add(self._base("attachment", attachment={"type": kind, **fields}))

    def last_prompt(self, text: str | None = None) -> dict[str, Any]:
        """A ``last-prompt`` record (graceful exit)."""
        rec = {"type": "last-prompt", "leafUuid": self.last_uuid, "sessionId": self.session_id}
        if text is not None:
            rec["lastPrompt"] = text
        return self.add(rec, link=False)

    def queue(self, operation: str = "enqueue", content: str | None = "queued text") -> dict[str, Any]:
        """A ``queue-operation`` record (``enqueue`` with content / ``dequeue`` / ``remove``: a queued task
        notification taken into the running turn)."""
        rec = {"type": "queue-operation", "operation": operation, "timestamp": self._ts(),
               "sessionId": self.session_id}
        if operation == "enqueue" and content is not None:
            rec["content"] = content
        return self.add(rec, link=False)

    def informational(self, text: str = "notice") -> dict[str, Any]:
        """A ``system`` / ``informational`` record."""
        return self.add(self._base("system", subtype="informational", level="notice", content=text, isMeta=False))

    # ------------------------------------------------------------------ conversation records
    def prompt(self, text: str = "Run the task.", *, source: str = "typed", snapshot: bool = True) -> str:
        """A human prompt (``file-history-snapshot`` first, like the CLI). Returns its uuid."""
        if snapshot:
            self.snapshot()
        rec = self._base("user", message={"role": "user", "content": text}, origin={"kind": "human"},
                         promptSource=source, promptId=self._id(), permissionMode="bypassPermissions")
        uuid: str = self.add(rec)["uuid"]
        return uuid

    def meta(self, text: str = "Base directory for this skill: /x\n\nbody",
             tool_use_id: str | None = None) -> dict[str, Any]:
        """An ``isMeta`` user record (e.g. the SKILL.md body injected by the Skill tool)."""
        rec = self._base("user", message={"role": "user", "content": [{"type": "text", "text": text}]}, isMeta=True)
        if tool_use_id:
            rec["sourceToolUseID"] = tool_use_id
        return self.add(rec)

    def message(self, blocks: list[dict[str, Any]], *, stop_reason: str | None = "end_turn", model: str | None = None,
                sidechain: bool = False, **extra: Any) -> list[dict[str, Any]]:
        """One API message: one ``assistant`` record per content block, sharing message.id and the final stop_reason."""
        mid, rid = "msg_" + self._id()[:24].replace("-", ""), "req_" + self._id()[:24].replace("-", "")
        out = []
        for block in blocks:
            msg = {"id": mid, "type": "message", "role": "assistant", "model": model or self.model,
                   "content": [block], "stop_reason": stop_reason, "stop_sequence": None,
                   "usage": {"input_tokens": 10, "output_tokens": 5}}
            out.append(self.add(self._base("assistant", sidechain=sidechain, message=msg, requestId=rid, **extra)))
        return out

    def text(self, text: str = "DONE: ok", *, stop_reason: str | None = "end_turn",
             model: str | None = None) -> dict[str, Any]:
        """An assistant text record."""
        return self.message([{"type": "text", "text": text}], stop_reason=stop_reason, model=model)[0]

    def tool_use(self, name: str = "Bash", tool_input: dict[str, Any] | None = None, *, text: str | None = None,
                 sidechain: bool = False) -> str:
        """An assistant message ending in a tool_use (optionally a text block first). Returns the tool_use id."""
        tid = "toolu_" + self._id()[:24].replace("-", "")
        blocks = ([{"type": "text", "text": text}] if text else []) + [
            {"type": "tool_use", "id": tid, "name": name,
             "input": {"command": "true"} if tool_input is None else tool_input}]
        self.message(blocks, stop_reason="tool_use", sidechain=sidechain)
        return tid

    def tool_result(self, tool_use_id: str, content: Any = "ok", *, is_error: bool = False,
                    result: Any = None) -> dict[str, Any]:
        """The user record with a tool_result for ``tool_use_id`` (and a structured ``toolUseResult``)."""
        block = {"tool_use_id": tool_use_id, "type": "tool_result", "content": content, "is_error": is_error}
        return self.add(self._base("user", message={"role": "user", "content": [block]},
                                   toolUseResult={"stdout": str(content), "stderr": "", "interrupted": False}
                                   if result is None else result,
                                   sourceToolAssistantUUID=self.last_uuid))

    def turn_duration(self, ms: int = 1234, *, pending_agents: int | None = None) -> dict[str, Any]:
        """``system`` / ``turn_duration``: the turn ended normally (``pendingBackgroundAgentCount`` when agents run)."""
        extra: dict[str, Any] = {"pendingBackgroundAgentCount": pending_agents} if pending_agents else {}
        return self.add(self._base("system", subtype="turn_duration", durationMs=ms, messageCount=3, isMeta=False,
                                   **extra))

    # ------------------------------------------------------------------ background work, commands, compaction
    def output_path(self, task_id: str) -> str:
        """Where the CLI writes a background task's output: ``/tmp/claude-0/<slug>/<session>/tasks/<id>.output``."""
        slug = "".join(c if c.isalnum() else "-" for c in self.cwd)
        return f"/tmp/claude-0/{slug}/{self.session_id}/tasks/{task_id}.output"

    def background_shell(self, command: str = "sleep 60", description: str = "Sleep", *, task_id: str | None = None,
                         by_user: bool = False) -> str:
        """A Bash call that runs in the background (``run_in_background``, or moved there by Ctrl+B when
        ``by_user``) and its tool_result. Returns the task id."""
        task_id = task_id or "b" + self._id()[-8:]
        tool_input: dict[str, Any] = {"command": command, "description": description}
        if not by_user:
            tool_input["run_in_background"] = True
        tid = self.tool_use("Bash", tool_input)
        head = ("Command was manually backgrounded by user with ID: " if by_user
                else "Command running in background with ID: ")
        text = f"{head}{task_id}. Output is being written to: {self.output_path(task_id)}" + (
            "" if by_user else ". You will be notified when it completes. To check interim output, use Read on "
                               "that file path.")
        result = {"stdout": "", "stderr": "", "interrupted": False, "isImage": False, "noOutputExpected": False,
                  "backgroundTaskId": task_id}
        if by_user:
            result["backgroundedByUser"] = True
        self.tool_result(tid, text, result=result)
        return task_id

    def background_agent(self, description: str = "Probe", prompt: str = "SUBTASK", *,
                         agent_id: str | None = None) -> str:
        """An Agent call with ``run_in_background`` and its ``async_launched`` tool_result. Returns the agent id."""
        agent_id = agent_id or "a" + self._id()[-16:].replace("-", "")
        tid = self.tool_use("Agent", {"description": description, "prompt": prompt,
                                      "subagent_type": "general-purpose", "run_in_background": True})
        text = (f"Async agent launched successfully.\nagentId: {agent_id} (internal ID)\n"
                f"output_file: {self.output_path(agent_id)}")
        self.tool_result(tid, [{"type": "text", "text": text}], result={
            "isAsync": True, "status": "async_launched", "agentId": agent_id, "description": description,
            "prompt": prompt, "outputFile": self.output_path(agent_id), "canReadOutputFile": True})
        return agent_id

    def notification_text(self, task_id: str, status: str = "completed",
                          summary: str = "Background command done") -> str:
        """The ``<task-notification>`` text the CLI writes when a background task ends."""
        return (f"<task-notification>\n<task-id>{task_id}</task-id>\n<tool-use-id>toolu_x</tool-use-id>\n"
                f"<output-file>{self.output_path(task_id)}</output-file>\n<status>{status}</status>\n"
                f"<summary>{summary}</summary>\n</task-notification>")

    def task_notification(self, task_id: str, status: str = "completed") -> dict[str, Any]:
        """The wake-up after a background task ended while the CLI was idle: enqueue, dequeue, and the ``user``
        record with ``origin.kind: task-notification``, ``promptSource: system``."""
        text = self.notification_text(task_id, status)
        self.queue("enqueue", text)
        self.queue("dequeue")
        return self.add(self._base("user", message={"role": "user", "content": text},
                                   origin={"kind": "task-notification"}, promptSource="system",
                                   promptId=self._id(), permissionMode="bypassPermissions"))

    def notification_in_turn(self, task_id: str, status: str = "completed") -> dict[str, Any]:
        """A background task that ended while a turn ran: enqueue, ``remove``, and a ``queued_command`` attachment."""
        text = self.notification_text(task_id, status)
        self.queue("enqueue", text)
        self.queue("remove")
        return self.attachment("queued_command", prompt=text, commandMode="task-notification")

    def slash_command(self, name: str = "/compact", stdout: str = "", *, system_stdout: bool = True) -> None:
        """A local slash command: the ``isMeta`` caveat, the ``<command-name>`` record, and its output as a
        ``system/local_command`` record (``/clear``, a refused ``/compact``) or a ``user`` record (a done
        ``/compact``)."""
        self.meta("<local-command-caveat>Caveat: The messages below were generated by the user while running local "
                  "commands.</local-command-caveat>")
        bare = name.lstrip("/")
        self.add(self._base("user", message={"role": "user", "content":
                                             f"<command-name>{name}</command-name>\n            <command-message>"
                                             f"{bare}</command-message>\n            <command-args></command-args>"}))
        out = f"<local-command-stdout>{stdout}</local-command-stdout>"
        if system_stdout:
            self.add(self._base("system", subtype="local_command", content=out, level="info", isMeta=False))
        else:
            self.add(self._base("user", message={"role": "user", "content": out}))

    def compaction(self, summary: str = "SUMMARY") -> None:
        """What a finished ``/compact`` appends: ``compact_boundary``, the ``isCompactSummary`` user record, the
        command records and its output as a ``user`` record (no assistant record, no turn_duration)."""
        parent = self.last_uuid
        self.last_uuid = None
        self.add(self._base("system", subtype="compact_boundary", content="Conversation compacted", isMeta=False,
                            level="info", logicalParentUuid=parent, compactMetadata={"trigger": "manual"}))
        self.add(self._base("user", message={"role": "user", "content":
                                             "This session is being continued from a previous conversation that ran "
                                             f"out of context.\n\nSummary:\n{summary}"},
                            isVisibleInTranscriptOnly=True, isCompactSummary=True))
        self.slash_command("/compact", "Compacted (ctrl+o to see full summary)", system_stdout=False)

    def interrupt(self, *, for_tool: bool = False) -> dict[str, Any]:
        """The user record the CLI writes on Esc."""
        text = "[Request interrupted by user for tool use]" if for_tool else "[Request interrupted by user]"
        return self.add(self._base("user", message={"role": "user", "content": [{"type": "text", "text": text}]},
                                   interruptedMessageId="msg_x"))

    def synthetic(self, text: str = "partial", *, api_error_status: int | None = None) -> dict[str, Any]:
        """A ``<synthetic>`` assistant record: an interrupted stream's partial text, or an API error."""
        extra: dict[str, Any] = {}
        if api_error_status is not None:
            text = f"API Error: {api_error_status} bad request"
            extra = {"isApiErrorMessage": True, "apiErrorStatus": api_error_status, "error": "invalid_request"}
        return self.message([{"type": "text", "text": text}], stop_reason="stop_sequence", model="<synthetic>",
                            **extra)[0]

    def api_error(self, status: int | None, error: str, text: str) -> dict[str, Any]:
        """The record the CLI writes when it gives up on a request: ``apiErrorStatus`` ``status`` (None: a network
        error has none), the CLI's class ``error`` and the line it shows (references/transcript-jsonl.md "API
        errors")."""
        extra: dict[str, Any] = {"isApiErrorMessage": True, "error": error}
        if status is not None:
            extra["apiErrorStatus"] = status
        return self.message([{"type": "text", "text": text}], stop_reason="stop_sequence", model="<synthetic>",
                            **extra)[0]

    # ------------------------------------------------------------------ whole turns
    def turn(self, prompt: str = "Run the task.", reply: str = "DONE: ok", *, tools: int = 0) -> "TranscriptBuilder":
        """A complete normal turn: prompt, ``tools`` Bash round trips, final text, turn_duration."""
        self.prompt(prompt)
        for i in range(tools):
            tid = self.tool_use("Bash", {"command": f"echo {i}"})
            self.tool_result(tid, f"{i}")
        self.text(reply)
        self.turn_duration()
        return self

    # ------------------------------------------------------------------ output
    def lines(self, *, cli_order: bool = False) -> list[str]:
        """The records as JSON lines (no trailing newline on each); ``cli_order``: keys in the CLI's order
        (:func:`cli_key_order`)."""
        return [json.dumps(cli_key_order(r) if cli_order else r, ensure_ascii=False) for r in self.records]

    def text_jsonl(self, *, cli_order: bool = False) -> str:
        """The whole transcript as JSONL text (every line terminated)."""
        return "".join(line + "\n" for line in self.lines(cli_order=cli_order))

    def write(self, path: str | Path, *, tail: bytes = b"", cli_order: bool = False) -> Path:
        """Write the JSONL to ``path`` (parents created), then append raw ``tail`` bytes (torn lines, garbage)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(self.text_jsonl(cli_order=cli_order).encode("utf-8") + tail)
        return path


def transcript_builder_fixture() -> type[TranscriptBuilder]:
    """Body of the ``transcript_builder`` pytest fixture: the builder class (a factory)."""
    return TranscriptBuilder
