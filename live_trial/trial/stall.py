"""The STALL branch table of seed 001 ("STALL 分岐表"), as one pure function.

Rows are judged in order, each once; the first that applies decides. The trial runner acts on the
decision; this module does no I/O. Each row is its check — its finding → its action:

1. session alive? — gone or pane dead → ``crash``: record it, collect
2. transcript state — BUSY_* → ``extend``: double STALL_LIMIT once and poll again; a second BUSY stall is ``hang``
3. transcript state — IDLE_TURN_COMPLETE, no marker → go to row 4
4. end of the screen / last assistant text — a question or a request to confirm → ``nudge`` (up to nudge_max, then
   ``nudge_limit``); its fixed text is :func:`live_trial.notices.catalogue.nudge_text`
5. same — reported done but no marker → ``contract_violation``
6. anything else (model, API or usage-limit error screens) → ``unexpected_stop``: record tail and state, kill

A turn the CLI ended on an API error of the model's service (overloaded, 5xx, rate or usage limit, network, refused
credentials, an unknown model) never reaches this table: the poll loop stops it BLOCKED with that cause first
(:mod:`live_trial.trial.loop`; README "Whose failure it is"). An API error the session caused (an invalid request) is
row 6.
"""
from __future__ import annotations

from dataclasses import dataclass

from live_trial.stop_reasons import StopReason
from live_trial.transcript.status import BUSY_STATES, TurnState

#: How the note of row 6 begins (``stopped with state <state> and no completion marker``).
ROW_6_NOTE = "stopped with state "


@dataclass(frozen=True)
class StallDecision:
    """What to do about a STALL: ``row`` of the seed's table (1-6), ``action``, and a plain ``reason``."""

    row: int
    action: str  # extend | nudge, or the StopReason it stops for (crash, hang, nudge_limit, ...)
    reason: str


def decide_stall(*, session_alive: bool, state: str | None, marker_exists: bool, stall_extended: bool,
                 nudge_count: int, nudge_max: int, asks_question: bool, said_done: bool) -> StallDecision:
    """Apply the STALL table rows 1-6 in order and return the first that applies.

    ``asks_question`` / ``said_done`` come from the turn's last assistant text
    (:func:`~live_trial.transcript.reply.text_ends_with_question`,
    :func:`~live_trial.transcript.reply.text_reports_done`) and the screen
    (:func:`~live_trial.session.screen.screen_ends_with_question`,
    :func:`~live_trial.session.screen.screen_reports_done`). Source: seed 001, "STALL 分岐表".
    """
    if not session_alive:
        return StallDecision(1, StopReason.CRASH, "the claude session ended before the trial finished")
    if state in BUSY_STATES:
        if not stall_extended:
            return StallDecision(2, "extend",
                                 f"no progress while {state}: a long silent tool? waiting twice as long once")
        return StallDecision(2, StopReason.HANG,
                             f"still no progress while {state} after the longer wait: the session hangs")
    if state == TurnState.IDLE_TURN_COMPLETE and not marker_exists:
        # Row 3 only routes to row 4; row 5 follows.
        if asks_question and nudge_count < nudge_max:
            return StallDecision(4, "nudge", "the turn ended with a question instead of finishing")
        if said_done:
            return StallDecision(5, StopReason.CONTRACT_VIOLATION,
                                 "the session reported done but did not write the completion marker")
        if asks_question:
            return StallDecision(4, StopReason.NUDGE_LIMIT,
                                 f"the turn ended with a question again after {nudge_count} nudges")
    return StallDecision(6, StopReason.UNEXPECTED_STOP, f"{ROW_6_NOTE}{state or 'unknown'} and no completion marker")
