"""The exit table of ``poll``, as one pure function: :func:`decide` takes a tick's :class:`Observation`, the
:class:`PollState` and the policy, and returns the next state and the exit, if any (the shape of
:func:`live_trial.trial.stall.decide_stall`). No I/O here: the observation was read before.

Rows are judged in order; the first that applies decides (seed 001 "poll" exit table, "完了 = 二層判定"). Each row
is its check → its exit (exit code):

1. elapsed since ``started_at`` >= ``hard_cap_s`` → HARD_CAP (1); ``WARN: HARD_CAP 80%`` once at
   ``hard_cap_warn_ratio``
2. tmux could not be run → BLOCKED (3)
3. the session gone or its pane dead → STALL ``session_gone`` at once (2)
4. GATE on ``done_stable_ticks`` consecutive ticks of this call; a gate reported already (same tool_use id, the same
   dialog or the same AskUserQuestion question) only while its dialog is still on screen GATE_REPEAT_S later → GATE (4)
5. marker AND IDLE_TURN_COMPLETE AND no spinner on screen: at once when the CLI said the turn ended
   (``turn_duration`` and its live status ``idle``), else on ``done_stable_ticks`` consecutive ticks spanning that
   many intervals → DONE (0)
6. the turn ended in an API error of the model's service the CLI gave up on (overloaded, 5xx, rate or usage limit,
   network, credentials refused, an unknown model: ``Status.api_error_cause`` a row that blocks), or in one the
   session caused (an invalid request the CLI does not retry) with no background work or queued prompt left, and no
   marker → STALL (2) at once, reason ``api_error: …`` (README "Whose failure it is": the verdict follows as soon as
   the CLI gave up, not a STALL limit later)
7. no progress (transcript grew, masked screen changed, a running background task's output grew, a move followed,
   the CLI's API-retry line on screen) for ``stall_limit_s`` → STALL (2); reason ``transcript_moved: …`` when the CLI
   named a session whose transcript never appeared
8. ``max_ticks`` ticks in this call → TICK_BUDGET (5)

Rows 1-3 are judged before the observation counts: the state keeps the previous tick's screen, transcript and streaks.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from live_trial.clock import epoch_of, iso_z
from live_trial.errors import SESSION_GONE, PollExit
from live_trial.policy import Policy
from live_trial.stop_reasons import blocks
from live_trial.transcript.status import GATE, IDLE_TURN_COMPLETE, Status
from live_trial.trial.moves import UNFOLLOWED
from live_trial.trial.observation import Observation
from live_trial.trial.poll_state import CallCounters, PendingMove, PollState

#: The reason of the STALL that ends a poll at once when the turn ended in an API error of the model's service.
API_GAVE_UP = "api_error"

#: A gate already reported (same tool_use id) is reported again only after it stayed this long: the answer
#: may take a moment to reach the transcript.
GATE_REPEAT_S = 5.0
#: The screen is looked at again this soon when it alone still shows a turn the CLI reported ended (it redraws
#: within about 10 ms on 2.1.197).
QUICK_RECHECK_S = 0.05


@dataclass(frozen=True)
class Exit:
    """How a poll call ends: ``word`` DONE|STALL|GATE|HARD_CAP|TICK_BUDGET|BLOCKED, a plain ``reason``, the
    ``question`` of a GATE; a GATE also names what identifies it (``gate_id``, ``gate_keys``) for the next call."""

    word: PollExit
    reason: str
    question: str | None = None
    gate_id: str | None = None
    gate_keys: tuple[str, ...] = ()


@dataclass(frozen=True)
class Step:
    """What :func:`decide` made of one tick."""

    exit: Exit | None
    """The call's exit, or None: wait ``wait_s`` and tick again."""
    state: PollState
    """The state after this tick (saved every judged tick)."""
    judged: bool = False
    """The observation counted (False for rows 1-3: nothing is saved nor reported before the exit)."""
    warning: str | None = None
    """The HARD_CAP warning given on this tick, else None."""
    wait_s: float = 0.0
    """Seconds until the next tick."""
    closing: PollState | None = None
    """The state to end the call with, when it differs from ``state`` (a GATE records what it reported)."""

    @property
    def final(self) -> PollState:
        """The state the call ends with (before its exit record)."""
        return self.closing if self.closing is not None else self.state


def _cli_ended_turn(status: Status | None) -> bool:
    """The CLI itself says the turn ended: its ``turn_duration`` record is the newest event and its live status is
    ``idle`` (which it writes first, about 0.1 s earlier on 2.1.197). Nothing is outstanding then, or the state
    would not be IDLE_TURN_COMPLETE: background work, queued prompts and Stop hooks all keep it busy."""
    return (status is not None and status.state == IDLE_TURN_COMPLETE and status.ended_by == "turn_duration"
            and status.session_status == "idle")


def decide(obs: Observation, state: PollState, policy: Policy, now: float) -> Step:
    """Judge one tick (rows 1-8 of the module's table, in order) at epoch ``now``; returns a :class:`Step` with the
    next state, the exit or None, and the wait before the next tick. Pure: no I/O, never raises for an
    observation. Spec: seed 001 "poll"."""
    call = state.call
    state = state.changed(ticks=state.ticks + 1, call=CallCounters(call.max_ticks, call.ticks + 1, call.gate_since))
    elapsed = now - epoch_of(state.started_at)
    if elapsed >= policy.hard_cap_s:
        return Step(Exit(PollExit.HARD_CAP, f"elapsed {elapsed:.0f}s >= hard_cap_s {policy.hard_cap_s:.0f}s"), state)
    warning = None
    if elapsed >= policy.hard_cap_warn_ratio * policy.hard_cap_s and not state.warned_hard_cap:
        state = state.changed(warned_hard_cap=True)
        warning = (f"WARN: HARD_CAP {policy.hard_cap_warn_ratio:.0%} ({elapsed:.0f}s of {policy.hard_cap_s:.0f}s); "
                   "if the trial is progressing normally, allow it more time: --hard-cap S (run) or env HARD_CAP=S "
                   "(poll, from its next call)")
    if obs.blocked is not None:
        return Step(Exit(PollExit.BLOCKED, obs.blocked), state, warning=warning)
    if not obs.alive:
        return Step(Exit(PollExit.STALL, SESSION_GONE), state, warning=warning)
    t = iso_z(now)
    changes = _taken(obs, state, t)
    gate_changes, gate = _gate(obs, state, policy, now)
    done_now = obs.marker_exists and obs.state == IDLE_TURN_COMPLETE and not obs.screen_busy
    changes.update(gate_changes, done_streak=state.done_streak + 1 if done_now else 0,
                   done_since=(state.done_since or t) if done_now else None, updated_at=t)
    state = state.changed(**changes)
    wait_s = QUICK_RECHECK_S if (obs.marker_exists and obs.screen_busy and _cli_ended_turn(obs.status)) \
        else policy.poll_interval_s
    if gate is not None:
        closing = state.changed(last_gate_id=gate.gate_id, last_gate_keys=gate.gate_keys)
        return Step(gate, state, judged=True, warning=warning, wait_s=wait_s, closing=closing)
    ending = _done(obs, state, policy, now) or _gave_up(obs) or _stall(state, policy, now) or _budget(state)
    return Step(ending, state, judged=True, warning=warning, wait_s=wait_s)


def _taken(obs: Observation, state: PollState, t: str) -> dict[str, Any]:
    """The changes of ``state`` by what the tick saw at ``t``: the screen's hash, a move followed or named, the
    transcript's end, the background outputs' sizes, the state word, and the progress clock (``last_change_at``)
    when any of them moved."""
    progress = obs.screen_hash != state.last_screen_hash
    changes: dict[str, Any] = {"last_screen_hash": obs.screen_hash}
    if obs.followed is not None:
        changes.update(moves=state.moves + (obs.followed.move(t),), move_pending=None)
        progress = True
    elif obs.named_session and state.move_pending is None:
        changes["move_pending"] = PendingMove(obs.named_session, t)
    if obs.transcript_end is not None:
        changes["transcript_path"] = obs.transcript_path
        if obs.transcript_end != state.transcript_offset:
            progress = True
            changes["transcript_offset"] = obs.transcript_end
        sizes, known = dict(obs.output_sizes or {}), state.background_outputs
        # a background job's output is its progress, like the transcript's growth (references/transcript-jsonl.md)
        progress = any(path in known and size != known[path] for path, size in sizes.items()) or progress
        changes["background_outputs"] = sizes
    changes["last_state"] = obs.state
    # While the CLI retries a failed API request the trial is not stalled (seed 001 STALL table): its retries can
    # outlast the
    # STALL limit (about 3 min by default, hours with CLAUDE_CODE_RETRY_WATCHDOG); the hard cap bounds them.
    progress = progress or obs.screen_retrying is not None
    if progress:
        changes["last_change_at"] = t
    return changes


def _gate(obs: Observation, state: PollState, policy: Policy, now: float) -> tuple[dict[str, Any], Exit | None]:
    """The changes of the gate streak and of this call's first sight of the gate; the GATE exit when row 4
    applies."""
    status, call = obs.status, state.call
    is_gate = status is not None and status.state == GATE
    since = (call.gate_since if call.gate_since is not None else now) if is_gate else None
    streak = state.gate_streak + 1 if is_gate else 0
    changes = {"gate_streak": streak, "call": CallCounters(call.max_ticks, call.ticks, since)}
    if status is None or since is None or streak < max(1, policy.done_stable_ticks):
        return changes, None
    keys = gate_keys(status, obs.screen_gate)
    # A gate reported already (its answer may be on its way) is reported again only while its dialog is still on
    # screen after GATE_REPEAT_S (the answer did not take). Once the dialog is gone the answer went in, however long
    # the CLI takes to write its tool_result (over 9 s seen under load on 2.1.197 and 2.1.332): answering it again
    # would spend the next answer on a question already answered.
    if set(keys) & set(state.last_gate_keys or (state.last_gate_id,)) and (
            obs.screen_gate is None or now - since < GATE_REPEAT_S - 1e-6):
        return changes, None
    return changes, Exit(PollExit.GATE, status.gate_kind or "gate", status.question, status.pending_tool_id, keys)


def gate_keys(status: Status, screen_gate: str | None) -> tuple[str, ...]:
    """What identifies a gate across polls: its tool_use id, its dialog on screen (``screen:<kind>:<question>``) and,
    for an AskUserQuestion, ``question:<text>``: the record may come after its dialog was reported by the screen
    alone (seen on 2.1.197 and 2.1.332 under load), and the question ties the two sightings to one gate. Pure."""
    question = f"question:{status.question}" if status.gate_kind == "ask_user_question" and status.question else None
    return tuple(k for k in (status.pending_tool_id, screen_gate, question) if k)


def _done(obs: Observation, state: PollState, policy: Policy, now: float) -> Exit | None:
    """Row 5. File events make ticks milliseconds apart: the fallback's stable ticks must span their timed
    intervals, or the CLI's early idle (0.1 s before its last records) would pass for a turn cancelled before any
    response."""
    status = obs.status
    stable = 1 if _cli_ended_turn(status) else max(1, policy.done_stable_ticks)
    held = now - epoch_of(state.done_since) + 1e-6 if state.done_since else 0.0
    if state.done_streak < stable or (stable > 1 and held < (stable - 1) * policy.poll_interval_s):
        return None
    return Exit(PollExit.DONE, "marker + IDLE_TURN_COMPLETE + screen not busy"
                + (" (interrupted)" if status and status.interrupted else "")
                + (f" (api_error {status.api_error})" if status and status.api_error is not None else ""))


def _gave_up(obs: Observation) -> Exit | None:
    """Row 6: the turn ended in an API error record and nothing else will happen; the trial's verdict need not wait
    for the STALL limit. The CLI gave up on the model's service (a cause that blocks): the loop stops it BLOCKED. An
    API error the session caused (``api_error``: an invalid request the CLI does not retry), with no background work
    and no queued prompt left to wake the session: the STALL table's row 6 at once (seed 001 "STALL 分岐表": an API
    error screen is no question to nudge; the loop tells ``model_never_answered`` from the session's own error)."""
    status = obs.status
    if obs.marker_exists or status is None or status.state != IDLE_TURN_COMPLETE or status.api_error_cause is None:
        return None
    if blocks(status.api_error_cause):
        return Exit(PollExit.STALL, f"{API_GAVE_UP}: the CLI gave up on the model's service "
                                    f"({status.api_error_cause}: {status.api_error})")
    if status.background or status.queued_prompts:
        return None
    return Exit(PollExit.STALL, f"{API_GAVE_UP}: the turn ended on an API error the CLI does not retry "
                                f"({status.api_error}) and nothing is left to wake the session")


def _stall(state: PollState, policy: Policy, now: float) -> Exit | None:
    """Row 7."""
    since_change = now - epoch_of(state.last_change_at)
    if since_change < policy.stall_limit_s:
        return None
    pending = state.move_pending
    if pending:
        return Exit(PollExit.STALL, f"{UNFOLLOWED}: the CLI continues as session {pending.to_session_id} "
                             f"(since {pending.since}) but no transcript of it was found")
    return Exit(PollExit.STALL, f"no progress for {since_change:.0f}s (stall_limit_s {policy.stall_limit_s:.0f})")


def _budget(state: PollState) -> Exit | None:
    """Row 8."""
    ticks, budget = state.call.ticks, state.call.max_ticks
    return Exit(PollExit.TICK_BUDGET, f"{ticks} ticks in this call") if budget is not None and ticks >= budget \
        else None


def progress_report(obs: Observation, state: PollState, policy: Policy, now: float) -> dict[str, Any]:
    """The ``on_tick`` report of a judged tick: tick, elapsed_s, since_progress_s, stall_in_s, hard_cap_in_s (seconds,
    one decimal), state, pending_tool, background (the kind of background work running, or None), screen_busy,
    transcript_offset, new_records, done_streak."""
    elapsed, since_change = now - epoch_of(state.started_at), now - epoch_of(state.last_change_at)
    status = obs.status
    return {"tick": state.ticks, "elapsed_s": round(elapsed, 1), "since_progress_s": round(since_change, 1),
            "stall_in_s": round(max(0.0, policy.stall_limit_s - since_change), 1),
            "hard_cap_in_s": round(max(0.0, policy.hard_cap_s - elapsed), 1),
            "state": obs.state, "pending_tool": status.pending_tool if status else None,
            "background": (status.background or {}).get("kind") if status else None,
            "screen_busy": obs.screen_busy, "transcript_offset": state.transcript_offset,
            "new_records": obs.new_records, "done_streak": state.done_streak}
