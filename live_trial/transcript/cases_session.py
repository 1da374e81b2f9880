"""Named synthetic transcripts of what a session does besides its turns: background work, slash commands,
compaction, a transcript moved by ``/clear``. Part of ``status --self-test`` (``cases.CASES``).

Each entry is ``(name, build, expect)``; ``build()`` returns ``(records, session_status)`` or
``(records, session_status, screen_background)``. Shapes as CLI 2.1.197 writes them (references/transcript-jsonl.md,
"Background work" and "Records that are not prompts").
"""
from __future__ import annotations

from typing import Any, Callable, Union

from live_trial.transcript.builder import TranscriptBuilder
from live_trial.transcript.status import BUSY_GENERATING, BUSY_TOOL, IDLE_TURN_COMPLETE

#: What a case's ``build()`` returns: the records and the CLI's session status (None: no live CLI), for some also the
#: screen's background counts (``{"shells": n, "agents": m}``).
Built = Union[tuple[list[dict[str, Any]], dict[str, Any] | None],
              tuple[list[dict[str, Any]], dict[str, Any] | None, dict[str, int]]]


def _b() -> TranscriptBuilder:
    b = TranscriptBuilder(seed=9)
    b.mode()
    return b


def _bg_shell_turn(b: TranscriptBuilder, *, by_user: bool = False) -> str:
    b.prompt("Run the task.")
    task = b.background_shell("for i in 1 2 3; do echo t; sleep 20; done", "Tick", by_user=by_user)
    b.text("The job runs in the background; I will be woken when it ends.")
    b.turn_duration()
    return task


def _bg_shell_running() -> Built:
    b = _b()
    _bg_shell_turn(b)
    return b.records, {"status": "shell"}


def _bg_shell_running_no_live_status() -> Built:
    b = _b()
    _bg_shell_turn(b)
    return b.records, None


def _bg_shell_moved_by_ctrl_b() -> Built:
    b = _b()
    _bg_shell_turn(b, by_user=True)
    return b.records, {"status": "shell"}


def _bg_shell_woke_model() -> Built:
    b = _b()
    task = _bg_shell_turn(b)
    b.task_notification(task)
    return b.records, {"status": "busy"}


def _bg_shell_wake_turn_done() -> Built:
    b = _b()
    task = _bg_shell_turn(b)
    b.task_notification(task)
    b.tool_result(b.tool_use("Write", {"file_path": "/tmp/project/out/status.json", "content": "{}"}), "ok")
    b.text("DONE: ok")
    b.turn_duration()
    return b.records, {"status": "idle"}


def _bg_shell_ended_inside_turn() -> Built:
    b = _b()
    b.prompt()
    task = b.background_shell("sleep 3", "Short")
    tid = b.tool_use("TaskOutput", {"task_id": task, "block": True, "timeout": 30000})
    b.notification_in_turn(task)
    b.tool_result(tid, "<retrieval_status>success</retrieval_status>", result={
        "retrieval_status": "success", "task": {"task_id": task, "task_type": "local_bash", "status": "completed"}})
    b.text("DONE: ok")
    b.turn_duration()
    return b.records, {"status": "idle"}


def _bg_shell_task_stop() -> Built:
    b = _b()
    task = _bg_shell_turn(b)
    b.prompt("stop it")
    tid = b.tool_use("TaskStop", {"task_id": task})
    b.tool_result(tid, "stopped", result={"message": f"Successfully stopped task: {task} (sleep)", "task_id": task,
                                          "task_type": "local_bash", "command": "sleep"})
    b.text("Stopped.")
    b.turn_duration()
    return b.records, None


def _bg_shell_killed_from_panel() -> Built:
    b = _b()
    _bg_shell_turn(b)
    return b.records, {"status": "idle"}


def _live_shell_status_only() -> Built:
    b = _b()
    b.turn()
    return b.records, {"status": "shell"}


def _screen_footer_shell_only() -> Built:
    b = _b()
    b.turn()
    return b.records, None, {"shells": 1, "agents": 0}


def _bg_agent_waiting() -> Built:
    b = _b()
    b.prompt()
    b.background_agent("Sleep probe")
    b.text("Agent launched; ending my turn.")
    b.turn_duration(pending_agents=1)
    return b.records, {"status": "busy"}


def _bg_agent_count_only() -> Built:
    b = _b()
    b.prompt("a prompt while the agent runs")
    b.text("EXTRA: ok")
    b.turn_duration(pending_agents=1)
    return b.records, None


def _bg_agent_finished() -> Built:
    b = _b()
    b.prompt()
    agent = b.background_agent("Sleep probe")
    b.text("Agent launched; ending my turn.")
    b.turn_duration(pending_agents=1)
    b.task_notification(agent)
    b.text("DONE: ok")
    b.turn_duration()
    return b.records, {"status": "idle"}


def _compacted_after_turn() -> Built:
    b = _b()
    b.turn(tools=1)
    b.prompt("second")
    b.text("Second answer.")
    b.turn_duration()
    b.last_prompt("second")
    b.compaction()
    return b.records, {"status": "idle"}


def _compact_refused() -> Built:
    b = _b()
    b.turn()
    b.slash_command("/compact", "Not enough messages to compact.")
    return b.records, {"status": "idle"}


def _clear_new_transcript() -> Built:
    b = _b()
    b.snapshot()
    b.slash_command("/clear", "")
    return b.records, {"status": "idle"}


def _clear_after_question() -> Built:
    old = _b()
    old.prompt("Run the task.")
    old.text("Which folder should I use?")
    old.turn_duration()
    new = TranscriptBuilder(session_id="new-" + old.session_id[4:], seed=10, start=old.now)
    new.mode()
    new.snapshot()
    new.slash_command("/clear", "")
    return old.records + new.records, {"status": "idle"}


def _command_is_not_a_prompt() -> Built:
    b = _b()
    b.turn()
    b.slash_command("/compact", "Not enough messages to compact.")
    b.prompt("after the command")
    return b.records, None


SESSION_CASES: tuple[tuple[str, Callable[[], Built], dict[str, Any]], ...] = (
    ("background shell running after the turn ended (CLI status shell)", _bg_shell_running,
     {"state": BUSY_TOOL, "background_kind": "shell"}),
    ("background shell running, transcript only", _bg_shell_running_no_live_status,
     {"state": BUSY_TOOL, "background_kind": "shell"}),
    ("command moved to the background by the user (Ctrl+B)", _bg_shell_moved_by_ctrl_b,
     {"state": BUSY_TOOL, "background_kind": "shell"}),
    ("a task notification woke the model", _bg_shell_woke_model, {"state": BUSY_GENERATING, "background_kind": None}),
    ("wake-up turn ended after the background shell finished", _bg_shell_wake_turn_done,
     {"state": IDLE_TURN_COMPLETE, "background_kind": None, "interrupted": False}),
    ("background shell ended inside the turn (queued_command, TaskOutput)", _bg_shell_ended_inside_turn,
     {"state": IDLE_TURN_COMPLETE, "background_kind": None}),
    ("background shell stopped by TaskStop", _bg_shell_task_stop,
     {"state": IDLE_TURN_COMPLETE, "background_kind": None}),
    ("background shell stopped from the task panel (CLI idle, no record)", _bg_shell_killed_from_panel,
     {"state": IDLE_TURN_COMPLETE, "background_kind": None, "warnings_contain": "background_ended_silently"}),
    ("CLI status shell with no shell in the transcript tail", _live_shell_status_only,
     {"state": BUSY_TOOL, "background_kind": "shell"}),
    ("screen footer shows a shell, no CLI status", _screen_footer_shell_only,
     {"state": BUSY_TOOL, "background_kind": "shell"}),
    ("background agent running (pendingBackgroundAgentCount, CLI busy)", _bg_agent_waiting,
     {"state": BUSY_TOOL, "background_kind": "agent"}),
    ("pendingBackgroundAgentCount alone keeps the session busy", _bg_agent_count_only,
     {"state": BUSY_TOOL, "background_kind": "agent"}),
    ("background agent finished and the wake-up turn ended", _bg_agent_finished,
     {"state": IDLE_TURN_COMPLETE, "background_kind": None}),
    ("/compact after a complete turn is not a prompt", _compacted_after_turn,
     {"state": IDLE_TURN_COMPLETE, "interrupted": False, "last_assistant_text": "Second answer."}),
    ("/compact refused (not enough messages)", _compact_refused, {"state": IDLE_TURN_COMPLETE, "interrupted": False}),
    ("/clear's new transcript holds no prompt (CLI idle)", _clear_new_transcript,
     {"state": IDLE_TURN_COMPLETE, "interrupted": False}),
    ("/clear after a question: old and new transcript read together", _clear_after_question,
     {"state": IDLE_TURN_COMPLETE, "interrupted": False, "last_assistant_text": "Which folder should I use?"}),
    ("a prompt after a slash command starts the turn", _command_is_not_a_prompt, {"state": BUSY_GENERATING}),
)
