"""``run --resume``: continue a trial after its harness was killed (seed 001: poll with the same state file).

The session keeps running while nobody watches it; its owner pid (recorded in trial-state.json and on
the tmux session) is dead, so a new harness may take it over. The poll clocks continue from the same
poll-state.json, so STALL and HARD_CAP hold across the kill. A rehearsal server is restarted on the same
port (the scenario's rules depend only on each request, so the conversation goes on). The trial's own folder is
the one its state records: a copy is removed when the resumed trial ends, an in-place folder is locked again.
"""
from __future__ import annotations

import os
from pathlib import Path

from live_trial.errors import RefusedInput
from live_trial.jsonfile import read_json
from live_trial.session.rules import pid_alive as _alive
from live_trial.trial.workdir import open_workdir


def resume(trial, workdir: Path):
    """Continue a trial whose harness was killed: same state file, same clocks, while the session lives.

    Raises :class:`RefusedInput` when the workdir is not a trial, is already judged, or its owner
    harness is still alive (two harnesses must never drive one session).
    """
    from live_trial.closure.target import resolve_target
    from live_trial.trial.folder_steps import reclaim

    trial.wd = open_workdir(workdir)
    trial.take_lock()
    trial.state = read_json(trial.wd.path("trial-state.json"), "trial-state.schema.json")
    if trial.state["phase"] == "prepared":
        raise RefusedInput("this trial is driven by hand (made by `live-trial prepare`): run --resume continues only "
                           "trials started by run", where=str(trial.wd.root), code="driven_by_hand",
                           fix="go on with its next step by hand (poll with the same --state-file), or start run")
    if trial.state["phase"] in ("judged", "finished"):
        raise RefusedInput("this trial is already judged", where=str(trial.wd.root),
                           fix="start a new trial with run")
    owner = trial.state["owner_pid"]
    if owner != os.getpid() and _alive(owner):
        raise RefusedInput(f"the trial is still driven by harness pid {owner}", where=str(trial.wd.root),
                           fix="wait for it or stop it first")
    req = trial.req
    req.target, req.args = trial.state["target"], trial.state.get("args", "")
    req.cwd = Path(trial.state["cwd"])
    req.plugins_root = Path(trial.state.get("plugins_root") or req.plugins_root)
    req.eval_root = Path(trial.state.get("eval_root") or req.eval_root)
    req.model, req.proof, req.gate_kind = trial.state["model"], trial.state["proof"], trial.state["gate_kind"]
    req.socket = trial.state.get("socket")
    req.gate_responses = list(trial.state["gate_responses"])
    req.gate_response_kinds = list(trial.state.get("gate_response_kinds") or [req.gate_kind] * len(req.gate_responses))
    req.expect_gate = bool(trial.state.get("expect_gate", False))
    trial.target = resolve_target(req.target, req.plugins_root)
    reclaim(trial)                     # an in-place folder's lock again; the copy is removed when drive ends
    trial.journal.save(owner_pid=os.getpid())
    trial.journal.log("harness", "resumed", phase=trial.state["phase"])
    trial.facts.launch = "PASS" if trial.state["phase"] in ("polling", "collecting", "evaluating") else "FAIL"
    def take_over() -> None:
        trial.prepare_tools()
        if trial.backend.has_session(trial.state["session"]):
            trial.backend.set_owner(trial.state["session"], os.getpid())
        if trial.state.get("rehearsal"):
            from live_trial.rehearsal.scenario import load_scenario

            req.rehearsal = Path(trial.state["rehearsal"]["scenario"])
            trial.scenario = load_scenario(req.rehearsal)
            trial.start_rehearsal(port=trial.state["rehearsal"]["port"])

    def poll_if_polling() -> None:
        if trial.state["phase"] == "polling":
            trial.poll_loop()

    return trial.drive(take_over, poll_if_polling)
