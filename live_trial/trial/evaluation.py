"""The fresh evaluator's turn in a trial (README "Evidence, watches and messages to a person"): it judges the goal of a
run that completed, and what it says becomes the trial's facts (goal, blockers, evidence, what it could not see yet,
the criterion checks). Its process is the harness's: one that could not run, crashed, never answered or gave no valid
answer after its retries (the CLI's ``claude -p`` ended with ``error_max_structured_output_retries`` or another error
result, or each answer broke the answer's form) is BLOCKED ``evaluator_failed`` (live_trial/stop_reasons.py; README
"Whose failure it is")
with the CLI's last reason in the notes, never a judgement of the skill. An answer whose evidence does not hold is a
judgement: the goal FAIL "insufficient evidence".

Works on a trial (:class:`~live_trial.trial.runner.Trial`) through its public parts: its request, target, claude,
environment, stop event, :class:`~live_trial.trial.facts.Facts` and :class:`~live_trial.trial.journal.Journal`.
"""
from __future__ import annotations

from typing import Any

from live_trial.errors import LiveTrialError
from live_trial.stop_reasons import StopReason
from live_trial.trial.context import TrialContext


def records_hold(trial: TrialContext, when: str) -> bool:
    """True when the trial's records are still as collect sealed them (:func:`live_trial.trial.seal.differences`;
    README "What a trial leaves behind"), or nothing was sealed. Otherwise the trial stops as ``records_tampered``:
    completion FAIL (the
    skill's doing: something its session started changed the evidence after collect), a note naming what changed,
    a ``records`` record in the log with ``when`` (``before_evaluator``, ``at_verdict``); a trial already BLOCKED only
    gets the note. Returns False then."""
    from live_trial.trial.seal import differences, tamper_note

    assert trial.state is not None and trial.wd is not None
    found = differences(trial.wd.root, trial.state.records_seal)
    if not found:
        return True
    note = tamper_note(found)
    if note not in trial.facts.notes:
        trial.facts.notes.append(note)
    if not trial.facts.blocked:
        trial.facts.completion, trial.facts.stop_reason = "FAIL", StopReason.RECORDS_TAMPERED
    trial.journal.log("records", StopReason.RECORDS_TAMPERED.value, when=when, found=found)
    return False


def evaluate_goal(trial: TrialContext) -> None:
    """Have the fresh evaluator judge the goal, once the records are checked to be as collect sealed them
    (:func:`records_hold`: else it never starts). Its pid and start time are in the state while it runs (a resume or
    ``reap`` ends one whose harness died); it carries the trial's tag. A process that could not run, crashed or never
    answered is the harness's failure (BLOCKED ``evaluator_failed``), never a judgement of the skill. The
    ``evaluation.json`` it wrote is sealed with the records."""
    from live_trial.judge import evaluator
    from live_trial.session import containment, proctree
    from live_trial.trial import held
    from live_trial.trial.changes import session_output
    from live_trial.trial.seal import add_to_seal

    trial.journal.save(phase="evaluating")
    assert trial.state is not None and trial.wd is not None
    # What the evaluator is shown is read before the records are checked: a change made after the read is seen by the
    # check, so the evaluator is never shown a file list a process outside the trial rewrote (README "What a trial
    # leaves behind").
    produced = session_output(trial.wd.root, (trial.state.folder or {}).get("path"))
    if not records_hold(trial, "before_evaluator"):
        return
    env = {**trial.env, **trial.child_overrides, proctree.TAG_ENV: trial.state.session}
    results: list[evaluator.ProcessResult] = []

    def started(pid: int) -> None:
        me = proctree.proc(pid)
        trial.journal.save(evaluator={"pid": pid, "start": me.start} if me else None)

    def runner(*args: Any, **kw: Any) -> evaluator.ProcessResult:
        assert trial.state is not None
        box = held.hold(trial, trial.state.session + held.EVALUATOR_SUFFIX)     # held as the session was
        try:
            results.append(evaluator.run_process(*args, should_stop=trial.stop_event.is_set, on_start=started,
                                                 container=box, **kw))
        finally:
            left = containment.end(box)
            trial.journal.save(evaluator_containment=None)
            if left:
                trial.journal.log("evaluate", "processes_left", pids=[p.pid for p in left])
        return results[-1]

    problem = None
    try:
        result = evaluator.evaluate(trial.wd.root, trial.target, trial.claude, env, produced=produced,
                                    model=trial.req.model, runner=runner)
    except (LiveTrialError, OSError) as exc:
        problem = f"the evaluator could not run: {getattr(exc, 'message', None) or exc}"
    finally:
        trial.journal.save(evaluator=None)
    if trial.stop_event.is_set():
        # Ctrl-C / SIGTERM while the evaluator ran: it was killed within a second; the goal was not judged.
        trial.facts.blocked, trial.facts.stop_reason = True, trial.stop_code()
        trial.facts.goal, trial.facts.goal_blockers = None, []
        trial.facts.notes.append("the harness was stopped while the evaluator judged the goal")
        trial.journal.log("evaluate", "interrupted")
        return
    if _input_left_uncovered(trial):
        return
    if problem is None:
        # No valid answer after the retry (README "Whose failure it is"): nobody judged the goal, so it is not a FAIL
        # of the skill; the rule `verdict` by hand reads from the same evaluation.json.
        problem = evaluator.unjudged_problem(result)
    if problem is not None:
        trial.facts.blocked, trial.facts.stop_reason = True, StopReason.EVALUATOR_FAILED
        trial.facts.goal, trial.facts.goal_blockers = None, []
        trial.facts.notes.append(f"{StopReason.EVALUATOR_FAILED.why}: {problem}")
        trial.journal.log("evaluate", "error", problem=problem)
        return
    if trial.state.records_seal is not None:
        trial.journal.save(records_seal=add_to_seal(trial.wd.root, trial.state.records_seal, [trial.wd.evaluation]))
    trial.facts.goal = result["goal_result"]
    trial.facts.goal_blockers = list(result.get("blockers", []))
    trial.facts.evidence = list(result.get("evidence", []))
    trial.facts.unverified = list(result.get("unverified") or [])
    trial.facts.checks = list(result.get("checks") or [])
    trial.journal.log("evaluate", trial.facts.goal, blockers=trial.facts.goal_blockers,
                      evidence_items=len(trial.facts.evidence), unverified=trial.facts.unverified,
                      judged_by=result.get("judged_by"))


def _input_left_uncovered(trial: TrialContext) -> bool:
    """A replay or a rehearsal whose evaluator asked what its tape or scenario does not cover: the goal was not
    judged, whatever the evaluator made of the error (BLOCKED ``replay_diverged`` or ``scenario_unmatched``; README
    "Replaying a real trial offline", references/scenario-format.md). True when that is so (recorded in the facts),
    else False."""
    from live_trial.trial import model_side

    found = model_side.uncovered(trial)
    if found is None:
        return False
    code, sentence = found
    trial.facts.blocked, trial.facts.stop_reason = True, code
    trial.facts.goal, trial.facts.goal_blockers = None, []
    trial.facts.notes.append(sentence)
    trial.journal.log("evaluate", code.value, problem=sentence)
    return True
