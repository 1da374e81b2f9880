"""Named synthetic transcripts with the state each must classify to: ``status --self-test`` and the unit tests.

Each case is ``Case(name, build, expect)`` where ``build()`` returns ``(records, session_status)`` (or with a third
item, the screen's background counts) and ``expect`` maps Status fields to expected values (``background_kind``: the
kind of ``Status.background``, ``warnings_contain``: a text one warning holds). The shapes follow what CLI 2.1.197
writes (references/transcript-jsonl.md); the cases cover every rule documented there.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from live_trial.transcript.builder import TranscriptBuilder
from live_trial.transcript.cases_session import SESSION_CASES, Built
from live_trial.transcript.status import BUSY_GENERATING, BUSY_TOOL, GATE, IDLE_TURN_COMPLETE, Status, classify

ASK_INPUT = {"questions": [{"question": "Which colour?", "header": "Colour", "multiSelect": False,
                            "options": [{"label": "Red", "description": "warm"},
                                        {"label": "Blue", "description": "cool"}]}]}


@dataclass(frozen=True)
class Case:
    """One self-test case."""

    name: str
    build: Callable[[], Built]
    expect: dict[str, Any]


def _b() -> TranscriptBuilder:
    b = TranscriptBuilder(seed=7)
    b.mode()
    return b


def _prompt_only() -> Built:
    b = _b()
    b.prompt("Run the task.")
    b.attachment("skill_listing")
    return b.records, None


def _complete() -> Built:
    b = _b()
    b.turn(tools=1)
    return b.records, None


def _end_turn_no_duration() -> Built:
    b = _b()
    b.prompt()
    b.text("DONE: ok")
    return b.records, None


def _bash_running() -> Built:
    b = _b()
    b.prompt()
    b.tool_use("Bash", {"command": "sleep 20"}, text="Sleeping now.")
    return b.records, {"status": "busy"}


def _after_tool_result() -> Built:
    b = _b()
    b.prompt()
    b.tool_result(b.tool_use("Bash", {"command": "ls"}), "a\nb")
    return b.records, None


def _ask_pending() -> Built:
    b = _b()
    b.prompt()
    b.tool_use("AskUserQuestion", ASK_INPUT)
    return b.records, {"status": "waiting", "waitingFor": "permission prompt"}


def _ask_pending_not_last_line() -> Built:
    b = _b()
    b.prompt()
    b.tool_use("AskUserQuestion", ASK_INPUT)
    b.attachment("command_permissions")
    b.meta("injected")
    return b.records, None


def _exit_plan_empty_input() -> Built:
    b = _b()
    b.prompt()
    b.tool_use("ExitPlanMode", {})
    return b.records, None


def _permission_prompt() -> Built:
    b = _b()
    b.prompt()
    b.tool_use("Bash", {"command": "rm -rf build"})
    return b.records, {"status": "waiting", "waitingFor": "permission prompt"}


def _interrupt_stream() -> Built:
    b = _b()
    b.prompt()
    b.synthetic("partial text")
    b.interrupt()
    return b.records, None


def _interrupt_tool() -> Built:
    b = _b()
    b.prompt()
    tid = b.tool_use("Bash", {"command": "sleep 30"})
    b.tool_result(tid, "User rejected tool use", is_error=True, result="User rejected tool use")
    b.interrupt(for_tool=True)
    return b.records, None


def _api_error() -> Built:
    b = _b()
    b.prompt()
    b.synthetic(api_error_status=400)
    b.turn_duration(3)
    return b.records, None


def _queued_not_dequeued() -> Built:
    b = _b()
    b.prompt("first")
    b.queue("enqueue", "second")
    b.text("first done")
    b.turn_duration()
    return b.records, None


def _queued_dequeued() -> Built:
    b = _b()
    b.prompt("first")
    b.queue("enqueue", "second")
    b.text("first done")
    b.turn_duration()
    b.queue("dequeue")
    b.prompt("second", source="queued")
    return b.records, None


def _subagent_done_agent_pending() -> Built:
    b = _b()
    b.prompt()
    b.tool_use("Agent", {"description": "probe", "prompt": "run ls", "subagent_type": "general-purpose"})
    side = TranscriptBuilder(session_id=b.session_id, seed=8, start=b.now)
    side.prompt("run ls", snapshot=False)
    side.text("subagent finished")
    side.turn_duration()
    for rec in side.records:
        rec["isSidechain"] = True
        rec["agentId"] = "a1"
    return b.records + side.records, None


def _out_of_order_first_turn() -> Built:
    b = _b()
    b.prompt("hello")
    b.attachment("skill_listing")
    b.text("hi")
    b.turn_duration()
    recs = b.records
    head, turn_head, reply = recs[:2], recs[2:5], recs[5:]
    return [{"type": "last-prompt", "leafUuid": None}] + head + reply + turn_head, None


def _ask_empty_answers() -> Built:
    b = _b()
    b.prompt()
    tid = b.tool_use("AskUserQuestion", ASK_INPUT)
    b.tool_result(tid, "User has answered your questions: .",
                  result={"questions": ASK_INPUT["questions"], "answers": {}, "annotations": {}})
    b.text("Going on without an answer.")
    b.turn_duration()
    return b.records, None


def _exit_plan_denied() -> Built:
    b = _b()
    b.prompt()
    tid = b.tool_use("ExitPlanMode", {"plan": "# Plan\n1. do it"})
    b.tool_result(tid, "The user doesn't want to proceed with this tool use.", is_error=True,
                  result="User rejected tool use")
    return b.records, None


def _second_prompt() -> Built:
    b = _b()
    b.turn()
    b.prompt("next task")
    return b.records, None


def _noise_after_complete() -> Built:
    b = _b()
    b.turn()
    b.attachment("plan_mode_exit")
    b.informational("auto mode on")
    b.snapshot()
    b.last_prompt("Run the task.")
    return b.records, None


def _stale_busy_status_with_idle_transcript() -> Built:
    b = _b()
    b.turn()
    return b.records, {"status": "busy"}


def _stop_hook_running() -> Built:
    b = _b()
    b.prompt()
    b.text("first part done")
    return b.records, {"status": "busy"}


def _stop_hook_continued() -> Built:
    b = _b()
    b.prompt()
    b.text("first part done")
    b.meta("Stop hook feedback:\nkeep going")
    b.add(b._base("system", subtype="stop_hook_summary", hookCount=1, hookErrors=["keep going"],
                  preventedContinuation=False, level="suggestion"))
    b.text("DONE: ok")
    b.add(b._base("system", subtype="stop_hook_summary", hookCount=1, hookErrors=[],
                  preventedContinuation=False, level="suggestion"))
    b.turn_duration()
    return b.records, {"status": "idle"}


def _cancelled_before_first_token() -> Built:
    b = _b()
    b.prompt()
    b.attachment("skill_listing")
    return b.records, {"status": "idle"}


def _nothing() -> Built:
    return [], None


CASES: tuple[Case, ...] = (
    Case("prompt only (ends with the user's prompt)", _prompt_only, {"state": BUSY_GENERATING}),
    Case("complete turn with turn_duration", _complete, {"state": IDLE_TURN_COMPLETE, "interrupted": False}),
    Case("end_turn without turn_duration", _end_turn_no_duration, {"state": IDLE_TURN_COMPLETE}),
    Case("Bash tool running", _bash_running, {"state": BUSY_TOOL, "pending_tool": "Bash"}),
    Case("tool_result is newest", _after_tool_result, {"state": BUSY_GENERATING}),
    Case("AskUserQuestion pending", _ask_pending,
         {"state": GATE, "pending_tool": "AskUserQuestion", "question": "Which colour?", "options": ["Red", "Blue"]}),
    Case("AskUserQuestion pending, not the last line", _ask_pending_not_last_line, {"state": GATE}),
    Case("ExitPlanMode pending with input {}", _exit_plan_empty_input,
         {"state": GATE, "pending_tool": "ExitPlanMode", "gate_kind": "exit_plan_mode"}),
    Case("permission prompt (CLI waiting)", _permission_prompt,
         {"state": GATE, "gate_kind": "permission", "question": "Permission for Bash: rm -rf build"}),
    Case("interrupted stream", _interrupt_stream, {"state": IDLE_TURN_COMPLETE, "interrupted": True}),
    Case("interrupted tool", _interrupt_tool, {"state": IDLE_TURN_COMPLETE, "interrupted": True,
                                                "pending_tool": None}),
    Case("API error", _api_error, {"state": IDLE_TURN_COMPLETE, "api_error": 400}),
    Case("queued prompt not dequeued", _queued_not_dequeued, {"state": BUSY_GENERATING, "queued_prompts": 1}),
    Case("queued prompt dequeued and started", _queued_dequeued, {"state": BUSY_GENERATING, "queued_prompts": 0}),
    Case("subagent ended, Agent tool pending", _subagent_done_agent_pending,
         {"state": BUSY_TOOL, "pending_tool": "Agent"}),
    Case("first turn written out of line order", _out_of_order_first_turn, {"state": IDLE_TURN_COMPLETE}),
    Case("AskUserQuestion answered at once with empty answers", _ask_empty_answers,
         {"state": IDLE_TURN_COMPLETE, "warnings_contain": "ask_user_question_empty_answers"}),
    Case("denied ExitPlanMode is not a gate", _exit_plan_denied, {"state": BUSY_GENERATING, "pending_tool": None}),
    Case("new prompt after a complete turn", _second_prompt, {"state": BUSY_GENERATING}),
    Case("bookkeeping records after a complete turn", _noise_after_complete, {"state": IDLE_TURN_COMPLETE}),
    Case("stale busy session status does not override", _stale_busy_status_with_idle_transcript,
         {"state": IDLE_TURN_COMPLETE}),
    Case("end_turn while Stop hooks run (CLI busy, no turn_duration)", _stop_hook_running,
         {"state": BUSY_GENERATING}),
    Case("Stop hook continuation then turn_duration", _stop_hook_continued,
         {"state": IDLE_TURN_COMPLETE, "last_assistant_text": "DONE: ok"}),
    Case("Esc before the first token (no end record, live CLI idle)", _cancelled_before_first_token,
         {"state": IDLE_TURN_COMPLETE, "interrupted": True}),
    Case("no records", _nothing, {"state": BUSY_GENERATING}),
) + tuple(Case(name, build, expect) for name, build, expect in SESSION_CASES)


def check(case: Case) -> tuple[Status, list[str]]:
    """Classify ``case`` and return the Status and a list of mismatches (empty when it passes)."""
    records, session_status, *screen = case.build()
    st = classify(records, session_status, screen[0] if screen else None)
    problems: list[str] = []
    for key, want in case.expect.items():
        if key == "background_kind":
            got = (st.background or {}).get("kind")
            if got != want:
                problems.append(f"background kind {got!r}, expected {want!r}")
            continue
        if key == "warnings_contain":
            if not any(want in w for w in st.warnings):
                problems.append(f"warnings {st.warnings!r} lack {want!r}")
            continue
        got = getattr(st, key)
        if got != want:
            problems.append(f"{key}={got!r}, expected {want!r}")
    return st, problems


def self_test() -> list[tuple[str, list[str]]]:
    """Run every case; return ``(name, problems)`` pairs (all problems empty means pass)."""
    return [(case.name, check(case)[1]) for case in CASES]
