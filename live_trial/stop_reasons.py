"""Why a trial stopped: one row per stop reason, saying whose failure it is, the verdict it gives, the English clause
the verdict's reason uses, and the step a person should take next (ARCHITECTURE invariant 8; README "Whose failure it
is"). ``live-trial reasons`` prints the whole table in the user's language.

A stop the skill's session caused is judged (FAIL, or whatever the verdict table gives). A stop the environment, the
harness or the person's own input to the harness caused says nothing about the skill: the verdict is BLOCKED (``run``
exits 3) with the cause in one plain sentence, never FAIL and never "crash" of the skill. The runner reads the rows to
decide ``blocked``, the verdict for its reason, the message that ends a trial for its next step.

Adding a stop reason is one row here and its plain sentence in each catalogue, ``references/notifications.<lang>.json``
under ``stop_reasons``; its ``step`` names a sentence of the catalogues' ``trial.next``. A unit test fails when a row
lacks either in any language, or when a catalogue has a sentence for a code that is not a row.

A trial can also stop on the code of an error one of its steps raised that is no row here (a delivery failure such
as ``parked``, a refused input): that code is recorded as the stop reason as it is, judged, and its sentence is under
the catalogues' ``reasons``; the message then gives the general next step. The evaluator *answering* without usable
evidence is a judgement of the goal (FAIL), not a failure of the harness.
"""
from __future__ import annotations

import errno
import os
from enum import StrEnum

from live_trial.errors import Blocked


class Whose(StrEnum):
    """Whose failure a stop is: the skill's (or its session's), the environment's, the harness's, or the person's
    (an input they gave the harness that the trial could not use)."""

    SKILL = "skill"
    ENVIRONMENT = "environment"
    HARNESS = "harness"
    PERSON = "person"


SKILL, ENVIRONMENT, HARNESS, PERSON = Whose.SKILL, Whose.ENVIRONMENT, Whose.HARNESS, Whose.PERSON


class StopReason(StrEnum):
    """One row: the value is the code (verdict.json ``stop_reason``), then ``whose`` (:class:`Whose`), ``why`` (the
    English clause of the verdict's reason, "blocked: <why>") and ``step`` (the key of the catalogues' ``trial.next``
    sentence that says what to do next)."""

    whose: Whose
    why: str
    step: str

    def __new__(cls, code: str, whose: Whose, why: str, step: str) -> StopReason:
        """A row whose value is ``code``, with its ``whose``, ``why`` and ``step``."""
        member = str.__new__(cls, code)
        member._value_ = code
        member.whose, member.why, member.step = whose, why, step
        return member

    @property
    def blocks(self) -> bool:
        """True when the verdict is BLOCKED: the environment or the harness stopped the trial, not the skill."""
        return self.whose != SKILL

    @property
    def verdict(self) -> str:
        """The verdict a trial stopped for this reason gets: BLOCKED when it :attr:`blocks`, else FAIL."""
        return "BLOCKED" if self.blocks else "FAIL"

    @classmethod
    def of(cls, code: str | None) -> StopReason | None:
        """The row for ``code``, or None when it is no row (a code of an error a step raised, or None)."""
        return _ROWS.get(code) if isinstance(code, str) else None

    # The skill's session: judged. Rows 1-6 are seed 001's STALL table.
    CRASH = "crash", SKILL, "claude exited or crashed while the skill ran (its pane died)", "error"
    HANG = "hang", SKILL, "it made no progress while busy, even after twice the STALL limit", "stall_limit"
    GATE_UNANSWERED = ("gate_unanswered", SKILL, "it stopped at a question nobody was there to answer",
                       "gate_answer")
    NUDGE_LIMIT = "nudge_limit", SKILL, "it kept stopping after the allowed nudges", "self_driven"
    CONTRACT_VIOLATION = ("contract_violation", SKILL, "it reported DONE but never wrote the completion marker",
                          "marker")
    UNEXPECTED_STOP = "unexpected_stop", SKILL, "an error ended its turn", "error"
    API_ERROR = ("api_error", SKILL, "the model's API refused a request the session made (an invalid request, such as "
                 "a prompt too long), which ended its turn", "error")
    ERROR_SCREEN = "error_screen", SKILL, "an error on the CLI's screen ended its turn", "error"
    SKILL_NOT_LAUNCHED = ("skill_not_launched", SKILL, "the transcript shows no successful Skill call to the skill "
                          "under trial", "launch")
    PLUGIN_NOT_LOADED = "plugin_not_loaded", SKILL, "the CLI did not load the plugin under trial", "plugin"
    # The skill's own frontmatter hides it from the model. Observed on 2.1.197 and 2.1.332 (references/
    # transcript-jsonl.md "A skill hidden from the model"): the CLI loads its plugin, leaves the skill out of the
    # listing, and its Skill tool refuses the call; only a person typing the slash command can start it.
    SKILL_HIDDEN = ("skill_hidden", SKILL, "the skill sets disable-model-invocation: true, so the CLI hides it from "
                    "the model and its Skill tool refuses to call it (only a person typing its slash command starts "
                    "it)", "hidden")
    EXPECTED_GATE_NOT_SHOWN = ("expected_gate_not_shown", SKILL, "it should have stopped at its question but never "
                               "asked", "expected_gate")
    RECORDS_TAMPERED = ("records_tampered", SKILL, "the trial's records were changed after they were collected, by "
                        "something its session started", "records")
    HOOK_FAILED = ("hook_failed", SKILL, "a hook the skill depends on (its own, or one of its plugin's whose event "
                   "fired) errored, timed out or could not run", "plugin_activity")
    MCP_FAILED = ("mcp_failed", SKILL, "an MCP server of its plugin that the skill depends on (its allowed-tools name "
                  "its tools, or the session called them) failed to start", "plugin_activity")
    # claude exited at start (session/boot.py: its pane died before the prompt) for none of the causes of the
    # environment the harness reads on its last lines (those are ``root_needs_sandbox`` and ``cli_refused_start``):
    # the CLI took its arguments and started with the plugin under trial (and its dependencies) loaded, which is what
    # is left to end it; the skill's package, judged. (A SessionStart hook that kills claude acts after the prompt,
    # not here: references/transcript-jsonl.md "A plugin that ends the CLI".)
    EXITED_AT_START = ("exited_at_start", SKILL, "the CLI exited right after it started with the plugin under trial "
                       "loaded", "setup")
    # The environment: BLOCKED.
    # claude drew its input box but never became ready within the boot wait (session/boot.py: BootTimeout; a screen
    # with no prompt at all is ``unknown_screen``): a slow or loaded machine, before the skill ran.
    BOOT_TIMEOUT = ("boot_timeout", ENVIRONMENT, "the CLI never became ready within the boot wait (a slow or loaded "
                    "machine), so the skill never ran", "setup")
    # claude exited at start refusing what it was started with (its last lines: an option this CLI does not take, a
    # session id already in use): the installed CLI and the harness's arguments, before any plugin ran.
    CLI_REFUSED_START = ("cli_refused_start", ENVIRONMENT, "the CLI refused the arguments it was started with (an "
                         "option this CLI does not take, or a session id already in use), so the skill never ran",
                         "setup")
    TMUX_MISSING = "tmux_missing", ENVIRONMENT, "tmux was missing", "install"
    CLAUDE_MISSING = "claude_missing", ENVIRONMENT, "the claude binary was missing", "install"
    TMUX_ERROR = "tmux_error", ENVIRONMENT, "tmux stopped answering", "retry"
    TMUX_GONE = ("tmux_gone", ENVIRONMENT, "the tmux server on the trial's socket stopped during the trial (it was "
                 "killed or crashed)", "retry")
    SESSION_REMOVED = ("session_removed", ENVIRONMENT, "the trial's tmux session was removed from outside the trial",
                       "retry")
    EVAL_ROOT_UNWRITABLE = ("eval_root_unwritable", ENVIRONMENT, "the eval root or the trial's workdir could not be "
                            "written", "retry")
    DISK_FULL = "disk_full", ENVIRONMENT, "the disk holding the eval root is full", "retry"
    BLOCKING_SCREEN = ("blocking_screen", ENVIRONMENT, "the CLI stopped at start on a screen that waits for a person "
                       "(folder trust, login), so the skill never ran", "setup")
    BYPASS_DIALOG = ("bypass_dialog", ENVIRONMENT, "the CLI's bypass-permissions dialog could not be accepted at "
                     "start, so the skill never ran", "setup")
    ROOT_NEEDS_SANDBOX = ("root_needs_sandbox", ENVIRONMENT, "the CLI refuses to skip permissions as root outside a "
                          "sandbox (IS_SANDBOX=1), so the skill never ran", "setup")
    FOREIGN_TMUX_SERVER = ("foreign_tmux_server", ENVIRONMENT, "a tmux server no harness started took the trial's "
                           "socket before the trial's session could start", "retry")
    # The model's service is the environment (README "Whose failure it is"): the CLI gave up after its own retries, or
    # was refused.
    MODEL_UNAVAILABLE = ("model_unavailable", ENVIRONMENT, "the model's service was unavailable (overloaded, a server "
                         "error, a rate limit or no network) and the CLI gave up after its retries", "later")
    USAGE_LIMIT = ("usage_limit", ENVIRONMENT, "the account's limit on how much the model may be used was reached "
                   "(a usage or spend limit, or no credit left)", "usage_limit")
    MODEL_AUTH = ("model_auth", ENVIRONMENT, "the model's service refused the CLI's credentials (a bad, expired or "
                  "unapproved key, or logged out)", "login")
    MODEL_UNKNOWN = ("model_unknown", ENVIRONMENT, "the model the trial asked for is unknown to the model's service",
                     "model")
    # The model never answered the task at all (its first request refused, e.g. a setting the requested model does
    # not support, or left without an answer): nothing the skill wrote had been shown to it yet, so the skill was never
    # reached (README "Whose failure it is").
    MODEL_NEVER_ANSWERED = ("model_never_answered", ENVIRONMENT, "the model's service never answered the task: its "
                            "first request was refused (such as a setting the requested model does not support) or "
                            "left without an answer, so the skill was never reached", "model_setup")
    PROCESSES_LEFT = ("processes_left", ENVIRONMENT, "a process of the session could not be ended before its records "
                      "were collected (it outlived SIGKILL in the trial's container), or had left the container",
                      "retry")
    # The person's own input to the harness: BLOCKED (README "Questions (gates)"). An answer given ahead of time can
    # only be checked against the options once the skill asks: one that is none of them is not the skill's failure.
    GATE_ANSWER_NOT_AN_OPTION = ("gate_answer_not_an_option", PERSON, "the answer given ahead of time for the skill's "
                                 "question is not one of the options the question showed", "gate_option")
    # A stand-in MCP server the person gave the trial (run --mcp-fixture, a suite case's mcp_fixtures) that failed to
    # start: their stand-in, not the plugin under trial (README "What a trial leaves behind", "Stand-in MCP servers").
    MCP_FIXTURE_FAILED = ("mcp_fixture_failed", PERSON, "the stand-in MCP server given to the trial (--mcp-fixture, "
                          "mcp_fixtures) failed to start", "mcp_fixture")
    # The harness: BLOCKED.
    # A boot failure raised with no cause named (``errors.BootFail``'s own code): every cause boot knows has its row
    # (a blocking screen, the bypass dialog, an unknown screen, an exit at start, a plugin the CLI would not load), so
    # what is left is the harness's gap, never a judgement of a skill that never ran.
    BOOT_FAIL = ("boot_fail", HARNESS, "the harness could not bring the CLI to a ready prompt, for a cause it does not "
                 "name, so the skill never ran", "setup")
    HARD_CAP = "hard_cap", HARNESS, "the trial reached its hard time cap", "hard_cap"
    BUDGET = ("budget", HARNESS, "the trial reached its cost budget (the API list price estimate of what it used, "
              "README \"Budgets\")", "budget")
    HARNESS_INTERRUPTED = ("harness_interrupted", HARNESS, "the person running the harness stopped it (Ctrl-C) "
                           "before the trial finished", "retry")
    HARNESS_TERMINATED = ("harness_terminated", HARNESS, "the harness was stopped by a signal (SIGTERM) before the "
                          "trial finished", "retry")
    HARNESS_KILLED = ("harness_killed", HARNESS, "the harness was killed before the trial could be judged, at a point "
                      "a resume cannot continue from", "retry")
    EVALUATOR_FAILED = ("evaluator_failed", HARNESS, "the evaluator could not run, crashed or gave no valid answer "
                        "after its retries, so the goal was not judged", "retry")
    TRANSCRIPT_MOVED = ("transcript_moved", HARNESS, "the session continued in a new transcript the harness could not "
                        "find", "retry")
    UNKNOWN_SCREEN = ("unknown_screen", HARNESS, "the CLI showed a screen at start the harness does not know, so the "
                      "skill never ran (`live-trial doctor --cli` checks this CLI's screens)", "setup")
    SESSION_EXISTS = ("session_exists", HARNESS, "a tmux session of the trial's own name already existed, so the "
                      "trial's session never started", "retry")
    REPLAY_DIVERGED = ("replay_diverged", HARNESS, "the tape does not cover this run: the replayed session (or "
                       "its evaluator) sent a request the recording never saw (replay-log.jsonl names the turn and the "
                       "first difference)", "replay")
    # The rehearsal's scenario is the harness's input, as a tape is: a request no rule answers is the scenario's gap
    # (references/scenario-format.md "How a trial talks to the server"), never a judgement of the skill.
    # The harness asks the session to write its completion marker outside the session's folder (the workdir's out/):
    # a plugin's hook that guards where the session writes may refuse it. The refusal is of the harness's file, never
    # the skill's work (README "Whose failure it is"); the session's environment names the marker (LIVE_TRIAL_MARKER)
    # so the hook can allow it.
    MARKER_REFUSED = ("marker_refused", HARNESS, "a hook of the plugin refused the Write of the harness's completion "
                      "marker, which lies outside the session's folder", "marker_guard")
    SCENARIO_UNMATCHED = ("scenario_unmatched", HARNESS, "the rehearsal scenario does not cover this run: the session "
                          "(or its evaluator) sent a request no rule of the scenario answers (the notes name the "
                          "request)", "scenario")


_ROWS: dict[str, StopReason] = {row.value: row for row in StopReason}

#: What the table says when a blocked trial's stop reason is no row that blocks.
UNKNOWN_BLOCK = "the environment or the harness stopped the trial before it could be judged"


def blocks(code: str | None) -> bool:
    """True when a trial stopped for ``code`` is BLOCKED (the environment's or the harness's failure)."""
    row = StopReason.of(code)
    return row is not None and row.blocks


def blocked_reason(code: str | None) -> str:
    """The verdict's reason for a BLOCKED trial: ``"blocked: <why>"``."""
    row = StopReason.of(code)
    return "blocked: " + (row.why if row is not None and row.blocks else UNKNOWN_BLOCK)


def service_note(row: StopReason, shown: str, *, on_screen: bool = False, model: str | None = None) -> str:
    """The verdict's note for a trial the model's service stopped (``row``: ``model_unavailable``, ``usage_limit``,
    ``model_auth``, ``model_unknown`` or ``model_never_answered``): its clause, then the CLI's own line ``shown``
    (from its API error record, at most 300 characters; ``on_screen``: read from the screen, with no record of it, at
    most 200), and for an unknown model the one asked for. ``run`` and ``verdict`` by hand write the same note (README
    "Whose failure it is")."""
    shown = (shown or "").strip()
    if on_screen:
        return f"{row.why}: the screen shows \"{shown[:200]}\""
    note = f"{row.why}: the CLI wrote \"{shown[:300]}\"" if shown else row.why
    return note + (f" (the model asked for: {model})" if row == StopReason.MODEL_UNKNOWN and model else "")


def exit_cause(text: str) -> StopReason:
    """Whose failure claude's exit at start is, from its last lines ``text`` (README "Whose failure it is"): its refusal
    of root without a sandbox -> ``root_needs_sandbox``; an option it does not take or a session id already in use ->
    ``cli_refused_start`` (the environment: the installed CLI and the harness's arguments, before any plugin ran); its
    exit after its folder-trust question was answered no ("Claude Code didn't start because this folder isn't
    trusted", 2.1.332) -> ``blocking_screen``, the person's config; anything else -> ``exited_at_start``, the
    skill's (the CLI started with the plugin under trial loaded)."""
    if "root/sudo" in text:
        return StopReason.ROOT_NEEDS_SANDBOX
    if "unknown option" in text or "already in use" in text:
        return StopReason.CLI_REFUSED_START
    if "folder isn't trusted" in text:          # its folder-trust question was answered "No, exit" (or Esc)
        return StopReason.BLOCKING_SCREEN
    return StopReason.EXITED_AT_START


def interrupt_code(signum: int | None) -> StopReason:
    """The stop reason for a harness asked to stop by ``signum``: SIGINT (Ctrl-C, a person) -> harness_interrupted,
    SIGTERM -> harness_terminated; None (a caller's stop event) -> harness_interrupted."""
    import signal

    return StopReason.HARNESS_TERMINATED if signum == signal.SIGTERM else StopReason.HARNESS_INTERRUPTED


def storage_code(exc: OSError) -> StopReason:
    """``disk_full`` for ENOSPC / EDQUOT, else ``eval_root_unwritable`` (read-only, no permission, ...)."""
    full = exc.errno in (errno.ENOSPC, errno.EDQUOT)
    return StopReason.DISK_FULL if full else StopReason.EVAL_ROOT_UNWRITABLE


def unwritable(exc: OSError, path: str | os.PathLike[str]) -> Blocked:
    """The one-line BLOCKED error (exit 3) for a file the harness could not write at ``path``: what, where, the fix
    (README "Troubleshooting"). ``exc`` is the OSError the write raised."""
    code = storage_code(exc)
    what = exc.strerror or type(exc).__name__
    if code == StopReason.DISK_FULL:
        return Blocked(f"the disk is full, so the trial's records cannot be written ({what})", where=str(path),
                       fix="free some space, or pass --eval-root a folder on another disk", code=code)
    return Blocked(f"the trial's records cannot be written ({what})", where=str(path),
                   fix="make the eval root writable, or pass --eval-root a folder you can write", code=code)
