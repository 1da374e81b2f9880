"""``run --resume``: continue a trial whose harness was killed, from the phase it recorded, to the same verdict
(seed 001: poll with the same state file; README "Resuming a trial").

The session keeps running while nobody watches it; its owner pid (recorded in trial-state.json and on the tmux
session) is dead, so a new harness may take it over, with the options recorded when the trial started (the policy's
STALL limit and hard cap, the gate answers, the language, the claude binary). Where it continues:

=================================  ========================================================================"""
from __future__ import annotations

import os
from pathlib import Path

from live_trial.acceptance.case_criteria import criteria_pairs, with_criteria
from live_trial.closure.target import resolve_target
from live_trial.errors import RefusedInput
from live_trial.policy import Policy
from live_trial.rehearsal.scenario import load_scenario
from live_trial.session.backend import Backend
from live_trial.session.rules import pid_alive as _alive
from live_trial.stop_reasons import StopReason
from live_trial.trial.context import TrialContext
from live_trial.trial.facts import Facts, TrialOutcome, phase_at_least
from live_trial.trial.finish import finish
from live_trial.trial.folder_steps import reclaim
from live_trial.trial.state import TrialState
from live_trial.trial.workdir import open_workdir

#: Phases after which the task's delivery was confirmed: a resume from before them cannot continue the trial.
UNCONFIRMED = ("created", "booting", "sending")


def _refuse_unresumable(state: TrialState, root: Path) -> None:
    """Refuse (RefusedInput) a workdir ``run --resume`` does not continue: a trial driven by hand (``prepare``), and a
    session of an activation case's prompt (README "Does it start by itself?": it has no verdict to finish)."""
    if state.phase == "prepared":
        raise RefusedInput("this trial is driven by hand (made by `live-trial prepare`): run --resume continues only "
                           "trials started by run", where=str(root), code="driven_by_hand",
                           fix="go on with its next step by hand (poll with the same --state-file), or start run")
    if state.activation is not None:
        raise RefusedInput("this is one session of an activation case's prompt: it has no verdict to finish, and an "
                           "activation run is not resumed", where=str(root), code="activation_session",
                           fix="run the activation case again (run TARGET --case NAME)")


def _restore_request(trial: TrialContext, state: TrialState) -> None:
    """The request, limits and target the trial started with, as trial-state.json recorded them (a resume takes no
    trial options: README "Resuming a trial")."""
    req = trial.req
    req.target, req.args = state.target, state.args or ""
    req.cwd = Path(state.cwd)
    req.plugins_root = Path(state.plugins_root or req.plugins_root)
    req.eval_root = Path(state.eval_root or req.eval_root)
    req.model, req.proof, req.gate_kind = state.model, bool(state.proof), state.gate_kind or req.gate_kind
    req.socket = state.socket
    req.gate_responses = list(state.gate_responses)
    req.gate_response_kinds = list(state.gate_response_kinds or [req.gate_kind] * len(req.gate_responses))
    req.expect_gate = bool(state.expect_gate)
    req.claude_bin = state.claude_bin or req.claude_bin
    req.lang = state.lang or req.lang
    if state.policy:
        trial.policy = Policy(**state.policy)
    req.criteria = list(criteria_pairs(state.criteria))
    trial.target = with_criteria(resolve_target(req.target, req.plugins_root), req.criteria)


def resume(trial: TrialContext, workdir: Path) -> TrialOutcome:
    """Continue a trial whose harness was killed, from the phase it recorded (module docstring), to its verdict.

    Raises :class:`RefusedInput` when the workdir is not a trial, its owner harness is still alive (two harnesses
    must never drive one session), or an older state without its facts ends past polling; a one-line Blocked
    (exit 3) when the workdir cannot be written.
    """
    trial.wd = open_workdir(workdir)
    trial.take_lock()
    trial.state = TrialState.load(trial.wd.trial_state)
    _refuse_unresumable(trial.state, trial.wd.root)
    owner = trial.state.owner_pid
    if owner != os.getpid() and _alive(owner):
        raise RefusedInput(f"the trial is still driven by harness pid {owner}", where=str(trial.wd.root),
                           fix="wait for it or stop it first")
    state, req = trial.state, trial.req
    _restore_request(trial, state)
    phase = state.phase
    if state.facts is not None:
        trial.set_facts(Facts.from_doc(state.facts))
    elif phase in ("collecting", "evaluating", "judged"):
        raise RefusedInput(f"this trial was recorded in phase {phase} by a live-trial that did not keep what the trial "
                           "had established, so it cannot be resumed from there", where=str(trial.wd.root),
                           fix="run the trial again", code="state_without_facts")
    else:                       # an older state before the end of polling: what its phase implies
        trial.facts.launch = "PASS" if phase == "polling" else "FAIL"
    if phase in UNCONFIRMED:
        # Boot or delivery was never confirmed: the evidence a verdict needs did not survive the kill.
        trial.facts.blocked, trial.facts.stop_reason = True, StopReason.HARNESS_KILLED
        trial.facts.notes.append(f"the harness was killed while {phase}, before the task's delivery was confirmed; "
                                 "run the trial again")
    if phase == "finished":
        # nothing to continue (README "Resuming a trial"): the recorded verdict and message, and no record added, so
        # the trial's log and its page stay what the trial left
        return finish(trial)
    reclaim(trial)                     # an in-place folder's lock again; the copy is removed when drive ends
    trial.journal.save(owner_pid=os.getpid())
    trial.journal.log("harness", "resumed", phase=phase)

    if state.rehearsal:
        req.rehearsal = Path(state.rehearsal["scenario"])

    def take_over() -> None:
        if phase in UNCONFIRMED or phase_at_least(phase, "judged"):
            trial.backend = Backend(req.socket)    # only to end what may be left: no model, no claude needed
            return
        trial.prepare_tools()
        assert trial.backend is not None        # found by prepare_tools
        if trial.backend.has_session(state.session):
            trial.backend.set_owner(state.session, os.getpid())
        if state.rehearsal:
            assert req.rehearsal is not None    # set from the state above
            req.replay = bool(state.rehearsal.get("tape"))
            if not req.replay:
                trial.scenario = load_scenario(req.rehearsal)
            trial.start_rehearsal(port=state.rehearsal["port"])
        elif state.recording:
            req.record = True                   # the proxy again, on the port the session was told
            trial.start_rehearsal(port=state.recording["port"])

    def poll_if_polling() -> None:
        if phase == "polling":
            # the MCP servers the skill needs are watched again: one that failed to start stops the trial at once
            trial.watch_servers()
            trial.poll_loop()

    return trial.drive(take_over, poll_if_polling)
