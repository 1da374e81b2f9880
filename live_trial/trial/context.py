"""What the steps of a trial are given: :class:`TrialContext`, the parts of a running trial they read and change.

The runner's :class:`~live_trial.trial.runner.Trial` is the one implementation; the steps (start, the input checks,
the folder steps, the poll loop, the plugin-loading check, the transcript moves, resume, the finishing sequence) take
a ``TrialContext``, so none of them imports the runner and each names what it needs. Tests give the steps small fakes
with the same parts.
"""
from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Protocol

from live_trial.policy import Policy
from live_trial.stop_reasons import StopReason
from live_trial.trial.facts import Facts, TrialOutcome, TrialRequest
from live_trial.trial.journal import Journal
from live_trial.trial.state import TrialState
from live_trial.workdir_files import Workdir

if TYPE_CHECKING:       # types only: the context is built above these rooms
    from live_trial.closure.index import Pinning, Target
    from live_trial.rehearsal.scenario import Scenario
    from live_trial.rehearsal.server import RehearsalServer
    from live_trial.session.backend import Backend
    from live_trial.session.claude_bin import ClaudeBinary
    from live_trial.tape.file import TapeEntry, TapeRecorder
    from live_trial.tape.proxy import RecordingProxy
    from live_trial.tape.replay import TapeServer
    from live_trial.transcript.status import Status
    from live_trial.trial.folder import FolderPlan
    from live_trial.trial.folder_lock import FolderLock


class PollOutcome(Protocol):
    """How one poll ended, as the poll loop reads it: ``exit`` (DONE, STALL, GATE, HARD_CAP, TICK_BUDGET, BLOCKED),
    ``reason`` (e.g. ``session_gone``), ``status`` the last classification (None without a transcript), ``question``
    of a GATE, ``capture_tail`` the last screen lines, ``elapsed_s`` seconds polled, ``moves`` the session's moves to
    a new transcript. :class:`live_trial.trial.poll.PollResult` is the one implementation (named, not imported: the
    poll's modules import this one)."""

    @property
    def exit(self) -> str:
        """DONE, STALL, GATE, HARD_CAP, TICK_BUDGET or BLOCKED."""

    @property
    def reason(self) -> str:
        """Why it ended, e.g. ``session_gone``, ``no_progress``."""

    @property
    def status(self) -> "Status | None":
        """The last classification of the transcript; None without a transcript."""

    @property
    def question(self) -> str | None:
        """The question a GATE waits on; None for the other exits."""

    @property
    def capture_tail(self) -> list[str]:
        """The last lines of the screen."""

    @property
    def elapsed_s(self) -> float:
        """Seconds since the poll state's ``started_at``."""

    @property
    def moves(self) -> list[dict[str, Any]]:
        """Every move of the session to a new transcript seen so far."""


class TrialContext(Protocol):
    """A running trial as its steps see it."""

    req: TrialRequest                      #: what ``run`` was asked to do (paths resolved at start)
    policy: Policy                         #: the loop bounds (stall limit, hard cap, nudges)
    env: dict[str, str]                    #: the environment the trial's processes start from
    journal: Journal                       #: trial-state.json and trial-log.jsonl, and the event sink
    facts: Facts                           #: what the trial established so far (the verdict is derived from it)
    target: "Target | None"                #: the skill under trial, resolved by the input checks
    pinning: "Pinning | None"              #: the behaviour closure pinned by the input checks
    folder_plan: "FolderPlan | None"       #: the trial's own folder as planned by the input checks
    folder_lock: "FolderLock | None"       #: the lock of an in-place folder, held for the trial's life
    backend: "Backend | None"              #: the tmux boundary, once the tools are found
    claude: "ClaudeBinary | None"          #: the claude that boots the session
    child_overrides: dict[str, str]        #: variables every child process gets (a rehearsal's API address)
    scenario: "Scenario | None"            #: a rehearsal's scenario
    tape: "list[TapeEntry] | None"         #: a replay's tape (README "Replaying a real trial offline")
    server: "RehearsalServer | TapeServer | RecordingProxy | None"   #: the model side the CLI talks to, once started
    tape_recorder: "TapeRecorder | None"   #: a recorded trial's tape writer
    stop_event: threading.Event            #: set to stop the trial (Ctrl-C, SIGTERM, a plan runner)
    wd: Workdir | None                     #: the workdir (None until created)
    state: TrialState | None               #: trial-state.json (None until the workdir exists)

    def take_lock(self) -> None:
        """Hold the workdir's lock for the harness's life; RefusedInput when another harness holds it."""

    def sleep(self, seconds: float) -> None:
        """Wait ``seconds``; raise TrialInterrupted once the harness is asked to stop."""

    def stop_code(self) -> StopReason:
        """The stop reason of a harness asked to stop (Ctrl-C or SIGTERM)."""

    def set_facts(self, facts: Facts) -> None:
        """Replace the trial's facts (a resume reads them back from trial-state.json)."""

    def environment_cause(self) -> StopReason | None:
        """``tmux_gone`` or ``session_removed`` when the session vanished from outside while it ran, else None."""

    def prepare_tools(self) -> None:
        """Find tmux and the claude CLI and record their versions; Blocked when one is missing."""

    def start_rehearsal(self, port: int = 0) -> None:
        """The trial's model side on ``port`` (0: a free one): a rehearsal's or a replay's server, a recording's
        proxy; nothing for a plain live trial."""

    def config_dir(self) -> Path:
        """The CLI config folder the session runs with."""

    def transcript_path(self) -> Path:
        """The transcript the session writes now (it moves on ``/clear``)."""

    def send_file(self, path: Path, step: str) -> None:
        """Deliver the file at ``path`` to the session, confirmed by its transcript, and log it under ``step``."""

    def poll_once(self, stall_limit_s: float) -> PollOutcome:
        """Poll until a terminal exit, with ``stall_limit_s`` seconds as the STALL limit."""

    def poll_loop(self) -> None:
        """Poll until a terminal outcome, answering gates and applying the STALL table."""

    def watch_servers(self) -> None:
        """Watch the MCP servers the skill's allowed-tools name (their start is read from the debug log)."""

    def drive(self, *steps: Callable[[], None]) -> TrialOutcome:
        """Run ``steps`` in order, then collect, kill the session, judge and return the outcome, whatever ended them."""
