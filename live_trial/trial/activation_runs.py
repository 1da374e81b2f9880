"""An activation run: every prompt of an activation case, each session side by side, then one result (README "Does it
start by itself?", references/suite-format.md "Activation cases").

Each prompt gets its sessions (its ``repeats``, else the case's), each a
:class:`~live_trial.trial.prompt_run.PromptRun` with its own session, workdir (under the run's ``prompts/``), folder
and scripted server, up to ``width`` (``--max-concurrency``) live at once: a lane is taken just before boot and given
back once the session is killed and collected, so the next session's preparation overlaps the last one's end. A
BLOCKED session (the environment or the harness) is no sample: it is tried again while its cause may pass and
``repeats.blocked_retries_max`` allows, as a case run's attempt is
(:func:`~live_trial.acceptance.case_verdict.retry_helps`). Then the result
(:func:`~live_trial.acceptance.activation.decide`) is written as ``activation.json`` in the run's folder; with
``then_acceptance`` one normal acceptance trial of the skill follows (the task unchanged, the fresh evaluator, a
verdict.json of its own); a person gets one message. An activation result is never an acceptance PASS.
"""
from __future__ import annotations

import copy
import hashlib
import threading
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from live_trial.acceptance.activation import (
    BLOCKED,
    ActivationSession,
    PromptSample,
    activation_doc,
    decide,
    prompt_set_digest,
    write_activation,
)
from live_trial.acceptance.activation_reuse import plugin_skills, skills_digest
from live_trial.acceptance.case_verdict import retry_helps, summed_usage
from live_trial.acceptance.evallog import activation_run_path
from live_trial.acceptance.suite import Case
from live_trial.clock import utc_now
from live_trial.errors import ExitCode, LiveTrialError, RefusedInput
from live_trial.policy import blocked_retries_max
from live_trial.session import containment
from live_trial.stop_reasons import unwritable
from live_trial.trial.facts import FolderOutcome, TrialOutcome, TrialRequest
from live_trial.trial.inputs import validate
from live_trial.trial.journal import EventSink
from live_trial.trial.prompt_run import PromptRun
from live_trial.trial.workdir import new_run_id

#: ``run``'s exit code for an activation result (README "Running a real trial"; FLAKY is never a PASS).
EXIT_CODES = {"PASS": ExitCode.OK, "FLAKY": ExitCode.FLAKY, "FAIL": ExitCode.FAIL, "BLOCKED": ExitCode.BLOCKED}


@dataclass
class ActivationOutcome(FolderOutcome):
    """How an activation run ended: ``overall`` its verdict (PASS, FLAKY, FAIL, BLOCKED), ``doc`` its activation.json
    at ``path`` in ``folder``, ``samples`` every session in the order they ended, ``acceptance`` the trial of
    ``then_acceptance`` (None without one). ``workdir``, ``verdict`` and ``verdict_path`` name the folder, the document
    and its path as a trial's outcome does, so the tables of ``run`` show either."""

    folder: Path
    overall: str
    exit_code: int
    doc: dict[str, Any]
    path: Path
    summary: str
    scenario_origin: str
    samples: list[PromptSample] = field(default_factory=list)
    acceptance: TrialOutcome | LiveTrialError | None = None
    notification: str | None = None
    notification_delivery: str | None = None
    report: Path | None = None
    stop_reason: str | None = None


def _sha(path: Path | None) -> str | None:
    return "sha256:" + hashlib.sha256(Path(path).read_bytes()).hexdigest() if path is not None else None


@dataclass
class _Run:
    """What the sessions of one activation run share."""

    base: TrialRequest
    case: Case
    run_id: str
    folder: Path
    stop: threading.Event
    env: dict[str, str] | None
    on_event: Callable[[int, int], EventSink | None] | None
    lane: threading.Semaphore | None = None     #: live sessions at once (``--max-concurrency``)

    def request(self, n: int, repeat: int) -> TrialRequest:
        """The request of session ``repeat`` of prompt ``n``: the prompt alone as its task, nothing of the
        acceptance trial's (args, answers, criteria, an expected gate)."""
        prompt = self.case.prompts[n - 1]
        req = copy.deepcopy(self.base)
        req.prompt, req.args, req.run_id = prompt.text, "", None
        req.gate_responses, req.gate_response_kinds, req.criteria, req.expect_gate = [], [], [], False
        req.activation = ActivationSession(self.run_id, self.folder, self.case.name, n, repeat,
                                           prompt.should_trigger, self.case.stop_after_trigger)
        return req

    def session(self, n: int, repeat: int) -> PromptSample:
        """Run one session to its sample; a session stopped before it had a workdir is a BLOCKED sample."""
        try:
            run = PromptRun(self.request(n, repeat), on_event=self.on_event(n, repeat) if self.on_event else None,
                            stop_event=self.stop, env=self.env)
            run.lane = self.lane
            return run.run_prompt()
        except LiveTrialError as exc:
            return PromptSample(n, repeat, BLOCKED, "blocked", stop_reason=exc.code, note=exc.message)
        except Exception as exc:  # noqa: BLE001 - the harness's own failure: BLOCKED, never a sample of the skill
            return PromptSample(n, repeat, BLOCKED, "blocked", stop_reason="harness_error",
                                note=f"the harness failed: {type(exc).__name__}: {exc}")


def check_case(base: TrialRequest, case: Case, env: dict[str, str] | None = None) -> PromptRun:
    """The input checks of the case's sessions, made once before anything is created (the first prompt's request
    stands for all: they differ only in their prompt). Returns the checked run (its target and pinning resolved).
    Raises :class:`RefusedInput` (exit 2) for a case with no prompts and whatever a trial's checks refuse."""
    if not case.activation or not case.prompts:
        raise RefusedInput(f"case {case.name} is not an activation case with prompts", code="bad_suite",
                           fix="give it kind: activation and prompts (references/suite-format.md)")
    req = copy.deepcopy(base)
    req.prompt = case.prompts[0].text
    probe = PromptRun(req, env=env)
    validate(probe)
    containment.setting(probe.env)
    return probe


def run_activation(base: TrialRequest, case: Case, *, width: int = 2,
                   on_event: Callable[[int, int], EventSink | None] | None = None,
                   stop_event: threading.Event | None = None, env: dict[str, str] | None = None,
                   after_acceptance: Callable[[TrialOutcome], None] | None = None) -> ActivationOutcome:
    """Run the activation case ``case`` of the skill ``base`` names (module docstring) and return its outcome.

    ``width``: sessions at once (``--max-concurrency``); ``on_event(n, repeat)``: the event sink of a session;
    ``after_acceptance``: called with the acceptance trial's outcome (the command writes its report.html);
    ``stop_event``: Ctrl-C / SIGTERM, which ends the running sessions as any trial's and the run with them. Raises
    :class:`RefusedInput` before anything is created for a bad input, a one-line Blocked when activation.json cannot
    be written."""
    if not isinstance(width, int) or width < 1:
        raise RefusedInput(f"--max-concurrency must be a whole number >= 1 (got {width!r})", code="bad_value")
    probe = check_case(base, case, env)
    assert probe.target is not None and probe.pinning is not None
    target = probe.target
    run_id = new_run_id()
    folder = activation_run_path(base.eval_root, target.plugin_name, target.skill, run_id)
    run = _Run(base, case, run_id, folder, stop_event or threading.Event(), env, on_event)
    skills = plugin_skills([(p.name, p.root) for p in probe.pinning.plugins])
    started_at, bound = utc_now(), blocked_retries_max()
    samples, used, stopped = _sessions(run, width, bound)
    prompts = [(p.text, p.should_trigger, p.sessions(case.repeats)) for p in case.prompts]
    decision = decide(prompts, samples, stopped)
    acceptance = _acceptance(run, after_acceptance) if case.then_acceptance and not run.stop.is_set() else None
    listing = _listing(samples, skills)
    doc = activation_doc(
        decision, samples, run_id=run_id, target=target.qualified, plugin=target.plugin_name, skill=target.skill,
        case=case.name, eval_root=Path(base.eval_root), summary="-", listing=listing,
        prompt_set=prompt_set_digest(target.qualified, prompts, _sha(base.rehearsal)),
        skills_digest=skills_digest(skills), stop_after_trigger=case.stop_after_trigger, retries=(used, bound),
        stopped=stopped, origin="rehearsal" if base.rehearsal is not None else "live",
        scenario=str(base.rehearsal) if base.rehearsal is not None else None,
        claude_version=probe.claude.version if probe.claude is not None else _claude_version(samples),
        started_at=started_at, written_at=utc_now(), acceptance=_acceptance_doc(acceptance, Path(base.eval_root)),
        usage=summed_usage([s.usage for s in samples] + [(getattr(acceptance, "verdict", None) or {}).get("usage")]))
    return _finish(base, doc, folder, samples, acceptance, env)


def _sessions(run: _Run, width: int, bound: int) -> tuple[list[PromptSample], int, str | None]:
    """Every session of every prompt, ``width`` at once; a BLOCKED one tried again while it may pass (module
    docstring). Returns ``(samples in the order they ended, retries used, why the run stopped early)``."""
    samples: list[PromptSample] = []
    used, stopped = 0, None
    nxt = {n: p.sessions(run.case.repeats) + 1 for n, p in enumerate(run.case.prompts, start=1)}
    run.lane = threading.BoundedSemaphore(width)
    # twice as many workers as lanes: a session's preparation and its collection after the kill take no lane, so
    # the next session's boot starts as soon as one ends
    with ThreadPoolExecutor(max_workers=2 * width) as pool:
        pending: set[Future[PromptSample]] = {pool.submit(run.session, n, r) for n, p in
                                              enumerate(run.case.prompts, start=1)
                                              for r in range(1, p.sessions(run.case.repeats) + 1)}
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                if future.cancelled():
                    continue
                sample = future.result()
                samples.append(sample)
                if sample.sample or stopped:
                    continue
                if run.stop.is_set():
                    stopped = "the activation run was stopped: the harness was asked to stop"
                elif not retry_helps(sample.stop_reason):
                    stopped = (f"a session of prompt {sample.prompt} was BLOCKED ({sample.stop_reason}): another "
                               "session would meet the same cause, so no more were started")
                elif used >= bound:
                    stopped = (f"a session of prompt {sample.prompt} was BLOCKED ({sample.stop_reason}) with the "
                               f"{bound} retries of a BLOCKED session used up (repeats.blocked_retries_max of "
                               "references/convergence-policy.json)")
                else:
                    used += 1
                    pending.add(pool.submit(run.session, sample.prompt, nxt[sample.prompt]))
                    nxt[sample.prompt] += 1
                if stopped:
                    for queued in pending:
                        queued.cancel()
    return samples, used, stopped


def _listing(samples: list[PromptSample], skills: dict[str, tuple[Path, str]]) -> dict[str, Any] | None:
    """The skill listing the sessions were shown (the first session's that recorded one), with the listed
    descriptions of the loaded plugins' skills."""
    from live_trial.transcript.activation import choice_of
    from live_trial.workdir_files import TRANSCRIPT

    for sample in samples:
        if sample.workdir is None:
            continue
        listing = choice_of([sample.workdir / TRANSCRIPT]).listing
        if listing is not None:
            entries = listing.entries()
            return {"digest": listing.digest, "names": list(listing.names),
                    "entries": {n: entries.get(n, "") for n in listing.names if n in skills}}
    return None


def _claude_version(samples: list[PromptSample]) -> str | None:
    from live_trial.trial.state import TrialState
    from live_trial.workdir_files import TRIAL_STATE

    for sample in samples:
        if sample.workdir is not None and (sample.workdir / TRIAL_STATE).is_file():
            try:
                return TrialState.load(sample.workdir / TRIAL_STATE).claude_version
            except LiveTrialError:
                continue
    return None


def _acceptance(run: _Run, after: Callable[[TrialOutcome], None] | None) -> TrialOutcome | LiveTrialError:
    """``then_acceptance``: one normal acceptance trial of the skill with the case's args, answers, expect and
    criteria (the task unchanged, the fresh evaluator, its own verdict.json)."""
    from live_trial.trial.runner import Trial

    try:
        outcome = Trial(copy.deepcopy(run.base), stop_event=run.stop, env=run.env).run()
    except LiveTrialError as exc:
        return exc
    if after is not None:
        after(outcome)
    return outcome


def _acceptance_doc(outcome: TrialOutcome | LiveTrialError | None, eval_root: Path) -> dict[str, Any] | None:
    import os

    if outcome is None:
        return None
    if isinstance(outcome, LiveTrialError):
        return {"verdict": outcome.status, "workdir": None, "summary": outcome.message}
    where = os.path.relpath(outcome.workdir, eval_root) if outcome.workdir else None
    return {"verdict": outcome.overall, "workdir": where, "summary": outcome.summary}


def _finish(base: TrialRequest, doc: dict[str, Any], folder: Path, samples: list[PromptSample],
            acceptance: TrialOutcome | LiveTrialError | None, env: dict[str, str] | None) -> ActivationOutcome:
    """Write activation.json, send the run's one message; the :class:`ActivationOutcome`."""
    from live_trial.notices.activation_message import activation_summary, notify_activation
    from live_trial.notices.catalogue import resolve_lang

    lang = resolve_lang(base.lang, env)
    doc["summary"] = activation_summary(doc, lang)
    try:
        path = write_activation(folder, doc)
    except OSError as exc:
        raise unwritable(exc, folder) from None
    text = delivery = None
    try:
        record = notify_activation(base.eval_root, doc, lang, env=env)
        text, delivery = record["text"], record["webhook"]["status"]
    except Exception:  # noqa: BLE001 - a message that could not be sent is never fatal; the result stands
        pass
    return ActivationOutcome(folder=folder, overall=doc["verdict"], exit_code=EXIT_CODES[doc["verdict"]], doc=doc,
                             path=path, summary=doc["summary"], scenario_origin=doc["scenario_origin"],
                             samples=samples, acceptance=acceptance, notification=text, notification_delivery=delivery)
