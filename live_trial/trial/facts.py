"""What a trial was asked to do (:class:`TrialRequest`), what it established step by step (:class:`Facts`, from
which the verdict is derived) and how it ended (:class:`TrialOutcome`). Plain data, shared by the runner, its poll
loop, its resume and its final judgement.
"""
from __future__ import annotations

import threading
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from live_trial.acceptance.activation import ActivationSession
from live_trial.acceptance.case_verdict import CaseRun
from live_trial.errors import ExitCode, LiveTrialError
from live_trial.policy import Policy
from live_trial.stop_reasons import StopReason

#: The phases of a trial in the order they happen, as recorded in trial-state.json; ``run --resume`` continues from
#: the one recorded (README "Resuming a trial").
PHASES = ("created", "booting", "sending", "polling", "collecting", "evaluating", "judged", "verdict_written",
          "finished")


def phase_at_least(phase: str | None, other: str) -> bool:
    """True when ``phase`` comes at or after ``other`` in :data:`PHASES` (an unknown phase comes first)."""
    return (PHASES.index(phase) if phase in PHASES else -1) >= PHASES.index(other)


class TrialInterrupted(LiveTrialError):
    """The harness itself was stopped (Ctrl-C or SIGTERM) while a trial ran. Exit 3 (BLOCKED). ``code`` is
    ``harness_interrupted`` (Ctrl-C) or ``harness_terminated`` (SIGTERM): live_trial/stop_reasons.py."""

    status = "INTERRUPTED"
    exit_code = ExitCode.BLOCKED
    code = StopReason.HARNESS_INTERRUPTED


class StopRequest(threading.Event):
    """The event that stops a running trial, with the signal that asked for it (None: a caller's own stop).
    Set it with :meth:`request` from a signal handler."""

    def __init__(self) -> None:
        super().__init__()
        self.signum: int | None = None

    def request(self, signum: int | None = None) -> None:
        """Ask the trial to stop; the first signal is the one remembered."""
        if not self.is_set():
            self.signum = signum
        self.set()


@dataclass
class TrialRequest:
    """What ``run`` was asked to do. Paths may be relative; they are resolved at start.

    The trial's own folder (README "Running a real trial"): ``folder`` ``fresh`` (the default: a new empty
    ``<workdir>/cwd``), ``copy`` (``--cwd DIR``: a private copy of ``source`` made at start, removed at the end unless
    ``keep_cwd``; ``include_ignored`` copies what .gitignore ignores too) or ``in_place`` (``--in-place DIR``:
    ``source`` itself, locked for the trial's life). ``cwd`` is where the session starts; it is set at start from
    these. A replay (``replay``) is a rehearsal played from a tape; a recording (``record``) is a live trial (README
    "Replaying a real trial offline")."""

    target: str
    plugins_root: Path = Path("plugins")
    cwd: Path = Path(".")
    folder: str = "fresh"
    source: Path | None = None
    keep_cwd: bool = False
    include_ignored: bool = False
    eval_root: Path = Path("eval-log")
    args: str = ""
    model: str | None = None
    proof: bool = False
    rehearsal: Path | None = None
    #: ``run --replay TAPE``: the rehearsal's script is a tape (``rehearsal`` is its path), not a scenario.
    replay: bool = False
    #: ``run --record``: a live trial whose model traffic is recorded to ``<workdir>/model-tape.jsonl``.
    record: bool = False
    gate_responses: list[str] = field(default_factory=list)
    #: The kind of each answer in ``gate_responses``, in order (``--gate-response`` rescue,
    #: ``--gate-response-contractual`` contractual); empty: every answer is of ``gate_kind``.
    gate_response_kinds: list[str] = field(default_factory=list)
    gate_kind: str = "rescue"
    expect_gate: bool = False
    claude_bin: str | None = None
    socket: str | None = None
    lang: str | None = None
    run_id: str | None = None
    policy: Policy | None = None
    #: Stand-in MCP servers ``(NAME, COMMAND)`` (suite ``mcp_fixtures``, ``run --mcp-fixture``; trial/activity.py).
    mcp_fixtures: list[tuple[str, str]] = field(default_factory=list)
    #: The case run this trial is an attempt of (``repeats`` above 1: references/suite-format.md "Repeats"): recorded
    #: in trial-state.json, its number given to the scripted server, and the trial's own message left to the case run.
    case_run: CaseRun | None = None
    #: A suite case's own criteria for the evaluator, ``(id, text)`` (references/suite-format.md): recorded in
    #: trial-state.json, judged like the skill's feedback_contract criteria.
    criteria: list[tuple[str, str]] = field(default_factory=list)
    #: An activation case's prompt (README "Does it start by itself?"): ``task.md`` is this text alone, with no Skill
    #: literal and no completion marker; None: the task of references/task-template.md.
    prompt: str | None = None
    #: Which prompt and session of an activation run this trial is (recorded in trial-state.json; its number given
    #: to the scripted server as the attempt).
    activation: ActivationSession | None = None


@dataclass
class Facts:
    """What the trial established, step by step; the verdict is derived from these (seed 001 "判定ロジック")."""

    launch: str = "FAIL"          # PASS once READY and the task was delivered
    completion: str = "FAIL"      # PASS once poll said DONE
    goal: str | None = None       # PASS | FAIL from the evaluator, None when not judged
    goal_blockers: list[str] = field(default_factory=list)
    evidence: list[dict[str, Any]] = field(default_factory=list)
    unverified: list[str] = field(default_factory=list)   # what the evaluator could not see yet (a PASS: mostly done)
    checks: list[dict[str, Any]] | None = None             # the evaluator's criterion checks; None: not judged
    poll_exit: str | None = None
    stop_reason: str | None = None
    stall_row: int | None = None
    blocked: bool = False
    gate_seen: bool = False
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def to_doc(self) -> dict[str, Any]:
        """The facts as trial-state.json keeps them (``facts``), so a resume continues from what was established."""
        return asdict(self)

    @classmethod
    def from_doc(cls, doc: dict[str, Any] | None) -> "Facts":
        """Facts read back from trial-state.json (fields it does not know are ignored; missing ones default)."""
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in (doc or {}).items() if k in known})


@dataclass
class TrialOutcome:
    """The result of one trial: where it is, the verdict document, the overall word and the exit code."""

    workdir: Path | None
    overall: str
    exit_code: int
    verdict: dict[str, Any] | None
    verdict_path: Path | None
    summary: str
    scenario_origin: str
    notification: str | None = None
    notification_delivery: str | None = None   # the webhook's outcome: sent / failed / not_configured
    stop_reason: str | None = None
    report: Path | None = None                  # report.html, once the command that ran the trial wrote it


class FolderOutcome:
    """What a run with a folder and a result file of its own (a case run, an activation run) shows under the names a
    trial's :class:`TrialOutcome` gives them, so the tables of ``run`` show either: ``workdir`` its folder,
    ``verdict`` its result document, ``verdict_path`` that document's path. For dataclasses with the fields ``folder``,
    ``doc`` and ``path``."""

    folder: Path
    doc: dict[str, Any]
    path: Path

    @property
    def workdir(self) -> Path:
        """The run's folder (where its result file is)."""
        return self.folder

    @property
    def verdict(self) -> dict[str, Any]:
        """The run's result document."""
        return self.doc

    @property
    def verdict_path(self) -> Path:
        """The path of the run's result file."""
        return self.path
