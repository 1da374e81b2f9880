"""Typed errors of the core, the exit codes and the poll's exit words. Only ``live_trial.cli`` turns an error into a
printed line and an exit code.

Each error takes the facts (what, where, value, fix) as keyword arguments and composes a one-line
message, so messages stay consistent and tests can assert the facts (pattern of libtmux ``exc.py``).
Every exit number of the package is a member of :class:`ExitCode` (pattern of pytest's ``ExitCode``).
"""
from __future__ import annotations

from enum import IntEnum, StrEnum

TYPE_CHECKING = False
if TYPE_CHECKING:       # annotations only (importing typing costs every command's start-up)
    from typing import Any


class ExitCode(IntEnum):
    """Exit codes, documented in README and ``--help`` (CONVENTIONS.md, exit code table)."""

    OK = 0            # PASS, READY, DONE, written
    FAIL = 1          # FAIL (run), TIMEOUT (boot), HARD_CAP (poll)
    REFUSED = 2       # refused input, BOOT_FAIL (boot), STALL (poll), refused (verdict)
    BLOCKED = 3       # not the skill's failure: tmux or claude missing, tmux gone, records unwritable...
    GATE = 4          # poll: a question is waiting
    TICK_BUDGET = 5   # poll: --max-ticks used up; re-run the same command
    DEGRADED = 6      # run: finished, but the goal failed or a person had to step in
    FLAKY = 7         # run: a repeated case passed some of its trials and not others (never a PASS)
    USAGE = 64        # argparse usage error; poll: refused input
    INTERRUPTED = 130  # any: stopped by Ctrl-C outside a trial (128 + SIGINT, the shell's number)
    BROKEN_PIPE = 141  # any: the reader of its output went away (`| head`; 128 + SIGPIPE, the shell's number)


class PollExit(StrEnum):
    """How one ``poll`` call ends (seed 001 poll exit table): the status word it prints first and its exit code
    (:attr:`exit_code`). The words are verdict.json's ``poll_exit``."""

    exit_code: ExitCode

    def __new__(cls, word: str, exit_code: ExitCode) -> PollExit:
        """A member whose value is ``word``, with its :attr:`exit_code`."""
        member = str.__new__(cls, word)
        member._value_ = word
        member.exit_code = exit_code
        return member

    DONE = "DONE", ExitCode.OK                  # the marker and a finished turn
    STALL = "STALL", ExitCode.REFUSED           # 2: no progress, or the session gone
    GATE = "GATE", ExitCode.GATE                # a question is waiting
    HARD_CAP = "HARD_CAP", ExitCode.FAIL        # 1: the trial's hard time cap
    TICK_BUDGET = "TICK_BUDGET", ExitCode.TICK_BUDGET   # --max-ticks used up; run the same command again
    BLOCKED = "BLOCKED", ExitCode.BLOCKED       # tmux could not be run


#: The code of the error (and the STALL reason of ``poll``) when the trial's tmux session or its pane is gone.
SESSION_GONE = "session_gone"


class LiveTrialError(Exception):
    """Base of every error the core raises on purpose.

    ``status`` is the word printed first (e.g. ``BOOT_FAIL``), ``exit_code`` the process exit code,
    ``code`` a stable machine-readable reason (e.g. ``evidence_required``).
    """

    status: str = "ERROR"
    exit_code: int = ExitCode.REFUSED
    code: str = "error"

    def __init__(self, problem: str, *, where: str | None = None, fix: str | None = None,
                 code: str | None = None, details: dict[str, Any] | None = None) -> None:
        self.problem = problem
        self.where = where
        self.fix = fix
        if code:
            self.code = code
        self.details = dict(details or {})
        super().__init__(self.message)

    @property
    def message(self) -> str:
        """The one line a person reads: problem, where, and what to do."""
        parts = [self.problem]
        if self.where:
            parts[0] += f" ({self.where})"
        if self.fix:
            parts.append(self.fix)
        return "; ".join(parts)


class RefusedInput(LiveTrialError):
    """Bad input: nothing was created or changed on disk. Exit 2."""

    status = "REFUSED"
    exit_code = ExitCode.REFUSED
    code = "refused_input"


class Blocked(LiveTrialError):
    """The environment stopped the trial, not the skill: a required tool (tmux, claude) is missing (seed 001: tmux
    missing is BLOCKED), tmux went away, the records cannot be written. Exit 3 (live_trial/stop_reasons.py)."""

    status = "BLOCKED"
    exit_code = ExitCode.BLOCKED
    code = "blocked"


class BootFail(LiveTrialError):
    """The CLI could not be brought to a ready prompt: a blocking screen, an exit at start, bad plugins. Exit 2."""

    status = "BOOT_FAIL"
    exit_code = ExitCode.REFUSED
    code = "boot_fail"


class BootTimeout(LiveTrialError):
    """The CLI never showed a ready prompt within the boot wait. Exit 1."""

    status = "TIMEOUT"
    exit_code = ExitCode.FAIL
    code = "boot_timeout"


class DeliveryFailed(LiveTrialError):
    """The task text did not arrive as the first user record: parked, mangled, cross-talk or lost
    (README Troubleshooting)."""

    status = "DELIVERY_FAIL"
    exit_code = ExitCode.FAIL
    code = "delivery_failed"


class PluginFailed(LiveTrialError):
    """A part of the plugin under trial the skill depends on failed in the session (an MCP server that did not start:
    ``mcp_failed``), so the trial stops at once; the skill's failure (README "Whose failure it is"). Exit 1."""

    status = "PLUGIN_FAIL"
    exit_code = ExitCode.FAIL
    code = "mcp_failed"


class SchemaInvalid(LiveTrialError):
    """A JSON document failed its schema; nothing was written. Exit 2."""

    status = "REFUSED"
    exit_code = ExitCode.REFUSED
    code = "schema_invalid"



def require_utf8(text: str, what: str, *, where: str | None = None, fix: str = "pass UTF-8 text") -> None:
    r"""Refuse (:class:`RefusedInput`, code ``bad_text``, exit 2) text from outside that is not valid UTF-8: bytes
    that were not UTF-8 (Python decodes them from argv as lone surrogates) or a lone surrogate escape (``\ud800``
    in YAML or JSON). Such text cannot be written to the harness's files or pasted into a session. ``what`` names
    the text in the message (``--args``, ``rules/0/reply/text``)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        ch = text[exc.start]
        shown = f"byte 0x{ord(ch) - 0xDC00:02x}" if "\udc80" <= ch <= "\udcff" else f"lone surrogate \\u{ord(ch):04x}"
        raise RefusedInput(f"{what} is not valid UTF-8 text ({shown} at character {exc.start + 1})", where=where,
                           code="bad_text", fix=fix) from None
