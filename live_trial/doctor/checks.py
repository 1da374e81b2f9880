"""The doctor's answer: one :class:`Check` per assumption the harness makes about the CLI, and the fixed line format
``live-trial doctor --cli`` prints (README "Doctor"). Pure: no I/O.

Line format (this module owns it; later checks add their own names, never change the form)::

    <name>: holds
    <name>: holds (<which known form the CLI showed>)
    <name>: changed (<what the probe saw instead>)
    <name>: not seen
    DOCTOR: <OK|CHANGED> (<h> of <n> hold[, <c> changed][, <s> not seen]) claude <version> at <path> in <s>s[; <note>]

``<name>`` is ``[a-z_]+.[a-z_]+`` (the part of the harness that relies on it, then the assumption), in
:data:`CHECKS` order; ``<what>`` is one line, at most :data:`SAW_CHARS` characters. ``holds (<form>)``: an assumption
the supported releases meet in more than one way (2.1.332 names every hook run in its debug log, 2.1.197 none; 2.1.332
asks about a git work tree under a trusted folder, 2.1.197 does not), each of which the harness reads; the line says
which one this CLI showed. ``not seen``: the probe never
reached the point where it could look (an earlier step failed), or the CLI never showed it. Exit status
(:func:`exit_code`): 0 when all hold, 1 when one changed or was not seen; the CLI layer gives 3 when the probe could
not run (tmux or claude missing) and 64 for a usage error.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from live_trial.errors import ExitCode

HOLDS = "holds"
CHANGED = "changed"
NOT_SEEN = "not seen"
SAW_CHARS = 200

#: Every assumption the probe checks, in the order printed, with what it means (the harness code that relies on it).
CHECKS: dict[str, str] = {
    "screen.bypass_dialog": "the bypass dialog shows its four markers and \"Yes, I accept\" is reachable "
                            "(screen.bypass_dialog, screen.dialog, boot)",
    "screen.ready_prompt": "boot reaches the ready prompt (screen.is_ready)",
    "screen.busy_spinner": "a running turn shows the spinner line (screen.is_busy)",
    "screen.background_shells": "a running background shell shows in the footer (screen.background_work)",
    "screen.turn_done": "an ended turn shows the turn-done line (screen MARKERS turn_done)",
    "screen.gate_dialog": "AskUserQuestion draws a numbered dialog with its options (screen.dialog)",
    "screen.gate_answer": "the gate is answered by moving the cursor and pressing Enter (send.answer_gate)",
    "screen.trust_question": "a git work tree under a trusted folder boots to the prompt: not asked, or asked and "
                             "answered for the folder the harness made (boot_dialogs.TRUST; the CLI writes its trust)",
    "transcript.prompt": "a multi-line paste arrives as the text pasted (send.send_file)",
    "transcript.skill_call": "one Skill tool_use for the skill, answered (trial judgement of the Skill call)",
    "transcript.tool_use": "a tool_use and its tool_result are recorded (transcript status)",
    "transcript.task_notification": "a background shell's end is recorded as a task notification "
                                    "(transcript.records.is_task_notification)",
    "transcript.stop_hook": "Stop-hook feedback is a meta record, not a human prompt, and the turn ends after it "
                            "(transcript.records.is_human_prompt)",
    "transcript.gate": "the transcript shows the open question as GATE with its options (transcript.status.classify)",
    "transcript.turn_duration": "each ended turn writes system/turn_duration (transcript.status.classify)",
    "transcript.record_types": "every record type is one the reader knows (transcript.records.KNOWN_TYPES)",
    "transcript.hook_records": "a failed, a blocking and a cancelled hook run and every Stop are recorded "
                               "(hook_non_blocking_error, hook_blocking_error, hook_cancelled, stop_hook_summary: "
                               "transcript.hook_records, session.plugin_activity)",
    "rehearsal.task_notification": "the rehearsal server sees the wake-up as a task notification "
                                   "(scenario task_notification rules)",
    "rehearsal.stop_hook_feedback": "the rehearsal server sees Stop-hook feedback as the last prompt "
                                    "(scenario last_prompt rules)",
    "debug_log.hook_runs": "the --debug-file log names each hook run with its exit status or timeout, or no run "
                           "at all (transcript.debug_log, session.plugin_activity runs_recorded)",
    "debug_log.mcp_server": "the --debug-file log says a plugin's MCP server started, connected or failed (its "
                            "error, its stderr) before the prompt (transcript.debug_log, trial.activity)",
    "mcp.stand_in": "an --mcp-config server named as a plugin's server takes its place: the plugin's command is not "
                    "started, its tools keep their names (trial.activity stand-ins, session.plugin_activity)",
    "validator.format": "`claude plugin validate` prints only lines the parser knows (session.plugin_check)",
    "print.structured_output": "`claude -p --output-format json --json-schema` returns structured_output "
                               "(judge.evaluator.parse_output)",
}
_LINE_RE = re.compile(r"^(?P<name>[a-z_]+\.[a-z_]+): (?P<result>holds|not seen|changed)(?: \((?P<saw>.*)\))?$")


@dataclass
class Check:
    """One assumption's result: ``name`` (a key of :data:`CHECKS`), ``result`` (holds, changed, not seen) and
    ``saw`` (changed: what the probe saw instead; holds: which known form it saw, "" for an assumption of one form;
    not seen: "")."""

    name: str
    result: str = NOT_SEEN
    saw: str = ""

    def line(self) -> str:
        """The printed line (module docstring format)."""
        if self.result == CHANGED:
            return f"{self.name}: {CHANGED} ({one_line(self.saw) or 'no detail'})"
        if self.result == HOLDS and self.saw:
            return f"{self.name}: {HOLDS} ({one_line(self.saw)})"
        return f"{self.name}: {self.result}"


@dataclass
class Report:
    """The probe's whole answer: ``checks`` in :data:`CHECKS` order, the CLI it ran (``claude_path``,
    ``claude_version``), ``elapsed_s`` and ``note`` (where the probe stopped early, "" when it ran to the end)."""

    checks: list[Check]
    claude_path: str
    claude_version: str
    elapsed_s: float = 0.0
    note: str = ""

    @property
    def ok(self) -> bool:
        """True when every check holds (a check changed or not seen makes the report ``CHANGED``)."""
        return all(c.result == HOLDS for c in self.checks)

    def summary(self) -> str:
        """The last printed line (module docstring format)."""
        counts = {r: sum(1 for c in self.checks if c.result == r) for r in (HOLDS, CHANGED, NOT_SEEN)}
        parts = [f"{counts[HOLDS]} of {len(self.checks)} hold"]
        parts += [f"{counts[r]} {r}" for r in (CHANGED, NOT_SEEN) if counts[r]]
        note = f"; {one_line(self.note)}" if self.note else ""
        return (f"DOCTOR: {'OK' if self.ok else 'CHANGED'} ({', '.join(parts)}) claude {self.claude_version} at "
                f"{self.claude_path} in {self.elapsed_s:.0f}s{note}")

    def to_json(self) -> dict:
        """``{"status", "claude": {"path", "version"}, "elapsed_s", "note", "checks": [{"name", "result", "saw"}]}``."""
        return {"status": "OK" if self.ok else "CHANGED",
                "claude": {"path": self.claude_path, "version": self.claude_version},
                "elapsed_s": round(self.elapsed_s, 1), "note": self.note,
                "checks": [{"name": c.name, "result": c.result, "saw": c.saw} for c in self.checks]}


class Checks:
    """The checks being filled while the probe runs: every name of :data:`CHECKS` starts as ``not seen``."""

    def __init__(self) -> None:
        self._by_name = {name: Check(name) for name in CHECKS}

    def holds(self, name: str, form: str = "") -> None:
        """Record the check ``name`` as holding; ``form``: which of its known forms the CLI showed ("" for a check of
        one form)."""
        self._by_name[name].result, self._by_name[name].saw = HOLDS, one_line(form)

    def changed(self, name: str, saw: str) -> None:
        """Record the check ``name`` as changed, with what the probe saw instead on one line (:func:`one_line`)."""
        self._by_name[name].result, self._by_name[name].saw = CHANGED, one_line(saw)

    def judge(self, name: str, ok: bool, saw: str, form: str = "") -> None:
        """``holds`` (``holds (form)`` with a ``form``) when ``ok``, else ``changed (saw)``."""
        self.holds(name, form) if ok else self.changed(name, saw)

    def result(self, name: str) -> str:
        """The result of the check ``name`` so far: ``holds``, ``changed`` or ``not seen``."""
        return self._by_name[name].result

    def all(self) -> list[Check]:
        """Every check, in :data:`CHECKS` order."""
        return [self._by_name[name] for name in CHECKS]


def one_line(text: str) -> str:
    """``text`` on one line (runs of white space as one space), cut to :data:`SAW_CHARS` characters with "…"."""
    flat = re.sub(r"\s+", " ", str(text or "")).strip()
    return flat if len(flat) <= SAW_CHARS else flat[:SAW_CHARS - 1] + "…"


def parse_line(line: str) -> Check | None:
    """The :class:`Check` a printed line states, or None for a line of another form (the summary, say)."""
    m = _LINE_RE.match(line.rstrip("\n"))
    if not m:
        return None
    if (m.group("result") == NOT_SEEN) == (m.group("saw") is not None) and m.group("result") != HOLDS:
        return None         # "not seen" has no detail, "changed" always one
    return Check(m.group("name"), m.group("result"), m.group("saw") or "")


def exit_code(report: Report) -> int:
    """0 when every check holds, 1 otherwise."""
    return ExitCode.OK if report.ok else ExitCode.FAIL
