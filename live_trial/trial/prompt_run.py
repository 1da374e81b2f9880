"""One session of one prompt of an activation case (README "Does it start by itself?").

A :class:`PromptRun` is a trial (:class:`~live_trial.trial.runner.Trial`: its own workdir, folder, scripted server,
container, session) whose task is the prompt alone, pasted through the same file → named buffer → paste path
(``task.md`` holds exactly the prompt: no Skill literal, no completion marker). It then watches the turn, never
nudges and never answers a question:

- the **turn ends** (the four-state classifier's IDLE_TURN_COMPLETE, with no marker to wait for): ended ``turn_end``;
- a **question** (GATE) ends it too: ended ``gate``, the question recorded;
- with ``stop_after_trigger``, **at once after the skill was invoked** (a successful Skill call resolving to it, or its
  slash command: :class:`~live_trial.transcript.activation.TriggerWatch` on each tick): Escape, then the normal
  cleanup; ended ``stopped_after_trigger``;
- no progress for the STALL limit: ended ``stall``; claude's own exit: ``crash``; the CLI did not load the skill:
  ``not_loaded`` (the trial's FAIL ``plugin_not_loaded``); the environment or the harness (the model's service, tmux,
  the hard cap, Ctrl-C, a process left): ``blocked``, no sample.

Every exit collects and ends the session and everything it started, as any trial's (ARCHITECTURE invariant 6). There
is no evaluator and no verdict.json: what the model did is read from the collected transcript
(:func:`~live_trial.transcript.activation.choice_of`) into a
:class:`~live_trial.acceptance.activation.PromptSample`.
"""
from __future__ import annotations

import threading
import time
from typing import Any, Callable

from live_trial import stop_reasons
from live_trial.acceptance.activation import BLOCKED, NOT_TRIGGERED, TRIGGERED, PromptSample
from live_trial.acceptance.activation_reuse import plugin_skills
from live_trial.acceptance.verdict_facts import trial_usage
from live_trial.errors import SESSION_GONE, Blocked, PollExit
from live_trial.session.containment import NOTE_PREFIX as CONTAINMENT_NOTE
from live_trial.stop_reasons import StopReason
from live_trial.transcript.activation import Choice, Invocation, TriggerWatch, choice_of
from live_trial.trial import activity
from live_trial.trial.activity import ServerWatch
from live_trial.trial.facts import TrialOutcome
from live_trial.trial.loading import require_target_listed
from live_trial.trial.moves import UNFOLLOWED
from live_trial.trial.runner import Trial

#: seconds a scripted model's gap waits for the transcript to show the target's invocation (:meth:`PromptRun.sleep`)
TRIGGER_RECORD_WAIT_S = 2.0


def cause_note(notes: list[str]) -> str | None:
    """The last of a session's notes that names a cause, never the line saying what held its processes (every
    trial has one: ``containment: ...``); None when there is none."""
    return next((n for n in reversed(notes) if not n.startswith(CONTAINMENT_NOTE)), None)


class Triggered(Exception):
    """The target was invoked and the case asks to stop right after it (raised from a poll tick)."""

    def __init__(self, invocation: Invocation) -> None:
        super().__init__(invocation.name)
        self.invocation = invocation


class PromptRun(Trial):
    """A session of one activation prompt (module docstring). Construct with a request whose ``prompt`` and
    ``activation`` are set; :meth:`run_prompt` returns its :class:`PromptSample`."""

    lane: threading.Semaphore | None = None     #: the run's live sessions (``--max-concurrency``); None: no bound
    _held: bool = False
    ending: str | None = None           #: how the session ended (acceptance/activation.ENDINGS), once known
    note: str | None = None             #: the gate's question, the cause of a stop
    sample: PromptSample | None = None  #: the session's sample, once concluded
    choice: Choice | None = None        #: what the collected transcript says the model did
    trigger: TriggerWatch | None = None     #: the watch of ``stop_after_trigger``, while the turn is watched
    servers: ServerWatch | None = None  #: the MCP servers the skill names, read at the end, never a stop of the turn

    def run_prompt(self) -> PromptSample:
        """Run the session to its sample. Raises what :meth:`Trial.run` raises before the workdir exists (a bad input:
        RefusedInput; an unwritable eval root: Blocked)."""
        self._started = time.monotonic()
        self.run()
        assert self.sample is not None
        return self.sample

    def skill_dirs(self) -> dict[str, str]:
        """Resolved skill folder -> ``plugin:skill`` of the loaded plugins (a bare-name call is resolved by it)."""
        plugins = [(p.name, p.root) for p in self.pinning.plugins] if self.pinning is not None else []
        return {str(folder): name for name, (folder, _) in plugin_skills(plugins).items()}

    def steps(self) -> tuple[Callable[[], None], ...]:
        """The tools, the model side, the session's folder, a lane, boot, the prompt sent, the turn watched."""
        return (self.prepare_tools, self.start_rehearsal, self.prepare_folder, self.take_lane, self.boot_session,
                self.send_prompt, self.watch_turn)

    def watch_servers(self) -> None:
        """Never stop the turn on a failed MCP server: which skill the model picks is decided from the listing, which
        holds the skill whether or not its server started, so a server that failed or was never started (the
        plugin's or a stand-in) is named in the run's note at the end and the turn runs to its own end (README "Does
        it start by itself?")."""
        assert self.state is not None and self.wd is not None
        self.servers = activity.watch_for(self.wd, self.target.frontmatter if self.target else None,
                                          activity.plugins_of(self.state), self.state.mcp_fixtures or [])

    def take_lane(self) -> None:
        """Wait for one of the run's lanes (``--max-concurrency`` live sessions at once): what is made before boot
        and collected after the session ended takes none. Raises TrialInterrupted when the harness is asked to stop
        while it waits."""
        while self.lane is not None and not self._held:
            self._held = self.lane.acquire(timeout=0.2)
            self.sleep(0)

    def finish_session(self) -> None:
        """Kill the session, end its container, collect (:meth:`Trial.finish_session`), then give its lane back."""
        try:
            super().finish_session()
        finally:
            if self._held and self.lane is not None:
                self.lane.release()
                self._held = False

    def send_prompt(self) -> None:
        """Paste the prompt (``task.md``) as a task is pasted, confirmed by the transcript, then require the target in
        the skill listing (:func:`~live_trial.trial.loading.require_target_listed`: PluginNotLoaded at once)."""
        self.journal.save(phase="sending")
        assert self.wd is not None
        self.send_file(self.wd.task, "send")
        require_target_listed(self)
        self.journal.save(phase="polling")

    def watch_turn(self) -> None:
        """Poll until the turn ends, a gate, or (``stop_after_trigger``) the target invoked; record how it ended."""
        assert self.req.activation is not None and self.target is not None and self.backend is not None
        # the transcript the prompt was delivered to: a move (a /clear typed by hand) is followed by the poll, and
        # the session's choice is read from every transcript it wrote at the end (conclude)
        transcript = self.transcript_path()
        watch = TriggerWatch(lambda: transcript, self.target.qualified, self.skill_dirs()) \
            if self.req.activation.stop_after_trigger else None
        self.trigger = watch

        def check(progress: dict[str, Any]) -> None:
            hit = watch.look() if watch is not None and "warn" not in progress else None
            if hit is not None:
                raise Triggered(hit)

        try:
            result = self.poll_once(self.policy.stall_limit_s, turn_end=True, also=check)
        except Triggered as hit:
            assert self.state is not None
            self.backend.send_keys(self.state.session, "Escape")        # then the normal cleanup ends the session
            self.ending = "stopped_after_trigger"
            self.journal.log("activation", "stopped_after_trigger", skill=hit.invocation.name,
                             at_step=hit.invocation.step)
            return
        self.facts.poll_exit = result.exit
        self._ended(result)

    def sleep(self, seconds: float) -> None:
        """:meth:`Trial.sleep`, except for a scripted model's gap (``scenario_unmatched``, ``replay_diverged``) met
        after the target was invoked, when the case says ``stop_after_trigger``: the session would have been stopped
        there, so the sample is the trigger (:class:`Triggered`), the gap named in its note. The CLI may ask its next
        request a moment before the Skill call's result is in the transcript: the transcript is looked at for up to
        :data:`TRIGGER_RECORD_WAIT_S` before the gap blocks the session. Raises what :meth:`Trial.sleep` raises."""
        try:
            super().sleep(seconds)
        except Blocked as exc:
            if self.trigger is None or exc.code not in (StopReason.SCENARIO_UNMATCHED, StopReason.REPLAY_DIVERGED):
                raise
            deadline = time.monotonic() + TRIGGER_RECORD_WAIT_S
            hit = self.trigger.look()
            while hit is None and time.monotonic() < deadline:
                time.sleep(0.05)
                hit = self.trigger.look()
            if hit is None:
                raise
            self.note = f"stopped after the trigger; then {exc.problem}"
            raise Triggered(hit) from None

    def _ended(self, result: Any) -> None:
        """How the poll ended, as an ending (and the facts of a stop that is not the skill's)."""
        status = result.status
        if result.exit == PollExit.DONE:
            cause = StopReason.of(getattr(status, "api_error_cause", None))
            if cause is not None and cause.blocks:      # the model's service ended the turn: not the model's choice
                text = (getattr(status, "api_error_text", None) or "").strip()
                self._stop(cause, stop_reasons.service_note(cause, text))
            self.ending = self.ending or "turn_end"
        elif result.exit == PollExit.GATE:
            self.ending, self.note = "gate", result.question
        elif result.exit == PollExit.HARD_CAP:
            self._stop(StopReason.HARD_CAP, result.reason)
        elif result.exit == PollExit.BLOCKED:
            raise Blocked("tmux disappeared during the session", code=StopReason.TMUX_MISSING)
        elif result.reason.startswith(UNFOLLOWED):
            self._stop(StopReason.TRANSCRIPT_MOVED, result.reason)
        elif result.reason == SESSION_GONE:
            gone = self.environment_cause()
            if gone is not None:
                raise Blocked(gone.why, code=gone)
            self.ending, self.facts.stop_reason = "crash", StopReason.CRASH
        else:
            self.ending, self.facts.stop_reason, self.note = "stall", StopReason.HANG, result.reason
        self.journal.log("activation", self.ending or "blocked", reason=result.reason, state=result.state)

    def _stop(self, cause: StopReason, note: str) -> None:
        self.facts.blocked, self.facts.stop_reason = True, cause
        self.facts.notes.append(note)
        self.ending, self.note = "blocked", note

    def conclude(self) -> TrialOutcome:
        """Read what the model did from the collected transcript into the session's :class:`PromptSample`; no
        evaluator, no verdict."""
        assert self.wd is not None and self.state is not None and self.req.activation is not None
        session = self.req.activation
        target = self.target.qualified if self.target is not None else self.req.target
        self.choice = choice = choice_of([*self.wd.moved_transcripts, self.wd.transcript], self.skill_dirs())
        hit = choice.invoked(target)
        code = self.facts.stop_reason
        cause = cause_note(self.facts.notes)
        if self.facts.blocked or stop_reasons.blocks(code):
            outcome, ending = BLOCKED, "blocked"
            note = self.note or cause or (str(code) if code else None)
        elif code == StopReason.PLUGIN_NOT_LOADED:
            outcome, ending, note = NOT_TRIGGERED, "not_loaded", cause
        else:
            outcome = TRIGGERED if hit is not None else NOT_TRIGGERED
            ending, note = self.ending or ("crash" if code == StopReason.CRASH else "stall"), self.note
        failed = self.servers.failed() if self.servers is not None else None
        if failed is not None:
            server = (f"the MCP server {failed[0]} " + ("was never started" if failed[2] else "failed to start")
                      + (f" ({failed[1]})" if failed[1] else ""))
            note = "; ".join(n for n in (note, server) if n)
        started = getattr(self, "_started", None)
        try:            # what the session cost (README "What a trial costs"); a record that cannot be read is none
            usage = trial_usage(self.wd.root, billed=not self.state.rehearsal)
        except (OSError, ValueError):
            usage = None
        self.sample = PromptSample(
            session.prompt, session.repeat, outcome, ending, via=hit.via if hit else None,
            step=hit.step if hit else None, after_tools=hit.after_tools if hit else (), others=choice.others(target),
            stop_reason=str(code) if code else None, note=note, workdir=self.wd.root,
            seconds=round(time.monotonic() - started, 2) if started is not None else None, usage=usage)
        self.journal.log("activation", outcome, ended=ending, at_step=self.sample.step, others=list(self.sample.others))
        self.journal.save(phase="finished")
        return TrialOutcome(workdir=self.wd.root, overall=outcome.upper(), exit_code=0, verdict=None,
                            verdict_path=None, summary=outcome, scenario_origin="rehearsal" if self.state.rehearsal
                            else "live", stop_reason=str(code) if code else None)
