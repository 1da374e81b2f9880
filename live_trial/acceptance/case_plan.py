"""What a suite case changes in a plan (README "Planning many skills", references/suite-format.md): its row's label,
its ``scenario_id``, whether it can run at all (a question with no answer, an answer of a kind the skill does not
ground), and the options ``run --plan`` gives its trial."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from live_trial.acceptance.case_criteria import clashes
from live_trial.acceptance.suite import ACTIVATION, DEFAULT_CASE, SUITE_FILE, Case, Prompt
from live_trial.acceptance.tier import GATE_TOOLS, allowed_tools, contract_evidence
from live_trial.acceptance.verdict_doc import scenario_id
from live_trial.errors import LiveTrialError


def label(target: str, case: str) -> str:
    """``plugin:skill`` for the default case, ``plugin:skill [case]`` for a named one (the plan's rows and tables)."""
    return target if case == DEFAULT_CASE else f"{target} [{case}]"


def case_scenario_id(target: str, case: Case, reuse_scenario: Path | None, template_text: str) -> str:
    """The ``scenario_id`` a trial of ``case`` records: its args, its scenario or tape (else ``reuse_scenario``, the
    ``plan --rehearsal-reuse`` file, else none: live), its answers, its criteria, its stand-in MCP servers and the task
    template. The default
    case's is the id ``plan`` computed before suites (empty args, no answers), so earlier PASS verdicts stay
    reusable. An activation case's is its prompt set (:func:`activation_prompt_set`)."""
    if case.activation:
        return activation_prompt_set(target, case, reuse_scenario)
    scenario = case.scenario or case.replay or reuse_scenario
    return scenario_id(target, case.args, scenario, template_text, answers=case.answers or (),
                       criteria=case.criteria, mcp_fixtures=case.mcp_fixtures)


def activation_prompt_set(target: str, case: Case, reuse_scenario: Path | None) -> str:
    """The prompt set an activation run of ``case`` records
    (:func:`live_trial.acceptance.activation.prompt_set_digest`): its prompts with their sessions, and the scenario
    that plays them when the run is a rehearsal whose result may be reused (the case's own under ``plan
    --rehearsal-reuse``, else that option's file; else none: live)."""
    import hashlib

    from live_trial.acceptance.activation import prompt_set_digest

    scenario = (case.scenario or reuse_scenario) if reuse_scenario is not None else None
    sha = "sha256:" + hashlib.sha256(Path(scenario).read_bytes()).hexdigest() if scenario is not None else None
    return prompt_set_digest(target, [(p.text, p.should_trigger, p.sessions(case.repeats)) for p in case.prompts], sha)


def cannot_run(case: Case, frontmatter: Mapping[str, Any]) -> tuple[str, str] | None:
    """``(action, reason)`` when ``case`` cannot be run as written, else None: ``needs_answer`` for a skill that asks
    (its allowed-tools name AskUserQuestion or ExitPlanMode) when the case gives no answers (``answers: []`` says it
    expects no question); ``refused`` for a contractual answer the frontmatter does not ground (seed 001, gate
    kinds: the same rule as ``run --gate-response-contractual``)."""
    asks = [t for t in GATE_TOOLS if t in allowed_tools(frontmatter)]
    if case.activation and not case.then_acceptance:
        return None             # its prompts only ask whether the skill starts: a question ends a session, recorded
    if case.answers is None and asks:
        where = f"case {case.name} of {case.suite}" if case.suite else f"a case of the skill in its {SUITE_FILE}"
        return "needs_answer", (f"needs an answer to its question (allowed-tools name {', '.join(asks)}): add "
                                f"answers to {where}, or answers: [] when this case asks nothing; no trial started")
    taken = clashes(frontmatter, case.criteria)
    if taken:
        return "refused", (f"case {case.name}: criteria {', '.join(taken)} are the skill's own (feedback_contract): "
                           "give the case's criteria other ids")
    if any(kind == "contractual" for _, kind in case.answers or ()):
        try:
            contract_evidence(frontmatter)
        except LiveTrialError as exc:
            return "refused", f"case {case.name}: {exc.message}"
    return None


def batch_entry(target: str, plugins_root: Path, proof: bool, case: Case) -> dict[str, Any]:
    """The ``live_batches`` entry of one case (schemas/plan.schema.json): what ``run --plan`` gives its trial. The
    default case's entry has the keys a plan had before suites."""
    entry: dict[str, Any] = {"target": target, "plugins_root": str(plugins_root), "proof": proof or case.proof,
                             "args": case.args}
    if case.name != DEFAULT_CASE:
        entry["case"] = case.name
    if case.scenario is not None:
        entry["rehearsal"] = str(case.scenario)
    if case.replay is not None:
        entry["replay"] = str(case.replay)
    if case.answers:
        entry["answers"] = [{"answer": a, "kind": k} for a, k in case.answers]
    if case.expect_gate:
        entry["expect_gate"] = True
    if case.mcp_fixtures:
        entry["mcp_fixtures"] = dict(case.mcp_fixtures)
    if case.repeats > 1:
        entry["repeats"] = case.repeats
    if case.criteria:
        entry["criteria"] = [{"id": i, "text": t} for i, t in case.criteria]
    for key, value in (("stall_limit_s", case.stall_limit_s), ("hard_cap_s", case.hard_cap_s),
                       ("model", case.model), ("max_cost_usd", case.max_cost_usd),
                       ("cwd", str(case.cwd) if case.cwd else None)):
        if value is not None:
            entry[key] = value
    if case.activation:         # its prompts with their sessions; the case's repeats are in them
        entry.pop("repeats", None)
        entry.update(kind=ACTIVATION, stop_after_trigger=case.stop_after_trigger,
                     then_acceptance=case.then_acceptance,
                     prompts=[{"prompt": p.text, "should_trigger": p.should_trigger,
                               "sessions": p.sessions(case.repeats)} for p in case.prompts])
    return entry


def entry_trials(entry: Mapping[str, Any]) -> int:
    """The sessions a ``live_batches`` entry starts: its ``repeats`` (1 when absent), or for an activation case every
    prompt's sessions plus one acceptance trial with ``then_acceptance``."""
    if entry.get("kind") == ACTIVATION:
        return sum(int(p.get("sessions") or 1) for p in entry.get("prompts") or ()) + (
            1 if entry.get("then_acceptance") else 0)
    return int(entry.get("repeats") or 1)


def entry_case(entry: Mapping[str, Any]) -> Case:
    """The activation :class:`Case` a ``live_batches`` entry of kind ``activation`` describes (``run --plan`` runs
    it as ``run --case`` does): its prompts with their sessions, ``stop_after_trigger`` and ``then_acceptance``."""
    return Case(name=str(entry.get("case") or DEFAULT_CASE), kind=ACTIVATION,
                prompts=tuple(Prompt(str(p["prompt"]), bool(p["should_trigger"]), int(p["sessions"]))
                              for p in entry.get("prompts") or ()),
                stop_after_trigger=bool(entry.get("stop_after_trigger")),
                then_acceptance=bool(entry.get("then_acceptance")))
