"""What a trial established (launch, completion, the goal, the stop, the help it needed): the :class:`Findings` a
verdict is derived from together with the workdir's :class:`~live_trial.acceptance.verdict_facts.VerdictFacts`.

``run`` and ``run --resume`` record their findings in ``trial-state.json`` (``facts``, the counts, the answers) before
the verdict is derived, and derive it from that record (:func:`recorded_findings`), so ``verdict`` on the same
workdir derives the same verdict from the same record. The rules both use are here once: the goal's ledger kind
(:func:`ledger_kind`, seed 000) and why an unjudged goal was not judged (:func:`not_judged_why`). Pure.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

from live_trial.acceptance.verdict_doc import AS_IS
from live_trial.stop_reasons import StopReason

#: The phases of a trial after which trial-state.json holds what the trial established for its verdict.
JUDGED_PHASES = ("judged", "verdict_written", "finished")
#: The head of the note of a launch FAIL (seed 001 verdict table, axis 起動): the session ran, but never the skill.
NO_SKILL_CALL = "the transcript shows no successful Skill call to"
#: The note and the reason of a trial run with ``--expect-gate`` whose skill ran to its end without asking (README
#: "Questions (gates)"): the completion stands, the verdict is FAIL.
EXPECTED_GATE_NOTE = f"expected gate was not shown: {StopReason.EXPECTED_GATE_NOT_SHOWN.why}"


@dataclass(frozen=True)
class Findings:
    """What the trial established: from its own record (``run``) or from a person's flags (``verdict`` by hand). A
    field marked ``AS_IS`` is recorded in the verdict as it is, under the same name
    (:data:`~live_trial.acceptance.verdict_doc.AS_IS`)."""

    launch: str = field(metadata=AS_IS)
    """PASS when the skill under trial was called and ran, else FAIL."""
    completion: str = field(metadata=AS_IS)
    """PASS when the session finished on its own with the completion marker, else FAIL."""
    poll_exit: str | None = field(default=None, metadata=AS_IS)
    """The last poll exit, None when poll never ran."""
    goal_result: str | None = field(default=None, metadata=AS_IS)
    """The fresh evaluator's PASS / FAIL (or a person's), None when the goal was not judged."""
    goal_blockers: tuple[str, ...] = ()
    """What the evaluator found missing."""
    evidence: tuple[Mapping[str, Any], ...] = ()
    """The evidence items ``{claim, source, [quote], observed}``."""
    evidence_text: str | None = None
    """The evidence as a person gave it (``--evidence``), None otherwise."""
    unverified: str | None = None
    """What could not be confirmed yet, joined; None when nothing."""
    goal_ledger: str | None = field(default=None, metadata=AS_IS)
    """The goal's ledger kind (:func:`ledger_kind`)."""
    criteria_checks: tuple[Mapping[str, Any], ...] | None = None
    """The evaluator's criterion checks; None: those of evaluation.json when the goal was judged."""
    not_judged_why: str | None = None
    """Why the evaluator's criteria were not judged (None: the general words)."""
    nudge_count: int = field(default=0, metadata=AS_IS)
    """Nudges sent to the session."""
    gate_response_count: int = field(default=0, metadata=AS_IS)
    """Questions answered for the session."""
    gate_kind: str = "rescue"
    """The kind every answer has when no answer lines are known (rescue or contractual)."""
    gate_answers: tuple[Mapping[str, Any], ...] | None = None
    """The answered questions ``{question, options, answer, kind}`` in order; None: only the count is known."""
    proof: bool = False
    """A proof trial."""
    blocked: bool = False
    """The environment or the harness stopped the trial."""
    scenario_origin: str = "live"
    """The origin claimed (the workdir may override it to rehearsal)."""
    scenario_path: Path | None = None
    """The rehearsal scenario claimed (part of the task contract), None when none."""
    args: str = ""
    """The arguments given to the skill (part of the task contract)."""
    answers_given: tuple[tuple[str, str], ...] = ()
    """The answers given for the skill's questions, ``(answer, kind)`` in order (part of the task contract)."""
    criteria_given: tuple[tuple[str, str], ...] = ()
    #: the stand-in MCP servers it was started with, ``(name, words)`` as the task contract holds them
    #: (trial-state.json ``mcp_fixtures``' ``contract``, taken when the trial started)
    fixtures_given: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """A suite case's own criteria, ``(id, text)`` in order (part of the task contract)."""
    stop_reason: str | None = field(default=None, metadata=AS_IS)
    """Why the trial stopped, None for a clean end."""
    stall_row: int | None = field(default=None, metadata=AS_IS)
    """The STALL table's row that decided."""
    failure_reason: str | None = field(default=None, metadata=AS_IS)
    """A boot, delivery or crash reason given by hand."""
    notes: tuple[str, ...] = ()
    """Notes recorded with the trial (the stop's own words among them)."""
    warnings: tuple[str, ...] = ()
    """Warnings of the trial."""
    session_id: str | None = None
    """The claude session id."""
    requested_model: str | None = None
    """The model asked for ('' or None: the user's default)."""
    started_at: str | None = field(default=None, metadata=AS_IS)
    """When the trial started."""
    working_folder: Mapping[str, Any] | None = None
    """The trial's own folder as trial-state.json records it, None when not recorded."""
    lang: str | None = None
    """The message language the trial was asked for (None: LIVE_TRIAL_LANG, else the default)."""


def ledger_kind(goal_result: str | None, unverified: Iterable[str] | str | None) -> str | None:
    """The goal's ledger kind (seed 000): ``done`` (PASS), ``mostly_done`` (PASS with something not confirmed yet),
    ``not_done`` (any other judged goal); None when the goal was not judged."""
    if goal_result is None:
        return None
    if goal_result != "PASS":
        return "not_done"
    items = [unverified] if isinstance(unverified, str) else list(unverified or ())
    return "mostly_done" if any(str(u).strip() for u in items) else "done"


def unverified_text(items: Iterable[str] | None) -> str | None:
    """What could not be confirmed yet, as verdict.json's ``unverified``: the items joined with ``; ``, None when
    there are none."""
    return "; ".join(str(u) for u in items or () if u) or None


def not_judged_why(goal_result: str | None, stop_reason: str | None) -> str | None:
    """Why the criteria of a trial that judged no goal were not judged: the stop reason, else that the run did not
    complete; None when the goal was judged."""
    if goal_result is not None:
        return None
    return "the goal was not judged: " + (stop_reason or "the run did not complete")


def recorded_gate_answers(state: Mapping[str, Any]) -> tuple[Mapping[str, Any], ...] | None:
    """The answered questions as the poll loop recorded them; None when the record does not hold one line per answer
    (a trial resumed from an older harness): then each counts as the trial's gate kind."""
    answers = state.get("gate_answers")
    if isinstance(answers, list) and len(answers) == state.get("gate_response_count"):
        return tuple(answers)
    return None


def recorded_findings(state: Mapping[str, Any] | None) -> Findings | None:
    """The findings ``run`` (or ``run --resume``) recorded in ``state`` (trial-state.json) once it reached its
    judgement (phase judged or later, with its ``facts``); None for any other workdir (a prepared one, a trial still
    running, an older harness's record)."""
    if state is None:
        return None
    facts = state.get("facts")
    if not isinstance(facts, Mapping) or state.get("phase") not in JUDGED_PHASES:
        return None
    goal, checks, rehearsal = facts.get("goal"), facts.get("checks"), state.get("rehearsal")
    scenario = rehearsal.get("scenario") if isinstance(rehearsal, Mapping) else None
    return Findings(
        launch=str(facts.get("launch") or "FAIL"), completion=str(facts.get("completion") or "FAIL"),
        poll_exit=facts.get("poll_exit"), goal_result=goal, goal_blockers=tuple(facts.get("goal_blockers") or ()),
        evidence=tuple(facts.get("evidence") or ()), unverified=unverified_text(facts.get("unverified")),
        goal_ledger=ledger_kind(goal, facts.get("unverified")),
        criteria_checks=tuple(checks) if isinstance(checks, list) else None,
        not_judged_why=not_judged_why(goal, facts.get("stop_reason")),
        nudge_count=int(state.get("nudge_count") or 0), gate_response_count=int(state.get("gate_response_count") or 0),
        gate_kind=str(state.get("gate_kind") or "rescue"), gate_answers=recorded_gate_answers(state),
        proof=bool(state.get("proof")), blocked=bool(facts.get("blocked")),
        scenario_origin="rehearsal" if rehearsal else "live", scenario_path=Path(scenario) if scenario else None,
        args=str(state.get("args") or ""), answers_given=given_answers(state),
        criteria_given=tuple((str(c["id"]), str(c["text"])) for c in state.get("criteria") or ()),
        fixtures_given=tuple((str(m["name"]), tuple(str(w) for w in m.get("contract") or m["command"]))
                             for m in state.get("mcp_fixtures") or ()),
        stop_reason=facts.get("stop_reason"), stall_row=facts.get("stall_row"),
        notes=tuple(facts.get("notes") or ()), warnings=tuple(facts.get("warnings") or ()),
        session_id=state.get("session_id"), requested_model=state.get("model"), started_at=state.get("started_at"),
        working_folder=state.get("folder"), lang=state.get("lang"))


def given_answers(state: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """The answers a trial was given (trial-state.json ``gate_responses`` with ``gate_response_kinds``) as
    ``(answer, kind)`` pairs for its ``scenario_id``; a kind not recorded is ``gate_kind``'s."""
    answers = [str(a) for a in state.get("gate_responses") or []]
    kinds = [str(k) for k in state.get("gate_response_kinds") or []]
    kinds += [str(state.get("gate_kind") or "rescue")] * (len(answers) - len(kinds))
    return tuple(zip(answers, kinds))
