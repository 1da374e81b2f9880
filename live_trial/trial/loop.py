"""The poll loop of a trial: GATE answers and the STALL branch table of seed 001, until a terminal outcome.

It drives a :class:`~live_trial.trial.runner.Trial` through its public methods and its journal.
"""
from __future__ import annotations

from live_trial.errors import SESSION_GONE, Blocked, PollExit, RefusedInput
from live_trial.notices.catalogue import resolve_lang
from live_trial.session import screen, send
from live_trial.stop_reasons import StopReason, service_note
from live_trial.transcript.api_errors import model_named, screen_error_cause
from live_trial.transcript.reply import text_ends_with_question, text_reports_done
from live_trial.trial import model_side
from live_trial.trial import stall as stall_table
from live_trial.trial.context import PollOutcome, TrialContext
from live_trial.trial.moves import UNFOLLOWED, move_note
from live_trial.trial.nudge_file import write_nudge

NO_RESPONSE_LEFT = "stopped at a question it had to ask"


def _state(result: PollOutcome) -> str | None:
    status = getattr(result, "status", None)
    state: str | None = getattr(status, "state", None) if status is not None else None
    return state


def _record_moves(trial: TrialContext, result: PollOutcome) -> None:
    """Each move of the session to a new transcript (``/clear``) goes once into trial-log.jsonl and the notes."""
    for move in getattr(result, "moves", None) or ():
        note = move_note(move)
        if note not in trial.facts.notes:
            trial.facts.notes.append(note)
            trial.journal.log("poll", "transcript_moved", **move)


def _busy_what(result: PollOutcome) -> str:
    """``BUSY_TOOL (1 background shell still running)`` for a STALL while background work runs, else the state."""
    background = getattr(getattr(result, "status", None), "background", None)
    if not background:
        return _state(result) or "unknown"
    parts = [f"{n} background {k}{'s' if n > 1 else ''}" for k, n in (("shell", background.get("shells") or 0),
                                                                      ("agent", background.get("agents") or 0)) if n]
    return f"{_state(result)} ({' and '.join(parts)} still running, silent)"


def poll_until_terminal(trial: TrialContext) -> None:
    """Poll until DONE, HARD_CAP, an unanswerable GATE or a STALL the table ends; record facts on ``trial``.

    GATE (poll exit 4): answer with the next --gate-response (each with its own kind, rescue or contractual) and
    poll again, recording the question, the options shown, the answer and its kind; none left ends the trial as
    "stopped at a question it had to ask". STALL (exit 2): first, a session that vanished from outside (tmux's
    server gone, the session removed) is BLOCKED, not row 1 (live_trial/stop_reasons.py); a turn that ended in an API
    error of the model's service the CLI gave up on is BLOCKED with its cause (``model_unavailable``,
    ``usage_limit``, ``model_auth``, ``model_unknown``: README "Whose failure it is"), never the skill's failure; then
    rows 1-6 of seed 001's table, each judged once per stall (:func:`live_trial.trial.stall.decide_stall`); a nudge
    is written to ``nudge-<n>.md`` and sent through the same file-and-buffer path as the task.
    """
    assert trial.state is not None
    while True:
        limit = trial.policy.stall_limit_s * (2 if trial.state.stall_extended else 1)
        result = trial.poll_once(limit)
        trial.facts.poll_exit = result.exit
        _record_moves(trial, result)
        _record_warnings(trial, result)
        if result.exit == PollExit.DONE:
            trial.facts.completion = "PASS"
            trial.journal.log("poll", PollExit.DONE, elapsed_s=result.elapsed_s)
            return
        if result.exit == PollExit.HARD_CAP:
            trial.facts.blocked = True
            trial.facts.stop_reason = StopReason.HARD_CAP
            trial.journal.log("poll", PollExit.HARD_CAP, state=_state(result), tail=result.capture_tail)
            return
        if result.exit == PollExit.BLOCKED:
            raise Blocked("tmux disappeared during the trial", code=StopReason.TMUX_MISSING)
        if result.exit == PollExit.TICK_BUDGET:
            continue
        go_on = _answer_gate(trial, result) if result.exit == PollExit.GATE else _after_stall(trial, result)
        if not go_on:
            return


def _record_warnings(trial: TrialContext, result: PollOutcome) -> None:
    """The classifier's warnings (e.g. an AskUserQuestion answered at once with empty answers, which is not a gate:
    references/transcript-jsonl.md) go once into the facts and trial-log.jsonl."""
    for warning in getattr(result.status, "warnings", None) or ():
        if warning not in trial.facts.warnings:
            trial.facts.warnings.append(warning)
            trial.journal.log("poll", "warning", warning=warning)


def _answer_gate(trial: TrialContext, result: PollOutcome) -> bool:
    """GATE: answer with the next --gate-response and return True (poll again); none left records
    "stopped at a question it had to ask", an answer that is none of the question's options stops the trial BLOCKED
    (:func:`_not_an_option`): both return False (README "Questions (gates)")."""
    trial.facts.gate_seen = True
    assert trial.state is not None
    used = trial.state.gate_response_count
    options = list(getattr(result.status, "options", None) or [])
    if used >= len(trial.state.gate_responses):
        trial.facts.stop_reason = StopReason.GATE_UNANSWERED
        trial.journal.log("poll", PollExit.GATE, question=result.question, outcome=NO_RESPONSE_LEFT, options=options)
        trial.facts.notes.append(f"{NO_RESPONSE_LEFT}: {result.question}")
        return False
    response = trial.state.gate_responses[used]
    kinds = trial.state.gate_response_kinds or []
    kind = kinds[used] if used < len(kinds) else trial.req.gate_kind
    assert trial.backend is not None
    try:
        send.answer_gate(trial.backend, trial.state.session, response, sleep=trial.sleep)
    except RefusedInput as exc:
        if exc.code != send.NO_OPTION:
            raise
        return _not_an_option(trial, result, response, options or [str(o) for o in exc.details.get("options") or []])
    # One line per answered question: what was asked, what was offered, the answer.
    answer = {"question": result.question, "options": options, "answer": response, "kind": kind}
    trial.journal.save(gate_response_count=used + 1,
                       gate_answers=list(trial.state.gate_answers or []) + [answer])
    trial.journal.log("poll", PollExit.GATE, question=result.question, answered=response, gate_kind=kind)
    return True


def _not_an_option(trial: TrialContext, result: PollOutcome, answer: str, options: list[str]) -> bool:
    """The answer given ahead of time is none of the question's options (nothing was pressed): the person's input, not
    the skill's failure, so the trial stops BLOCKED ``gate_answer_not_an_option`` with a note naming the question,
    the options shown and the answer given (README "Questions (gates)"). Returns False: poll no more."""
    shown = ", ".join(f'"{o}"' for o in options) or "none could be read"
    trial.facts.blocked, trial.facts.stop_reason = True, StopReason.GATE_ANSWER_NOT_AN_OPTION
    trial.facts.notes.append(f'the answer "{answer}" given ahead of time is not one of the options of the question '
                             f'"{result.question}": {shown}; give one of them as shown (or text:<words> for the '
                             "question's free-text answer)")
    trial.journal.log("poll", PollExit.GATE, question=result.question, options=options, not_an_option=answer)
    return False


#: How the note naming row 6's API error turn begins (``the model's API answered with an error (400): …``).
API_ERROR_NOTE = "the model's API answered with an error ("


def _after_stall(trial: TrialContext, result: PollOutcome) -> bool:
    """STALL: a transcript that could not be followed or a session gone from outside stops the trial BLOCKED; else
    the row of seed 001's STALL table decides (:func:`live_trial.trial.stall.decide_stall`): extend or nudge
    (return True: poll again) or stop with the row's reason (False). A replay that left its tape, or a rehearsal's
    scenario that answered no rule, raises its Blocked first: the session's API error is then the model side's, and
    nothing of the table (a nudge) applies."""
    model_side.check_divergence(trial)
    if result.reason.startswith(UNFOLLOWED):
        # The CLI continues under a session whose transcript the harness cannot find: what the session does now
        # cannot be observed, so the harness stops here (never "lost", never a guess).
        trial.facts.blocked, trial.facts.stop_reason = True, StopReason.TRANSCRIPT_MOVED
        trial.facts.notes.append(f"the session moved to a new transcript that could not be followed: {result.reason}")
        trial.journal.log("poll", StopReason.TRANSCRIPT_MOVED, reason=result.reason, tail=result.capture_tail)
        return False
    gone = trial.environment_cause()
    if gone is not None:   # tmux's server, or the session itself, went away: not claude's own exit (row 1)
        trial.facts.poll_exit = PollExit.BLOCKED
        assert trial.backend is not None        # environment_cause asked tmux through it
        raise Blocked(gone.why, where=f"socket {trial.backend.socket}", code=gone)
    assert trial.wd is not None and trial.state is not None and trial.backend is not None      # polling
    service = StopReason.of(getattr(result.status, "api_error_cause", None))
    if service is not None and service.blocks and result.reason != SESSION_GONE:
        _stop_for_the_model_service(trial, result, service)
        return False
    session = trial.state.session
    capture = trial.backend.capture(session) if trial.backend.has_session(session) else ""
    last_text = getattr(result.status, "last_assistant_text", None) or ""
    decision = stall_table.decide_stall(
        session_alive=result.reason != SESSION_GONE and trial.backend.pane_alive(session),
        state=_state(result), marker_exists=trial.wd.marker.exists(),
        stall_extended=trial.state.stall_extended, nudge_count=trial.state.nudge_count,
        nudge_max=trial.policy.nudge_max,
        asks_question=text_ends_with_question(last_text) or screen.screen_ends_with_question(capture),
        said_done=text_reports_done(last_text) or screen.screen_reports_done(capture))
    if decision.row == 2:
        decision = stall_table.StallDecision(2, decision.action, decision.reason.replace(
            str(_state(result)), _busy_what(result), 1))
    trial.facts.stall_row = decision.row
    trial.journal.log("stall", decision.action, row=decision.row, reason=decision.reason, state=_state(result),
                      tail=screen.tail(capture) if capture else result.capture_tail)
    if decision.action == "extend":
        trial.journal.save(stall_extended=True)
        return True
    if decision.action == "nudge":
        n = trial.state.nudge_count + 1
        nudge_file = write_nudge(trial.wd, n, resolve_lang(trial.state.lang, trial.env))
        trial.journal.save(nudge_count=n)
        trial.send_file(nudge_file, "nudge")
        return True
    trial.facts.stop_reason = decision.action        # a StopReason: the table's rows that stop
    trial.facts.notes.append(decision.reason)
    if decision.action == StopReason.UNEXPECTED_STOP:
        _name_unexpected_stop(trial, result, capture, last_text)
    return False


def _stop_for_the_model_service(trial: TrialContext, result: PollOutcome, cause: StopReason) -> None:
    """The model's service failed the trial (the CLI gave up on its API error): BLOCKED with ``cause``, the CLI's own
    line in the notes, and for an unknown model its name (trial-log.jsonl ``poll`` ``model_unknown`` ``model``: the
    next step names it)."""
    status = result.status
    text = (getattr(status, "api_error_text", None) or "").strip()
    trial.facts.blocked, trial.facts.stop_reason = True, cause
    evidence: dict[str, object] = {"api_error": getattr(status, "api_error", None), "text": text[:500],
                                   "tail": result.capture_tail}
    model = model_named(text, trial.req.model) if cause == StopReason.MODEL_UNKNOWN else None
    if cause == StopReason.MODEL_UNKNOWN:
        evidence["model"] = model
    trial.facts.notes.append(service_note(cause, text, model=model))
    trial.journal.log("poll", cause, **evidence)


def _name_unexpected_stop(trial: TrialContext, result: PollOutcome, capture: str, last_text: str) -> None:
    """Row 6 names what it saw: an API error turn, or an error / usage-limit screen."""
    api_error = getattr(result.status, "api_error", None)
    if api_error:
        trial.facts.stop_reason = StopReason.API_ERROR
        seen = (last_text.strip() or (screen.error_screen(capture) if capture else "") or "").strip()
        trial.facts.notes.append(f"{API_ERROR_NOTE}{api_error})"
                                 + (f": {seen[:200]}" if seen else ""))
    elif capture and (err := screen.error_screen(capture) or ""):
        service = StopReason.of(screen_error_cause(err))
        if service is not None and service.blocks:
            # the model's service refused the account (a usage limit, a key) with no record of it: the environment
            trial.facts.blocked, trial.facts.stop_reason = True, service
            trial.facts.notes.append(service_note(service, err, on_screen=True))
            return
        trial.facts.stop_reason = StopReason.ERROR_SCREEN
        trial.facts.notes.append(f"the screen shows an error: {err[:200]}")
