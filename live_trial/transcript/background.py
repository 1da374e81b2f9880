"""Background work a session started and has not finished: background shells and background subagents.

Pure functions over transcript records (already in causal order) and the CLI's live signals; no I/O. What each
signal looks like on the CLI 2.1.197 is in ``references/transcript-jsonl.md`` ("Background work"); the rule that
uses it is the harness's own (ARCHITECTURE invariant 8): work the session started and still runs is never a STALL
nor a finished turn.

Started (transcript): a Bash ``tool_result`` whose ``toolUseResult`` has ``backgroundTaskId`` (``run_in_background``
or moved to the background with Ctrl+B, then also ``backgroundedByUser``); an Agent ``toolUseResult`` with
``status: "async_launched"`` (``agentId``, ``outputFile``).
Ended (transcript): a task notification naming its ``<task-id>`` (the wake-up ``user`` record, a
``queue-operation`` enqueue, or a ``queued_command`` attachment when it arrived inside a turn); a TaskStop result
(``toolUseResult.task_id``; a stopped shell gets no notification); a TaskOutput result whose task is no longer
running. A shell stopped from the CLI's task panel leaves nothing in the transcript: only the live status shows it.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from live_trial.transcript.records import is_task_notification, message_content, prompt_text

TYPE_CHECKING = False
if TYPE_CHECKING:       # annotations only (see transcript.status: plain classes, no typing, for start-up)
    from typing import Any

SHELL = "shell"
AGENT = "agent"

_TASK_ID_RE = re.compile(r"<task-id>\s*([^<\s]+)\s*</task-id>")
_OUTPUT_RE = re.compile(r"Output is being written to: (\S+?\.output)\b")
_RUNNING = ("running", "pending")


class BackgroundTask:
    """One background task the transcript shows started and not ended: ``task_id``, ``kind`` (shell | agent),
    the ``description`` the model gave, the ``output_file`` it writes (a shell's output; an agent's is a symlink
    to its subagent transcript), ``by_user`` when a person moved a running command to the background (Ctrl+B)."""

    def __init__(self, task_id: str, kind: str, description: str = "", output_file: str | None = None,
                 by_user: bool = False) -> None:
        self.task_id, self.kind, self.description, self.output_file, self.by_user = (
            task_id, kind, description, output_file, by_user)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {"task_id": self.task_id, "kind": self.kind, "description": self.description,
                "output_file": self.output_file, "by_user": self.by_user}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, BackgroundTask) and self.to_dict() == other.to_dict()

    def __repr__(self) -> str:
        return f"BackgroundTask({self.to_dict()!r})"


class Background:
    """Background work still running, as far as the signals show.

    ``shells`` / ``agents``: how many of each; ``tasks``: the ones the transcript names (with output files, for
    poll's progress); ``sources``: which signals said so (``transcript``, ``session status shell``,
    ``turn_duration``, ``screen footer``, ``screen``); ``ended_silently``: tasks the transcript still shows running
    while the live CLI status says nothing runs (stopped from the task panel, which writes no record).
    """

    def __init__(self, shells: int = 0, agents: int = 0, tasks: list[BackgroundTask] | None = None,
                 sources: list[str] | None = None, ended_silently: list[str] | None = None) -> None:
        self.shells, self.agents = shells, agents
        self.tasks, self.sources = list(tasks or []), list(sources or [])
        self.ended_silently = list(ended_silently or [])

    @property
    def running(self) -> bool:
        """True while any background shell or agent runs."""
        return self.shells + self.agents > 0

    @property
    def kind(self) -> str | None:
        """``shell``, ``agent``, ``shell+agent`` or None."""
        kinds = [k for k, n in ((SHELL, self.shells), (AGENT, self.agents)) if n]
        return "+".join(kinds) or None

    def describe(self) -> str:
        """``1 background shell and 2 background agents still running`` (empty when nothing runs)."""
        parts = [f"{n} background {k}{'s' if n > 1 else ''}" for k, n in ((SHELL, self.shells), (AGENT, self.agents))
                 if n]
        return (" and ".join(parts) + " still running") if parts else ""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (``status --json``)."""
        return {"shells": self.shells, "agents": self.agents, "tasks": [t.to_dict() for t in self.tasks],
                "sources": list(self.sources), "ended_silently": list(self.ended_silently), "kind": self.kind}


def notified_task_ids(rec: Mapping[str, Any]) -> list[str]:
    """Task ids a record reports as ended through a task notification: the wake-up ``user`` record, a
    ``queue-operation`` enqueue of one, or a ``queued_command`` attachment (``commandMode: task-notification``)."""
    text = ""
    if is_task_notification(rec):
        text = prompt_text(rec)
    elif rec.get("type") == "queue-operation" and rec.get("operation") == "enqueue":
        content = rec.get("content")
        text = content if isinstance(content, str) else ""
    elif rec.get("type") == "attachment" and isinstance(rec.get("attachment"), dict):
        att = rec["attachment"]
        if att.get("type") == "queued_command" and isinstance(att.get("prompt"), str):
            text = att["prompt"]
    return _TASK_ID_RE.findall(text) if "<task-notification>" in text else []


def _result_text(block: Mapping[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b.get("text", "") for b in content if isinstance(b, dict) and isinstance(b.get("text"), str))
    return ""


def transcript_tasks(events: Iterable[Mapping[str, Any]]) -> list[BackgroundTask]:
    """Background tasks started and not ended in ``events`` (main-chain records in causal order), oldest first.

    A task whose end is seen before its start (records of one write out of line order) stays ended."""
    inputs: dict[str, dict[str, Any]] = {}
    started: dict[str, BackgroundTask] = {}
    ended: set[str] = set()
    for rec in events:
        if rec.get("isSidechain") is True:
            continue
        for tid in notified_task_ids(rec):
            ended.add(tid)
            started.pop(tid, None)
        content = message_content(rec)
        blocks = [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
        if rec.get("type") == "assistant":
            for b in blocks:
                if b.get("type") == "tool_use" and isinstance(b.get("id"), str):
                    tool_input = b.get("input")
                    inputs[b["id"]] = tool_input if isinstance(tool_input, dict) else {}
            continue
        result = rec.get("toolUseResult")
        if rec.get("type") != "user" or not isinstance(result, dict):
            continue
        block = next((b for b in blocks if b.get("type") == "tool_result"), {})
        tool_input = inputs.get(str(block.get("tool_use_id")), {})
        task = _started_task(result, block, tool_input)
        if task is not None and task.task_id not in ended:
            started[task.task_id] = task
        for tid in _stopped_task_ids(result):
            ended.add(tid)
            started.pop(tid, None)
    return list(started.values())


def _started_task(result: Mapping[str, Any], block: Mapping[str, Any],
                  tool_input: Mapping[str, Any]) -> BackgroundTask | None:
    description = str(tool_input.get("description") or result.get("description") or "")
    if isinstance(result.get("backgroundTaskId"), str) and result["backgroundTaskId"]:
        found = _OUTPUT_RE.search(_result_text(block))
        return BackgroundTask(result["backgroundTaskId"], SHELL, description, found.group(1) if found else None,
                              by_user=result.get("backgroundedByUser") is True)
    if result.get("status") == "async_launched" and isinstance(result.get("agentId"), str):
        out = result.get("outputFile") if isinstance(result.get("outputFile"), str) else None
        return BackgroundTask(result["agentId"], AGENT, description, out)
    return None


def _stopped_task_ids(result: Mapping[str, Any]) -> list[str]:
    """TaskStop (``{message: "Successfully stopped task: …", task_id, task_type}``) and a TaskOutput whose task is no
    longer running (``{retrieval_status, task: {task_id, status}}``)."""
    out = []
    if isinstance(result.get("task_id"), str) and str(result.get("message", "")).startswith("Successfully stopped"):
        out.append(result["task_id"])
    task = result.get("task")
    if isinstance(task, dict) and isinstance(task.get("task_id"), str) and task.get("status") not in _RUNNING:
        out.append(task["task_id"])
    return out


def outstanding(events: Iterable[Mapping[str, Any]], *, cli_status: str | None = None,
                pending_agents: int | None = None, screen: Mapping[str, Any] | None = None) -> Background:
    """The background work still running, from the transcript cross-checked with the live signals.

    ``events``: main-chain records in causal order. ``cli_status``: ``sessions/<pid>.json`` ``status`` of a live
    pid (None when unknown). ``pending_agents``: ``pendingBackgroundAgentCount`` of the turn_duration that ends the
    newest turn. ``screen``: ``{"shells": n, "agents": m}`` read from the screen (``session.screen.background_work``;
    None when not read). Rules (references/transcript-jsonl.md, "Background work"):

    - a live status ``idle`` means nothing runs (the CLI says ``shell`` while shells run and stays ``busy`` while
      agents run); tasks the transcript still shows are listed in ``ended_silently``;
    - shells: the most of the transcript's count, the screen footer's ``· N shells ·`` and 1 for a live ``shell``;
    - agents: the most of the transcript's count, ``pendingBackgroundAgentCount`` and the screen's
      ``Waiting for N background agents to finish``.
    """
    tasks = transcript_tasks(events)
    bg = Background(tasks=tasks)
    if cli_status == "idle":
        bg.tasks, bg.ended_silently = [], [t.task_id for t in tasks]
        return bg
    screen = screen or {}
    shell_counts = {"transcript": sum(t.kind == SHELL for t in tasks), "screen footer": int(screen.get("shells") or 0),
                    "session status shell": 1 if cli_status == "shell" else 0}
    agent_counts = {"transcript": sum(t.kind == AGENT for t in tasks), "turn_duration": int(pending_agents or 0),
                    "screen": int(screen.get("agents") or 0)}
    bg.shells, bg.agents = max(shell_counts.values()), max(agent_counts.values())
    bg.sources = [name for name, n in list(shell_counts.items()) + list(agent_counts.items()) if n]
    bg.sources = list(dict.fromkeys(bg.sources))
    return bg
