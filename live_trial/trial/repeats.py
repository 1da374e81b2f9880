"""A case run: k independent trials of one case, then one verdict over them (references/suite-format.md "Repeats";
README "Planning many skills").

Each attempt is a whole trial of its own (:class:`~live_trial.trial.runner.Trial`: its own session, workdir, folder,
scripted server and fresh evaluator), started from a copy of the same request with the case run recorded in it
(:class:`~live_trial.acceptance.case_verdict.CaseRun`: its trial-state.json says which attempt it is, its scripted
server plays that attempt number). A BLOCKED attempt is no sample: it is retried while
:func:`~live_trial.acceptance.case_verdict.retry_helps` and the policy's bound allow, and the run stops BLOCKED
otherwise. Every attempt's workdir is kept. The case verdict is written to ``case-verdict.json`` in the case run's own
folder, and a person gets one message with the pass rate (:mod:`live_trial.notices.case_message`); the attempts send
none of their own.
"""
from __future__ import annotations

import copy
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from live_trial.acceptance.case_verdict import Attempt, CaseRun, case_doc, retry_helps, write_case_verdict
from live_trial.acceptance.evallog import case_run_path
from live_trial.clock import utc_now
from live_trial.errors import ExitCode, LiveTrialError, RefusedInput
from live_trial.policy import blocked_retries_max
from live_trial.stop_reasons import unwritable
from live_trial.trial.facts import FolderOutcome, TrialOutcome, TrialRequest
from live_trial.trial.journal import EventSink
from live_trial.trial.workdir import new_run_id

DEFAULT_CASE = "default"
#: ``run``'s exit code for a case verdict (README "Running a real trial"; FLAKY is never a PASS).
EXIT_CODES = {"PASS": ExitCode.OK, "FLAKY": ExitCode.FLAKY, "FAIL": ExitCode.FAIL, "DEGRADED": ExitCode.DEGRADED,
              "BLOCKED": ExitCode.BLOCKED}


@dataclass
class CaseOutcome(FolderOutcome):
    """How a case run ended. ``overall`` is the case verdict (PASS, FLAKY, FAIL, DEGRADED, BLOCKED), ``doc`` its
    case-verdict.json at ``path`` in ``folder``; ``attempts`` each attempt's :class:`TrialOutcome` (or the error that
    stopped it before it had a workdir), in order. ``workdir``, ``verdict`` and ``verdict_path`` are the folder, the
    document and its path under the names a trial's outcome gives them, so the tables of ``run`` show either."""

    folder: Path
    overall: str
    exit_code: int
    doc: dict[str, Any]
    path: Path
    summary: str
    scenario_origin: str
    attempts: list[TrialOutcome | LiveTrialError] = field(default_factory=list)
    notification: str | None = None
    notification_delivery: str | None = None
    report: Path | None = None          #: the case run's report.html, once the command that ran it wrote it
    stop_reason: str | None = None


def _attempt(n: int, outcome: TrialOutcome | LiveTrialError) -> Attempt:
    """What one attempt's outcome says, for the case verdict."""
    if isinstance(outcome, LiveTrialError):
        return Attempt(n, "BLOCKED", outcome.code, outcome.message)
    doc = outcome.verdict or {}
    reasons = (doc.get("overall") or {}).get("reasons") or []
    return Attempt(n, outcome.overall, doc.get("stop_reason"), outcome.summary, workdir=outcome.workdir,
                   run_id=outcome.workdir.name if outcome.workdir else None, report=outcome.report,
                   reason=str(reasons[0]) if reasons else None, skill_dir_tree_sha=doc.get("skill_dir_tree_sha"),
                   scenario_id=doc.get("scenario_id"), origin=outcome.scenario_origin, usage=doc.get("usage"))


def run_case(base: TrialRequest, repeats: int, *, case: str = DEFAULT_CASE,
             on_event: Callable[[int], EventSink | None] | None = None, stop_event: threading.Event | None = None,
             after_attempt: Callable[[TrialOutcome], None] | None = None,
             env: dict[str, str] | None = None) -> CaseOutcome:
    """Run ``repeats`` samples of the trial ``base`` describes (module docstring) and return the case run's outcome.

    ``on_event(n)``: the event sink of attempt n (its live lines); ``after_attempt``: called with each attempt's
    outcome as it ends (the command writes its report.html); ``stop_event``: Ctrl-C / SIGTERM, which ends the running
    attempt as any trial's and the run with it. Raises :class:`RefusedInput` for ``repeats`` below 1 and whatever the
    first attempt's input checks refuse (nothing created, as for one trial), a one-line
    :class:`~live_trial.errors.Blocked` when case-verdict.json cannot be written."""
    from live_trial.closure.target import resolve_target
    from live_trial.trial.runner import Trial

    if not isinstance(repeats, int) or repeats < 1:
        raise RefusedInput(f"repeats must be a whole number >= 1 (got {repeats!r})", code="bad_value",
                           fix="e.g. --repeat 3")
    target = resolve_target(base.target, base.plugins_root)
    run_id = new_run_id()
    folder = case_run_path(base.eval_root, target.plugin_name, target.skill, run_id)
    stop = stop_event or threading.Event()
    bound = blocked_retries_max()
    started_at = utc_now()
    outcomes: list[TrialOutcome | LiveTrialError] = []
    attempts: list[Attempt] = []
    used, stopped = 0, None
    while sum(1 for a in attempts if a.sample) < repeats:
        n = len(attempts) + 1
        req = copy.deepcopy(base)
        req.case_run = CaseRun(run_id, folder, case, n, repeats)
        try:
            outcome: TrialOutcome | LiveTrialError = Trial(req, on_event=on_event(n) if on_event else None,
                                                           stop_event=stop, env=env).run()
        except LiveTrialError as exc:
            if n == 1 and exc.exit_code == ExitCode.REFUSED:
                raise                   # refused before anything was created: as for one trial
            outcome = exc
        if isinstance(outcome, TrialOutcome) and after_attempt is not None:
            after_attempt(outcome)          # its report.html, linked from the case verdict
        outcomes.append(outcome)
        attempts.append(_attempt(n, outcome))
        last = attempts[-1]
        if stop.is_set() and sum(1 for a in attempts if a.sample) < repeats:
            stopped = f"the case run was stopped after attempt {n}: the harness was asked to stop"
            break
        if last.sample:
            continue
        if isinstance(outcome, LiveTrialError) and outcome.exit_code == ExitCode.REFUSED:
            stopped = f"attempt {n} was refused before it started ({outcome.message})"
            break
        if not retry_helps(last.stop_reason):
            stopped = (f"attempt {n} was BLOCKED ({last.stop_reason}): another attempt would meet the same cause, "
                       "so none was started")
            break
        if used >= bound:
            stopped = (f"attempt {n} was BLOCKED ({last.stop_reason}) with the {bound} retries of a BLOCKED attempt "
                       "used up (repeats.blocked_retries_max of references/convergence-policy.json)")
            break
        used += 1
    return _finish(base, target, CaseRun(run_id, folder, case, len(attempts), repeats), outcomes, attempts, used,
                   bound, stopped, started_at, env)


def _finish(base: TrialRequest, target: Any, run: CaseRun, outcomes: list[TrialOutcome | LiveTrialError],
            attempts: list[Attempt], used: int, bound: int, stopped: str | None, started_at: str,
            env: dict[str, str] | None) -> CaseOutcome:
    """Write the case verdict, send the case's one message; the :class:`CaseOutcome`."""
    from live_trial.notices.case_message import case_summary, notify_case
    from live_trial.notices.catalogue import resolve_lang

    lang = resolve_lang(base.lang, env)
    doc = case_doc(run, target=target.qualified, plugin=target.plugin_name, skill=target.skill, attempts=attempts,
                   retries_used=used, retries_max=bound, stopped=stopped, summary="-", eval_root=base.eval_root,
                   proof=base.proof, started_at=started_at, written_at=utc_now())
    doc["summary"] = case_summary(doc, lang)
    try:
        path = write_case_verdict(run.folder, doc)
    except OSError as exc:
        raise unwritable(exc, run.folder) from None
    docs = [o.verdict if isinstance(o, TrialOutcome) else None for o in outcomes]
    text = delivery = None
    try:
        record = notify_case(base.eval_root, doc, docs, lang,
                             description=str(target.frontmatter.get("description") or "") or None, env=env)
        text, delivery = record["text"], record["webhook"]["status"]
    except Exception:  # noqa: BLE001 - a message that could not be sent is never fatal; the case verdict stands
        pass
    return CaseOutcome(folder=run.folder, overall=doc["verdict"], exit_code=EXIT_CODES[doc["verdict"]], doc=doc,
                       path=path, summary=doc["summary"], scenario_origin=doc["scenario_origin"], attempts=outcomes,
                       notification=text, notification_delivery=delivery)
