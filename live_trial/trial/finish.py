"""The end of a trial, in order: what the collected transcript says (the launch, compactions, unknown records, an
expected gate, unused answers), the fresh evaluator (when the run completed), the verdict, the notification.

Works on a trial (:class:`~live_trial.trial.runner.Trial`) whose session is already collected and killed, through its
public parts only: its request, its :class:`~live_trial.trial.facts.Facts` and its
:class:`~live_trial.trial.journal.Journal`. Each step is recorded as a phase (evaluating, judged, verdict_written,
finished) with the facts it established, so a resume continues at the first step not done: it never judges twice,
never writes a second verdict, and sends the notification exactly once (README "Resuming a trial").

The verdict is derived from the trial's record (:func:`live_trial.acceptance.findings.recorded_findings` of
trial-state.json at phase judged) and the workdir's facts, the way ``verdict`` derives it: the same workdir gives the
same verdict. A mostly-done PASS registers its watch first (:func:`live_trial.notices.verdict_watch.watch_verdict`).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from live_trial.acceptance.findings import EXPECTED_GATE_NOTE, NO_SKILL_CALL
from live_trial.acceptance.verdict_doc import Verdict
from live_trial.clock import utc_now
from live_trial.errors import ExitCode, PollExit
from live_trial.stop_reasons import StopReason, service_note
from live_trial.transcript.api_errors import refused_for_size
from live_trial.transcript.reader import assistant_records
from live_trial.transcript.records import model_answered, prompt_text
from live_trial.trial.context import TrialContext
from live_trial.trial.facts import TrialOutcome, phase_at_least
from live_trial.trial.loop import API_ERROR_NOTE
from live_trial.trial.stall import ROW_6_NOTE
from live_trial.workdir_files import VERDICT

NOTIFIED = ("sent", "failed", "not_configured")


def finish(trial: TrialContext) -> TrialOutcome:
    """Evaluate the goal when the run completed, write the verdict, notify; return the trial's outcome. Continues
    from the phase recorded in the trial's state (collecting or earlier: from the start). Raises a one-line
    :class:`~live_trial.errors.Blocked` when the verdict cannot be written (a read-only or full disk)."""
    from live_trial.acceptance.verdict import read_verdict
    from live_trial.notices.outcome import summariser
    from live_trial.trial.evaluation import evaluate_goal, records_hold

    assert trial.state is not None and trial.wd is not None     # finish runs on a trial with a workdir
    phase = trial.state.phase
    if not phase_at_least(phase, "evaluating"):
        _checks(trial)
    if not phase_at_least(phase, "judged") and _can_evaluate(trial):
        evaluate_goal(trial)
    if not phase_at_least(phase, "judged"):
        trial.journal.save(phase="judged")
    path = trial.wd.verdict
    if phase_at_least(phase, "verdict_written") and path.is_file():
        doc = read_verdict(path)
    else:
        # checked again when the verdict is written (README "What a trial leaves behind")
        records_hold(trial, "at_verdict")
        doc, path = _write_verdict(trial)
        trial.journal.save(phase="verdict_written")
    overall = doc["overall"]["verdict"] if isinstance(doc.get("overall"), dict) else doc["overall"]
    # an attempt of a case run leaves its message to the case run: one message per case, with its pass rate
    text, delivery = (None, None) if trial.req.case_run is not None else notify_once(trial, doc)
    trial.journal.save(phase="finished")
    origin = "rehearsal" if trial.state.rehearsal else "live"
    return TrialOutcome(workdir=trial.wd.root, overall=overall, exit_code=exit_code_for(overall),
                        verdict=doc, verdict_path=path,
                        summary=doc.get("summary") or summariser(trial.req.lang)(doc),
                        scenario_origin=origin, notification=text, notification_delivery=delivery,
                        stop_reason=doc.get("stop_reason"))


def _write_verdict(trial: TrialContext) -> tuple[dict[str, Any], Path]:
    """Derive the verdict from the trial's record and its workdir, register its watch, write it."""
    from live_trial.acceptance.derive import derive_verdict
    from live_trial.acceptance.findings import recorded_findings
    from live_trial.acceptance.verdict import verdict_clock
    from live_trial.acceptance.verdict_facts import gather_facts
    from live_trial.notices.outcome import summariser

    # What trial-state.json holds from phase judged on: the verdict is derived from the trial's record.
    assert trial.state is not None and trial.wd is not None and trial.target is not None
    findings = recorded_findings({**trial.state.to_doc(), "facts": trial.facts.to_doc()})
    assert findings is not None and trial.state.plugins_root is not None     # phase judged; recorded at the start
    facts = gather_facts(trial.wd.root, trial.target, Path(trial.state.plugins_root))
    verdict = derive_verdict(facts, findings, summarise=summariser(findings.lang), clock=verdict_clock(trial.env))
    verdict, path = record_verdict(verdict, workdir=trial.wd.root, eval_root=trial.req.eval_root,
                                   objective=str(trial.target.frontmatter.get("description") or ""),
                                   log=trial.journal.log)
    return verdict.to_doc(), path


def record_verdict(verdict: Verdict, *, workdir: Path, eval_root: Path | None, objective: str,
                   log: Callable[..., None]) -> tuple[Verdict, Path]:
    """Check ``verdict`` against the verdict schema, register the watch it calls for, write ``<workdir>/verdict.json``;
    return the verdict written (with its watch id) and its path. ``log(step, decision, **evidence)`` records the
    watch (``trial-log.jsonl``). The one end of ``run``, ``run --resume`` and ``verdict``. Raises SchemaInvalid
    before anything is registered or written, RefusedInput when a live watch is due and ``eval_root`` is None, a
    one-line :class:`~live_trial.errors.Blocked` when the disk refuses the file."""
    from live_trial.acceptance.verdict import write_verdict
    from live_trial.acceptance.verdict_doc import SCHEMA
    from live_trial.jsonfile import validate
    from live_trial.notices.verdict_watch import watch_verdict
    from live_trial.stop_reasons import unwritable

    validate(verdict.to_doc(), SCHEMA, what=VERDICT)     # before the watch is registered: a bad doc changes nothing
    watched = watch_verdict(verdict, workdir=workdir, eval_root=eval_root, objective=objective)
    if watched.problem is not None:
        log("watch", "error", problem=watched.problem)
    elif watched.watch_id is not None:
        log("watch", "registered", watch_id=watched.watch_id, ledger=str(watched.ledger))
    try:
        return watched.verdict, write_verdict(workdir, watched.verdict.to_doc())
    except OSError as exc:
        raise unwritable(exc, Path(workdir) / VERDICT) from None


def _checks(trial: TrialContext) -> None:
    """What the collected evidence says before the goal is judged: the launch, an expected gate, unused answers."""
    from live_trial.transcript.skill_calls import compaction_triggers

    records = _session_records(trial)
    triggers = compaction_triggers(records or [])
    if triggers:
        # The model then worked from a summary of the task, which a reader of the verdict should know.
        _note(trial, f"the conversation was compacted {len(triggers)} time(s) during the trial "
                     f"({', '.join(sorted(set(triggers)))}): the model went on from a summary of it")
    _note_unknown_records(trial)
    _note_outside_writes(trial)
    if trial.facts.launch == "PASS" and records is not None:
        _check_launch(trial, records)
    if trial.req.expect_gate and not trial.facts.gate_seen and not trial.facts.blocked:
        # README "Questions (gates)": a skill that must stop at a question but never showed one has a broken guard.
        # What happened stays recorded as it happened (it may well have run to its end); the verdict is FAIL.
        trial.facts.stop_reason = trial.facts.stop_reason or StopReason.EXPECTED_GATE_NOT_SHOWN
        _note(trial, EXPECTED_GATE_NOTE)
    assert trial.state is not None
    warning = unused_answers_warning(len(trial.state.gate_responses), trial.state.gate_response_count,
                                     reached_end=trial.facts.poll_exit == PollExit.DONE and not trial.facts.blocked)
    if warning is not None:
        trial.facts.warnings.append(warning)


def unused_answers_warning(given: int, used: int, *, reached_end: bool) -> str | None:
    """The warning for answers given ahead of time (``--gate-response``) that no question used, or None. Only a trial
    whose session ran to its end (``reached_end``: the last poll exit DONE, not BLOCKED) shows the skill asked fewer
    questions than ``given``: one stopped earlier (at a question, a STALL, an answer that was no option) never had
    the chance to ask the rest. ``used``: the questions answered. Pure."""
    unused = given - used
    if unused <= 0 or not reached_end:
        return None
    return f"{unused} --gate-response answer(s) were never used: the skill asked fewer questions than expected"


def _can_evaluate(trial: TrialContext) -> bool:
    # a trial already FAIL for the question it never asked is not judged further (README "Questions (gates)")
    return (trial.facts.completion == "PASS" and trial.facts.launch == "PASS" and not trial.facts.blocked
            and trial.facts.stop_reason != StopReason.EXPECTED_GATE_NOT_SHOWN)


def _note(trial: TrialContext, note: str) -> None:
    if note not in trial.facts.notes:
        trial.facts.notes.append(note)


def notify_once(trial: TrialContext, doc: dict[str, Any]) -> tuple[str | None, str | None]:
    """Send the trial's one notification unless it was sent already (README: every run ends with exactly one), and
    record its status in the state. A harness killed between sending and recording finds its line in
    notifications.jsonl (``refs.run_id``) and sends nothing again. Returns ``(text, webhook status)``; a notification
    that could not be made is recorded (status ``error``, in the journal) and returns ``(None, None)``."""
    from live_trial.notices import notify

    assert trial.state is not None
    run_id = trial.state.run_id
    status = (trial.state.notification or {}).get("status")
    if status in NOTIFIED or status == "sending":
        sent = [r for r in notify.read_notifications(trial.req.eval_root)
                if (r.get("refs") or {}).get("run_id") == run_id]
        record = sent[0] if sent else None
        if record is not None and status == "sending":
            trial.journal.save(notification={"status": record["webhook"]["status"], "at": record["at"]})
        if record is not None or status in NOTIFIED:
            return (record or {}).get("text"), ((record or {}).get("webhook") or {}).get("status") or status
    trial.journal.save(notification={"status": "sending", "at": utc_now()})
    try:
        record = notify.notify_trial_record(trial.req.eval_root, doc, lang=trial.req.lang)
    except Exception as exc:  # noqa: BLE001 - a failed notification is recorded, never fatal
        trial.journal.log("notify", "error", problem=f"{type(exc).__name__}: {exc}")
        trial.journal.save(notification={"status": "error", "at": utc_now()})
        return None, None
    trial.journal.save(notification={"status": record["webhook"]["status"], "at": record["at"]})
    return record["text"], record["webhook"]["status"]


def _session_transcripts(trial: TrialContext) -> list[Path] | None:
    """The session's transcripts, in order: the ones it moved away from (``/clear``), then ``transcript.jsonl``; None
    when no transcript was collected (the notes already say why)."""
    assert trial.wd is not None
    path = trial.wd.transcript
    if not path.is_file():
        return None
    return trial.wd.session_transcripts


def _session_records(trial: TrialContext) -> list[dict[str, Any]] | None:
    """The records of the whole session the launch check and the compaction note need
    (:func:`live_trial.transcript.skill_calls.skill_call_records`); None when no transcript was collected."""
    from live_trial.transcript.skill_calls import skill_call_records

    paths = _session_transcripts(trial)
    return None if paths is None else skill_call_records(*paths)


def _note_unknown_records(trial: TrialContext) -> None:
    """A note naming the records of types the harness does not know, with the CLI version that wrote them (README
    "Set-up"): they were left out of every count, and a person should know the CLI wrote something the harness was
    never shown, and how to find out what else changed."""
    from live_trial.transcript.reader import unknown_record_types

    paths = _session_transcripts(trial)
    found = unknown_record_types(*paths) if paths is not None else {}
    if not found:
        return
    kinds = ", ".join(f"{kind} ×{n}" for kind, n in sorted(found.items()))
    assert trial.state is not None
    _note(trial, f"the transcript holds {sum(found.values())} record(s) of types the harness does not know ({kinds}), "
                 f"written by claude {trial.state.claude_version or 'of unknown version'}: they were left out of "
                 "every count; run `live-trial doctor --cli` to see what else this CLI does differently")


def _note_outside_writes(trial: TrialContext) -> None:
    """A note naming what the session wrote in the workdir outside its own folder and the completion marker (README
    "What a trial leaves behind"; :func:`live_trial.trial.seal.outside_writes`, from every transcript's tool calls and
    a scan of the
    workdir): none of it is a side effect, so the evaluator never sees it as the skill's output."""
    from live_trial.transcript.reader import iter_records
    from live_trial.trial.seal import outside_note, outside_writes

    assert trial.wd is not None and trial.state is not None
    paths = [*(_session_transcripts(trial) or []), *sorted(trial.wd.subagents.glob("*.jsonl"))]
    folder = (trial.state.folder or {}).get("path") or trial.state.cwd
    calls = (rec for path in paths for rec in iter_records(path, select=lambda line: b"tool_use" in line))
    writes = outside_writes(trial.wd.root, Path(folder) if folder else None, calls)
    if writes:
        _note(trial, outside_note(writes))


#: Stops of the STALL table that say nothing of the skill when the model never answered the task at all.
NEVER_ANSWERED_STOPS = frozenset({StopReason.API_ERROR, StopReason.HANG, StopReason.UNEXPECTED_STOP,
                                  StopReason.ERROR_SCREEN})


def _check_launch(trial: TrialContext, records: list[dict[str, Any]]) -> None:
    """Seed 001 verdict table, axis 起動 (:func:`live_trial.transcript.skill_calls.launch_check`): without a successful
    Skill call to the target itself, launch is FAIL: the session ran, but not the skill under trial (another skill,
    or none)."""
    from live_trial.transcript.skill_calls import launch_check

    assert trial.target is not None
    target = trial.target.qualified
    check = launch_check(records, target)
    if check.launched:
        return
    trial.facts.launch = "FAIL"
    paths = _session_transcripts(trial) if trial.facts.stop_reason in NEVER_ANSWERED_STOPS else None
    answers = assistant_records(paths) if paths is not None else None
    error = next((prompt_text(r).strip() for r in reversed(answers or []) if r.get("isApiErrorMessage") is True), None)
    if not trial.facts.blocked and answers is not None and not model_answered(answers) and not refused_for_size(error):
        # the model never answered the task (its only records are API errors, or none): nothing of the skill had been
        # shown to it, so the stop is the service's, and the skill was never reached (README "Whose failure it is");
        # a first request refused for its size is the loaded plugins' listing and tools too: the session's api_error
        trial.facts.blocked, trial.facts.stop_reason = True, StopReason.MODEL_NEVER_ANSWERED
        # what the STALL table's row 6 said of the turn judged the session; the service's note below says it all
        trial.facts.notes = [n for n in trial.facts.notes if not n.startswith((ROW_6_NOTE, API_ERROR_NOTE))]
        # the same note as the verdict by hand writes (trial/byhand.py service_stop, stop_reasons.service_note)
        trial.facts.notes.append(service_note(StopReason.MODEL_NEVER_ANSWERED, error or ""))
    if trial.facts.blocked:
        # the environment or the harness stopped it before the Skill call: not reached, never the skill's failure
        # (the verdict's reasons say so: README "Whose failure it is")
        trial.journal.log("launch", "not_reached", target=target, skill_calls=check.seen)
        return
    trial.facts.stop_reason = trial.facts.stop_reason or StopReason.SKILL_NOT_LAUNCHED
    trial.facts.notes.append(f"{NO_SKILL_CALL} {target} (Skill calls: {check.seen})")
    trial.journal.log("launch", "FAIL", target=target, skill_calls=check.seen)


def exit_code_for(overall: str) -> ExitCode:
    """``run`` exit code for an overall verdict: 0 PASS, 1 FAIL, 6 DEGRADED, 3 BLOCKED (CONVENTIONS.md)."""
    return {"PASS": ExitCode.OK, "FAIL": ExitCode.FAIL, "DEGRADED": ExitCode.DEGRADED,
            "BLOCKED": ExitCode.BLOCKED}.get(overall, ExitCode.FAIL)
