"""The verdict of one trial, derived from its facts without reading anything: :func:`derive_verdict` (seed 001
"判定ロジック" and "verdict + 掃除"; README "Evidence, watches and messages to a person").

Data in (:class:`~live_trial.acceptance.verdict_facts.VerdictFacts`, what the workdir holds; :class:`Findings`, what
the trial established), a :class:`~live_trial.acceptance.verdict_doc.Verdict` out. No tmux, no file is opened, and
the time is the injected clock's: ``run``, ``run --resume`` and ``verdict`` derive the same verdict from the same
workdir. The overall word comes from :mod:`live_trial.acceptance.overall`; the tier and the grounding of a contractual
gate from :mod:`live_trial.acceptance.tier`; the line per criterion from :mod:`live_trial.acceptance.criteria`.

Version ``live-trial-verdict/2`` adds ``criteria`` and ``gate_answers`` and is judged under the evidence rules of README
"Evidence, watches and messages to a person" (the session's own words never count, each item's quote and counts
checked).
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable, Iterable, Mapping

from live_trial.acceptance.criteria import criteria_table
from live_trial.acceptance.findings import EXPECTED_GATE_NOTE, NO_SKILL_CALL, Findings
from live_trial.acceptance.overall import (
    GATE_KINDS,
    RESULTS,
    Judgement,
    VerdictInputs,
    judge,
    normalise_gate_kind,
    not_reached,
    summary_gate_kind,
)
from live_trial.acceptance.tier import contract_evidence, derive_tier
from live_trial.acceptance.verdict_doc import ORIGINS, Verdict, as_is, contract_id
from live_trial.acceptance.verdict_facts import ClosurePin, VerdictFacts
from live_trial.clock import utc_now
from live_trial.errors import PollExit, RefusedInput
from live_trial.session.activity_judgement import judge_activity
from live_trial.session.containment import NOTE_PREFIX
from live_trial.session.rules import check_target_allowed
from live_trial.stop_reasons import StopReason, blocked_reason
from live_trial.workdir_files import EVALUATION, TRANSCRIPT

Summariser = Callable[[Mapping[str, Any]], str]
#: The stops of the skill's own that keep it from launching: a launch FAIL for one of them is said with its cause.
LAUNCH_STOPS = frozenset((StopReason.PLUGIN_NOT_LOADED, StopReason.SKILL_HIDDEN, StopReason.SKILL_NOT_LAUNCHED,
                          StopReason.EXITED_AT_START))


def check_findings(f: Findings) -> None:
    """Refuse (:class:`RefusedInput`, exit 2) a finding outside its values: launch, completion, goal, gate kind,
    origin, poll exit, and the counts (whole numbers >= 0). Pure."""
    for value, choices, name in ((f.launch, RESULTS, "--launch"), (f.completion, RESULTS, "--completion"),
                                 (f.gate_kind, GATE_KINDS, "--gate-kind"),
                                 (f.scenario_origin, ORIGINS, "scenario_origin")):
        _check_choice(value, choices, name)
    _check_choice(f.goal_result, RESULTS, "--goal-result", optional=True)
    _check_choice(f.poll_exit, tuple(PollExit), "--poll-exit", optional=True)
    _check_count(f.nudge_count, "--nudge-count")
    _check_count(f.gate_response_count, "--gate-response-count")


def _check_choice(value: Any, choices: tuple[str, ...], name: str, *, optional: bool = False) -> None:
    if value is None and optional:
        return
    if value not in choices:
        raise RefusedInput(f"{name} must be one of {', '.join(choices)} (got {value!r})", where=name, code="bad_value",
                           fix=f"pass {name} {'|'.join(choices)}")


def _check_count(value: Any, name: str) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise RefusedInput(f"{name} must be a whole number >= 0 (got {value!r})", where=name, code="bad_value")


def gate_answer_rows(answers: Iterable[Mapping[str, Any]] | None, count: int, kind: str) -> list[dict[str, Any]]:
    """One line per answered question ``[{n, question, options, answer, kind}]``: ``answers`` as the trial recorded
    them, or, when None (``verdict`` by hand knows only the count), ``count`` lines of ``kind`` whose question is
    unknown. Raises :class:`RefusedInput` when the lines and ``count`` disagree or a kind is not rescue/contractual."""
    if answers is None:
        answers = [{"question": None, "options": [], "answer": None, "kind": kind} for _ in range(count)]
    rows = []
    for n, a in enumerate(answers, 1):
        _check_choice(a.get("kind"), GATE_KINDS, f"gate answer {n} kind")
        rows.append({"n": n, "question": a.get("question"), "options": [str(o) for o in a.get("options") or []],
                     "answer": a.get("answer"), "kind": a["kind"]})
    if len(rows) != count:
        raise RefusedInput(f"{len(rows)} gate answer line(s) for a gate response count of {count}",
                           where="--gate-response-count", code="bad_value", fix="record one line per answer")
    return rows


def evidence_items(items: Iterable[Mapping[str, Any]] | None) -> list[dict[str, Any]]:
    """Evidence items as verdict.json keeps them: ``{claim, source, [quote], observed}`` as text, nothing else."""
    out = []
    for item in items or ():
        keys = ("claim", "source", "quote", "observed") if item.get("quote") else ("claim", "source", "observed")
        out.append({k: str(item.get(k, "")) for k in keys})
    return out


def cause_lines(could_not_judge: Iterable[str], goal_result: str | None, goal_blockers: Iterable[str],
                failure_reason: str | None, stop_notes: Iterable[str]) -> tuple[str, ...]:
    """The real cause of a verdict that is not a PASS, as lines for ``overall.reasons`` (README "Evidence, watches and
    messages to a person"): ``the evaluator found: <blocker>`` for each blocker of a FAIL goal, ``the evaluator could
    not judge: <problem>`` for each problem of an evaluation.json whose evaluator gave no valid answer
    (``could_not_judge``: the CLI's own line, e.g. "Not logged in"), then ``failure_reason`` and the notes recorded
    with the stop (a boot failure's screen line, the question left unanswered, an API error's text). Pure."""
    lines = [f"the evaluator found: {b}" for b in goal_blockers if goal_result == "FAIL" and str(b).strip()]
    lines += [f"the evaluator could not judge: {p}" for p in could_not_judge]
    lines += [str(line) for line in (failure_reason, *stop_notes) if line and str(line).strip()]
    return tuple(lines)


def derive_verdict(facts: VerdictFacts, findings: Findings, *, summarise: Summariser | None = None,
                   clock: Callable[[], str] = utc_now) -> Verdict:
    """The verdict of the trial ``facts`` describe, from what it established (``findings``). Pure: it reads no file,
    runs no process; ``clock()`` gives ``written_at`` (UTC ``...Z``). ``summarise(doc) -> str``: the one sentence in
    the message language saying what happened (``summary``; :func:`live_trial.notices.outcome.summariser`).

    Rules (each also in README "What a trial leaves behind"): a rehearsal workdir is always recorded ``rehearsal`` (a
    claimed ``live`` is overridden with a note: the override can only make the verdict less reusable); the closure
    recorded is the one pinned at boot, with a note when the files differ now or it can no longer be built; the
    gate answers' kinds decide the gate kind, and a contractual one must be grounded in the frontmatter;
    ``overall.reasons`` of a verdict that is not a PASS ends with the real cause (:func:`cause_lines`); those of a
    BLOCKED verdict name what stopped it and what the trial never reached
    (:func:`~live_trial.acceptance.overall.not_reached`), never a failure of the skill; a skill that ran to its end
    without the question ``--expect-gate`` expected is FAIL with its completion kept. A fact or
    finding marked :data:`~live_trial.acceptance.verdict_doc.AS_IS` is recorded as it is, under the same name.

    Raises :class:`RefusedInput` (exit 2) for a denylisted target, a finding outside its values, gate answer lines
    that do not match the count, an ungrounded contractual answer."""
    target, f = facts.target, findings
    check_target_allowed(target.qualified)
    check_findings(f)
    answers = gate_answer_rows(f.gate_answers, f.gate_response_count,
                               normalise_gate_kind(f.gate_kind, f.gate_response_count))
    kinds = tuple(a["kind"] for a in answers)
    kind = summary_gate_kind(kinds)
    notes = list(f.notes)
    origin, scenario_sha = _origin(facts, f, notes)
    if f.gate_kind == "contractual" and kind == "rescue":
        notes.append("gate kind contractual was normalised to rescue: there were no gate responses")
    grounding = contract_evidence(target.frontmatter) if "contractual" in kinds else []
    pinned = _closure(facts, notes)
    if facts.transcript_sha256 is None:
        notes.append(f"{TRANSCRIPT} is missing from the workdir: no transcript_sha256, no actual model")
    tier = derive_tier(target.frontmatter)
    f, warnings, skill_notes = _plugin_activity(facts, f, notes)
    said = session_said(facts.session_status)
    if said is not None and said not in warnings:
        warnings.append(said)
    judgement = _judgement(facts, f, kind, kinds, notes, skill_notes)
    verdict = Verdict(
        **as_is(facts), **as_is(f),     # the transcript's hash, the versions; launch, completion, the counts, the stop
        target=target.qualified, plugin=target.plugin_name, skill=target.skill, run_id=facts.workdir.name, tier=tier,
        downgrade_reason=_downgrade(origin, tier), proof=bool(f.proof), blocked=bool(f.blocked),
        goal_blockers=tuple(str(b) for b in f.goal_blockers), evidence=tuple(evidence_items(f.evidence)),
        evidence_text=f.evidence_text or None, unverified=f.unverified or None, watch_id=None,
        evaluation_file=EVALUATION if facts.evaluation.present else None, gate_kind=kind,
        gate_contract_evidence=tuple(grounding), gate_answers=tuple(answers), criteria=tuple(_criteria(facts, f)),
        overall=judgement, skill_dir_tree_sha=pinned.digest, closure_plugins=pinned.plugins,
        closure_file_count=pinned.file_count, session_id=f.session_id or None,
        scenario_id=contract_id(facts.template_text, target.qualified, f.args, scenario_sha,
                                f.answers_given, f.criteria_given, f.fixtures_given),
        scenario_origin=origin, requested_model=f.requested_model or None, actual_model=facts.actual_models,
        notes=tuple(notes), warnings=tuple(warnings), written_at=clock(),
        working_folder=_working_folder(f.working_folder),
        plugin_activity=facts.plugin_activity.to_doc() if facts.plugin_activity is not None else None)
    return replace(verdict, summary=summarise(verdict.to_doc())) if summarise is not None else verdict


def session_said(status: str | None) -> str | None:
    """The verdict's warning when the session reported its own status as anything but ``ok`` in its completion
    marker (``status``, :func:`~live_trial.judge.citable.marker_status`), else None. The session's words
    never decide the verdict (seed 001: the marker marks the end; the evaluator's evidence decides the goal), but a
    person reading a PASS must not be surprised by a session that said it failed. Pure."""
    if status is None or status == "ok":
        return None
    return (f'the session reported its own status as "{status}" in its completion marker (out/status.json): its own '
            "words are never evidence, so the verdict does not rest on them")


def _origin(facts: VerdictFacts, f: Findings, notes: list[str]) -> tuple[str, str | None]:
    """``(scenario origin, the scenario file's sha256 for the contract)``: the workdir is the authority, so a
    rehearsal is never recorded as live (it would be reused as a live PASS); the scenario it records is taken when
    the findings name none."""
    origin, scenario = f.scenario_origin, f.scenario_path
    found = facts.origin
    if found.origin == "rehearsal" and origin != "rehearsal":
        notes.append(f"scenario_origin {origin} was overridden to rehearsal: {found.why}")
        origin = "rehearsal"
        if scenario is None and found.scenario is not None and found.scenario in facts.scenario_shas:
            scenario = found.scenario
    if origin != "rehearsal" or scenario is None:
        return origin, None
    return origin, facts.scenario_shas.get(scenario)


def _closure(facts: VerdictFacts, notes: list[str]) -> ClosurePin:
    """The closure the verdict records: the one pinned at boot (what was really tested) when known, else now's;
    a note when the files changed since boot or the closure can no longer be built, and the closure's own notes (a
    hook command it could not read as the shell does)."""
    boot, now = facts.closure.at_boot, facts.closure.now
    notes += [n for n in (now.notes if now is not None else ()) if n not in notes]
    if boot is None:
        assert now is not None       # gather_facts refuses a closure that can be built neither then nor now
        return now
    if now is None:
        notes.append(f"the behaviour closure can no longer be built ({facts.closure.error}); the verdict records the "
                     "closure pinned when the trial started")
    elif now.digest != boot.digest:
        notes.append(f"the skill's files changed during the trial: the verdict records the closure tested "
                     f"({boot.digest[:19]}), not the files now ({now.digest[:19]}), which need a new trial")
    return boot


def _plugin_activity(facts: VerdictFacts, f: Findings,
                     notes: list[str]) -> tuple[Findings, list[str], tuple[str, ...]]:
    """What the plugins' ledger means (:func:`live_trial.session.activity_judgement.judge_activity`; README "Whose
    failure it is"): a failure the skill depends on is the stop reason (``hook_failed`` / ``mcp_failed``, or
    ``mcp_fixture_failed``, BLOCKED, for a stand-in the person gave) when the trial recorded none, and a note naming
    it; any other failure a warning. Returns the findings with that stop reason, the verdict's warnings and the
    ledger's notes (what a BLOCKED verdict's reasons leave out)."""
    judged = judge_activity(facts.plugin_activity, (facts.target.frontmatter or {}).get("allowed-tools"))
    notes += [n for n in judged.notes if n not in notes]
    warnings = [str(w) for w in f.warnings]
    warnings += [w for w in judged.warnings if w not in warnings]
    # a hook that refused the harness's own completion marker explains a trial that ended without it (no marker, so
    # the table's row said contract_violation or unexpected_stop): the harness's file, BLOCKED marker_refused
    refused = judged.stop == StopReason.MARKER_REFUSED.value and f.completion != "PASS"
    if (f.stop_reason is None or refused) and judged.stop is not None and not f.blocked:
        # a stand-in the person gave (mcp_fixture_failed) is no failure of the skill: its row's verdict is BLOCKED
        row = StopReason.of(judged.stop)
        f = replace(f, stop_reason=judged.stop, blocked=row is not None and row.verdict == "BLOCKED")
    return f, warnings, tuple(judged.notes)


def _downgrade(origin: str, tier: str) -> str | None:
    if origin == "rehearsal":
        return "rehearsal: the model was scripted; this proves the harness path and plugin loading, not the skill"
    if tier != "live":
        return f"the skill's tier is {tier}: fork or static acceptance would have been enough"
    return None


def _judgement(facts: VerdictFacts, f: Findings, kind: str, kinds: tuple[str, ...], notes: list[str],
               skill_notes: tuple[str, ...] = ()) -> Judgement:
    """The overall verdict and its reasons: the judgement table; a BLOCKED trial's reasons say whose failure stopped
    it and what it never reached, never a failure of the skill (``skill_notes``: the plugin ledger's judgements of the
    skill, left out then); a verdict that is not a PASS ends with the real cause."""
    inputs = VerdictInputs(f.launch, f.completion, f.goal_result, f.nudge_count, f.gate_response_count, kind,
                           f.poll_exit, bool(f.proof), bool(f.blocked), f.requested_model or None, facts.actual_models,
                           kinds, f.stop_reason)
    judgement = judge(inputs)
    if f.blocked:
        # The table says BLOCKED; the reason says whose failure stopped it (live_trial/stop_reasons.py: tool missing,
        # tmux gone, time cap, harness stopped, evaluator failed, records not writable), then what the trial never got
        # to (README "Whose failure it is"): a launch or completion FAIL here is not reached, not failed.
        reached = not_reached(f.launch, f.completion, f.goal_result)
        judgement = Judgement(judgement.verdict, (blocked_reason(f.stop_reason),) + ((reached,) if reached else ()))
    elif (f.stop_reason == StopReason.EXPECTED_GATE_NOT_SHOWN.value and f.launch == "PASS"
          and judge(replace(inputs, stop_reason=None)).verdict in ("PASS", "DEGRADED")):
        # README "Questions (gates)": it ran to its end (the completion stands) but never asked the question it had to;
        # what else the table says of the run (the goal not judged, nudges) follows.
        judgement = Judgement("FAIL", (EXPECTED_GATE_NOTE,) + judge(replace(inputs, stop_reason=None)).reasons)
    elif f.launch != "PASS" and judgement.verdict == "FAIL" and (stop := StopReason.of(f.stop_reason)) in LAUNCH_STOPS:
        # The skill never ran for a cause of its own that the trial named (its plugin not loaded, the skill hidden
        # from the model, no Skill call of it, the CLI's exit at start): the reason says which, not a guess.
        assert stop is not None
        judgement = Judgement("FAIL", (f"launch failed: {stop.why}",))
    elif f.stop_reason == StopReason.RECORDS_TAMPERED.value and judgement.verdict == "FAIL" and f.launch == "PASS":
        # The completion FAIL is the records' doing, not a turn that never ended: the reason names the cause, and the
        # tamper note (below, among the causes) the files (README "What a trial leaves behind").
        judgement = Judgement("FAIL", (StopReason.RECORDS_TAMPERED.why,))
    elif f.stop_reason in (StopReason.HOOK_FAILED.value, StopReason.MCP_FAILED.value) and f.launch == "PASS":
        # A part of its plugin the skill depends on failed: never a PASS (README "Whose failure it is"); the notes
        # (below, among the causes) name the hook or the server and what it said.
        row = StopReason.of(f.stop_reason)
        judgement = Judgement("FAIL", (row.why if row is not None else f.stop_reason,))
    if judgement.verdict != "PASS":
        stop_notes = [n for n in notes if not n.startswith(NOTE_PREFIX)] if f.stop_reason else []  # not a cause
        could_not_judge = facts.evaluation.could_not_judge
        if f.blocked:
            # what stopped it is the cause: never a judgement of the skill, nor an evaluator stopped with the harness
            stop_notes = [n for n in stop_notes if n not in skill_notes and not n.startswith(NO_SKILL_CALL)]
            # the first reason says the row's clause already ("blocked: <why>"): its note adds only what follows it
            row = StopReason.of(f.stop_reason)
            stop_notes = [n[len(row.why) + 2:] if row is not None and n.startswith(row.why + ": ") else n
                          for n in stop_notes]
            could_not_judge = could_not_judge if f.stop_reason == StopReason.EVALUATOR_FAILED.value else ()
        # an evaluator's findings on a trial the harness or the environment stopped judge the skill on what it never
        # got to do: the verdict keeps them in goal_result and goal_blockers, its reasons leave them out
        goal, blockers = (None, ()) if f.blocked else (f.goal_result, f.goal_blockers)
        causes = cause_lines(could_not_judge, goal, blockers, f.failure_reason, stop_notes)
        judgement = Judgement(judgement.verdict, tuple(dict.fromkeys(judgement.reasons + causes)))
    return judgement


def _criteria(facts: VerdictFacts, f: Findings) -> list[dict[str, Any]]:
    """One line per criterion: the findings' checks, else evaluation.json's when the goal was judged."""
    checks: list[Mapping[str, Any]] | None = list(f.criteria_checks) if f.criteria_checks is not None else None
    if checks is None and f.goal_result is not None:
        checks = list(facts.evaluation.checks) if facts.evaluation.checks is not None else None
    why = f.not_judged_why or ("the goal was not judged" if f.goal_result is None
                               else "the evaluator recorded no check for it")
    return criteria_table(facts.target.frontmatter, checks, why)


def _working_folder(folder: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if folder is None:
        return None
    return {**{k: folder.get(k) for k in ("form", "path", "source")}, "removed": bool(folder.get("removed"))}
