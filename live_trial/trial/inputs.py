"""Checks of a trial's input, all made before anything is created (CONVENTIONS "Errors": bad input is one
line, exit 2, nothing on disk; seed 001 rule 3: the plugin set fails closed before boot)."""
from __future__ import annotations

from pathlib import Path

from live_trial.errors import RefusedInput, require_utf8


def validate(trial) -> None:
    """Resolve and check ``trial.req`` in place: denylist, gate kind, cwd, eval root, args, target, plugin
    closure, scenario, model, root sandbox, contractual grounding. Raises :class:`RefusedInput` (or the
    closure's BOOT_FAIL, exit 2) and creates nothing."""
    from live_trial.closure.pinning import pin
    from live_trial.closure.target import resolve_target
    from live_trial.session.rules import check_target_allowed

    req = trial.req
    check_target_allowed(req.target)
    if req.gate_kind not in ("rescue", "contractual"):
        raise RefusedInput(f"unknown gate kind {req.gate_kind!r}", fix="use rescue or contractual")
    for answer in req.gate_responses:
        if not answer.strip() or answer.strip() in ("text:", "text: "):
            raise RefusedInput("an empty --gate-response cannot answer a question", where=f"--gate-response {answer!r}",
                               code="empty_gate_response",
                               fix='give the option label as shown, e.g. --gate-response "Casual", or "text:your words"')
    req.cwd = Path(req.cwd).resolve()
    if not req.fresh_cwd and not req.cwd.is_dir():
        raise RefusedInput("trial cwd is not a folder", where=str(req.cwd), fix="pass an existing --cwd")
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
    # Fail closed on the plugin set and its files before anything is created (seed 001 rule 3: BOOT_FAIL before
    # start): missing or malformed manifests, a symlink leaving a plugin, an undeclared plugin.
    trial.pinning = pin(trial.target, req.plugins_root)
    if not str((trial.target.frontmatter or {}).get("description") or "").strip():
        trial.facts.warnings.append("SKILL.md has no frontmatter description: the evaluator has no promise "
                                   "to judge the goal against")
    if req.rehearsal is not None and req.proof:
        raise RefusedInput("a rehearsal cannot be a proof trial: its model is a script, not the model requested",
                           where="--proof --rehearsal", code="proof_with_rehearsal",
                           fix="drop --proof to rehearse, or drop --rehearsal to prove with the real model")
    if req.rehearsal is not None:
        from live_trial.rehearsal.scenario import load_scenario

        req.rehearsal = Path(req.rehearsal).resolve()
        trial.scenario = load_scenario(req.rehearsal)
    from live_trial.session import boot

    boot.validate_model(req.model, proof=req.proof)
    if req.rehearsal is None:  # a rehearsal sets IS_SANDBOX=1 itself
        boot.check_root_sandbox(boot.child_env(trial.env, {}, rehearsal=False))
    if req.gate_kind == "contractual":
        from live_trial.acceptance.tier import contract_evidence

        contract_evidence(trial.target.frontmatter)  # raises RefusedInput without grounding
