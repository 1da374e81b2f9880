"""The four-state classifier of a Claude Code turn, as a pure function of transcript records.

``classify(records, session_status=None) -> Status``; no I/O. The signals and why each rule exists are in
``references/transcript-jsonl.md`` (spec: seed 001 "完了 = 二層判定").

States:
- ``BUSY_GENERATING``: the newest main-chain event is the human prompt or a tool_result (or a queued
  prompt is still waiting to run). A killed session also looks like this; poll checks the session.
- ``BUSY_TOOL``: a tool_use (not a gate tool) has no tool_result and the CLI is not waiting on a permission prompt;
  or the turn ended while background work it started (a background shell or subagent) still runs.
- ``GATE``: an AskUserQuestion / ExitPlanMode tool_use without its tool_result, or any pending tool while the
  CLI's session status is ``waiting``.
- ``IDLE_TURN_COMPLETE``: turn_duration after the newest prompt, or a real-model assistant record with a final
  stop_reason and every tool answered (unless the live CLI status still says busy: Stop hooks run then);
  an interrupt (``interrupted``) or an API error (``api_error``) also ends it, and so does a live CLI status
  ``idle`` while the turn shows no end record (Esc before the first token writes none). Never while background
  work the session started still runs (``transcript.background``): that is ``BUSY_TOOL`` with ``background`` set.

Records that are not prompts (slash commands, compaction records, task notifications) never start a turn: a task
notification continues the turn of the newest human prompt (the CLI woke the model), the others change nothing.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from enum import StrEnum

from live_trial.transcript.api_errors import record_cause
from live_trial.transcript.background import outstanding
from live_trial.transcript.order import causal_order
from live_trial.transcript.records import (
    INTERRUPT_TEXTS,
    SYNTHETIC_MODEL,
    is_command_text,
    is_human_prompt,
    is_task_notification,
    message_content,
    prompt_text,
)

TYPE_CHECKING = False
if TYPE_CHECKING:       # annotations only: importing typing would cost every command's start-up
    from typing import Any


class TurnState(StrEnum):
    """The four states of a turn (this module's docstring says when each holds). Their values are the words
    ``status``, ``poll`` and the state files write (``status --json`` ``state``, poll-state.json ``last_state``)."""

    BUSY_GENERATING = "BUSY_GENERATING"
    BUSY_TOOL = "BUSY_TOOL"
    GATE = "GATE"
    IDLE_TURN_COMPLETE = "IDLE_TURN_COMPLETE"


BUSY_GENERATING, BUSY_TOOL, GATE, IDLE_TURN_COMPLETE = (TurnState.BUSY_GENERATING, TurnState.BUSY_TOOL, TurnState.GATE,
                                                        TurnState.IDLE_TURN_COMPLETE)
#: Every state, in the order above.
STATES = tuple(TurnState)
#: The states of a turn still running (seed 001's STALL row 2: a silent tool or stream).
BUSY_STATES = (TurnState.BUSY_GENERATING, TurnState.BUSY_TOOL)

#: Tools that always wait for a person, even under --dangerously-skip-permissions (seed 001 GATE_TOOLS).
GATE_TOOLS = ("AskUserQuestion", "ExitPlanMode")
FINAL_STOP_REASONS = ("end_turn", "stop_sequence", "max_tokens", "refusal")


class Status:
    """The classification of a transcript.

    ``state`` a :class:`TurnState`; ``reason`` names the deciding signal; ``interrupted`` true when the turn
    ended by Esc; ``api_error`` the API error status (int) or text when the turn ended in an API error, else
    None; ``pending_tool`` the name of the unanswered tool (None when none); ``question`` the gate's question
    text; ``gate_kind`` ``ask_user_question`` | ``exit_plan_mode`` | ``permission``; ``options`` the offered
    answer labels; ``last_assistant_text`` the newest real-model text of the turn (for the STALL table's
    question / done-report rows); ``warnings`` oddities worth recording (e.g. a gate answered at once with
    empty answers); ``background`` the background work still running
    (:meth:`live_trial.transcript.background.Background.to_dict`: kind, shells, agents, tasks with their output
    files, sources), None when none runs; ``ended_by`` what ended the newest turn (``turn_duration``, ``interrupt``,
    ``api_error``, ``assistant`` (a final stop_reason), ``cli_idle`` (the live status alone)), None when it has not
    ended; ``api_error_cause`` the stop reason code of the API error the turn ended in
    (:func:`live_trial.transcript.api_errors.api_error_cause`: ``model_unavailable``, ``usage_limit``,
    ``model_auth``, ``model_unknown`` or the session's ``api_error``) and ``api_error_text`` the line the CLI wrote for
    it, both None unless the newest event of the turn (before its ``turn_duration``) is that error.
    """

    FIELDS = ("state", "reason", "interrupted", "api_error", "pending_tool", "pending_tool_id", "question", "gate_kind",
              "options", "stop_reason", "last_prompt_uuid", "last_event_at", "queued_prompts", "session_status",
              "last_assistant_text", "warnings", "background", "ended_by", "api_error_cause", "api_error_text")

    def __init__(self, state: str, reason: str, interrupted: bool = False, api_error: Any = None,
                 pending_tool: str | None = None, pending_tool_id: str | None = None, question: str | None = None,
                 gate_kind: str | None = None, options: list[str] | None = None, stop_reason: str | None = None,
                 last_prompt_uuid: str | None = None, last_event_at: str | None = None, queued_prompts: int = 0,
                 session_status: str | None = None, last_assistant_text: str = "", warnings: list[str] | None = None,
                 background: dict[str, Any] | None = None, ended_by: str | None = None,
                 api_error_cause: str | None = None, api_error_text: str | None = None) -> None:
        # A plain class, not a dataclass: importing dataclasses (and the inspect module it loads) would be a
        # quarter of ``live-trial status``'s start-up.
        self.state, self.reason, self.interrupted, self.api_error = state, reason, interrupted, api_error
        self.pending_tool, self.pending_tool_id, self.question = pending_tool, pending_tool_id, question
        self.gate_kind, self.options, self.stop_reason = gate_kind, list(options or []), stop_reason
        self.last_prompt_uuid, self.last_event_at, self.queued_prompts = last_prompt_uuid, last_event_at, queued_prompts
        self.session_status, self.last_assistant_text = session_status, last_assistant_text
        self.warnings, self.background, self.ended_by = list(warnings or []), background, ended_by
        self.api_error_cause, self.api_error_text = api_error_cause, api_error_text

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (``status --json``)."""
        from copy import deepcopy

        return deepcopy({name: getattr(self, name) for name in self.FIELDS})

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Status) and all(getattr(self, n) == getattr(other, n) for n in self.FIELDS)

    def __repr__(self) -> str:
        return "Status(" + ", ".join(f"{name}={getattr(self, name)!r}" for name in self.FIELDS) + ")"


def _blocks(rec: Mapping[str, Any]) -> list[dict[str, Any]]:
    content = message_content(rec)
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _question_of(name: str, tool_input: Any) -> tuple[str, list[str]]:
    """The question text and option labels of a pending gate tool; never raises (input may be {} or junk)."""
    inp = tool_input if isinstance(tool_input, dict) else {}
    if name == "AskUserQuestion":
        texts, labels = [], []
        for q in inp.get("questions") or []:
            if not isinstance(q, dict):
                continue
            if isinstance(q.get("question"), str) and q["question"].strip():
                texts.append(q["question"].strip())
            for opt in q.get("options") or []:
                if isinstance(opt, dict) and isinstance(opt.get("label"), str):
                    labels.append(opt["label"])
        if not texts and isinstance(inp.get("question"), str):
            texts.append(inp["question"].strip())
        return (" | ".join(texts) or "AskUserQuestion (no question text in the tool input)"), labels
    if name == "ExitPlanMode":
        plan = inp.get("plan")
        plan = plan if isinstance(plan, str) else ""
        first = next((ln.strip("# ").strip() for ln in plan.splitlines() if ln.strip()), "")
        text = "Approve the plan and start coding?" + (f" Plan: {first}" if first else "")
        if isinstance(inp.get("planFilePath"), str):
            text += f" ({inp['planFilePath']})"
        return text, []
    detail = ""
    for key in ("command", "file_path", "path", "url", "description", "pattern"):
        if isinstance(inp.get(key), str) and inp[key].strip():
            detail = inp[key].strip().splitlines()[0][:200]
            break
    return f"Permission for {name}" + (f": {detail}" if detail else ""), []


#: Screen dialog kinds (``live_trial.session.dialogs.Dialog.kind``) that are gates of a running turn.
SCREEN_GATE_KINDS = ("ask_user_question", "exit_plan_mode", "permission")
#: What the AskUserQuestion dialog adds to the skill's options on 2.1.197 (claude-cli-observed.md "TUI markers").
ASK_CLI_OPTIONS = ("Type something.", "Chat about this")


def gate_from_screen(status: Status, kind: str | None, question: str, options: list[str]) -> Status:
    """``status`` completed with what the screen shows of an open gate dialog (``kind`` as
    ``live_trial.session.dialogs.Dialog.kind``, its question and option labels); returned unchanged when ``kind`` is
    not a gate or the turn has ended.

    A busy or waiting turn whose gate dialog is on screen is GATE even when the dialog's tool_use record is not in
    the transcript yet (seen on 2.1.197 under load: the record came late or, once, not within 90 s), so a question
    the skill asked is never mistaken for a silent hang (seed 001 STALL table row 2). Pure; raises nothing."""
    if kind not in SCREEN_GATE_KINDS or status.state == IDLE_TURN_COMPLETE:
        return status
    if status.state == GATE and status.pending_tool:
        return status                      # the transcript already names the pending tool and its question
    status.state = GATE
    status.gate_kind = status.gate_kind or kind
    status.question = status.question or question or {"ask_user_question": "AskUserQuestion (read from the screen)",
                                                      "exit_plan_mode": "Approve the plan and start coding?",
                                                      "permission": "Permission for a tool"}[kind]
    if kind == "ask_user_question":      # the CLI's own ways out are not the skill's options
        options = [o for o in options if o not in ASK_CLI_OPTIONS]
    status.options = status.options or list(options)
    status.reason = f"{kind} dialog on screen; its tool_use is not in the transcript yet"
    return status


def _empty_answers(result: Any) -> bool:
    if not isinstance(result, dict) or "answers" not in result:
        return False
    return not result.get("answers")


def classify(records: Iterable[Mapping[str, Any]], session_status: Mapping[str, Any] | None = None,
             screen_background: Mapping[str, Any] | None = None) -> Status:
    """Classify the newest turn of a main transcript into one of four states. Pure; never raises.

    ``records``: transcript records (any order; sidechain and bookkeeping records are ignored).
    ``session_status``: the CLI's ``sessions/<pid>.json`` **only when its pid is alive** (else None).
    ``screen_background``: ``{"shells": n, "agents": m}`` read from the screen (poll passes
    ``session.screen.background_work``), None when the screen was not read.
    Rules: seed 001 "完了 = 二層判定"; each documented in references/transcript-jsonl.md.
    """
    try:
        return _classify(records, session_status, screen_background)
    except Exception as exc:  # noqa: BLE001 - a classifier bug must not crash a trial; it is reported
        return Status(state=BUSY_GENERATING, reason=f"classifier_error: {type(exc).__name__}: {exc}",
                      warnings=[f"classifier_error: {exc!r}"])


def _classify(records: Iterable[Mapping[str, Any]], session_status: Mapping[str, Any] | None,
              screen_background: Mapping[str, Any] | None = None) -> Status:
    events = causal_order(records)
    cli_status = session_status.get("status") if isinstance(session_status, Mapping) else None
    cli_status = cli_status if isinstance(cli_status, str) else None
    warnings: list[str] = []

    queued = 0
    prompt_i = -1
    for i, rec in enumerate(events):
        if rec.get("type") == "queue-operation":
            op = rec.get("operation")
            if op == "enqueue":
                queued += 1
            elif op in ("dequeue", "remove"):
                queued = max(0, queued - 1)
            elif op in ("popAll", "clear"):
                queued = 0
        elif is_human_prompt(rec):
            prompt_i = i
    prompt = events[prompt_i] if prompt_i >= 0 else None

    pending: dict[str, dict[str, Any]] = {}
    asked: dict[str, str] = {}        # tool_use id -> tool name, for every tool_use of the turn
    last: str | None = None           # kind of the newest conversation event
    last_at: str | None = prompt.get("timestamp") if prompt else None
    stop_reason: str | None = None
    last_text = ""
    interrupted = False
    api_error: Any = None
    ended_in_error: tuple[str, str] | None = None     # (cause, text) while the newest event is an API error
    pending_agents: int | None = None
    for rec in events[prompt_i + 1:]:
        rtype = rec.get("type")
        kind = None
        if rtype == "assistant":
            msg = rec.get("message")
            msg = msg if isinstance(msg, dict) else {}
            model = msg.get("model")
            stop_reason = msg.get("stop_reason") if isinstance(msg.get("stop_reason"), str) else None
            if rec.get("isApiErrorMessage") is True:
                api_error = rec.get("apiErrorStatus") or prompt_text(rec) or True
                kind = "api_error"
                cause = record_cause(rec, prompt_text(rec))
                ended_in_error = (str(cause), prompt_text(rec).strip()[:500]) if cause is not None else None
            elif model == SYNTHETIC_MODEL:
                kind = "synthetic"
            else:
                kind = "assistant"
                last_text = prompt_text(rec) or last_text
                for b in _blocks(rec):
                    if b.get("type") == "tool_use" and isinstance(b.get("id"), str):
                        pending[b["id"]] = b
                        asked[b["id"]] = str(b.get("name"))
        elif rtype == "user":
            if rec.get("isMeta") is True or rec.get("isCompactSummary") is True:
                continue
            text = prompt_text(rec).strip()
            results = [b for b in _blocks(rec) if b.get("type") == "tool_result"]
            if results:
                for b in results:
                    tid = b.get("tool_use_id")
                    if not isinstance(tid, str):      # answers no tool_use (a damaged record); never a dict key
                        continue
                    pending.pop(tid, None)
                    if asked.get(tid) == "AskUserQuestion" and b.get("is_error") is not True \
                            and _empty_answers(rec.get("toolUseResult")):
                        warnings.append(f"ask_user_question_empty_answers: AskUserQuestion {tid} was answered at "
                                        "once with empty answers; no gate was shown")
                kind = "tool_result"
            elif text in INTERRUPT_TEXTS:
                interrupted = True
                pending.clear()
                kind = "interrupt"
            elif is_command_text(text):
                continue
            elif is_task_notification(rec):
                kind = "notification"
            else:
                kind = "user_other"
        elif rtype == "system" and rec.get("subtype") == "turn_duration":
            pending.clear()
            count = rec.get("pendingBackgroundAgentCount")
            pending_agents = count if isinstance(count, int) and count > 0 else None
            kind = "turn_duration"
        if kind:
            if kind not in ("api_error", "turn_duration"):
                ended_in_error = None   # the turn went on after the error (2.1.197 writes turn_duration after it)
            last = kind
            last_at = rec.get("timestamp") if isinstance(rec.get("timestamp"), str) else last_at

    status = Status(state=BUSY_GENERATING, reason="", interrupted=interrupted, api_error=api_error,
                    stop_reason=stop_reason, last_prompt_uuid=prompt.get("uuid") if prompt else None,
                    last_event_at=last_at, queued_prompts=queued, session_status=cli_status,
                    last_assistant_text=last_text, warnings=warnings,
                    api_error_cause=ended_in_error[0] if ended_in_error else None,
                    api_error_text=ended_in_error[1] if ended_in_error else None)

    if pending:
        tid, block = next(reversed(pending.items()))
        gate = next(((i, b) for i, b in pending.items() if b.get("name") in GATE_TOOLS), None)
        status.pending_tool, status.pending_tool_id = str(block.get("name")), tid
        if gate or cli_status == "waiting":
            tid, block = gate or (tid, block)
            name = str(block.get("name"))
            status.state, status.pending_tool, status.pending_tool_id = GATE, name, tid
            status.gate_kind = {"AskUserQuestion": "ask_user_question", "ExitPlanMode": "exit_plan_mode"}.get(
                name, "permission")
            status.question, status.options = _question_of(name, block.get("input"))
            status.reason = f"pending {name}" + (" (CLI waiting on a permission prompt)" if not gate else "")
        else:
            status.state, status.reason = BUSY_TOOL, f"pending {status.pending_tool} without tool_result"
    elif cli_status == "waiting" and last not in ("turn_duration", "interrupt", "api_error"):
        # Seen on 2.1.197 under load: the dialog of AskUserQuestion / ExitPlanMode is on screen and the live status
        # says waiting, but the CLI has not written the tool_use record yet (for 90 s once). The live status is the
        # clean gate signal (claude-cli-observed.md pitfall 5); the question is then read from the screen by poll.
        status.state, status.reason = GATE, "the CLI waits for an answer (its tool_use is not in the transcript yet)"
    elif last is None:
        status.reason = "newest event is the human prompt" if prompt else "no conversation event yet"
    elif last == "turn_duration":
        status.state, status.reason = IDLE_TURN_COMPLETE, "turn_duration after the newest prompt" + (
            f" (API error {api_error})" if api_error is not None else "")
    elif last == "interrupt":
        status.state, status.reason = IDLE_TURN_COMPLETE, "interrupted by the user"
    elif last == "api_error":
        status.state, status.reason = IDLE_TURN_COMPLETE, f"API error {api_error}"
    elif last == "assistant" and stop_reason in FINAL_STOP_REASONS and cli_status == "busy":
        # 2.1.197 runs Stop hooks (and their continuation) after the final assistant record and writes
        # turn_duration only at the real end; its live session status says busy until then.
        status.reason = f"assistant {stop_reason}, but the CLI still reports busy (Stop hooks, no turn_duration yet)"
    elif last == "assistant" and stop_reason in FINAL_STOP_REASONS:
        status.state, status.reason = IDLE_TURN_COMPLETE, f"assistant {stop_reason}, every tool answered"
    elif last == "tool_result":
        status.reason = "newest event is a tool_result"
    else:
        status.reason = {"synthetic": "<synthetic> record without its interrupt record yet",
                         "user_other": "newest event is a user message",
                         "notification": "a task notification woke the model (a background task ended)",
                         "assistant": f"assistant stop_reason {stop_reason}"}.get(last, last)
    if status.state == BUSY_GENERATING and prompt is not None and cli_status == "idle" \
            and last in (None, "tool_result", "user_other", "notification"):
        # Esc before the first token: 2.1.197 writes no interrupt record (the file ends at the prompt) and puts
        # the prompt back into the input box; only the live CLI status (idle) tells (re-checked on the real CLI).
        status.state, status.interrupted = IDLE_TURN_COMPLETE, True
        status.reason = "the CLI is idle but wrote no end record (cancelled before any response)"
    if status.state == BUSY_GENERATING and prompt is None and last is None and cli_status == "idle" \
            and any(r.get("type") in ("user", "system") for r in events):
        # /clear starts a new transcript with only its command records (references/transcript-jsonl.md): no turn
        # was asked for, and the CLI is idle.
        status.state, status.reason = IDLE_TURN_COMPLETE, "no prompt in this transcript and the CLI is idle"
    if status.state == IDLE_TURN_COMPLETE:
        status.ended_by = last if last in ("turn_duration", "interrupt", "api_error", "assistant") else "cli_idle"
    if status.state == IDLE_TURN_COMPLETE and queued:
        status.state, status.reason = BUSY_GENERATING, f"{queued} queued prompt(s) not yet dequeued"
    bg = outstanding(events, cli_status=cli_status, pending_agents=pending_agents if last == "turn_duration" else None,
                     screen=screen_background)
    for task_id in bg.ended_silently:
        status.warnings.append(f"background_ended_silently: background task {task_id} ended without a notification "
                               "(stopped from the CLI's task panel?)")
    if bg.running:
        status.background = bg.to_dict()
        if status.state == IDLE_TURN_COMPLETE:
            # Work the session started still runs and will wake the model when it ends: not a finished turn, so
            # no nudge and no DONE (ARCHITECTURE invariant 8; references/transcript-jsonl.md "Background work").
            status.state = BUSY_TOOL
            status.reason = f"{bg.describe()} (the turn itself ended: {status.reason})"
    return status
