"""Whose failure it is: the one table that says, for each way a trial can stop, whether the skill (or its session) or
the environment / the harness is to blame (ARCHITECTURE invariant 8; README "Whose failure it is").

A stop the skill's session caused is judged (FAIL, or whatever the verdict table gives). A stop the environment or the
harness caused says nothing about the skill: the verdict is BLOCKED (``run`` exits 3) with the cause in one plain
sentence, never FAIL and never "crash" of the skill. The runner reads this table to decide ``blocked``; the verdict
reads it for its reason; the notification and the summary speak the same codes (their sentences are in
``references/notifications.*.json`` under ``reasons``, one per code here; a unit test holds that).

=========================  ===========  =======  ==========================================================
code                       whose        verdict  when
=========================  ===========  =======  ==========================================================
crash                      skill        FAIL     claude exited or crashed while the skill ran: its pane died
                                                 and tmux still shows it (seed 001 STALL row 1)
hang                       skill        FAIL     busy without progress for twice the STALL limit (row 2)
gate_unanswered            skill        FAIL     it stopped at a question nobody was there to answer
nudge_limit                skill        FAIL     it kept stopping after the allowed nudges (row 4)
contract_violation         skill        FAIL     it reported DONE but wrote no completion marker (row 5)
unexpected_stop            skill        FAIL     an error screen or an API error ended the turn (row 6)
tmux_missing               environment  BLOCKED  tmux is not installed
claude_missing             environment  BLOCKED  no claude executable was found
tmux_error                 environment  BLOCKED  tmux stopped answering
tmux_gone                  environment  BLOCKED  the tmux server on the trial's socket stopped during the trial
session_removed            environment  BLOCKED  the trial's tmux session was removed from outside the trial
eval_root_unwritable       environment  BLOCKED  the eval root or the trial's workdir cannot be written
disk_full                  environment  BLOCKED  the disk holding the eval root is full
blocking_screen            environment  BLOCKED  boot stopped at a screen of the CLI that waits for a person
                                                 (folder trust, login, theme)
bypass_dialog              environment  BLOCKED  boot stopped at the bypass-permissions dialog it could not accept
root_needs_sandbox         environment  BLOCKED  the CLI refuses to skip permissions as root outside a sandbox
foreign_tmux_server        environment  BLOCKED  a tmux server no harness started took the trial's socket before boot
hard_cap                   harness      BLOCKED  the trial reached its hard time cap (seed 001: --blocked)
harness_interrupted        harness      BLOCKED  the person running the harness pressed Ctrl-C (SIGINT)
harness_terminated         harness      BLOCKED  the harness was stopped by a signal (SIGTERM)
harness_killed             harness      BLOCKED  the harness died (SIGKILL, a crash) where a resume cannot
                                                 continue (boot or delivery unconfirmed)
evaluator_failed           harness      BLOCKED  the evaluator process could not start, crashed or never answered
transcript_moved           harness      BLOCKED  the session went on in a new transcript the harness could not find
session_exists             harness      BLOCKED  the trial's own tmux session name was taken already
unknown_screen             harness      BLOCKED  boot met a screen of the CLI the harness does not know (a dialog
                                                 of no known kind, or no prompt at all)
=========================  ===========  =======  ==========================================================

The evaluator ANSWERING without usable evidence is a judgement of the goal (FAIL), not a failure of the harness.
"""
from __future__ import annotations

import errno
import os
from dataclasses import dataclass

from live_trial.errors import Blocked

SKILL, ENVIRONMENT, HARNESS = "skill", "environment", "harness"


@dataclass(frozen=True)
class Cause:
    """One row of the table: ``code`` (the verdict's ``stop_reason``), ``whose`` (skill | environment | harness)
    and ``why``, the English clause the verdict's reason and the run summary use."""

    code: str
    whose: str
    why: str

    @property
    def blocks(self) -> bool:
        """True when the verdict is BLOCKED: the environment or the harness stopped the trial, not the skill."""
        return self.whose != SKILL


CAUSES: dict[str, Cause] = {c.code: c for c in (
    Cause("crash", SKILL, "claude exited or crashed while the skill ran (its pane died)"),
    Cause("hang", SKILL, "it made no progress while busy, even after twice the STALL limit"),
    Cause("gate_unanswered", SKILL, "it stopped at a question nobody was there to answer"),
    Cause("nudge_limit", SKILL, "it kept stopping after the allowed nudges"),
    Cause("contract_violation", SKILL, "it reported DONE but never wrote the completion marker"),
    Cause("unexpected_stop", SKILL, "an error ended its turn"),
    Cause("tmux_missing", ENVIRONMENT, "tmux was missing"),
    Cause("claude_missing", ENVIRONMENT, "the claude binary was missing"),
    Cause("tmux_error", ENVIRONMENT, "tmux stopped answering"),
    Cause("tmux_gone", ENVIRONMENT, "the tmux server on the trial's socket stopped during the trial (it was killed "
                                    "or crashed)"),
    Cause("session_removed", ENVIRONMENT, "the trial's tmux session was removed from outside the trial"),
    Cause("eval_root_unwritable", ENVIRONMENT, "the eval root or the trial's workdir could not be written"),
    Cause("disk_full", ENVIRONMENT, "the disk holding the eval root is full"),
    Cause("blocking_screen", ENVIRONMENT, "the CLI stopped at start on a screen that waits for a person (folder "
                                          "trust, login), so the skill never ran"),
    Cause("bypass_dialog", ENVIRONMENT, "the CLI's bypass-permissions dialog could not be accepted at start, so the "
                                        "skill never ran"),
    Cause("root_needs_sandbox", ENVIRONMENT, "the CLI refuses to skip permissions as root outside a sandbox "
                                             "(IS_SANDBOX=1), so the skill never ran"),
    Cause("foreign_tmux_server", ENVIRONMENT, "a tmux server no harness started took the trial's socket before the "
                                              "trial's session could start"),
    Cause("hard_cap", HARNESS, "the trial reached its hard time cap"),
    Cause("harness_interrupted", HARNESS, "the person running the harness stopped it (Ctrl-C) before the trial "
                                          "finished"),
    Cause("harness_terminated", HARNESS, "the harness was stopped by a signal (SIGTERM) before the trial finished"),
    Cause("harness_killed", HARNESS, "the harness was killed before the trial could be judged, at a point a resume "
                                     "cannot continue from"),
    Cause("evaluator_failed", HARNESS, "the evaluator process could not run or crashed, so the goal was not judged"),
    Cause("transcript_moved", HARNESS, "the session continued in a new transcript the harness could not find"),
    Cause("unknown_screen", HARNESS, "the CLI showed a screen at start the harness does not know, so the skill never "
                                     "ran (`live-trial doctor --cli` checks this CLI's screens)"),
    Cause("session_exists", HARNESS, "a tmux session of the trial's own name already existed, so the trial's session "
                                     "never started"),
)}

#: What the table says when a blocked trial's stop reason is not in it.
UNKNOWN_BLOCK = "the environment or the harness stopped the trial before it could be judged"


def cause(code: str | None) -> Cause | None:
    """The row for ``code``, or None when the code is not in the table (a judgement of the skill, or unknown)."""
    return CAUSES.get(code or "")


def blocks(code: str | None) -> bool:
    """True when a trial stopped for ``code`` is BLOCKED (the environment's or the harness's failure)."""
    row = cause(code)
    return row is not None and row.blocks


def blocked_reason(code: str | None) -> str:
    """The verdict's reason for a BLOCKED trial: ``"blocked: <why>"``."""
    row = cause(code)
    return "blocked: " + (row.why if row is not None and row.blocks else UNKNOWN_BLOCK)


def interrupt_code(signum: int | None) -> str:
    """The stop reason for a harness asked to stop by ``signum``: SIGINT (Ctrl-C, a person) -> harness_interrupted,
    SIGTERM -> harness_terminated; None (a caller's stop event) -> harness_interrupted."""
    import signal

    return "harness_terminated" if signum == signal.SIGTERM else "harness_interrupted"


def storage_code(exc: OSError) -> str:
    """``disk_full`` for ENOSPC / EDQUOT, else ``eval_root_unwritable`` (read-only, no permission, ...)."""
    return "disk_full" if exc.errno in (errno.ENOSPC, errno.EDQUOT) else "eval_root_unwritable"


def unwritable(exc: OSError, path: str | os.PathLike[str]) -> Blocked:
    """The one-line BLOCKED error (exit 3) for a file the harness could not write at ``path``: what, where, the fix
    (README "Troubleshooting"). ``exc`` is the OSError the write raised."""
    code = storage_code(exc)
    what = exc.strerror or type(exc).__name__
    if code == "disk_full":
        return Blocked(f"the disk is full, so the trial's records cannot be written ({what})", where=str(path),
                       fix="free some space, or pass --eval-root a folder on another disk", code=code)
    return Blocked(f"the trial's records cannot be written ({what})", where=str(path),
                   fix="make the eval root writable, or pass --eval-root a folder you can write", code=code)
