"""What a trial was asked to do (:class:`TrialRequest`), what it established step by step (:class:`Facts`, from
which the verdict is derived) and how it ended (:class:`TrialOutcome`). Plain data, shared by the runner, its poll
loop, its resume and its final judgement.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from live_trial.errors import ExitCode, LiveTrialError
from live_trial.policy import Policy


class TrialInterrupted(LiveTrialError):
    """The harness itself was stopped (Ctrl-C or SIGTERM) while a trial ran. Exit 3 (BLOCKED)."""

    status = "INTERRUPTED"
    exit_code = ExitCode.BLOCKED
    code = "harness_interrupted"


@dataclass
class TrialRequest:
    """What ``run`` was asked to do. Paths may be relative; they are resolved at start.

    The trial's own folder (README "Running a real trial"): ``folder`` ``fresh`` (the default: a new empty
    ``<workdir>/cwd``), ``copy`` (``--cwd DIR``: a private copy of ``source`` made at start, removed at the end unless
    ``keep_cwd``; ``include_ignored`` copies what .gitignore ignores too) or ``in_place`` (``--in-place DIR``: ``source``
    itself, locked for the trial's life). ``cwd`` is where the session starts; it is set at start from these."""

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
    gate_responses: list[str] = field(default_factory=list)
    gate_kind: str = "rescue"
    expect_gate: bool = False
    claude_bin: str | None = None
    socket: str | None = None
    lang: str | None = None
    run_id: str | None = None
    policy: Policy | None = None


@dataclass
class Facts:
    """What the trial established, step by step; the verdict is derived from these (seed 001 "判定ロジック")."""

    launch: str = "FAIL"          # PASS once READY and the task was delivered
    completion: str = "FAIL"      # PASS once poll said DONE
    goal: str | None = None       # PASS | FAIL from the evaluator, None when not judged
    goal_blockers: list[str] = field(default_factory=list)
    evidence: list[dict] = field(default_factory=list)
    poll_exit: str | None = None
    stop_reason: str | None = None
    stall_row: int | None = None
    blocked: bool = False
    gate_seen: bool = False
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


@dataclass
class TrialOutcome:
    """The result of one trial: where it is, the verdict document, the overall word and the exit code."""

    workdir: Path | None
    overall: str
    exit_code: int
    verdict: dict | None
    verdict_path: Path | None
    summary: str
    scenario_origin: str
    notification: str | None = None
    notification_delivery: str | None = None   # the webhook's outcome: sent / failed / not_configured
    stop_reason: str | None = None
    report: Path | None = None                  # report.html, once the command that ran the trial wrote it
