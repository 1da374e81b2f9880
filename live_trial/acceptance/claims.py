"""What a person says on the ``verdict`` command line (:class:`Claims`) and how it meets what the workdir holds
(README "The steps, one by one"): :func:`settle` turns both into the trial's
:class:`~live_trial.acceptance.findings.Findings`.

A verdict by hand earns what it claims (README "The steps, one by one"): in a workdir ``run`` recorded no findings for,
launch is
read from the transcript (a successful Skill call of the target) and completion and the last poll exit from
poll-state.json (:class:`TrialRecords`); ``--launch``, ``--completion`` and ``--poll-exit`` are claims checked against
those records, and a contradiction is refused (exit 2, nothing written), ``--override`` or not. A goal PASS needs an
evaluation.json the evaluator judged: without one the goal is not judged, and ``--goal-result PASS`` is refused unless
``--override "why"`` (recorded; plan never reuses such a verdict).

One override rule (:func:`override_rule`): a verdict never silently contradicts the fresh evaluator (a
``--goal-result`` other than evaluation.json's), what ``run`` recorded for the trial (a ``--launch``, a count ... other
than trial-state.json's) or an earlier verdict.json; each is refused (exit 2, nothing written) unless
``--override "why"``, which the verdict records. Without goal flags the goal is the evaluator's judgement in
evaluation.json; a workdir whose trial ``run`` drove to its judgement gives its recorded findings for every flag not
given, so ``verdict`` on it derives the verdict ``run`` wrote.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Mapping

from live_trial.acceptance.findings import Findings, ledger_kind, not_judged_why, recorded_findings, unverified_text
from live_trial.acceptance.verdict_facts import VerdictFacts
from live_trial.errors import RefusedInput
from live_trial.stop_reasons import StopReason, service_note
from live_trial.transcript.api_errors import model_named
from live_trial.workdir_files import EVALUATION, PANE, POLL_STATE, TRANSCRIPT, TRIAL_STATE, VERDICT

#: The note of a verdict by hand whose goal is the evaluator's (not the person's).
TAKEN_NOTE = "the goal, its blockers and evidence are the fresh evaluator's (evaluation.json)"

@dataclass(frozen=True)
class ServiceStop:
    """The model's service stopped the session, as the workdir's records show it (README "Whose failure it is"): what
    ``run`` would have stopped the trial for at that STALL."""

    code: str
    """The stop reason: ``model_unavailable``, ``usage_limit``, ``model_auth``, ``model_unknown`` or
    ``model_never_answered`` (rows that block)."""
    shown: str
    """The CLI's own line: its API error record's text, or the error line on the screen."""
    on_screen: bool = False
    """Read from the last screen (``pane.txt``) with no API error record in the transcript: STALL row 6 only."""


@dataclass(frozen=True)
class TrialRecords:
    """What a workdir's own records say of the launch and the completion, read for ``verdict`` by hand
    (:func:`live_trial.trial.byhand.trial_records`)."""

    launch: str
    """PASS when the session's transcripts show a successful Skill call of the target, else FAIL."""
    skill_calls: str
    """The Skill calls seen, in order (``name`` or ``name (failed)``; ``none``)."""
    transcript: bool
    """The workdir holds ``transcript.jsonl`` (collect copied it)."""
    poll_exit: str | None
    """The last exit poll-state.json records (DONE, STALL, ...); None when the workdir records no poll."""
    service: ServiceStop | None = None
    """The last poll ended STALL (not ``session_gone``) on a turn the model's service ended: the transcript's API
    error record the CLI gave up on (:func:`live_trial.transcript.api_errors.api_error_cause` of a row that blocks);
    None otherwise."""
    screen_service: ServiceStop | None = None
    """The last poll ended STALL and the last screen shows an error line of the model's service (a usage limit, a
    refused key, an unreachable service) with no record of it: what STALL row 6 names; None otherwise."""
    polled: bool = False
    """The workdir holds poll-state.json: a poll ran for it (it may have ended with no exit recorded)."""

    @property
    def completion(self) -> str:
        """PASS when the last poll ended DONE (the completion marker and an idle session, seed 001), else FAIL."""
        return "PASS" if self.poll_exit == "DONE" else "FAIL"


@dataclass(frozen=True)
class Claims:
    """What a person says on the ``verdict`` command line; None (or empty): not said."""

    launch: str | None = None
    """``--launch``."""
    completion: str | None = None
    """``--completion``."""
    poll_exit: str | None = None
    """``--poll-exit``."""
    goal_result: str | None = None
    """``--goal-result``: must agree with the evaluator's, unless ``override``."""
    goal_blockers: tuple[str, ...] = ()
    """``--goal-blocker`` (repeatable)."""
    evidence: str | None = None
    """``--evidence``: counted text, or a JSON list of items."""
    unverified: str | None = None
    """``--unverified``: what could not be confirmed yet."""
    nudge_count: int | None = None
    """``--nudge-count``."""
    gate_response_count: int | None = None
    """``--gate-response-count``."""
    gate_kind: str | None = None
    """``--gate-kind``."""
    proof: bool | None = None
    """``--proof``."""
    blocked: bool | None = None
    """``--blocked``."""
    args: str | None = None
    """``--args``."""
    rehearsal_scenario: Path | None = None
    """``--rehearsal-scenario``."""
    stop_reason: str | None = None
    """``--stop-reason``."""
    stall_row: int | None = None
    """``--stall-row``."""
    failure_reason: str | None = None
    """``--failure-reason`` (``run`` records none: never a contradiction)."""
    session_id: str | None = None
    """``--session-id``."""
    requested_model: str | None = None
    """``--requested-model`` ('' = the user's default)."""
    claude_version: str | None = None
    """``--claude-version``."""
    lang: str | None = None
    """``--lang``: the summary's language (not a finding)."""
    override: str | None = None
    """``--override WHY``."""


@dataclass(frozen=True)
class Settled:
    """What :func:`settle` decided."""

    findings: Findings
    """The findings the verdict is derived from."""
    override: dict[str, Any] | None
    """What the verdict records of ``--override`` (``{why, evaluation_goal_result, replaced}``), None without it."""
    notes: tuple[str, ...]
    """Notes added to the derived verdict's (the goal taken from evaluation.json, a record replaced)."""


def target_of(skill_dir: Path, wanted: str, plugins_root: Path | None) -> tuple[Any, Any]:
    """``(Target, PluginIndex | None)`` of ``--skill-dir`` that must be ``--target-skill`` ``wanted`` (``plugin:skill``
    or a plain skill name). Raises :class:`RefusedInput` (``target_mismatch``) when they differ."""
    from live_trial.closure.index import Target
    from live_trial.closure.target import target_from_skill_dir

    target, index = target_from_skill_dir(Path(skill_dir).resolve(), plugins_root)
    if ":" not in wanted:
        if wanted != target.skill:
            raise RefusedInput(f"--target-skill {wanted} does not match --skill-dir (skill {target.skill})",
                               code="target_mismatch", fix="pass the skill folder of the target")
        return Target(None, None, target.skill, target.skill_dir, target.skill_md, target.frontmatter), None
    if wanted != target.qualified:
        raise RefusedInput(f"--target-skill {wanted} does not match --skill-dir ({target.qualified})",
                           code="target_mismatch", fix="pass the skill folder of the target")
    return target, index


def settle(claims: Claims, facts: VerdictFacts, records: TrialRecords) -> Settled:
    """The findings of a verdict by hand: each flag given, else what ``run`` recorded, else what the workdir's
    ``records`` show (launch, completion, the last poll exit), else the default; the goal from the person's flags or
    evaluation.json (module docstring). Raises :class:`RefusedInput` for a launch, completion or poll exit the records
    contradict, a goal PASS no evaluator judged without ``--override``, a contradiction without ``--override``,
    evidence flags beside the evaluator's judgement, evidence that breaks seed 000 rule 1 (a proxy, a score, a
    source that does not exist, only harness files); the evaluation.json error when it cannot be read."""
    recorded = recorded_findings(facts.origin.state)
    if facts.evaluation.problem is not None:
        raise facts.evaluation.problem          # a verdict must not rest on an unreadable judgement
    judged = facts.evaluation.judgement
    replaced = _replaced(claims, recorded, facts)
    override = override_rule(claims, judged, facts.previous_verdict, replaced, facts.workdir)
    if recorded is None:
        claims = earned(claims, records, facts)
    else:
        check_claims(claims, records, facts, strict=False)      # --override never makes a PASS the records lack
    if claims.goal_result == "PASS" and judged is None and override is None:
        raise _not_judged(facts)
    took = judged is not None and (claims.goal_result is None or (claims.goal_result == judged["goal_result"] and not (
        claims.evidence or claims.goal_blockers or claims.unverified)))
    base = recorded or _from_flags(claims)
    goal = (_taken(claims, judged) if took and judged is not None
            else _claimed(claims, facts) if _claims_goal(claims) or not recorded else {})
    findings = replace(base, **goal, **_given(claims, recorded))
    if recorded is None:
        findings = stops_as_run(findings, claims, records, facts)
    notes = [TAKEN_NOTE] if took and recorded is None and findings.goal_result is not None else []
    if override is not None and judged is None and findings.goal_result == "PASS":
        notes.append(f"the goal was not judged by the evaluator: the PASS rests on --override ({override['why']})")
    notes += [f"{flag} {said!r} replaced the trial's record ({was!r}): {override['why']}"
              for flag, said, was in replaced] if override else []
    return Settled(findings, override, tuple(notes))


def stops_as_run(findings: Findings, claims: Claims, records: TrialRecords, facts: VerdictFacts) -> Findings:
    """``findings`` of a workdir ``run`` recorded none for, with the stops ``run`` derives from the same records.

    README "Whose failure it is": the verdict by hand never blames the skill for what was not its doing:

    - the model's service ended the session (``records.service``: the transcript's API error record the CLI gave up
      on, after a poll that ended STALL; ``records.screen_service``: its error line on the last screen, when the
      person's STALL table walk ended at row 6) -> BLOCKED with that cause and the CLI's line in the notes;
    - the evaluator gave no valid answer after its retry (an evaluation.json judged by nobody, ``judged_by``
      fallback) in a run that launched and completed, with no goal given by the person -> BLOCKED
      ``evaluator_failed`` with the CLI's last reason.

    A ``--stop-reason`` other than the one derived is refused (:class:`RefusedInput`, exit 2, nothing written)."""
    stop = records.service or (records.screen_service if claims.stall_row == 6 else None)
    if stop is not None:
        row = StopReason.of(stop.code)
        assert row is not None          # records hold only the codes of rows that block
        model = model_named(stop.shown, findings.requested_model) if row == StopReason.MODEL_UNKNOWN else None
        note = service_note(row, stop.shown, on_screen=stop.on_screen, model=model)
        where = facts.workdir / (PANE if stop.on_screen else TRANSCRIPT)
    elif (facts.evaluation.failed is not None and not _claims_goal(claims) and not findings.blocked
          and (findings.launch, findings.completion) == ("PASS", "PASS")):
        row = StopReason.EVALUATOR_FAILED
        note, where = f"{row.why}: {facts.evaluation.failed}", facts.workdir / EVALUATION
    else:
        return findings
    if claims.stop_reason not in (None, row.value):
        raise RefusedInput(f"--stop-reason {claims.stop_reason} contradicts the trial's records, which show that "
                           f"{row.why} ({row.value})", where=str(where), code="contradicts_records",
                           fix="leave out --stop-reason: verdict reads it from the records")
    # as in ``run``, nobody judged the goal of a trial stopped this way (an evaluation.json there is not read)
    return replace(findings, blocked=True, stop_reason=row.value, goal_result=None, goal_blockers=(), evidence=(),
                   evidence_text=None, unverified=None, goal_ledger=None, criteria_checks=None,
                   not_judged_why=not_judged_why(None, row.value), notes=findings.notes + (note,))


def earned(claims: Claims, records: TrialRecords, facts: VerdictFacts) -> Claims:
    """``claims`` with launch, completion and the last poll exit taken from ``records`` (a workdir ``run`` recorded no
    findings for), after :func:`check_claims` (strict): a claim they contradict is refused."""
    check_claims(claims, records, facts, strict=True)
    return replace(claims, launch=records.launch, completion=records.completion,
                   poll_exit=records.poll_exit or claims.poll_exit, nudge_count=counted_nudges(claims, facts))


def counted_nudges(claims: Claims, facts: VerdictFacts) -> int | None:
    """The nudges of a trial by hand: those ``backend nudge`` sent and counted in trial-state.json (seed 001 STALL row
    4), unless ``--nudge-count`` says more (a nudge sent otherwise is the person's to count). Raises
    :class:`RefusedInput` (exit 2) for a ``--nudge-count`` below the harness's count."""
    counted = int((facts.origin.state or {}).get("nudge_count") or 0)
    if counted and claims.nudge_count is not None and claims.nudge_count < counted:
        raise RefusedInput(f"--nudge-count {claims.nudge_count} is below the {counted} nudge(s) `backend nudge` sent "
                           f"and counted", where=str(facts.workdir / TRIAL_STATE), code="contradicts_record",
                           fix="leave out --nudge-count: verdict counts the nudges the harness sent")
    return claims.nudge_count if claims.nudge_count is not None else (counted or None)


def check_claims(claims: Claims, records: TrialRecords, facts: VerdictFacts, *, strict: bool) -> None:
    """Refuse (:class:`RefusedInput`, exit 2, nothing written; ``--override`` does not change records) a claim the
    workdir's ``records`` contradict: ``--launch PASS`` without a successful Skill call of the target in the
    transcript, ``--completion PASS`` or ``--poll-exit DONE`` without a poll that ended DONE, and, ``strict`` (no
    findings ``run`` recorded), any other value than theirs. A ``--poll-exit`` other than DONE is taken as said when
    no poll recorded anything (tmux was missing and poll never ran)."""
    wd, target = facts.workdir, facts.target.qualified

    def wrong(said: str | None, shown: str | None, *, unknown_ok: bool = False) -> bool:
        if said is None or said == shown or (unknown_ok and shown is None and said != "DONE"):
            return False
        return strict or said in ("PASS", "DONE")

    if wrong(claims.launch, records.launch):
        shows = (f"a successful Skill call to {target} ({records.skill_calls})" if records.launch == "PASS" else
                 f"no successful Skill call to {target} (Skill calls: {records.skill_calls})" if records.transcript
                 else f"nothing: the workdir holds no {TRANSCRIPT}")
        raise RefusedInput(f"--launch {claims.launch} contradicts the transcript, which shows {shows}",
                           where=str(wd / TRANSCRIPT), code="contradicts_transcript",
                           fix="leave out --launch: verdict reads it from the transcript (after `live-trial collect "
                               f"--workdir {wd}`)")
    said = [(flag, value) for flag, value, bad in (
        ("--poll-exit", claims.poll_exit, wrong(claims.poll_exit, records.poll_exit, unknown_ok=True)),
        ("--completion", claims.completion, wrong(claims.completion, records.completion))) if bad]
    if said:
        flag, value = said[0]
        shows = (f"its last poll exit is {records.poll_exit}" if records.poll_exit else
                 f"the workdir holds no {POLL_STATE}: no poll recorded how the session ended")
        raise RefusedInput(f"{flag} {value} contradicts the poll's record: {shows}", where=str(wd / POLL_STATE),
                           code="contradicts_poll_state",
                           fix=f"leave out {flag}: verdict reads it from {POLL_STATE}" + (
                               "" if records.poll_exit else f" (poll with --state-file {wd / POLL_STATE})"))


def _not_judged(facts: VerdictFacts) -> RefusedInput:
    """The refusal of a goal PASS no evaluator judged."""
    why = (f"{EVALUATION} holds no judgement (the evaluator gave no valid answer)" if facts.evaluation.present
           else f"the workdir holds no {EVALUATION}")
    return RefusedInput(f"--goal-result PASS, but no evaluator judged the goal ({why}): the goal is not judged",
                        where=str(facts.workdir / EVALUATION), code="not_judged",
                        fix=f"run `live-trial evaluate --workdir {facts.workdir}` and leave out --goal-result, or pass "
                            '--override "why" (the verdict records it; plan never reuses it)')


def override_rule(claims: Claims, judged: Mapping[str, Any] | None, previous: Mapping[str, Any] | None,
                  replaced: list[tuple[str, Any, Any]], workdir: Path) -> dict[str, Any] | None:
    """Refuse (exit 2, nothing written) a verdict that contradicts the evaluator's judgement, replaces what ``run``
    recorded (``replaced``: ``[(flag, said, recorded)]``) or replaces an existing verdict.json, unless
    ``--override "why"``; return what the verdict records of the override (``why``, the evaluator's goal result, the
    verdict replaced), or None without ``--override``. Source: README "The steps, one by one" (a verdict never
    silently contradicts the evaluator)."""
    if claims.override is not None:
        if not claims.override.strip():
            raise RefusedInput("--override needs the reason", where="--override", code="bad_value",
                               fix='say why, e.g. --override "the evaluator could not read the binary output"')
        return {"why": claims.override.strip(), "evaluation_goal_result": judged["goal_result"] if judged else None,
                "replaced": dict(previous) if previous is not None else None}
    if judged is not None and claims.goal_result is not None and claims.goal_result != judged["goal_result"]:
        said = "; ".join(judged["blockers"][:2]) if judged["goal_result"] == "FAIL" else \
            f"{len(judged['evidence'])} evidence item(s)"
        raise RefusedInput(f"--goal-result {claims.goal_result} contradicts the fresh evaluator's "
                           f"{judged['goal_result']} in {EVALUATION} ({said})", where=str(workdir / EVALUATION),
                           code="contradicts_evaluation",
                           fix="leave out --goal-result to take the evaluator's judgement, evaluate again, or pass "
                               '--override "why" (the verdict records it)')
    if replaced:
        flag, said, was = replaced[0]
        raise RefusedInput(f"{flag} {said!r} contradicts what the trial recorded ({was!r}, {TRIAL_STATE})",
                           where=str(workdir / TRIAL_STATE), code="contradicts_record",
                           fix=f'leave out {flag} to take the trial\'s record, or pass --override "why" (the verdict '
                               "records it)")
    if previous is not None:
        raise RefusedInput(f"a verdict is already written here ({previous['overall']}, {previous['written_at']})",
                           where=str(workdir / VERDICT), code="verdict_exists",
                           fix='pass --override "why" to replace it (the verdict records it), or start a new trial')
    return None


#: Flags compared with what ``run`` recorded: (claim field, the Findings field, how a value is compared).
_RECORDED: tuple[tuple[str, str, Callable[[Any], Any]], ...] = (
    ("launch", "launch", str), ("completion", "completion", str), ("poll_exit", "poll_exit", str),
    ("nudge_count", "nudge_count", int), ("gate_response_count", "gate_response_count", int),
    ("gate_kind", "gate_kind", str), ("proof", "proof", bool), ("blocked", "blocked", bool), ("args", "args", str),
    ("stop_reason", "stop_reason", str), ("stall_row", "stall_row", int), ("session_id", "session_id", str),
    ("requested_model", "requested_model", lambda v: v or None),
    ("rehearsal_scenario", "scenario_path", lambda v: Path(v).resolve() if v else None))


def _replaced(claims: Claims, recorded: Findings | None, facts: VerdictFacts) -> list[tuple[str, Any, Any]]:
    """``[(flag, said, recorded)]`` for each flag given that differs from what ``run`` recorded."""
    if recorded is None:
        return []
    out = []
    for name, field_name, same in _RECORDED:
        said = getattr(claims, name)
        if said is not None and same(said) != same(getattr(recorded, field_name)):
            out.append((f"--{name.replace('_', '-')}", said, getattr(recorded, field_name)))
    env = (facts.origin.state or {}).get("environment")
    was = env.get("claude_version") if isinstance(env, Mapping) else None
    if claims.claude_version is not None and was is not None and claims.claude_version != was:
        out.append(("--claude-version", claims.claude_version, was))
    return out


def _given(claims: Claims, recorded: Findings | None) -> dict[str, Any]:
    """The Findings fields the flags given set over what ``run`` recorded (none without a record: the base is the
    flags already)."""
    if recorded is None:
        return {}
    given = {field_name: getattr(claims, name) for name, field_name, _ in _RECORDED
             if getattr(claims, name) is not None}
    if claims.failure_reason is not None:
        given["failure_reason"] = claims.failure_reason
    if claims.lang is not None:
        given["lang"] = claims.lang
    if "scenario_path" in given:
        given["scenario_origin"] = "rehearsal"
    return given


def _from_flags(claims: Claims) -> Findings:
    """The findings of a workdir ``run`` recorded none for: the flags, and the defaults of the flags not given."""
    return Findings(
        launch=str(claims.launch), completion=str(claims.completion), poll_exit=claims.poll_exit,
        nudge_count=0 if claims.nudge_count is None else claims.nudge_count,
        gate_response_count=0 if claims.gate_response_count is None else claims.gate_response_count,
        gate_kind=claims.gate_kind or "rescue", proof=bool(claims.proof), blocked=bool(claims.blocked),
        scenario_origin="rehearsal" if claims.rehearsal_scenario else "live", scenario_path=claims.rehearsal_scenario,
        args=claims.args or "", stop_reason=claims.stop_reason, stall_row=claims.stall_row,
        failure_reason=claims.failure_reason, session_id=claims.session_id, requested_model=claims.requested_model,
        lang=claims.lang)


def _claims_goal(claims: Claims) -> bool:
    return bool(claims.goal_result is not None or claims.evidence or claims.goal_blockers or claims.unverified)


def _taken(claims: Claims, judged: Mapping[str, Any]) -> dict[str, Any]:
    """The goal of a verdict written without ``--goal-result``: the evaluator's result, blockers, evidence (as its
    rules kept them, with their quotes) and what it could not see yet. ``--evidence``, ``--goal-blocker`` and
    ``--unverified`` given as well are refused: the judgement is the evaluator's."""
    given = [flag for flag, value in (("--evidence", claims.evidence), ("--goal-blocker", claims.goal_blockers),
                                      ("--unverified", claims.unverified)) if value]
    if given and claims.goal_result is None:
        raise RefusedInput(f"{', '.join(given)} without --goal-result: the goal is then the evaluator's judgement in "
                           f"{EVALUATION}", where=given[0], code="bad_value",
                           fix="drop them, or give --goal-result too (it must agree with evaluation.json)")
    unverified = [u for u in judged.get("unverified") or [] if u]
    return {"goal_result": judged["goal_result"], "goal_blockers": tuple(judged.get("blockers") or ()),
            "evidence": tuple(judged.get("evidence") or ()), "evidence_text": None,
            "unverified": unverified_text(unverified), "goal_ledger": ledger_kind(judged["goal_result"], unverified),
            "criteria_checks": None, "not_judged_why": None}


def _claimed(claims: Claims, facts: VerdictFacts) -> dict[str, Any]:
    """The goal as the person gives it, checked by seed 000 rule 1 (through live_trial.judge): a JSON list of items
    ``[{claim, source, observed}]`` is refused with a score-like key, each source must be a file under the workdir or
    a transcript uuid and a PASS needs one the harness did not write; plain text is checked as one observation."""
    from live_trial.judge.evidence import check_evidence
    from live_trial.judge.sources import check_evidence_items, parse_evidence_items

    items = parse_evidence_items(claims.evidence)
    if items is None:
        check_evidence(claims.goal_result or "", claims.evidence, claims.unverified)
        items = [{"claim": "goal reached", "source": "--evidence", "observed": claims.evidence}] \
            if claims.evidence else []
    else:
        exists, harness_files = _source_checks(facts.workdir)
        check_evidence_items(claims.goal_result or "", items, claims.unverified, exists, harness_files)
    return {"goal_result": claims.goal_result, "goal_blockers": tuple(claims.goal_blockers),
            "evidence": tuple(items), "evidence_text": claims.evidence, "unverified": claims.unverified or None,
            "goal_ledger": ledger_kind(claims.goal_result, claims.unverified), "criteria_checks": None,
            "not_judged_why": None}


def _source_checks(workdir: Path) -> tuple[Callable[[str], bool], Callable[[str], list[str]]]:
    """``(source -> bool, source -> [harness file])`` for ``workdir``, the evaluator's own checks: the source is a
    file under the workdir or the uuid of a record in ``<workdir>/transcript.jsonl``
    (:func:`live_trial.judge.citable.source_exists`), and the harness files it stands for, under any spelling,
    absolute or through the transcript record of the Write that wrote one
    (:func:`live_trial.judge.citable.harness_files_of`). The transcript is streamed once."""
    from live_trial.judge.citable import harness_files_of, source_exists
    from live_trial.judge.context import Context
    from live_trial.judge.index import index_records
    from live_trial.transcript.reader import iter_records

    index: list[dict[str, Any]] = []
    transcript = workdir / TRANSCRIPT
    if transcript.is_file():
        index = index_records(iter_records(transcript), workdir)
    ctx = Context(workdir=workdir, target="", description="", transcript_index=index,
                  transcript_uuids={row["uuid"].lower() for row in index})
    return (lambda source: source_exists(source, ctx)), (lambda source: harness_files_of(source, ctx))
