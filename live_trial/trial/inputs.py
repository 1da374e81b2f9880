"""Checks of a trial's input, all made before anything is created (CONVENTIONS "Errors": bad input is one
line, exit 2, nothing on disk; seed 001 rule 3: the plugin set fails closed before boot)."""
from __future__ import annotations

from pathlib import Path

from live_trial.acceptance.case_criteria import clashes, with_criteria
from live_trial.acceptance.evallog import workdir_path
from live_trial.acceptance.tier import contract_evidence
from live_trial.closure.pinning import pin
from live_trial.closure.target import resolve_target
from live_trial.doctor import live
from live_trial.errors import RefusedInput, require_utf8
from live_trial.notices.catalogue import resolve_lang
from live_trial.rehearsal.scenario import load_scenario
from live_trial.session import boot
from live_trial.session.backend import Backend
from live_trial.session.environment import child_env
from live_trial.session.rules import check_target_allowed
from live_trial.tape.file import read_tape
from live_trial.trial import folder, folder_lock
from live_trial.trial.activity import refuse_shadowing, resolve_fixtures
from live_trial.trial.context import TrialContext
from live_trial.trial.facts import TrialRequest
from live_trial.trial.workdir import new_run_id


def validate(trial: TrialContext) -> None:
    """Resolve and check ``trial.req`` in place: denylist, the message language, gate kind, eval root, args, target,
    plugin closure, scenario or tape (a replay; never with ``--record`` or ``--proof``), model, root sandbox,
    contractual grounding, a tmux server no harness started, then the trial's folder (:func:`check_folder`). Raises
    :class:`RefusedInput` (or the closure's BOOT_FAIL, exit 2) and creates nothing but, for ``--in-place``, the
    folder's lock (held from here on; released when the trial ends or when :meth:`Trial.run` fails to start)."""
    req = trial.req
    check_target_allowed(req.target)
    resolve_lang(req.lang, trial.env)       # a language with no catalogue (LIVE_TRIAL_LANG=fr) before anything exists
    if req.gate_kind not in ("rescue", "contractual"):
        raise RefusedInput(f"unknown gate kind {req.gate_kind!r}", fix="use rescue or contractual")
    req.gate_response_kinds = gate_kinds(req)
    for answer in req.gate_responses:
        if not answer.strip() or answer.strip() in ("text:", "text: "):
            raise RefusedInput("an empty --gate-response cannot answer a question", where=f"--gate-response {answer!r}",
                               code="empty_gate_response",
                               fix='give the option label as shown, e.g. --gate-response "Casual", '
                                   'or "text:your words"')
    req.plugins_root = Path(req.plugins_root).resolve()
    req.eval_root = Path(req.eval_root).resolve()
    if req.eval_root.exists() and not req.eval_root.is_dir():
        raise RefusedInput("eval root is not a folder", where=str(req.eval_root),
                           fix="pass --eval-root a folder (it is created when missing)", code="bad_eval_root")
    require_utf8(req.args, "--args", fix="pass the skill's arguments as UTF-8 text")
    for answer in req.gate_responses:
        require_utf8(answer, "--gate-response", fix="pass the option label as UTF-8 text")
    if "\n" in req.args or "\r" in req.args:
        raise RefusedInput("--args must be one line", where="--args",
                           fix="pass the skill's arguments on one line", code="bad_args")
    trial.target = resolve_target(req.target, req.plugins_root)
    taken = clashes(trial.target.frontmatter, req.criteria)
    if taken:
        raise RefusedInput(f"criteria {', '.join(taken)} are the skill's own (feedback_contract)", where="criteria",
                           code="bad_criteria", fix="give the case's criteria other ids (references/suite-format.md)")
    trial.target = with_criteria(trial.target, req.criteria)    # the evaluator judges the case's criteria too
    # Fail closed on the plugin set and its files before anything is created (seed 001 rule 3: BOOT_FAIL before
    # start): missing or malformed manifests, a symlink leaving a plugin, an undeclared plugin.
    trial.pinning = pin(trial.target, req.plugins_root)
    plugins = [(p.name, p.root) for p in trial.pinning.plugins]
    refuse_shadowing(resolve_fixtures(req.mcp_fixtures, plugins), plugins,   # stand-ins: refused here
                     (trial.target.frontmatter or {}).get("allowed-tools"))
    if not str((trial.target.frontmatter or {}).get("description") or "").strip():
        trial.facts.warnings.append("SKILL.md has no frontmatter description: the evaluator has no promise "
                                   "to judge the goal against")
    played = "--replay" if req.replay else "--rehearsal"
    if req.rehearsal is not None and req.proof:
        raise RefusedInput("a rehearsal cannot be a proof trial: its model is a script, not the model requested",
                           where=f"--proof {played}", code="proof_with_rehearsal",
                           fix=f"drop --proof to rehearse, or drop {played} to prove with the real model")
    if req.record and req.rehearsal is not None:
        raise RefusedInput("a recorded trial is a live one: its model cannot also be played from a script",
                           where=f"--record {played}", code="record_with_rehearsal",
                           fix=f"drop --record to play {played[2:]}, or drop {played} to record a live trial")
    if req.rehearsal is not None:
        req.rehearsal = Path(req.rehearsal).resolve()
        if req.replay:
            trial.tape = read_tape(req.rehearsal)      # README "Replaying a real trial offline"
        else:
            trial.scenario = load_scenario(req.rehearsal)

    boot.validate_model(req.model, proof=req.proof)
    if req.rehearsal is None:  # a rehearsal sets IS_SANDBOX=1 itself
        boot.check_root_sandbox(child_env(trial.env, {}, rehearsal=False))
    if req.gate_kind == "contractual" or "contractual" in req.gate_response_kinds:
        contract_evidence(trial.target.frontmatter)  # raises RefusedInput without grounding (seed 001 gate kinds)

    # A tmux server the harness did not start (a person's own) keeps its options: refused before anything exists.
    Backend(req.socket).refuse_foreign_server()
    check_folder(trial)


def gate_kinds(req: TrialRequest) -> list[str]:
    """The kind of each of ``req.gate_responses``, in order: those of ``--gate-response`` (rescue) and
    ``--gate-response-contractual`` (contractual) as given, every one contractual with ``--gate-kind contractual``
    (README "Questions (gates)"). Raises :class:`RefusedInput` when the kinds and the answers do not pair up."""
    kinds = list(req.gate_response_kinds) or [req.gate_kind] * len(req.gate_responses)
    if len(kinds) != len(req.gate_responses) or any(k not in ("rescue", "contractual") for k in kinds):
        raise RefusedInput("each gate answer needs its kind (rescue or contractual)", where="--gate-response",
                           code="bad_value", fix="give answers with --gate-response or --gate-response-contractual")
    return ["contractual" if req.gate_kind == "contractual" else k for k in kinds]


def check_live_setup(trial: TrialContext, where: Path, what: str, flag: str) -> None:
    """Refuse a real trial that cannot start (README "Running a real trial"): ``where`` (the eval root; DIR in place,
    ``what`` and ``flag`` name it) not under a trusted folder, the config's first-run set-up not finished, not logged
    in, or an ``ANTHROPIC_API_KEY`` this config never approved (the CLI would stop at start to ask). The doctor's
    lines (:func:`live_trial.doctor.live.check_live`) travel in the refusal's ``details["doctor"]``, printed with it.
    Raises :class:`RefusedInput` (``folder_not_trusted``, ``live_config``, ``live_login``); nothing is created."""
    lines = live.check_live(trial.env, folder=where, what=what, claude_bin=trial.req.claude_bin)
    doctor = {"doctor": [ln.line() for ln in lines] + [live.summary(lines)]}
    missing = [ln for ln in lines if not ln.ok and ln.name in live.REFUSED_ON]

    def also(rest: list[live.Line]) -> str:
        """One refusal names every fix a person needs, not only the first."""
        return f"; a real trial also needs: {', '.join(ln.name for ln in rest)} (the doctor's lines say how)" \
            if rest else ""
    try:
        folder.check_trusted(where, trial.env, what=what, flag=flag)
    except RefusedInput as exc:
        exc.details.update(doctor)
        exc.fix = (exc.fix or "") + also(missing)
        raise
    if missing:
        raise RefusedInput(f"a real trial cannot start: {missing[0].text}", code=f"live_{missing[0].name}",
                           fix=missing[0].fix + also(missing[1:]), details=doctor)


def check_folder(trial: TrialContext) -> None:
    """Decide the trial's own folder (:func:`live_trial.trial.folder.plan_folder`: a copy over the size limit is
    refused), check that a real trial's folder is trusted in Claude Code (the eval root, under which fresh folders and
    copies are made; DIR itself in place), and take an in-place folder's lock, naming its holder when another trial
    has it. Sets ``trial.folder_plan``, ``trial.folder_lock`` and ``trial.req.run_id``. Source: README "Running a
    real trial"."""
    req = trial.req
    plan = folder.plan_folder(req.folder, req.source, req.eval_root, max_bytes=trial.policy.copy_max_bytes,
                              keep=req.keep_cwd, include_ignored=req.include_ignored)
    if req.rehearsal is None:           # a rehearsal seeds its own config and trusts its folder there
        if plan.form == folder.IN_PLACE:
            assert plan.source is not None     # plan_folder sets DIR in place
            check_live_setup(trial, plan.source, "the trial folder", "--in-place")
        else:
            check_live_setup(trial, req.eval_root, "the eval root", "--eval-root")
    trial.folder_plan = plan
    if plan.form == folder.IN_PLACE:
        assert trial.target is not None and plan.source is not None      # resolved and planned above
        req.run_id = req.run_id or new_run_id()
        where = workdir_path(req.eval_root, trial.target.plugin_name, trial.target.skill, req.run_id)
        trial.folder_lock = folder_lock.acquire(plan.source, where)
