"""The poll loop: wait for DONE, a GATE, a STALL or the HARD_CAP, with a resumable state file.

Spec: seed 001 "poll" (exit table) and "完了 = 二層判定". Each tick first observes, then decides:

1. Observe (:class:`live_trial.trial.observation.Observer`, all the tick's I/O): the pane (alive, and its screen,
   masked by ``screen.mask_volatile`` for the progress hash) and the transcript (grown since the stored byte offset?);
   its tail classified with the CLI's ``sessions/<pid>.json`` when that pid is alive and with the background work the
   screen shows (``screen.background_work``). When that status file names another session id (``/clear``), the
   session is followed into its new transcript (``trial.moves``; recorded in the state's ``moves``).
2. Decide (:func:`live_trial.trial.poll_rules.decide`, pure): HARD_CAP (exit 1; a ``WARN: HARD_CAP 80%`` once),
   BLOCKED when tmux is missing (exit 3), STALL ``session_gone`` at once (exit 2), GATE on ``done_stable_ticks``
   consecutive ticks (exit 4), DONE when the marker file exists AND the state is IDLE_TURN_COMPLETE AND the screen
   shows no busy spinner (at once when the CLI itself said the turn ended, else on ``done_stable_ticks`` consecutive
   ticks spanning at least that many timed intervals; exit 0), STALL at once when the turn ended in an API error of
   the model's service the CLI gave up on (reason ``api_error: …``), STALL after ``stall_limit_s`` without progress
   (the CLI's API-retry line on screen counts as progress; its
   reason starts ``transcript_moved`` when the CLI named a new session whose transcript never appeared), and
   TICK_BUDGET after ``max_ticks`` ticks in this call (exit 5): re-run the same command to continue.
3. Save the state file (:class:`live_trial.trial.poll_state.PollState`; schema-validated, atomic) and report the tick.

Between ticks poll sleeps ``poll_interval_s`` or until the transcript, the CLI's status file or the marker changes
(``trial.wake``), whichever comes first; the tick after such a change judges at once. A screen still drawing the
spinner of a turn the CLI reported ended is looked at again after ``QUICK_RECHECK_S``.
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

from live_trial.clock import epoch_of, iso_z
from live_trial.errors import SESSION_GONE, RefusedInput
from live_trial.session import screen as screen_markers
from live_trial.session.protocols import Backend, Screen
from live_trial.transcript.paths import config_dir
from live_trial.transcript.status import Status
from live_trial.trial.observation import Observation, Observer
from live_trial.trial.poll_rules import Exit, decide, progress_report
from live_trial.trial.poll_state import PollConfig, PollState
from live_trial.trial.wake import FileWake

__all__ = ["PollResult", "poll"]



@dataclass
class PollResult:
    """How a poll call ended. ``exit`` DONE|STALL|GATE|HARD_CAP|TICK_BUDGET|BLOCKED, ``code`` its exit code,
    ``reason`` (e.g. ``session_gone``, ``no_progress``), ``status`` the last classification (None without a
    transcript), ``state`` its state word (or NO_TRANSCRIPT / the screen's), ``question`` for GATE,
    ``capture_tail`` the last screen lines, ``elapsed_s`` since the state file's ``started_at``, ``moves`` every
    move of the session to a new transcript seen so far (``{from_session_id, to_session_id, from_path, to_path,
    at}``; ``transcript_path`` is the file followed now)."""

    exit: str
    code: int
    reason: str
    status: Status | None
    state: str | None
    question: str | None
    capture_tail: list[str]
    elapsed_s: float
    ticks: int
    since_change_s: float
    transcript_path: str | None
    marker: str
    warnings: list[str] = field(default_factory=list)
    moves: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (``poll --json``)."""
        d = {k: v for k, v in self.__dict__.items() if k != "status"}
        d["status"] = self.status.to_dict() if self.status else None
        return d


def poll(cfg: PollConfig, backend: Backend, *, clock: Callable[[], float] = time.time,
         sleep: Callable[[float], None] = time.sleep, on_tick: Callable[[dict[str, Any]], None] | None = None,
         screen: Screen | None = None, watch: bool | None = None) -> PollResult:
    """Poll until a terminal exit or the tick budget; returns a :class:`PollResult` (never prints).

    ``backend``: a :class:`live_trial.session.protocols.Backend` (``pane`` once, then ``probe`` each tick).
    ``clock``: epoch seconds (wall clock: the state file carries it across processes); ``sleep``: seconds.
    ``on_tick(progress)`` gets a dict per tick (:func:`live_trial.trial.poll_rules.progress_report`) and
    ``{"warn": text}`` once for the HARD_CAP warning.
    ``screen``: the TUI marker functions (default :mod:`live_trial.session.screen`). ``watch``: wake on file changes
    between ticks (:class:`live_trial.trial.wake.FileWake`; default: only with the real ``time.sleep``, so a test's
    fake clock stays in control); ``sleep(0)`` is still called after each such wait, so a caller's sleep can stop
    the poll. Raises RefusedInput for a marker glob or a state file of another poll. Spec: seed 001 "poll".
    """
    if any(ch in str(cfg.marker) for ch in "*?"):
        raise RefusedInput(f"the marker must be the exact completion marker path, not a glob: {cfg.marker}",
                           where="marker", fix="pass e.g. <workdir>/out/status.json")
    marker = Path(cfg.marker).absolute()
    state = PollState.load(cfg.state_file, cfg, marker, clock())
    markers: Screen = screen if screen is not None else screen_markers
    observer = Observer(cfg, backend, markers, marker, Path(cfg.config_dir) if cfg.config_dir else config_dir(),
                        state.moves)
    shown = Observation(alive=True, transcript_path=str(observer.path) if observer.path else None)
    warnings: list[str] = []
    observer.waker = waker = FileWake() if (watch if watch is not None else sleep is time.sleep) else None
    try:
        while True:
            now = clock()
            obs = observer.observe(state.move_pending)
            step = decide(obs, state, cfg.policy, now)
            state = step.state
            if step.warning is not None:
                warnings.append(step.warning)
                if on_tick:
                    on_tick({"warn": step.warning})
            if step.judged:
                shown = obs
                state.save(cfg.state_file)
                if on_tick:
                    on_tick(progress_report(obs, state, cfg.policy, now))
            if step.exit is not None:
                if step.exit.reason == SESSION_GONE:
                    shown = replace(shown, capture=obs.capture)     # the probe that found it gone read no screen
                return _finish(cfg.state_file, marker, step.exit, step.final, shown, clock(), warnings)
            observer.watch(state.move_pending)
            if waker is None:
                sleep(step.wait_s)
                continue
            waker.wait(step.wait_s)
            sleep(0)      # the caller's sleep decides whether to go on (a runner's stop request raises there)
    finally:
        if waker is not None:
            waker.close()


def _finish(state_file: str | os.PathLike[str], marker: Path, exit_: Exit, state: PollState, shown: Observation,
            t: float, warnings: list[str]) -> PollResult:
    """Save ``state`` with the exit recorded at epoch ``t``; the result shows the last observation that counted
    (HARD_CAP and BLOCKED are decided before the tick's observation counts)."""
    state = state.ended(exit_.word, exit_.reason, iso_z(t))
    state.save(state_file)
    return PollResult(exit=exit_.word, code=int(exit_.word.exit_code), reason=exit_.reason, status=shown.status,
                      state=state.last_state, question=exit_.question,
                      capture_tail=shown.capture.rstrip("\n").split("\n")[-15:] if shown.capture else [],
                      elapsed_s=round(t - epoch_of(state.started_at), 3), ticks=state.ticks,
                      since_change_s=round(t - epoch_of(state.last_change_at), 3),
                      transcript_path=shown.transcript_path, marker=str(marker), warnings=warnings,
                      moves=[m.to_doc() for m in state.moves])
