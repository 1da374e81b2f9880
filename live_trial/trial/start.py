"""The start of a trial, the same for ``run`` and ``prepare`` (seed 001 "準備"; README "The steps, one by one"): the
workdir with ``out/``, ``task.md`` filled from the template, the first ``trial-state.json``, and, once the trial's own
folder is made, its state at start (:func:`live_trial.trial.folder_steps.prepare`).

Works on a trial (:class:`~live_trial.trial.runner.Trial`) whose input checks passed
(:func:`live_trial.trial.inputs.validate`): its request, target, pinned closure, folder plan and journal.
"""
from __future__ import annotations

import json
import os
import uuid
from dataclasses import asdict
from pathlib import Path

from live_trial.clock import utc_now
from live_trial.jsonfile import write_text_atomic
from live_trial.resources import read_reference
from live_trial.trial.activity import resolve_fixtures, write_fixtures
from live_trial.trial.context import TrialContext
from live_trial.trial.facts import TrialRequest
from live_trial.trial.folder import folder_record, session_cwd
from live_trial.trial.state import TrialState
from live_trial.trial.workdir import create_workdir, session_name
from live_trial.workdir_files import PROMPTS


def create(trial: TrialContext, run_id: str | None = None) -> None:
    """Create the workdir ``run_id`` (default ``trial.req.run_id``, else a new one; refused when it exists), take the
    workdir's lock for this process, write ``task.md`` and then the first ``trial-state.json`` (phase ``created``, the
    owner pid of this process, the folder record, the behaviour closure pinned now, the policy and language a resume
    reuses; task.md first: a resume needs it to know the workdir). Sets ``trial.wd``, ``trial.state`` and
    ``trial.req.cwd`` (where the session starts). Raises :class:`~live_trial.errors.RefusedInput` (the workdir exists,
    another harness holds its lock) and OSError."""
    req = trial.req
    # what the input checks resolved (live_trial.trial.inputs.validate)
    assert trial.target is not None and trial.folder_plan is not None and trial.pinning is not None
    fixtures = resolve_fixtures(req.mcp_fixtures, [(p.name, p.root) for p in trial.pinning.plugins])
    trial.wd = create_workdir(req.eval_root, trial.target.plugin_name, trial.target.skill, run_id or req.run_id,
                              parent=workdir_parent(req))
    trial.take_lock()
    req.cwd = session_cwd(trial.folder_plan, trial.wd.root)
    trial.state = TrialState(
        run_id=trial.wd.run_id, target=req.target, plugin=trial.target.plugin_name, skill=trial.target.skill,
        args=req.args, cwd=str(req.cwd), plugins_root=str(req.plugins_root), eval_root=str(req.eval_root),
        session=session_name(trial.wd.run_id, trial.target.skill), session_id=str(uuid.uuid4()),
        socket=req.socket, model=req.model, proof=req.proof, gate_kind=req.gate_kind, phase="created",
        owner_pid=os.getpid(), started_at=utc_now(), gate_responses=list(req.gate_responses),
        gate_response_kinds=list(req.gate_response_kinds), gate_answers=[], expect_gate=req.expect_gate,
        folder=folder_record(trial.folder_plan, trial.wd.root, req.cwd),
        closure={"digest": trial.pinning.digest, "plugins": [p.name for p in trial.pinning.plugins],
                 "plugin_dirs": [str(p.root) for p in trial.pinning.plugins], "file_count": len(trial.pinning.files)},
        policy=asdict(trial.policy), lang=req.lang or trial.env.get("LIVE_TRIAL_LANG") or None, collected=False,
        mcp_fixtures=[f.to_doc() for f in fixtures] or None,
        case_run=req.case_run.to_doc() if req.case_run is not None else None,
        criteria=[{"id": i, "text": t} for i, t in req.criteria] or None,
        activation=req.activation.to_doc() if req.activation is not None else None)
    write_task(trial)
    write_fixtures(trial.wd, fixtures)
    trial.journal.save()


def workdir_parent(req: TrialRequest) -> Path | None:
    """Where the workdir is made: in its activation run's ``prompts/`` folder for a session of an activation case,
    else None (the eval root's ``<plugin>/<skill>/live-trial/``)."""
    return req.activation.folder / PROMPTS if req.activation is not None else None


def write_task(trial: TrialContext) -> None:
    """Write ``<workdir>/task.md``: references/task-template.md with the target, the args and the absolute path of the
    completion marker filled in (seed 001, the task.md contract); for a prompt of an activation case, the prompt alone
    (README "Does it start by itself?": nothing names the skill unless its author's prompt does)."""
    assert trial.wd is not None
    if trial.req.prompt is not None:
        write_text_atomic(trial.wd.task, trial.req.prompt)
        return
    text = (read_reference("task-template.md")
            .replace("{{TARGET_SKILL}}", trial.req.target)
            .replace('"{{ARGS}}"', json.dumps(trial.req.args, ensure_ascii=False))
            .replace("{{MARKER_PATH}}", str(trial.wd.marker)))
    write_text_atomic(trial.wd.task, text)
