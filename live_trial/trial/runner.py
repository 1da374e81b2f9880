"""One whole live trial: workdir, task.md, boot, send, poll, collect, evaluate, verdict, notify, cleanup.

Seed 001 describes what a careful operator does by hand; this module does it the same way every time
(README "Running a real trial"). Every exit path (DONE, STALL, GATE, HARD_CAP, boot failure, crash of the CLI, delivery
failure, Ctrl-C / SIGTERM of the harness, tmux gone, a disk that refuses the records) collects what exists, kills the
session and ends every process the trial started (ARCHITECTURE invariant 6). Whose failure a stop was comes from one
table (:mod:`live_trial.stop_reasons`). The core never prints: progress and decisions go to ``on_event`` and to
the workdir's ``trial-log.jsonl``.
"""
from __future__ import annotations

import fcntl
import os
import shutil
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from live_trial import stop_reasons
from live_trial.acceptance.evallog import workdir_path
from live_trial.acceptance.verdict_facts import environment
from live_trial.errors import Blocked, BootFail, BootTimeout, DeliveryFailed, ExitCode, LiveTrialError, RefusedInput
from live_trial.notices import watch
from live_trial.policy import load_policy
from live_trial.session import boot, containment, send
from live_trial.session.backend import Backend
from live_trial.session.claude_bin import ClaudeBinary, find_claude
from live_trial.session.screen import ALTERNATE_SCREEN_NOTE
from live_trial.stop_reasons import StopReason
from live_trial.transcript.paths import config_dir
from live_trial.transcript.status import IDLE_TURN_COMPLETE
from live_trial.trial import activity, held, model_side, poll, poll_state, start
from live_trial.trial.budget import Budget, check_budget
from live_trial.trial.facts import Facts, TrialInterrupted, TrialOutcome, TrialRequest
from live_trial.trial.finish import finish
from live_trial.trial.folder_steps import prepare, release, trust_note, trusted_at_boot
from live_trial.trial.inputs import validate
from live_trial.trial.journal import EventSink, Journal
from live_trial.trial.loading import require_target_listed
from live_trial.trial.loop import poll_until_terminal
from live_trial.trial.moves import current_transcript
from live_trial.trial.resume import resume
from live_trial.trial.state import TrialState
from live_trial.trial.workdir import new_run_id
from live_trial.workdir_files import MARKER_ENV, Workdir

if TYPE_CHECKING:       # types only
    from live_trial.closure.index import Pinning, Target
    from live_trial.rehearsal.scenario import Scenario
    from live_trial.rehearsal.server import RehearsalServer
    from live_trial.tape.file import TapeEntry, TapeRecorder
    from live_trial.tape.proxy import RecordingProxy
    from live_trial.tape.replay import TapeServer
    from live_trial.trial.folder import FolderPlan
    from live_trial.trial.folder_lock import FolderLock


class Trial:
    """Runs one trial. Construct with a :class:`TrialRequest`, then call :meth:`run` (or :meth:`resume`).

    ``stop_event`` lets a caller (signal handler, plan runner) stop the trial: the next poll tick raises
    :class:`TrialInterrupted` and cleanup runs as on every other exit path. A
    :class:`~live_trial.trial.facts.StopRequest` also says which signal asked (Ctrl-C or SIGTERM: the stop reason)."""

    def __init__(self, req: TrialRequest, *, on_event: EventSink | None = None,
                 stop_event: threading.Event | None = None, env: dict[str, str] | None = None) -> None:
        self.req = req
        self.journal = Journal(on_event)
        self.stop_event = stop_event or threading.Event()
        self.env = dict(os.environ if env is None else env)
        self.policy = req.policy or load_policy(self.env)
        self.facts = Facts()
        self.journal.facts = self.facts
        self.server: RehearsalServer | TapeServer | RecordingProxy | None = None
        self.tape: list[TapeEntry] | None = None          # a replay's, read by the input checks
        self.tape_recorder: TapeRecorder | None = None    # a recorded trial's
        self.backend: Backend | None = None
        self.target: Target | None = None
        self.pinning: Pinning | None = None       # set by the input checks (trial.inputs.validate)
        self.claude: ClaudeBinary | None = None
        self.scenario: Scenario | None = None     # a rehearsal's, set by the input checks
        self.child_overrides: dict[str, str] = {}
        self.folder_plan: FolderPlan | None = None   # set by the input checks
        self.folder_lock: FolderLock | None = None   # of an in-place folder, held for the trial's life
        self.mcp_watch: activity.ServerWatch | None = None   # the MCP servers the skill's allowed-tools name
        self.budget: Budget | None = None            # the meter of --max-cost-usd, once the first tick reads it

    # ----------------------------------------------------------------- the record
    @property
    def wd(self) -> Workdir | None:
        """The trial's workdir (None until it is created)."""
        return self.journal.wd

    @wd.setter
    def wd(self, value: Workdir | None) -> None:
        self.journal.wd = value

    @property
    def state(self) -> TrialState | None:
        """The trial's state, as kept in ``trial-state.json`` (None until the workdir exists; see :class:`Journal`)."""
        return self.journal.state

    @state.setter
    def state(self, value: TrialState | None) -> None:
        self.journal.state = value

    def phase(self) -> str:
        """The phase recorded in the state, or ``trial`` before there is one (a step name for the log)."""
        return self.state.phase if self.state is not None else "trial"

    def take_lock(self) -> None:
        """Hold an exclusive lock on the workdir for this harness's lifetime, so two harnesses (two resumes)
        never drive one session. Raises :class:`RefusedInput` when another process holds it, a one-line
        :class:`Blocked` when the workdir cannot be written."""
        assert self.wd is not None          # the lock is taken once the workdir exists
        try:
            fh = os.fdopen(os.open(self.wd.trial_lock, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600), "a")
        except OSError as exc:
            raise stop_reasons.unwritable(exc, self.wd.root) from None
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.close()
            raise RefusedInput("another harness is driving this trial right now", where=str(self.wd.root),
                               fix="wait for it to end, or stop it first", code="trial_locked") from None
        self._lock_file = fh

    def sleep(self, seconds: float) -> None:
        """Wait ``seconds``; raise :class:`TrialInterrupted` (:meth:`stop_code`) once the harness is asked to stop,
        :class:`Blocked` ``replay_diverged`` / ``scenario_unmatched`` once a replay left its tape or a rehearsal's
        scenario answered no rule for a request (:func:`live_trial.trial.model_side.check_divergence`). Not while the
        task is being sent: the delivery and the plugin's loading check read the session's own records first, so a
        plugin the CLI did not load is ``plugin_not_loaded``, whatever the model's side could not answer after it."""
        if self.stop_event.wait(seconds):
            raise TrialInterrupted("the harness was asked to stop",
                                   fix="the session was killed and the evidence collected", code=self.stop_code())
        if self.state is None or self.state.phase != "sending":
            model_side.check_divergence(self)

    def stop_code(self) -> StopReason:
        """The stop reason of a harness asked to stop: harness_interrupted (Ctrl-C) or harness_terminated (SIGTERM)."""
        return stop_reasons.interrupt_code(getattr(self.stop_event, "signum", None))

    def set_facts(self, facts: Facts) -> None:
        """Replace the trial's facts (a resume reads them back from trial-state.json)."""
        self.facts = self.journal.facts = facts

    def _validate_inputs(self) -> None:
        """Refuse bad input before anything is created (see :func:`live_trial.trial.inputs.validate`; a containment
        setting that is none, :func:`live_trial.session.containment.setting`)."""
        validate(self)
        containment.setting(self.env)

    def run(self) -> TrialOutcome:
        """Run the trial from nothing to a verdict. Raises :class:`RefusedInput` before creating anything
        when the input is bad, a one-line :class:`Blocked` (nothing half-written) when the eval root cannot be
        written; every later failure ends in a recorded verdict instead."""
        self._validate_inputs()
        assert self.target is not None      # resolved by the input checks
        req = self.req
        run_id = req.run_id or new_run_id()
        parent = start.workdir_parent(req)
        root = parent / run_id if parent is not None else workdir_path(req.eval_root, self.target.plugin_name,
                                                                         self.target.skill, run_id)
        first_new = next((p for p in reversed([root, *root.parents]) if not p.exists()), None)
        try:
            start.create(self, run_id)  # the workdir, its lock, task.md and trial-state.json, as `prepare` makes them
        except BaseException as exc:
            self.release_folder()
            if getattr(self, "_lock_file", None) is not None:
                self._lock_file.close()
            if isinstance(exc, (OSError, Blocked)) and first_new is not None:
                # Nothing half-written: the folders this run created go again (README "Whose failure it is").
                shutil.rmtree(first_new, ignore_errors=True)
            if isinstance(exc, OSError):
                raise stop_reasons.unwritable(exc, getattr(exc, "filename", None) or first_new or root) from None
            raise
        assert self.wd is not None and self.state is not None     # made by start.create
        self.journal.event("workdir", path=str(self.wd.root), session=self.state.session)
        self._daily_maintenance()
        return self.drive(*self.steps())

    def steps(self) -> tuple[Callable[[], None], ...]:
        """The steps :meth:`run` drives, in order: the tools, the model side, the trial's folder, boot, the task sent,
        the poll loop (a session of an activation case sends its prompt and watches its turn instead:
        :class:`live_trial.trial.prompt_run.PromptRun`)."""
        return (self.prepare_tools, self.start_rehearsal, self.prepare_folder, self.boot_session, self._send_task,
                self.poll_loop)

    def drive(self, *steps: Callable[[], None]) -> TrialOutcome:
        """Run ``steps`` in order; whatever ends them (success, a refusal, a missing tool, a boot or delivery
        failure, an interrupt, tmux gone, a disk that refuses the records), collect what exists, kill the session and
        its processes, judge, and stop the rehearsal server. Every exit path of ``run`` and ``run --resume`` goes
        through here (ARCHITECTURE invariant 6); whose failure the stop was is :mod:`live_trial.stop_reasons`."""
        try:
            for step in steps:
                step()
        except TrialInterrupted as exc:
            self._stopped(exc.code, "harness", "interrupted", exc.message, note=False)
        except (BootFail, BootTimeout) as exc:
            self._stopped(exc.code, "boot", exc.status, exc.message, **_tail(exc))
        except DeliveryFailed as exc:
            self._stopped(self.environment_cause() or exc.code, "send", "delivery_failed", exc.message, **exc.details)
        except Blocked as exc:
            where = "tools" if exc.code.endswith("_missing") else self.phase()
            self._stopped(exc.code, where, "blocked", exc.message)
        except LiveTrialError as exc:
            # Anything else the steps refuse once the workdir exists still ends in a recorded verdict.
            self._stopped(self.environment_cause() or exc.code, self.phase(), exc.status,
                          exc.message, blocked=exc.exit_code == ExitCode.BLOCKED)
        except OSError as exc:
            assert self.wd is not None      # run and resume drive a trial whose workdir exists
            err = stop_reasons.unwritable(exc, getattr(exc, "filename", None) or self.wd.root)
            self._stopped(err.code, "records", "unwritable", err.message)
        finally:
            self.finish_session()
            self.release_folder()
        try:
            return self.conclude()
        finally:
            self.stop_server()

    def _stopped(self, code: str, step: str, decision: str, problem: str, *, note: bool = True,
                 blocked: bool = False, **evidence: Any) -> None:
        """Record why the steps ended: the stop reason, BLOCKED when the table says it was not the skill's doing."""
        self.facts.stop_reason = code
        self.facts.blocked = self.facts.blocked or blocked or stop_reasons.blocks(code)
        if note:
            self.facts.notes.append(problem)
        self.journal.log(step, decision, problem=problem, stop_reason=code, **evidence)

    def environment_cause(self) -> StopReason | None:
        """``tmux_gone`` (no tmux server on the socket) or ``session_removed`` (the server runs, the session does
        not) when the trial's session vanished from outside while it should run (after READY, before collect);
        None when it is there (a dead pane there is claude's own exit: a crash) or it cannot be told."""
        if self.backend is None or self.phase() not in ("sending", "polling"):
            return None
        assert self.state is not None       # a phase is recorded
        try:
            if self.backend.has_session(self.state.session):
                return None
            gone = self.backend.server_started_here() is None
            return StopReason.TMUX_GONE if gone else StopReason.SESSION_REMOVED
        except LiveTrialError:
            return None

    def resume(self, workdir: Path) -> TrialOutcome:
        """Continue a trial whose harness was killed (see :func:`live_trial.trial.resume.resume`)."""
        return resume(self, workdir)

    # ----------------------------------------------------------------- steps
    def _daily_maintenance(self) -> None:
        """Seed 000 rule 3-4: close expired watches and check due ones first, at most once a day.

        Skipped in rehearsal: a scripted run must not start real checks nor use up today's turn.
        """
        if self.req.rehearsal is not None:
            return

        try:
            done = watch.daily_maintenance(self.req.eval_root, lang=self.req.lang, env=self.env)
        except Exception as exc:  # noqa: BLE001 - watches must never stop a trial
            self.journal.log("watches", "error", problem=f"{type(exc).__name__}: {exc}")
            return
        if done.get("resent"):
            self.journal.log("watches", "notices_resent", resent=done["resent"])
        if done.get("ran"):
            self.journal.log("watches", "maintenance", swept=done["swept"], checked=len(done["checked"]))

    def prepare_tools(self) -> None:
        """The tools the trial needs: tmux on the trial's socket and the claude CLI; records the versions the verdict
        keeps (trial-state.json ``environment``). Raises :class:`Blocked` when one is missing."""
        self.backend = Backend(self.req.socket)
        # The versions the verdict records, known when the trial starts (a missing tool is recorded as null).
        versions = environment(None, self.backend.tmux_version())
        self.journal.save(environment=versions)
        self.backend.require_tmux()
        self.claude = find_claude(self.req.claude_bin, self.env)
        self.journal.log("tools", "claude", version=self.claude.version, path=self.claude.path)
        warning = self.claude.warning()
        if warning:
            self.journal.log("tools", "version_warning", warning=warning)
            if warning not in self.facts.warnings:     # once in the verdict, also after a resume
                self.facts.warnings.append(warning)
        self.journal.save(claude_bin=self.claude.path, claude_version=self.claude.version,
                          environment={**versions, "claude_version": self.claude.version})

    def start_rehearsal(self, port: int = 0) -> None:
        """The trial's model side on ``port`` (0: a free one): a rehearsal's scripted server (playing the attempt
        number of the case run the trial is an attempt of, ``when: {attempt: n}``) or a replay's tape server (with the
        workdir's isolated CLI config), or a recording's proxy (:func:`live_trial.trial.model_side.start`); nothing
        for a plain live trial."""
        model_side.start(self, port)

    def config_dir(self) -> Path:
        """The CLI config folder the session runs with: the one trial-state.json records (a rehearsal's isolated
        config), else the one the environment names (:func:`live_trial.transcript.paths.config_dir`)."""
        assert self.state is not None
        if self.state.config_dir:
            return Path(self.state.config_dir)
        return config_dir(self.env)

    def prepare_folder(self) -> None:
        """Make the trial's own folder (fresh, copy or in place) and record its state at start: the content
        snapshot and, in a git work tree, its git tree (README "What a trial leaves behind")."""
        prepare(self)

    def release_folder(self) -> None:
        """Once the session is killed and collected: remove the trial's copy (unless --keep-cwd) and give back an
        in-place folder's lock, on every exit path. Never raises."""
        release(self)

    def boot_session(self) -> None:
        """Boot claude in the trial's tmux session with the plugin and its declared dependencies pinned, in its
        container, and wait for the MCP servers it started (:func:`live_trial.session.boot.boot`). Raises BootFail,
        BootTimeout, Blocked."""
        self.journal.save(phase="booting")
        assert self.state is not None and self.state.closure is not None and self.backend is not None and self.wd
        req = boot.BootRequest(
            session=self.state.session, cwd=self.req.cwd, model=self.req.model,
            session_id=self.state.session_id, target=self.req.target, plugins_root=self.req.plugins_root,
            claude=self.claude, env_overrides={**self.child_overrides, MARKER_ENV: str(self.wd.marker)},
            proof=self.req.proof, rehearsal=self.req.rehearsal is not None, owner_pid=os.getpid(),
            plugin_dirs=[Path(d) for d in self.state.closure["plugin_dirs"]], container=held.hold(self),
            trusted_folder=trusted_at_boot(self.folder_plan, self.req.cwd, live=self.req.rehearsal is None),
            settings_args=activity.session_flags(self.wd))
        result = boot.boot(req, self.backend, base_env=self.env, sleep=self.sleep)
        if result.trust_answered is not None:
            self.facts.notes.append(trust_note(result.trust_answered, self.req.eval_root))
        settled, pending = activity.await_servers(
            self.wd, timeout_s=self.policy.boot_timeout_s, sleep=self.sleep,
            expected=activity.server_names(activity.plugins_of(self.state), self.state.mcp_fixtures or []))
        self.watch_servers()
        self.facts.warnings.extend(w for w in result.plugin_warnings if w not in self.facts.warnings)
        self.journal.save(pane_pid=result.pane_pid)
        self.note_alternate_screen(self.state.session)
        self.journal.log("boot", "READY", elapsed_s=round(result.elapsed_s, 2),
                         bypass_dialog_seen=result.bypass_dialog_seen, plugin_dirs=[str(p) for p in result.plugin_dirs],
                         plugin_checks=result.plugin_checks, mcp_servers=settled, mcp_pending=pending)
        self.journal.event("ready", session=self.state.session, elapsed_s=result.elapsed_s)

    def watch_servers(self) -> None:
        """Watch the MCP servers the skill's allowed-tools name: one that failed to start stops the trial at once, a
        stand-in's failure here (BLOCKED, before any model turn), the plugin's own once the skill ran."""
        assert self.state is not None and self.wd is not None
        self.mcp_watch = activity.watch_for(self.wd, self.target.frontmatter if self.target else None,
                                            activity.plugins_of(self.state), self.state.mcp_fixtures or [])
        activity.check_servers(self.mcp_watch, stand_ins_only=True)

    def transcript_path(self) -> Path:
        """The transcript the session writes now (it moves on /clear: see :mod:`live_trial.trial.moves`)."""
        return current_transcript(self)

    def send_file(self, path: Path, step: str) -> None:
        """Deliver the file at ``path`` to the session, confirmed by its transcript, and log it under ``step``
        (:func:`live_trial.session.send.send_file`: DeliveryFailed, or RefusedInput for a file it cannot send)."""
        assert self.backend is not None and self.state is not None
        delivery = send.send_file(self.backend, self.state.session, path, transcript_path=self.transcript_path(),
                                  sleep=self.sleep, follow=self.transcript_path)
        self.journal.log(step, "delivered", file=path.name, extra_enters=delivery.extra_enters)

    def _send_task(self) -> None:

        self.journal.save(phase="sending")
        assert self.wd is not None
        self.send_file(self.wd.task, "send")
        require_target_listed(self)
        self.facts.launch = "PASS"
        self.journal.save(phase="polling")

    def poll_once(self, stall_limit_s: float, *, turn_end: bool = False,
                  also: Callable[[dict[str, Any]], None] | None = None) -> poll.PollResult:
        """Poll the session until a terminal exit (no tick budget) with ``stall_limit_s`` seconds as the STALL limit
        (:func:`live_trial.trial.poll.poll`); each tick feeds the trial's log and live line, then ``also`` (which may
        raise to end the poll). ``turn_end``: the end of the turn is DONE, with no completion marker (a prompt of an
        activation case)."""
        assert self.wd is not None and self.state is not None and self.backend is not None
        cfg = poll_state.PollConfig(
            marker=self.wd.marker, session=self.state.session, session_id=self.state.session_id,
            cwd=self.req.cwd, config_dir=self.config_dir(), state_file=self.wd.poll_state,
            policy=self.policy.with_overrides(stall_limit_s=stall_limit_s), max_ticks=None, turn_end=turn_end)

        def tick(progress: dict[str, Any]) -> None:
            self._on_tick(progress)
            if also is not None:
                also(progress)
        return poll.poll(cfg, self.backend, sleep=self.sleep, on_tick=tick, watch=True)

    def _on_tick(self, progress: dict[str, Any]) -> None:
        """Poll's per-tick report: the 80% HARD_CAP warning is logged; ticks feed the live line; each change of
        state, awaited tool or background work is one ``state`` record (the report's timeline)."""
        if "warn" in progress:
            self.journal.log("poll", "WARN", message=progress["warn"])
            return
        activity.check_servers(self.mcp_watch)     # PluginFailed (mcp_failed) at once, not after the STALL limit
        check_budget(self, finished=progress.get("state") == IDLE_TURN_COMPLETE and self.wd is not None
                     and self.wd.marker.exists())
        doing = {"tool": progress.get("pending_tool"), "background": progress.get("background")}
        if (progress.get("state"), doing) != getattr(self, "_doing", None):
            self._doing = (progress.get("state"), doing)
            self.journal.log("state", str(progress.get("state") or "unknown"),
                             **{k: v for k, v in doing.items() if v}, elapsed_s=progress.get("elapsed_s"))
        self.journal.event("tick", **progress, **self._counts())

    def _counts(self) -> dict[str, Any]:
        assert self.state is not None
        return {"nudges": self.state.nudge_count, "gate_responses": self.state.gate_response_count}

    def poll_loop(self) -> None:
        """Poll until a terminal outcome, answering gates and applying the STALL table (see
        :func:`live_trial.trial.loop.poll_until_terminal`)."""
        poll_until_terminal(self)
        model_side.check_divergence(self)      # a replay that left its tape ends BLOCKED, whatever poll saw

    def finish_session(self) -> None:
        """Capture the pane, kill the session and end its container (verified empty), then collect what exists (once)
        and reap orphans (:func:`live_trial.trial.held.finish_session`). Never raises."""
        held.finish_session(self)

    def note_alternate_screen(self, session: str) -> None:
        """Name a session drawn in tmux's alternate screen (the CLI's fullscreen renderer, though boot asks for the
        classic one): its pane.txt holds only the visible rows, so the verdict says so rather than trusting it."""
        assert self.backend is not None
        if self.backend.alternate_screen(session):
            if ALTERNATE_SCREEN_NOTE not in self.facts.notes:
                self.facts.notes.append(ALTERNATE_SCREEN_NOTE)
            self.journal.log("collect", "alternate_screen", problem=ALTERNATE_SCREEN_NOTE)

    def end_processes(self, session: str) -> None:
        """Kill the session, end its container and verify it is empty, end the tagged and the evaluator a resume
        finds (:func:`live_trial.trial.held.end_processes`). Never raises."""
        held.end_processes(self, session)

    def stop_server(self) -> None:
        """Stop the model side (after the evaluator, which the same scenario, tape or proxy serves)."""
        if self.server is not None:
            self.server.stop()
            self.server = None
        for problem in model_side.recording_problems(self):
            self.journal.log("recording", "not_recorded", problem=problem)

    def conclude(self) -> TrialOutcome:
        """Once the session is collected and killed: evaluate, write the verdict, notify (see
        :func:`live_trial.trial.finish.finish`)."""
        return finish(self)


def _tail(exc: LiveTrialError) -> dict[str, Any]:
    return {k: v for k, v in exc.details.items() if k in ("tail", "screen")}
